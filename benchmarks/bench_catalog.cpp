// The side-by-side benchmark suite: for every catalog kernel, in one process,
//   <kernel>/akg/<threads>            the generated fused kernel (libakgkernels): the variant akg_run
//                                     picks on this CPU (akg_kernel_select_variant; AKG_MAX_ISA caps it)
//   <kernel>/akg_x86-64-v3/<threads>  the same kernel's x86-64-v3 (AVX2 + FMA + F16C) variant, called
//                                     from the descriptor's variant list (skipped where the build has
//                                     none, the CPU cannot run it, or it is the variant akg picks)
//   <kernel>/akg_unfused/<threads>    the same pattern generated with fusion off (one loop nest per op)
//   <kernel>/stream/<threads>         STREAM-style roofline probe, normal stores
//   <kernel>/stream_nt/<threads>      the same with non-temporal stores
//   <kernel>/halide_*/<threads>       Halide 14 JIT of the front end's Halide IR (bench_halide.cpp)
//   <kernel>/onednn_*/<threads>       oneDNN primitives (bench_onednn.cpp)
//   <kernel>/openblas_*/<threads>     GEMM kernels: OpenBLAS sgemm (+ epilogue pass), oneDNN matmul
//                                     (bench_gemm.cpp, from its own shape table)
//   fma_peak/avx512|avx2/<threads>    the FMA peak, the compute roofline of the GEMM kernels
// at 1 and 2 threads. The stream probes read and write exactly the kernel's compulsory bytes
// (every input read once, every output and in-place input written once) with the same
// read:write mix and array sizes (in-place inputs as an in-place update stream), so min(stream, stream_nt) is the kernel's roofline time.
// Run with --benchmark_enable_random_interleaving=true --benchmark_repetitions=N to
// interleave the implementations (tools/run-benchmarks.sh does).
// The results' context names the variants: akg_cpu_isa (akg_cpu_isa()), akg_variant (the target
// of the variant in the akg rows), akg_variants (the targets the build compiled, best first),
// akg_unfused_target (the target the unfused kernels were generated for).
#include "bench_common.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

extern "C" {
extern const akg_kernel *const akg_unfused_kernels[];
extern const size_t akg_unfused_kernel_count;
}

#ifndef AKG_SOURCE_ROOT
#define AKG_SOURCE_ROOT "."
#endif

