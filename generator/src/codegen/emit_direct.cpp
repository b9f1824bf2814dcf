// Scatters and scans as loop nests walking their sequential dimension in order, pooling windows
// around a vector loop (see emit_direct.h). Integers wrap around; each function below says in
// what precision its floats accumulate.
#include "codegen/emit_direct.h"

#include <sstream>

#include "frontend/composite_kernel.h"

namespace akg {

namespace {

// Slices and scan rows are cut into chunks of this many elements: one simd loop each, and the
// unit of work handed to threads.
constexpr int64_t kChunk = 256;
// Below this many element updates a kernel runs on one thread.
constexpr int64_t kParallelWork = 1 << 15;

bool is_floating(DType t) { return t == DType::Float16 || t == DType::Float32 || t == DType::Float64; }

// C++ reading element `i` of buffer `p` of dtype `t` as the accumulator type.
std::string load(DType t, const std::string &p, const std::string &i) {
    if (t == DType::Float16) return "(double)akg_f16_to_f32(" + p + "[" + i + "])";
    if (is_floating(t)) return "(double)" + p + "[" + i + "]";
    return "(int64_t)" + p + "[" + i + "]";
}

// C++ converting an accumulator value `v` to the storage of dtype `t` (integers wrap).
std::string store(DType t, const std::string &v) {
    if (t == DType::Float16) return "akg_f32_to_f16((float)(" + v + "))";
    if (t == DType::Float32) return "(float)(" + v + ")";
    if (t == DType::Float64) return v;
    return std::string("(") + dtype_c_type(t) + ")(uint64_t)(" + v + ")";
}

std::string combine(DType t, bool product, const std::string &a, const std::string &b) {
    if (is_floating(t)) return a + (product ? " * " : " + ") + b;
    return "(int64_t)((uint64_t)" + a + (product ? " * " : " + ") + "(uint64_t)" + b + ")";
}

std::string accumulator_type(DType t) { return is_floating(t) ? "double" : "int64_t"; }

// Binds the kernel's buffers: op operand k is named `operand<k>`, the output `out`.
std::string bindings(const CompositeKernel &kernel, const OpDesc &op) {
    std::ostringstream os;
    int k = 0;
    for (const auto &g : op.inputs)
        for (const auto &t : g) {
            size_t slot = 0;
            while (slot < kernel.inputs.size() && kernel.inputs[slot].name != t.name) ++slot;
            if (slot == kernel.inputs.size()) throw InternalError(kernel.source + ": operand " + t.name + " is not an input of its part");
            os << "    const " << dtype_c_type(t.dtype) << " *__restrict operand" << k++ << " = (const " << dtype_c_type(t.dtype)
               << " *)buffers[" << slot << "];\n";
        }
    const TensorDesc &out = op.outputs[0];
    os << "    " << dtype_c_type(out.dtype) << " *__restrict out = (" << dtype_c_type(out.dtype) << " *)buffers[" << kernel.inputs.size()
       << "];\n";
    return os.str();
}

// TensorScatterAdd (out = x plus the rows of updates at their indices) and UnsortedSegmentSum
// (out = the sum of the rows of data per segment id). Each element adds its rows in row order:
// in float32 for float16 and float32 data (a float16 table sums in a float32 copy, rounded once
// at the end), with wrap-around in the storage type for integers.
std::string scatter(const OpDesc &op) {
    const bool segments = op.name == "UnsortedSegmentSum";
    const TensorDesc &out = op.outputs[0];
    const TensorDesc &indices = op.inputs[1][0];
    const TensorDesc &updates = segments ? op.inputs[0][0] : op.inputs[2][0];
    const bool flat = !segments && indices.shape.size() == 1;
    const size_t row_dims = segments || flat ? indices.shape.size() : indices.shape.size() - 1;
    const size_t q = segments || flat ? 1 : static_cast<size_t>(indices.shape.back());
    int64_t rows = 1, slice = 1, table = 1;
    for (size_t d = 0; d < row_dims; ++d) rows *= indices.shape[d];
    for (size_t d = q; d < out.shape.size(); ++d) slice *= out.shape[d];
    for (size_t d = 0; d < q; ++d) table *= out.shape[d];
    const int64_t chunks = std::max<int64_t>(1, (slice + kChunk - 1) / kChunk);
    const std::string upd = segments ? "operand0" : "operand2", idx = "operand1", s = std::to_string(slice);
    const bool half = out.dtype == DType::Float16, floating = is_floating(out.dtype);
    const std::string acc_type = floating ? "float" : dtype_c_type(out.dtype);
    auto value = [&](DType t, const std::string &p, const std::string &i) {
        if (t == DType::Float16) return "akg_f16_to_f32(" + p + "[" + i + "])";
        return p + "[" + i + "]";
    };
    auto add = [&](const std::string &a, const std::string &b) {
        if (floating) return a + " + " + b;
        std::string u = out.dtype == DType::Int64 ? "uint64_t" : "uint32_t";
        return std::string("(") + dtype_c_type(out.dtype) + ")(" + u + ")((" + u + ")" + a + " + (" + u + ")" + b + ")";
    };
    std::ostringstream os;
    os << "    // " << op.name << ": " << rows << " rows in order into " << table << " slices of " << slice << " elements.\n";
    if (half) {
        os << "    float *acc = (float *)malloc(sizeof(float) * " << std::max<int64_t>(1, table * slice) << ");\n";
        os << "    if (!acc) return AKG_STATUS_OUT_OF_MEMORY;\n";
    } else {
        os << "    " << acc_type << " *const acc = out;\n";
    }
    os << "    #pragma omp parallel for schedule(static)" << (rows * slice + table * slice >= kParallelWork && chunks > 1 ? "" : " if (0)") << "\n";
    os << "    for (int64_t chunk = 0; chunk < " << chunks << "; ++chunk) {\n";
    os << "        const int64_t k0 = chunk * " << kChunk << ", n = akg_imin(" << s << " - k0, " << kChunk << ");\n";
    os << "        for (int64_t t = 0; t < " << table << "; ++t) {\n";
    os << "            #pragma omp simd\n";
    os << "            for (int64_t k = 0; k < n; ++k) acc[t * " << s << " + k0 + k] = "
       << (segments ? acc_type + "(0)" : value(out.dtype, "operand0", "t * " + s + " + k0 + k")) << ";\n";
    os << "        }\n";
    os << "        for (int64_t r = 0; r < " << rows << "; ++r) {\n";
    os << "            int64_t t = 0;\n";
    for (size_t c = 0; c < q; ++c) {
        std::string at = segments || flat ? "r" : "r * " + std::to_string(q) + " + " + std::to_string(c);
        os << "            const int64_t i" << c << " = (int64_t)" << idx << "[" << at << "];\n";
        os << "            if (i" << c << " < 0 || i" << c << " >= " << out.shape[c] << ") continue;\n";
        os << "            t = t * " << out.shape[c] << " + i" << c << ";\n";
    }
    os << "            " << acc_type << " *__restrict dst = acc + t * " << s << " + k0;\n";
    os << "            #pragma omp simd\n";
    os << "            for (int64_t k = 0; k < n; ++k) dst[k] = " << add("dst[k]", value(updates.dtype, upd, "r * " + s + " + k0 + k")) << ";\n";
    os << "        }\n";
    if (half) {
        os << "        for (int64_t t = 0; t < " << table << "; ++t) {\n";
        os << "            #pragma omp simd\n";
        os << "            for (int64_t k = 0; k < n; ++k) out[t * " << s << " + k0 + k] = akg_f32_to_f16(acc[t * " << s << " + k0 + k]);\n";
        os << "        }\n";
    }
    os << "    }\n";
    if (half) os << "    free(acc);\n";
    return os.str();
}

// CumSum / CumProd along `axis`: for each outer index and chunk of the inner dimensions, a
// running value per inner element (double for floats, int64 for integers) walks the axis
// forward or backward; each result is stored once in its dtype.
std::string scan(const CompositeKernel &kernel, const OpDesc &op) {
    const TensorDesc &out = op.outputs[0];
    const Shape &shape = op.inputs[0][0].shape;
    const int rank = static_cast<int>(shape.size());
    const int axis = single_axis(kernel, op, "axis", rank, 0);
    const bool exclusive = attr_bool(kernel, op, "exclusive", false), reverse = attr_bool(kernel, op, "reverse", false);
    const bool product = op.name == "CumProd";
    int64_t outer = 1, n = rank ? shape[axis] : 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (int d = axis + 1; d < rank; ++d) inner *= shape[d];
    const int64_t chunks = std::max<int64_t>(1, (inner + kChunk - 1) / kChunk), tasks = outer * chunks;
    const DType in_t = op.inputs[0][0].dtype;
    const std::string acc = accumulator_type(out.dtype);
    std::ostringstream os;
    os << "    // " << op.name << (exclusive ? " (exclusive)" : "") << (reverse ? " (reverse)" : "") << ": " << outer << " x " << n << " x "
       << inner << ", the " << n << " in order.\n";
    os << "    #pragma omp parallel for schedule(static)" << (outer * n * inner >= kParallelWork && tasks > 1 ? "" : " if (0)") << "\n";
    os << "    for (int64_t task = 0; task < " << tasks << "; ++task) {\n";
    os << "        const int64_t o = task / " << chunks << ", k0 = task % " << chunks << " * " << kChunk << ", m = akg_imin(" << inner
       << " - k0, " << kChunk << ");\n";
    os << "        " << acc << " run[" << std::min(inner, kChunk) << "];\n";
    os << "        #pragma omp simd\n";
    os << "        for (int64_t k = 0; k < m; ++k) run[k] = " << (product ? "1" : "0") << ";\n";
    os << "        for (int64_t step = 0; step < " << n << "; ++step) {\n";
    os << "            const int64_t at = (o * " << n << " + " << (reverse ? std::to_string(n - 1) + " - step" : "step") << ") * " << inner << " + k0;\n";
    std::string next = combine(out.dtype, product, "run[k]", load(in_t, "operand0", "at + k"));
    os << "            #pragma omp simd\n";
    if (exclusive)
        os << "            for (int64_t k = 0; k < m; ++k) {\n                out[at + k] = " << store(out.dtype, "run[k]")
           << ";\n                run[k] = " << next << ";\n            }\n";
    else
        os << "            for (int64_t k = 0; k < m; ++k) {\n                run[k] = " << next << ";\n                out[at + k] = "
           << store(out.dtype, "run[k]") << ";\n            }\n";
    os << "        }\n";
    os << "    }\n";
    return os.str();
}

// Pool2D (not global): each output row (NCHW: a chunk of the width; NHWC: a chunk of the
// channels at one output position) accumulates the window's taps that fall inside the input in
// float32, the taps of one window column as one vector loop. Max is NaN-dominated; avg divides
// by the window's size.
std::string pool(const CompositeKernel &kernel, const OpDesc &op) {
    const TensorDesc &in = op.inputs[0][0], &out = op.outputs[0];
    const PoolParams p = pool_params(kernel, op, in.shape);
    const bool nhwc = p.h_dim == 1;
    const int64_t N = in.shape[0], C = in.shape[nhwc ? 3 : 1], H = in.shape[p.h_dim], W = in.shape[p.w_dim];
    const int64_t OH = p.out_h, OW = p.out_w;
    auto load = [&](const std::string &ptr, const std::string &i) {
        return in.dtype == DType::Float16 ? "akg_f16_to_f32(" + ptr + "[" + i + "])" : ptr + "[" + i + "]";
    };
    const std::string init = p.max ? "-__builtin_inff()" : "0.0f";
    auto combine = [&](const std::string &v) { return p.max ? "akg_fmax(" + v + ", acc[j])" : "acc[j] + " + v; };
    const std::string result = p.max ? "acc[j]" : "acc[j] / " + std::to_string(p.kh * p.kw) + ".0f";
    const std::string stored = out.dtype == DType::Float16 ? "akg_f32_to_f16(" + result + ")" : result;
    const int64_t inner = nhwc ? C : OW, chunks = std::max<int64_t>(1, (inner + kChunk - 1) / kChunk);
    const int64_t tasks = (nhwc ? N * OH * OW : N * C * OH) * chunks;
    std::ostringstream os;
    os << "    // Pool2D " << (p.max ? "max" : "avg") << " " << p.kh << "x" << p.kw << " stride " << p.sh << "x" << p.sw << " ("
       << (nhwc ? "NHWC" : "NCHW") << "): " << tasks << " tasks of up to " << std::min(inner, kChunk) << " outputs.\n";
    os << "    #pragma omp parallel for schedule(static)" << (N * C * OH * OW * p.kh * p.kw >= kParallelWork && tasks > 1 ? "" : " if (0)") << "\n";
    os << "    for (int64_t task = 0; task < " << tasks << "; ++task) {\n";
    os << "        const int64_t row = task / " << chunks << ", j0 = task % " << chunks << " * " << kChunk << ", m = akg_imin(" << inner
       << " - j0, " << kChunk << ");\n";
    os << "        float acc[" << std::min(inner, kChunk) << "];\n";
    os << "        #pragma omp simd\n";
    os << "        for (int64_t j = 0; j < m; ++j) acc[j] = " << init << ";\n";
    if (nhwc) {
        // row = (n * OH + oh) * OW + ow
        os << "        const int64_t n = row / " << OH * OW << ", oh = row / " << OW << " % " << OH << ", ow = row % " << OW << ";\n";
        os << "        for (int64_t r0 = 0; r0 < " << p.kh << "; ++r0) {\n";
        os << "            const int64_t h = oh * " << p.sh << " + r0 - " << p.pad_top << ";\n";
        os << "            if (h < 0 || h >= " << H << ") continue;\n";
        os << "            for (int64_t r1 = 0; r1 < " << p.kw << "; ++r1) {\n";
        os << "                const int64_t w = ow * " << p.sw << " + r1 - " << p.pad_left << ";\n";
        os << "                if (w < 0 || w >= " << W << ") continue;\n";
        os << "                const auto *__restrict tap = operand0 + ((n * " << H << " + h) * " << W << " + w) * " << C << " + j0;\n";
        os << "                #pragma omp simd\n";
        os << "                for (int64_t j = 0; j < m; ++j) acc[j] = " << combine(load("tap", "j")) << ";\n";
        os << "            }\n        }\n";
        os << "        auto *__restrict dst = out + row * " << C << " + j0;\n";
    } else {
        // row = nc * OH + oh; j runs along the output width from j0.
        os << "        const int64_t nc = row / " << OH << ", oh = row % " << OH << ";\n";
        os << "        for (int64_t r0 = 0; r0 < " << p.kh << "; ++r0) {\n";
        os << "            const int64_t h = oh * " << p.sh << " + r0 - " << p.pad_top << ";\n";
        os << "            if (h < 0 || h >= " << H << ") continue;\n";
        os << "            const auto *__restrict line = operand0 + (nc * " << H << " + h) * " << W << ";\n";
        os << "            for (int64_t r1 = 0; r1 < " << p.kw << "; ++r1) {\n";
        os << "                // The outputs whose tap w = (j0 + j) * " << p.sw << " + r1 - " << p.pad_left << " lies in [0, " << W << ").\n";
        os << "                const int64_t off = r1 - " << p.pad_left << ";\n";
        os << "                const int64_t first = akg_imax((off >= 0 ? 0 : (-off + " << p.sw - 1 << ") / " << p.sw << ") - j0, 0);\n";
        os << "                const int64_t last = akg_imin((" << W - 1 << " - off >= 0 ? (" << W - 1 << " - off) / " << p.sw << " : -1) - j0, m - 1);\n";
        os << "                #pragma omp simd\n";
        os << "                for (int64_t j = first; j <= last; ++j) acc[j] = " << combine(load("line", "(j0 + j) * " + std::to_string(p.sw) + " + off")) << ";\n";
        os << "            }\n        }\n";
        os << "        auto *__restrict dst = out + row * " << OW << " + j0;\n";
    }
    os << "        #pragma omp simd\n";
    os << "        for (int64_t j = 0; j < m; ++j) dst[j] = " << stored << ";\n";
    os << "    }\n";
    (void)N;
    return os.str();
}

} // namespace

std::string emit_direct_cpp(const CompositeKernel &kernel, const EmitOptions &o) {
    if (kernel.ops.size() != 1 || kernel.outputs.size() != 1) throw InternalError(kernel.source + ": a direct part holds one op");
    const OpDesc &op = kernel.ops[0];
    std::ostringstream os;
    os << "// Auto-generated by akg-gen " << o.generator_version << " from " << o.pattern_file << " for " << o.target_name << ". Do not edit!\n";
    os << "// Kernel " << o.kernel_name << ": " << kernel.inputs.size() << " input(s), " << kernel.outputs.size() << " output(s).\n";
    os << "// Its descriptor and dispatch entry are in akg_catalog.cpp.\n";
    os << "// Regenerate with: meson compile -C build regenerate\n\n";
    os << "#include \"akg_kernel_support.h\"\n\n";
    os << "extern \"C\" int akg_kernel_fn_" << o.symbol << "(void *const *buffers) {\n";
    os << bindings(kernel, op);
    os << (op.name == "CumSum" || op.name == "CumProd" ? scan(kernel, op) : op.name == "Pool2D" ? pool(kernel, op) : scatter(op));
    os << "    return AKG_STATUS_OK;\n}\n";
    return os.str();
}

} // namespace akg
