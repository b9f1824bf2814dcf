// The composite-JSON kernel as the front end sees it: tensors, ops and attributes, validated
// and with every shape checked against the one the op semantics infer.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace akg {

// A mistake in the user's input (a pattern file): reported with file, op and problem.
class UserError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A bug in the generator itself.
class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

enum class DType { Float16, Float32, Float64, Int8, Int32, Int64, UInt8, Bool };

std::optional<DType> parse_dtype(const std::string &name);
const char *dtype_name(DType t);     // as in the JSON: "float32"
const char *dtype_c_type(DType t);   // storage type in generated C++: "float", "_Float16", ...
const char *dtype_abi_enum(DType t); // "AKG_DTYPE_FLOAT32"
int dtype_bytes(DType t);
bool dtype_is_float(DType t);

using Shape = std::vector<int64_t>;
std::string shape_string(const Shape &shape);
int64_t element_count(const Shape &shape);

struct TensorDesc {
    std::string name;   // tensor_name: the SSA name linking producers and consumers
    Shape shape;
    DType dtype = DType::Float32;
    std::string format; // DefaultFormat, NCHW, NHWC, ...
    std::optional<double> value; // an inline scalar constant, not a kernel input
};

struct Attr {
    std::string name;
    nlohmann::json value;
    std::string data_type; // may be empty
};

struct OpDesc {
    int index = 0; // position in op_desc, for messages
    std::string name;
    std::vector<std::vector<TensorDesc>> inputs; // one inner list per formal input
    std::vector<TensorDesc> outputs;
    std::vector<Attr> attrs;

    const Attr *find_attr(const std::string &attr_name) const;
};

struct CompositeKernel {
    std::string name;        // "op" at the top level
    std::string source;      // the file it came from (for messages and banners)
    std::vector<TensorDesc> inputs;  // flattened top-level input_desc, constants removed
    std::vector<TensorDesc> outputs; // top-level output_desc
    std::vector<OpDesc> ops;
    // Every op whose output is float16 rounds its result to float16 before later ops read it, as
    // MindSpore, AKG and numpy do. False ("float16_intermediates": "float32" at the top level, or
    // --float16-intermediates=float32): float16 chains stay in float32 and round only where a
    // Cast or a store says so, faster and closer to exact, but not what the framework computes.
    bool float16_per_op = true;
};

// Parses composite JSON text. `source` names the file in error messages.
CompositeKernel parse_composite(const std::string &text, const std::string &source);
CompositeKernel load_composite(const std::string &path);

// Checks names, dtypes, attributes and shapes (see shape_inference.cpp). Throws UserError.
void validate_composite(const CompositeKernel &kernel);

// "<file>: op #3 (ReduceSum): <problem>"
[[noreturn]] void op_error(const CompositeKernel &kernel, const OpDesc &op, const std::string &problem);

// Shape inference: the output shape each supported op produces from its inputs. Throws
// UserError (through op_error) when shapes do not fit the op.
Shape infer_output_shape(const CompositeKernel &kernel, const OpDesc &op);

// Attribute helpers with type checking (UserError on the wrong type).
std::vector<int64_t> attr_int_list(const CompositeKernel &kernel, const OpDesc &op, const std::string &name,
                                   bool required);
bool attr_bool(const CompositeKernel &kernel, const OpDesc &op, const std::string &name, bool fallback);
std::string attr_string(const CompositeKernel &kernel, const OpDesc &op, const std::string &name);

// One axis (an int or a list of one int) normalized to [0, rank); `fallback` when absent.
int single_axis(const CompositeKernel &kernel, const OpDesc &op, const std::string &name, int rank, int fallback);
// A number attribute (int, float or bool); `fallback` when absent.
double attr_number(const CompositeKernel &kernel, const OpDesc &op, const std::string &name, double fallback);

// Pool2D / GlobalPool2D attributes resolved for an input shape (docs/OPS.md).
struct PoolParams {
    bool max = true;  // pool_type "max" (else "avg")
    int h_dim = 2, w_dim = 3; // NCHW (NHWC: 1, 2)
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, pad_top = 0, pad_left = 0;
    int64_t out_h = 1, out_w = 1;
    bool global = false;
};
PoolParams pool_params(const CompositeKernel &kernel, const OpDesc &op, const Shape &in);

// Reduction axes normalized to [0, rank), sorted, unique; empty list or missing means all.
std::vector<int> reduction_axes(const CompositeKernel &kernel, const OpDesc &op, int input_rank);

// MatMul and BatchMatMul: lowered to contractions, scheduled by the GEMM path.
bool is_contraction_op(const std::string &name);

} // namespace akg
