#include "kernel_check.h"

#include "dtype.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <cstring>
#include <fstream>
#include <sstream>

namespace akg::reference {

namespace {

size_t dtype_size(akg_dtype t) {
    switch (t) {
    case AKG_DTYPE_FLOAT16: return 2;
    case AKG_DTYPE_BOOL: case AKG_DTYPE_UINT8: case AKG_DTYPE_INT8: return 1;
    case AKG_DTYPE_INT64: case AKG_DTYPE_FLOAT64: return 8;
    default: return 4;
    }
}

void store(akg_dtype t, void *dst, size_t i, double v) {
    switch (t) {
    case AKG_DTYPE_FLOAT32: static_cast<float *>(dst)[i] = static_cast<float>(v); break;
    case AKG_DTYPE_FLOAT16: static_cast<uint16_t *>(dst)[i] = float16_bits(v); break;
    case AKG_DTYPE_FLOAT64: static_cast<double *>(dst)[i] = v; break;
    case AKG_DTYPE_INT32: static_cast<int32_t *>(dst)[i] = static_cast<int32_t>(v); break;
    case AKG_DTYPE_INT64: static_cast<int64_t *>(dst)[i] = static_cast<int64_t>(v); break;
    case AKG_DTYPE_INT8: static_cast<int8_t *>(dst)[i] = static_cast<int8_t>(v); break;
    case AKG_DTYPE_BOOL: case AKG_DTYPE_UINT8: static_cast<uint8_t *>(dst)[i] = static_cast<uint8_t>(v); break;
    }
}

double load(akg_dtype t, const void *src, size_t i) {
    switch (t) {
    case AKG_DTYPE_FLOAT32: return static_cast<const float *>(src)[i];
    case AKG_DTYPE_FLOAT16: return float16_from_bits(static_cast<const uint16_t *>(src)[i]);
    case AKG_DTYPE_FLOAT64: return static_cast<const double *>(src)[i];
    case AKG_DTYPE_INT32: return static_cast<const int32_t *>(src)[i];
    case AKG_DTYPE_INT64: return static_cast<double>(static_cast<const int64_t *>(src)[i]);
    case AKG_DTYPE_INT8: return static_cast<const int8_t *>(src)[i];
    case AKG_DTYPE_BOOL: case AKG_DTYPE_UINT8: return static_cast<const uint8_t *>(src)[i];
    }
    return 0;
}

struct Buffer {
    std::vector<unsigned char> bytes;
    akg_tensor tensor{};
    size_t count = 0;
};

Buffer make_buffer(const akg_tensor_def &def) {
    Buffer b;
    b.count = 1;
    for (int d = 0; d < def.rank; ++d) b.count *= static_cast<size_t>(def.shape[d]);
    // Canary-free but never empty, so that data pointers are valid.
    b.bytes.assign(std::max<size_t>(1, b.count * dtype_size(def.dtype)), 0xA5);
    b.tensor.data = b.bytes.data();
    b.tensor.dtype = def.dtype;
    b.tensor.rank = def.rank;
    b.tensor.shape = def.shape;
    b.tensor.strides = nullptr;
    return b;
}

// Compares one buffer with the double evaluation `expected` and the per-op one `per_op`
// (compare_conditioned), adding to the check's counters.
std::string compare_buffer(const std::string &what, const Buffer &b, const Tensor &expected, const Tensor &per_op,
                           Float16Rounding float16, KernelCheck &check) {
    std::vector<double> actual(b.count);
    for (size_t i = 0; i < b.count; ++i) actual[i] = load(b.tensor.dtype, b.bytes.data(), i);
    Comparison c = compare_conditioned(actual, expected, per_op);
    check.worst_abs_error = std::max(check.worst_abs_error, c.worst_abs_error);
    check.ill_conditioned += c.ill_conditioned;
    check.elements += actual.size();
    if (c.ok) return "";
    // With float32 intermediates, a value the graph rounds to float16 (a Cast, or a float16
    // store) is computed through a float32 chain and may lie within its noise of a rounding
    // boundary, and round the other way, twice where two casts chain. Such values (float16
    // tensors, or float32 ones whose both values are float16 numbers) may be two float16 ulps
    // apart on top of AKG's tolerance. Rounded per op, float16 results match the reference's
    // exactly (README.md, "Float16 rounding"): no allowance.
    bool is_f16 = b.tensor.dtype == AKG_DTYPE_FLOAT16;
    if (float16 == Float16Rounding::PerOp || (!is_f16 && b.tensor.dtype != AKG_DTYPE_FLOAT32)) return what + ": " + c.message + "\n";
    size_t bad = 0;
    std::string first_bad;
    for (size_t i = 0; i < actual.size(); ++i) {
        double e = expected.data[i], a = actual[i];
        if (element_matches_conditioned(a, expected, per_op, i)) continue;
        bool through_f16 = is_f16 || (round_to_float16(a) == a && round_to_float16(e) == e);
        // Only between finite values: an infinity is matched by the same infinity alone.
        double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(e), 6.103515625e-05)), -14) - 10);
        if (through_f16 && std::isfinite(a) && std::isfinite(e) && std::fabs(a - e) <= 2 * ulp) continue;
        if (bad++ == 0)
            first_bad = "first beyond that at index " + std::to_string(i) + ": actual " + std::to_string(a) + ", expected " + std::to_string(e);
    }
    if (bad == 0) return "";
    return what + ": " + c.message + "; " + first_bad + "\n";
}