namespace akgbench {

static size_t dtype_size(akg_dtype d) {
    switch (d) {
    case AKG_DTYPE_FLOAT16: return 2;
    case AKG_DTYPE_BOOL:
    case AKG_DTYPE_UINT8:
    case AKG_DTYPE_INT8: return 1;
    default: return 4;
    }
}

int64_t tensor_elements(const akg_tensor_def &t) {
    int64_t n = 1;
    for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
    return n;
}

size_t tensor_bytes(const akg_tensor_def &t) { return static_cast<size_t>(tensor_elements(t)) * dtype_size(t.dtype); }

namespace {

struct AlignedFree {
    void operator()(void *p) const { std::free(p); }
};

void *aligned_buffer(size_t bytes) {
    size_t n = (std::max<size_t>(bytes, 64) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, n);
    if (!p) {
        std::fprintf(stderr, "bench_catalog: out of memory (%zu bytes)\n", n);
        std::exit(1);
    }
    return p;
}

void fill(const akg_tensor_def &t, void *p) {
    // Small positive values keep every op finite (log, sqrt, division); masks are all 1.
    size_t n = static_cast<size_t>(tensor_elements(t));
    if (t.dtype == AKG_DTYPE_FLOAT32)
        for (size_t i = 0; i < n; ++i) static_cast<float *>(p)[i] = 0.5f + 0.001f * static_cast<float>(i % 97);
    else if (t.dtype == AKG_DTYPE_FLOAT16)
        for (size_t i = 0; i < n; ++i)
            static_cast<_Float16 *>(p)[i] = static_cast<_Float16>(0.5f + 0.001f * static_cast<float>(i % 97));
    else if (t.dtype == AKG_DTYPE_INT32)
        for (size_t i = 0; i < n; ++i) static_cast<int32_t *>(p)[i] = 1;
    else std::memset(p, 1, tensor_bytes(t));
}

std::map<const akg_kernel *, std::unique_ptr<KernelBuffers>> &buffer_cache() {
    static std::map<const akg_kernel *, std::unique_ptr<KernelBuffers>> cache;
    return cache;
}

// ---- roofline probe ----

// One pool for every kernel's probe, sized for the largest: a probe uses its kernel's
// read, in-place and write sizes from the start of each array.
struct StreamPool {
    float *rd = nullptr, *rw = nullptr, *wr = nullptr;
    size_t rd_n = 0, rw_n = 0, wr_n = 0;
};
StreamPool &stream_pool() {
    static StreamPool pool;
    return pool;
}

void grow(float *&p, size_t &have, size_t want, float value) {
    if (want <= have) return;
    std::free(p);
    p = static_cast<float *>(aligned_buffer(want * 4));
    for (size_t i = 0; i < want; ++i) p[i] = value;
    have = want;
}

// The probe moves the kernel's compulsory bytes with its mix: nr floats only read, nrw floats
// read and written back in place (an in-place input: the write hits lines just read, no
// read-for-ownership), nw floats only written (normal stores, or non-temporal with `nt`). The
// streams advance together in blocks of 64 KiB of the largest one, statically split across
// threads like a parallel kernel's outer loop.
__attribute__((noinline)) float stream_probe(const float *__restrict rd, size_t nr, float *__restrict rw, size_t nrw,
                                             float *__restrict wr, size_t nw, bool nt, int threads) {
    const size_t big = std::max(nr, std::max(nrw, nw));
    const long nb = static_cast<long>(std::max<size_t>(1, big / 16384));
    auto probe_block = [&](long b) {
        auto cut = [&](size_t n, long k) { return k >= nb ? n : (n * static_cast<size_t>(k) / static_cast<size_t>(nb)) & ~size_t(15); };
        size_t r0 = cut(nr, b), r1 = cut(nr, b + 1), u0 = cut(nrw, b), u1 = cut(nrw, b + 1), w0 = cut(nw, b),
               w1 = cut(nw, b + 1);
        float s = 0.0f;
#if defined(__AVX512F__)
        {   // four accumulators: the adds' latency must not limit a cache-resident read
            size_t i = r0;
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (; i + 64 <= r1; i += 64) {
                a0 = _mm512_add_ps(a0, _mm512_load_ps(rd + i));
                a1 = _mm512_add_ps(a1, _mm512_load_ps(rd + i + 16));
                a2 = _mm512_add_ps(a2, _mm512_load_ps(rd + i + 32));
                a3 = _mm512_add_ps(a3, _mm512_load_ps(rd + i + 48));
            }
            // Stored and added up: GCC 12 warns that _mm512_reduce_add_ps's undefined operand
            // "may be used uninitialized".
            alignas(64) float lanes[16];
            _mm512_store_ps(lanes, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
            for (float lane : lanes) s += lane;
            for (; i < r1; ++i) s += rd[i];
        }
        {
            size_t i = u0;
            const __m512 d = _mm512_set1_ps(1e-30f);
            for (; i + 16 <= u1; i += 16) _mm512_store_ps(rw + i, _mm512_add_ps(_mm512_load_ps(rw + i), d));
            for (; i < u1; ++i) rw[i] += 1e-30f;
        }
        {
            size_t i = w0;
            __m512 v = _mm512_set1_ps(s);
            const __m512 step = _mm512_set1_ps(1.0f);
            if (nt)
                for (; i + 16 <= w1; i += 16) {
                    _mm512_stream_ps(wr + i, v);
                    v = _mm512_add_ps(v, step);
                }
            else
                for (; i + 16 <= w1; i += 16) {
                    _mm512_store_ps(wr + i, v);
                    v = _mm512_add_ps(v, step);
                }
            for (; i < w1; ++i) wr[i] = s;
        }
#else
#pragma omp simd reduction(+ : s)
        for (size_t i = r0; i < r1; ++i) s += rd[i];
#pragma omp simd
        for (size_t i = u0; i < u1; ++i) rw[i] += 1e-30f;
        if (nt) {
#if defined(__AVX__)
            size_t i = w0;
            __m256 v = _mm256_set1_ps(s);
            const __m256 step = _mm256_set1_ps(1.0f);
            for (; i + 8 <= w1; i += 8) {
                _mm256_stream_ps(wr + i, v);
                v = _mm256_add_ps(v, step);
            }
            for (; i < w1; ++i) wr[i] = s;
#else
            for (size_t i = w0; i < w1; ++i) wr[i] = s;
#endif
        } else {
            // A value that depends on i keeps the compiler from turning this into memset
            // (glibc's memset switches to non-temporal stores for large sizes).
#pragma omp simd
            for (size_t i = w0; i < w1; ++i) wr[i] = s + static_cast<float>(i - w0);
        }
#endif
        return s;
    };
    // One thread runs the blocks without an OpenMP region, as the generated kernels do
    // (akg_single_thread in akg_kernel_support.h): libgomp's system call per region slows the
    // loop after it on the dev VM, and the roofline must not carry a cost the kernels avoid.
    float total = 0.0f;
    if (threads == 1) {
        for (long b = 0; b < nb; ++b) total += probe_block(b);
    } else {
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : total)
        for (long b = 0; b < nb; ++b) total += probe_block(b);
    }
    if (nt) _mm_sfence();
    return total;
}

void run_stream(benchmark::State &state, const akg_kernel *k, bool nt) {
    const int threads = static_cast<int>(state.range(0));
    KernelBuffers &b = buffers_for(k);
    size_t nr = (b.read_bytes - b.inplace_bytes + 3) / 4, nrw = (b.inplace_bytes + 3) / 4,
           nw = (b.write_bytes - b.inplace_bytes + 3) / 4;
    StreamPool &p = stream_pool();
    grow(p.rd, p.rd_n, nr, 1.0f);
    grow(p.rw, p.rw_n, nrw, 1.0f);
    grow(p.wr, p.wr_n, nw, 0.0f);
    benchmark::DoNotOptimize(stream_probe(p.rd, nr, p.rw, nrw, p.wr, nw, nt, threads)); // warm-up, untimed
    for (auto _ : state) {
        float s = stream_probe(p.rd, nr, p.rw, nrw, p.wr, nw, nt, threads);
        benchmark::DoNotOptimize(s);
        benchmark::ClobberMemory();
    }
    set_counters(state, k, threads);
}

// Times one compiled variant of a kernel on the buffers of `buffers_of` (the catalog kernel: the
// unfused twin and every variant run on the same memory).
void run_variant(benchmark::State &state, akg_kernel_fn fn, const akg_kernel *buffers_of) {
    const int threads = static_cast<int>(state.range(0));
    omp_set_num_threads(threads);
    KernelBuffers &b = buffers_for(buffers_of);
    benchmark::DoNotOptimize(fn(b.pointers.data())); // warm-up, untimed
    for (auto _ : state) {
        int status = fn(b.pointers.data());
        benchmark::DoNotOptimize(status);
        benchmark::ClobberMemory();
    }
    set_counters(state, buffers_of, threads);
}

// The variant akg_run runs (what a user of the library gets on this machine).
void run_kernel(benchmark::State &state, const akg_kernel *k, const akg_kernel *buffers_of) {
    const akg_variant_def *v = akg_kernel_select_variant(k);
    if (!v) {
        state.SkipWithError("no compiled variant of this kernel runs on this CPU");
        return;
    }
    run_variant(state, v->fn, buffers_of);
}

// The variant akg_run_packed runs: its weights packed once, outside the timing, as oneDNN's
// prepacked weights are (akg_pack_input); the other buffers are the catalog kernel's.
void run_packed(benchmark::State &state, const akg_kernel *k) {
    const akg_variant_def *v = akg_kernel_select_variant(k);
    const akg_prepack_def &p = *v->prepack;
    static std::map<const akg_kernel *, void *> packed_weights;
    KernelBuffers &b = buffers_for(k);
    void *&packed = packed_weights[k];
    if (!packed) {
        packed = aligned_buffer(p.packed_bytes);
        p.pack(b.pointers[p.input], packed);
    }
    std::vector<void *> pointers = b.pointers;
    pointers[p.input] = packed;
    const int threads = static_cast<int>(state.range(0));
    omp_set_num_threads(threads);
    benchmark::DoNotOptimize(p.fn_packed(pointers.data())); // warm-up, untimed
    for (auto _ : state) {
        int status = p.fn_packed(pointers.data());
        benchmark::DoNotOptimize(status);
        benchmark::ClobberMemory();
    }
    set_counters(state, k, threads);
}

// The variant of `k` compiled for `target`, or nullptr.
const akg_variant_def *find_variant(const akg_kernel *k, const char *target) {
    for (const akg_variant_def *v = k->variants; v && v->fn; ++v)
        if (std::strcmp(v->target, target) == 0) return v;
    return nullptr;
}

// Whether this CPU has every feature a variant needs, whatever AKG_MAX_ISA says (the bench calls
// the variant's function directly).
bool cpu_runs(uint32_t features) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if ((features & AKG_CPU_X86_64_V2) && !__builtin_cpu_supports("x86-64-v2")) return false;
    if ((features & AKG_CPU_X86_64_V3) && !__builtin_cpu_supports("x86-64-v3")) return false;
    if ((features & AKG_CPU_X86_64_V4) && !__builtin_cpu_supports("x86-64-v4")) return false;
    return true;
#else
    return features == 0;
#endif
}

// The second variant the report shows beside the one akg picks: AVX2 next to AVX-512.
constexpr const char *kSecondTarget = "x86-64-v3";

// Registers <kernel>/akg_<target>: the kernel's `target` variant called directly, or a skip that says
// why it cannot run. Returns the reason it was skipped ("" when registered).
std::string register_variant(const akg_kernel *k, const char *target) {
    const std::string name = k->name, impl = std::string("akg_") + target;
    const akg_variant_def *v = find_variant(k, target);
    const akg_variant_def *picked = akg_kernel_select_variant(k);
    std::string why;
    if (!v) why = std::string("this build has no ") + target + " variant (-Dkernel_targets)";
    else if (!cpu_runs(v->cpu_features)) why = std::string("this CPU cannot run the ") + target + " variant";
    else if (v == picked) why = std::string("the ") + target + " variant is the one akg runs here (the akg column)";
    if (!why.empty()) {
        register_skip(name, impl, why);
        return why;
    }
    register_timed(name, impl, [fn = v->fn, k](benchmark::State &s) { run_variant(s, fn, k); });
    return why;
}

const akg_kernel *find_unfused(const std::string &name) {
    for (size_t i = 0; i < akg_unfused_kernel_count; ++i)
        if (name == akg_unfused_kernels[i]->name) return akg_unfused_kernels[i];
    return nullptr;
}

} // namespace

