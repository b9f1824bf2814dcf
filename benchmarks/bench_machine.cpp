// What one core of this machine does per 16-float vector with its operands in L1: the costs
// that bound the compute of the catalog kernels when memory does not (float16 conversions,
// stores next to loads). The report (make_report.py) lists them next to the roofline, so a
// kernel that misses it can be read against what its per-vector work costs here. One thread,
// no OpenMP; each probe runs over arrays of kElements floats (24 KiB each, in L1) again and
// again, and reports ns_per_vector: nanoseconds per 16 elements.
//   l1/load_add_f32     4 accumulators adding loaded vectors (a lane reduction's pass)
//   l1/store_f32        stores of a register (an output written from registers)
//   l1/copy_f32         a load and a store per vector (a pass that reads a row and writes one)
//   l1/f16_to_f32       vcvtph2ps of 16 halves and a store of the 16 floats
//   l1/f32_to_f16       vcvtps2ph of 16 floats (512-bit) and a store of the 16 halves
//   l1/f32_to_f16_ymm   the same with two 256-bit vcvtps2ph per 16 floats
// Without AVX-512 and F16C the probes are skipped with a message.
#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <cstdint>

namespace {

constexpr int kElements = 6144;
constexpr int kVectors = kElements / 16;

alignas(64) float floats_in[kElements];
alignas(64) float floats_out[kElements];
alignas(64) uint16_t halves_in[kElements];
alignas(64) uint16_t halves_out[kElements];

void fill_once() {
    static bool filled = false;
    if (filled) return;
    for (int i = 0; i < kElements; ++i) {
        floats_in[i] = 0.5f + 0.001f * static_cast<float>(i % 97);
        halves_in[i] = static_cast<uint16_t>(0x3800 + i % 97); // halves near 0.5
    }
    filled = true;
}

void per_vector(benchmark::State &state) {
    state.counters["ns_per_vector"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * kVectors * 1e-9,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

#if defined(__AVX512F__) && defined(__F16C__)

// (Masked forms: GCC 12 warns that the unmasked intrinsics' undefined pass-through operand "is
// used uninitialized".)
constexpr __mmask16 kAll = 0xffff;

__attribute__((noinline)) __m512 load_add(const float *in) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < kElements; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(in + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(in + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(in + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(in + i + 48));
    }
    return _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
}

__attribute__((noinline)) void store(float *out, __m512 v) {
    for (int i = 0; i < kElements; i += 16) _mm512_store_ps(out + i, v);
}

__attribute__((noinline)) void copy(float *out, const float *in) {
    for (int i = 0; i < kElements; i += 16) _mm512_store_ps(out + i, _mm512_load_ps(in + i));
}

__attribute__((noinline)) void f16_to_f32(float *out, const uint16_t *in) {
    for (int i = 0; i < kElements; i += 16)
        _mm512_store_ps(out + i, _mm512_maskz_cvtph_ps(kAll, _mm256_load_si256(reinterpret_cast<const __m256i *>(in + i))));
}

__attribute__((noinline)) void f32_to_f16(uint16_t *out, const float *in) {
    for (int i = 0; i < kElements; i += 16)
        _mm256_store_si256(reinterpret_cast<__m256i *>(out + i), _mm512_maskz_cvtps_ph(kAll, _mm512_load_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((noinline)) void f32_to_f16_ymm(uint16_t *out, const float *in) {
    for (int i = 0; i < kElements; i += 8)
        _mm_store_si128(reinterpret_cast<__m128i *>(out + i), _mm256_cvtps_ph(_mm256_load_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
}

void BM_load_add(benchmark::State &state) {
    fill_once();
    for (auto _ : state) {
        __m512 s = load_add(floats_in);
        benchmark::DoNotOptimize(s);
    }
    per_vector(state);
}

void BM_store(benchmark::State &state) {
    fill_once();
    const __m512 v = _mm512_set1_ps(1.0f);
    for (auto _ : state) {
        store(floats_out, v);
        benchmark::ClobberMemory();
    }
    per_vector(state);
}

template <typename Out, typename In, void (*Probe)(Out *, const In *)>
void BM_array(benchmark::State &state, Out *out, const In *in) {
    fill_once();
    for (auto _ : state) {
        Probe(out, in);
        benchmark::ClobberMemory();
    }
    per_vector(state);
}

void BM_copy(benchmark::State &state) { BM_array<float, float, copy>(state, floats_out, floats_in); }
void BM_f16_to_f32(benchmark::State &state) { BM_array<float, uint16_t, f16_to_f32>(state, floats_out, halves_in); }
void BM_f32_to_f16(benchmark::State &state) { BM_array<uint16_t, float, f32_to_f16>(state, halves_out, floats_in); }
void BM_f32_to_f16_ymm(benchmark::State &state) { BM_array<uint16_t, float, f32_to_f16_ymm>(state, halves_out, floats_in); }

BENCHMARK(BM_load_add)->Name("l1/load_add_f32");
BENCHMARK(BM_store)->Name("l1/store_f32");
BENCHMARK(BM_copy)->Name("l1/copy_f32");
BENCHMARK(BM_f16_to_f32)->Name("l1/f16_to_f32");
BENCHMARK(BM_f32_to_f16)->Name("l1/f32_to_f16");
BENCHMARK(BM_f32_to_f16_ymm)->Name("l1/f32_to_f16_ymm");

#else

void BM_skipped(benchmark::State &state) { state.SkipWithError("built without AVX-512 and F16C: no per-vector probes"); }
BENCHMARK(BM_skipped)->Name("l1/skipped");

#endif

} // namespace

BENCHMARK_MAIN();
