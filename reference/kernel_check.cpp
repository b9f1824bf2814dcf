#include "kernel_check.h"

#include <algorithm>
#include <cmath>
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

std::string compare_buffer(const std::string &what, const Buffer &b, const Tensor &expected, double &worst) {
    std::vector<double> actual(b.count);
    for (size_t i = 0; i < b.count; ++i) actual[i] = load(b.tensor.dtype, b.bytes.data(), i);
    Comparison c = compare(actual, expected);
    worst = std::max(worst, c.worst_abs_error);
    if (c.ok) return "";
    // A value the graph rounds to float16 (a Cast, or a float16 store) may lie within float32
    // noise of a rounding boundary and round the other way, twice where two casts chain. Such
    // values (float16 tensors, or float32 ones whose both values are float16 numbers) may be two
    // float16 ulps apart on top of AKG's tolerance.
    bool is_f16 = b.tensor.dtype == AKG_DTYPE_FLOAT16;
    if (!is_f16 && b.tensor.dtype != AKG_DTYPE_FLOAT32) return what + ": " + c.message + "\n";
    size_t bad = 0;
    std::string first_bad;
    for (size_t i = 0; i < actual.size(); ++i) {
        double e = expected.data[i], a = actual[i];
        if ((std::isnan(e) && std::isnan(a)) || a == e) continue;
        // Results of matrix products also get their error bound (see compare()).
        const double bound = expected.error_bound.size() == expected.data.size() ? expected.error_bound[i] : 0.0;
        if (!std::isnan(e) && !std::isinf(e) && !(bound < INFINITY)) continue;
        double tol = (is_f16 ? 1e-3 + 1e-3 * std::fabs(e) : 1e-4 + 1e-4 * std::fabs(e)) + bound;
        if (std::fabs(a - e) <= tol) continue;
        bool through_f16 = is_f16 || (round_to_float16(a) == a && round_to_float16(e) == e);
        double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(e), 6.103515625e-05)), -14) - 10);
        if (through_f16 && std::fabs(a - e) <= 2 * ulp) continue;
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

bool prepare_buffers(const akg_kernel *kernel, const nlohmann::json &j, uint64_t seed, KernelBuffers &b) {
    b.inputs = random_inputs(j, seed);
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

KernelCheck check_kernel(const akg_kernel *kernel, const nlohmann::json &j, uint64_t seed, RunFn run) {
    KernelCheck result;
    KernelBuffers b;
    if (!prepare_buffers(kernel, j, seed, b)) return {false, "input count differs from the JSON", 0};

    Result expected = evaluate(j, b.inputs);
    akg_status status = run(kernel, b.in_t.data(), b.in_t.size(), b.out_t.data(), b.out_t.size());
    if (status != AKG_STATUS_OK) return {false, "akg_run failed with status " + std::to_string(static_cast<int>(status)), 0};

    auto compare_all = [&](const Result &reference) {
        result.message.clear();
        for (size_t k = 0; k < b.out_bufs.size(); ++k)
            result.message += compare_buffer("output " + std::to_string(k) + " (" + kernel->outputs[k].name + ")", b.out_bufs[k],
                                             reference.outputs[k], result.worst_abs_error);
        for (const auto &[index, tensor] : reference.updated_inputs)
            result.message += compare_buffer("in-place input " + std::to_string(index) + " (" + kernel->inputs[index].name + ")",
                                             b.in_bufs[index], tensor, result.worst_abs_error);
    };
    compare_all(expected);
    if (!result.message.empty() && j.dump().find("float16") != std::string::npos) {
        // An intermediate float16 rounding within float32 noise of a tie may have gone the other
        // way (see evaluate_with_float16_ties_flipped): each element may match either evaluation.
        Result flipped = evaluate_with_float16_ties_flipped(j, b.inputs);
        auto merge = [](const Buffer &got, Tensor &e, const Tensor &alternative) {
            for (size_t i = 0; i < e.data.size(); ++i) {
                double a = load(got.tensor.dtype, got.bytes.data(), i);
                if (std::fabs(alternative.data[i] - a) < std::fabs(e.data[i] - a)) e.data[i] = alternative.data[i];
            }
        };
        for (size_t k = 0; k < b.out_bufs.size(); ++k) merge(b.out_bufs[k], expected.outputs[k], flipped.outputs[k]);
        for (auto &[index, tensor] : expected.updated_inputs) merge(b.in_bufs[index], tensor, flipped.updated_inputs.at(index));
        result.worst_abs_error = 0;
        compare_all(expected);
    }
    result.ok = result.message.empty();
    return result;
}

} // namespace akg::reference