KernelBuffers &buffers_for(const akg_kernel *k) {
    auto &cache = buffer_cache();
    auto it = cache.find(k);
    if (it != cache.end()) return *it->second;
    auto b = std::make_unique<KernelBuffers>();
    for (size_t i = 0; i < k->num_inputs; ++i) {
        void *p = aligned_buffer(tensor_bytes(k->inputs[i]));
        fill(k->inputs[i], p);
        b->pointers.push_back(p);
        b->read_bytes += tensor_bytes(k->inputs[i]);
        if (k->inputs[i].inplace_input) {
            b->write_bytes += tensor_bytes(k->inputs[i]);
            b->inplace_bytes += tensor_bytes(k->inputs[i]);
        }
    }
    for (size_t i = 0; i < k->num_outputs; ++i) {
        void *p = aligned_buffer(tensor_bytes(k->outputs[i]));
        std::memset(p, 0, tensor_bytes(k->outputs[i]));
        b->pointers.push_back(p);
        b->write_bytes += tensor_bytes(k->outputs[i]);
    }
    KernelBuffers &ref = *b;
    cache.emplace(k, std::move(b));
    return ref;
}

void set_counters(benchmark::State &state, const akg_kernel *k, int threads) {
    const akg_kernel *key = k;
    KernelBuffers &b = buffers_for(key);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(b.compulsory_bytes()));
    state.counters["compulsory_MB"] = static_cast<double>(b.compulsory_bytes()) / 1e6;
    state.counters["read_MB"] = static_cast<double>(b.read_bytes) / 1e6;
    state.counters["write_MB"] = static_cast<double>(b.write_bytes) / 1e6;
    state.counters["threads"] = threads;
}

