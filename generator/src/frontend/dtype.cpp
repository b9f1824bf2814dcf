// Data types and shapes: names as in the JSON, storage types in generated C++ and the C ABI.
#include "frontend/composite_kernel.h"

#include <limits>

namespace akg {

namespace {
struct DTypeInfo {
    DType type;
    const char *json;
    const char *c_type;
    const char *abi;
    int bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::Float16, "float16", "uint16_t", "AKG_DTYPE_FLOAT16", 2},
    {DType::Float32, "float32", "float", "AKG_DTYPE_FLOAT32", 4},
    {DType::Float64, "float64", "double", "AKG_DTYPE_FLOAT64", 8},
    {DType::Int8, "int8", "int8_t", "AKG_DTYPE_INT8", 1},
    {DType::Int32, "int32", "int32_t", "AKG_DTYPE_INT32", 4},
    {DType::Int64, "int64", "int64_t", "AKG_DTYPE_INT64", 8},
    {DType::UInt8, "uint8", "uint8_t", "AKG_DTYPE_UINT8", 1},
    {DType::Bool, "bool", "uint8_t", "AKG_DTYPE_BOOL", 1},
};
const DTypeInfo &info(DType t) {
    for (const auto &i : kDTypes)
        if (i.type == t) return i;
    throw InternalError("unknown dtype");
}
} // namespace

std::optional<DType> parse_dtype(const std::string &name) {
    for (const auto &i : kDTypes)
        if (name == i.json) return i.type;
    return std::nullopt;
}
const char *dtype_name(DType t) { return info(t).json; }
const char *dtype_c_type(DType t) { return info(t).c_type; }
const char *dtype_abi_enum(DType t) { return info(t).abi; }
int dtype_bytes(DType t) { return info(t).bytes; }
bool dtype_is_float(DType t) { return t == DType::Float16 || t == DType::Float32 || t == DType::Float64; }

std::string shape_string(const Shape &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

int64_t element_count(const Shape &shape) {
    // Saturates instead of overflowing (shapes are checked against kMaxTensorElements when
    // parsed, but inferred and reshape-target shapes are counted before they are checked).
    int64_t n = 1;
    for (int64_t d : shape) {
        bool negative = (n < 0) != (d < 0);
        if (__builtin_mul_overflow(n, d, &n))
            return negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    }
    return n;
}

} // namespace akg