// The kernel's buffers, filled with random_inputs(kernel_json, seed).
struct KernelBuffers {
    std::vector<Tensor> inputs;
    std::vector<Buffer> in_bufs, out_bufs;
    std::vector<akg_tensor> in_t, out_t;
};

// Every 50th element of each float input (from a seed-dependent start, plus the first and last)
// becomes NaN, +Inf or -Inf in turn.
void sprinkle_special_values(std::vector<Tensor> &inputs, uint64_t seed) {
    const double specials[3] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()};
    size_t turn = seed % 3;
    for (auto &t : inputs) {
        const DtypeInfo info(t.dtype);
        if (info.cls() != DtypeClass::Float || t.data.empty()) continue;
        for (size_t i = seed % 50; i < t.data.size(); i += 50) t.data[i] = specials[turn++ % 3];
        t.data.front() = specials[turn++ % 3];
        t.data.back() = specials[turn++ % 3];
    }
}

bool prepare_buffers(const akg_kernel *kernel, const nlohmann::json &j, uint64_t seed, KernelBuffers &b, bool special_values = false) {
    b.inputs = random_inputs(j, seed);
    if (special_values) sprinkle_special_values(b.inputs, seed);
    if (b.inputs.size() != kernel->num_inputs) return false;
    for (size_t k = 0; k < kernel->num_inputs; ++k) {
        b.in_bufs.push_back(make_buffer(kernel->inputs[k]));
        for (size_t i = 0; i < b.in_bufs.back().count; ++i)
            store(kernel->inputs[k].dtype, b.in_bufs.back().bytes.data(), i, b.inputs[k].data[i]);
    }
    for (size_t k = 0; k < kernel->num_outputs; ++k) b.out_bufs.push_back(make_buffer(kernel->outputs[k]));
    for (auto &t : b.in_bufs) b.in_t.push_back(t.tensor);
    for (auto &t : b.out_bufs) b.out_t.push_back(t.tensor);
    return true;
}

} // namespace

KernelCheck run_kernel(const akg_kernel *kernel, const nlohmann::json &j, uint64_t seed, RunFn run) {
    KernelBuffers b;
    if (!prepare_buffers(kernel, j, seed, b)) return {false, "input count differs from the JSON", 0};
    akg_status status = run(kernel, b.in_t.data(), b.in_t.size(), b.out_t.data(), b.out_t.size());
    if (status != AKG_STATUS_OK) return {false, "akg_run failed with status " + std::to_string(static_cast<int>(status)), 0};
    return {};
}