void register_timed(const std::string &kernel, const std::string &impl, std::function<void(benchmark::State &)> run) {
    benchmark::RegisterBenchmark((kernel + "/" + impl).c_str(), [run](benchmark::State &state) { run(state); })
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->ComputeStatistics("min", [](const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); });
}

void register_skip(const std::string &kernel, const std::string &impl, const std::string &reason) {
    std::string r = reason;
    benchmark::RegisterBenchmark((kernel + "/" + impl).c_str(),
                                 [r](benchmark::State &state) { state.SkipWithError(r.c_str()); })
        ->Iterations(1)
        ->Repetitions(1);
}

} // namespace akgbench

int main(int argc, char **argv) {
    using namespace akgbench;
    const char *root_env = std::getenv("AKG_SOURCE_ROOT");
    std::string root = root_env ? root_env : AKG_SOURCE_ROOT;
    std::string variant, variants, skipped_second;
    for (size_t i = 0; i < akg_catalog_kernel_count; ++i) {
        const akg_kernel *k = akg_catalog_kernels[i];
        const std::string name = k->name;
        const char *picked = akg_kernel_variant(k);
        const std::string p = picked ? picked : "none";
        if (variant.empty()) variant = p;
        else if (variant != p && variant.find("(varies)") == std::string::npos) variant += " (varies)";
        if (variants.empty())
            for (size_t j = 0; j < akg_kernel_num_variants(k); ++j)
                variants += (j ? "," : "") + std::string(akg_kernel_variant_at(k, j));
        register_timed(name, "akg", [k](benchmark::State &s) { run_kernel(s, k, k); });
        if (akg_kernel_packable_input(k) >= 0) register_timed(name, "akg_packed", [k](benchmark::State &s) { run_packed(s, k); });
        const std::string why = register_variant(k, kSecondTarget);
        if (!why.empty()) skipped_second = why;
        if (const akg_kernel *u = find_unfused(name)) register_timed(name, "akg_unfused", [u, k](benchmark::State &s) { run_kernel(s, u, k); });
        register_timed(name, "stream", [k](benchmark::State &s) { run_stream(s, k, false); });
        register_timed(name, "stream_nt", [k](benchmark::State &s) { run_stream(s, k, true); });
    }
    register_onednn(akg_catalog_kernels, akg_catalog_kernel_count);
    register_halide(akg_catalog_kernels, akg_catalog_kernel_count, root);
    register_gemm(akg_catalog_kernels, akg_catalog_kernel_count);
    if (!skipped_second.empty())
        std::fprintf(stderr, "bench_catalog: akg_%s skipped: %s\n", kSecondTarget, skipped_second.c_str());
    benchmark::AddCustomContext("akg_cpu_isa", akg_cpu_isa());
    benchmark::AddCustomContext("akg_variant", variant);
    benchmark::AddCustomContext("akg_variants", variants);
    benchmark::AddCustomContext("akg_second_variant", kSecondTarget);
    if (akg_unfused_kernel_count > 0 && akg_unfused_kernels[0]->variants && akg_unfused_kernels[0]->variants[0].fn)
        benchmark::AddCustomContext("akg_unfused_target", akg_unfused_kernels[0]->variants[0].target);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