std::optional<std::vector<std::vector<unsigned char>>> kernel_result_bytes(const akg_kernel *kernel, const nlohmann::json &j, uint64_t seed,
                                                                          RunFn run) {
    KernelBuffers b;
    if (!prepare_buffers(kernel, j, seed, b)) return std::nullopt;
    if (run(kernel, b.in_t.data(), b.in_t.size(), b.out_t.data(), b.out_t.size()) != AKG_STATUS_OK) return std::nullopt;
    std::vector<std::vector<unsigned char>> bytes;
    for (const auto &buf : b.out_bufs) bytes.push_back(buf.bytes);
    for (const auto &buf : b.in_bufs) bytes.push_back(buf.bytes); // in-place updates included
    return bytes;
}

KernelCheck check_kernel(const akg_kernel *kernel, const nlohmann::json &j, uint64_t seed, RunFn run,
                         const CheckOptions &options) {
    KernelCheck result;
    KernelBuffers b;
    if (!prepare_buffers(kernel, j, seed, b, options.special_values)) return {false, "input count differs from the JSON", 0};

    const Float16Rounding float16 = options.float16 ? *options.float16 : float16_rounding_of(j);
    const EvalOptions in_double{float16, false}, per_op_in_dtype{float16, true};
    Result expected = evaluate(j, b.inputs, in_double);
    akg_status status = run(kernel, b.in_t.data(), b.in_t.size(), b.out_t.data(), b.out_t.size());
    if (status != AKG_STATUS_OK) return {false, "akg_run failed with status " + std::to_string(static_cast<int>(status)), 0};

    // The per-op evaluation D is made only when the kernel misses the double one somewhere: it
    // doubles the reference's time, and where the kernel matches E nothing needs explaining.
    // Until then D is taken as E (no element is ill-conditioned).
    std::optional<Result> per_op;
    auto compare_all = [&]() {
        const Result &d = per_op ? *per_op : expected;
        result.message.clear();
        result.worst_abs_error = 0;
        result.ill_conditioned = result.elements = 0;
        for (size_t k = 0; k < b.out_bufs.size(); ++k)
            result.message += compare_buffer("output " + std::to_string(k) + " (" + kernel->outputs[k].name + ")", b.out_bufs[k],
                                             expected.outputs[k], d.outputs[k], float16, result);
        for (const auto &[index, tensor] : expected.updated_inputs)
            result.message += compare_buffer("in-place input " + std::to_string(index) + " (" + kernel->inputs[index].name + ")",
                                             b.in_bufs[index], tensor, d.updated_inputs.at(index), float16, result);
    };
    compare_all();
    if (!result.message.empty()) {
        per_op = evaluate(j, b.inputs, per_op_in_dtype);
        compare_all();
    }
    if (!result.message.empty() && j.dump().find("float16") != std::string::npos) {
        // A float16 rounding within float32 noise of a tie may have gone the other way (see
        // evaluate_with_float16_ties_flipped): each element may match either evaluation, in both
        // the double and the per-op evaluation.
        auto merge = [](const Buffer &got, Tensor &e, const Tensor &alternative) {
            for (size_t i = 0; i < e.data.size(); ++i) {
                double a = load(got.tensor.dtype, got.bytes.data(), i);
                if (std::fabs(alternative.data[i] - a) < std::fabs(e.data[i] - a)) e.data[i] = alternative.data[i];
            }
        };
        for (auto [options_used, reference] : {std::pair{in_double, &expected}, std::pair{per_op_in_dtype, &*per_op}}) {
            Result flipped = evaluate_with_float16_ties_flipped(j, b.inputs, options_used);
            for (size_t k = 0; k < b.out_bufs.size(); ++k) merge(b.out_bufs[k], reference->outputs[k], flipped.outputs[k]);
            for (auto &[index, tensor] : reference->updated_inputs) merge(b.in_bufs[index], tensor, flipped.updated_inputs.at(index));
        }
        compare_all();
    }
    result.ok = result.message.empty();
    return result;
}

} // namespace akg::reference
