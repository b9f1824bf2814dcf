// GEMM peers of the catalog's MatMul / BatchMatMul kernels with fused epilogues, and the FMA peak
// they are read against. Every benchmark is "<kernel>/<impl>/<threads>" like the rest of the suite:
//   fma_peak/avx512/<t>, fma_peak/avx2/<t>  independent FMA chains (16 zmm / 12 ymm accumulators),
//                                            the compute roofline of a GEMM: GFLOP/s at t threads
//   <kernel>/onednn/<t>          oneDNN matmul with the epilogue as bias arg + post-ops, plain weights
//   <kernel>/onednn_packed/<t>   the same with the weights in oneDNN's layout (format_tag::any),
//                                reordered once outside the timing (only where B is a weight)
//   <kernel>/openblas_epilogue/<t>  cblas_sgemm, then the epilogue as one separate row-parallel pass
//                                (float16 kernels: the conversions to and from float are timed in)
//   <kernel>/openblas_bare/<t>   cblas_sgemm alone, float32 (the stretch: a GEMM with no epilogue)
// The kernels' shapes and epilogues are the table below (kSpecs), so the peers build and run
// without the catalog kernels (the standalone bench_gemm has no akg kernel at all); the suite's
// akg rows come from the catalog as for every other kernel. bench_catalog adds the table to the
// results' context (akg_gemm_specs) for make_report.py: flops per call, shapes, and the shapes of
// catalog kernels named gemm_*/bmm_* that the table lacks (a bare twin such as gemm_bare_*).
// Flops = 2·M·N·K·batch (the epilogue is not counted).
#include "bench_common.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#ifdef AKG_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif
#ifdef AKG_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace akgbench {
namespace {

// ---- the catalog's GEMM kernels ----

// kKeyMask: an additive mask [b0, 1, 1, N] (per batch and key). The row parts after the GEMM:
// kSoftmaxDropout: C is the softmax over each row, a second output its dropout (times a 0/1 keep
// mask and 1/0.9); kLayerNorm: C is the LayerNorm's input, a second output its y, with its rows'
// mean and variance.
enum Epilogue : unsigned {
    kBias = 1, kGelu = 2, kResidual = 4, kScale = 8, kMask = 16, kColSum = 32, kSplitHeads = 64, kMergeHeads = 128,
    kKeyMask = 256, kSoftmaxDropout = 512, kLayerNorm = 1024
};
constexpr unsigned kRowParts = kSoftmaxDropout | kLayerNorm;

// BERT-base's heads: split heads stores C[B·S, 3·NH·HD] (+ bias) as [3, B, NH, S, HD]; merge heads
// stores the context C[B, NH, S, HD] as [B·S, NH·HD].
constexpr int64_t kSeq = 128, kHeads = 12, kHeadDim = 64;

struct GemmSpec {
    const char *name;
    int64_t b0, b1;   // batch dimensions (1, 1 for a plain GEMM); a mask broadcasts over b1 (heads)
    int64_t m, n, k;  // C[M,N] = A[M,K]·B[K,N]
    bool ta, tb;      // A stored [K,M] (transposed), B stored [N,K]
    bool f16;         // every tensor float16 (accumulation in float)
    unsigned epi;     // Epilogue bits
    bool b_is_weight; // B is a constant weight: packing it once outside the timing is legitimate
    const char *what;
    int64_t batch() const { return b0 * b1; }
    double flop() const { return 2.0 * static_cast<double>(batch()) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// BERT-base at 2048 tokens (batch 16 × 128), float32 unless the name says f16.
const std::vector<GemmSpec> &specs() {
    static const std::vector<GemmSpec> s = {
        {"gemm_qkv_bias_f32", 1, 1, 2048, 2304, 768, false, false, false, kBias, true, "X[2048,768]·W[768,2304] + b"},
        {"gemm_attn_out_bias_residual_f32", 1, 1, 2048, 768, 768, false, false, false, kBias | kResidual, true,
         "X[2048,768]·W[768,768] + b + R"},
        {"gemm_ffn1_bias_gelu_f32", 1, 1, 2048, 3072, 768, false, false, false, kBias | kGelu, true,
         "GeLU_tanh(X[2048,768]·W[768,3072] + b)"},
        {"gemm_ffn1_bias_gelu_f16", 1, 1, 2048, 3072, 768, false, false, true, kBias | kGelu, true,
         "GeLU_tanh(X·W + b), float16 tensors"},
        {"gemm_ffn2_bias_residual_f32", 1, 1, 2048, 768, 3072, false, false, false, kBias | kResidual, true,
         "X[2048,3072]·W[3072,768] + b + R"},
        {"gemm_mlm_head_bias_f32", 1, 1, 320, 21128, 768, false, true, false, kBias, true, "X[320,768]·E[21128,768]ᵀ + b"},
        {"bmm_attn_scores_scale_mask_f32", 16, 12, 128, 128, 64, false, true, false, kScale | kMask, false,
         "Q[16,12,128,64]·Kᵀ × 0.125 + mask[16,1,128,128]"},
        {"bmm_attn_context_f32", 16, 12, 128, 64, 128, false, false, false, 0, false, "P[16,12,128,128]·V[16,12,128,64]"},
        {"gemm_qkv_bias_split_heads_f32", 1, 1, 2048, 2304, 768, false, false, false, kBias | kSplitHeads, true,
         "X[2048,768]·W[768,2304] + b, stored as q, k, v [3,16,12,128,64]"},
        {"bmm_attn_context_merge_heads_f32", 16, 12, 128, 64, 128, false, false, false, kMergeHeads, false,
         "P[16,12,128,128]·V[16,12,128,64], stored as [2048,768]"},
        {"bmm_attn_scores_softmax_dropout_f32", 16, 12, 128, 128, 64, false, true, false, kScale | kKeyMask | kSoftmaxDropout, false,
         "softmax(Q[16,12,128,64]·Kᵀ × 0.125 + mask[16,1,1,128]) and its dropout"},
        {"gemm_attn_out_bias_residual_layernorm_f32", 1, 1, 2048, 768, 768, false, false, false, kBias | kResidual | kLayerNorm, true,
         "LayerNorm(X[2048,768]·W[768,768] + b + R): y, mean, variance and its input"},
        {"gemm_dx_f32", 1, 1, 2048, 768, 3072, false, true, false, 0, true, "dY[2048,3072]·W[768,3072]ᵀ"},
        {"gemm_dw_bias_grad_f32", 1, 1, 768, 3072, 2048, true, false, false, kColSum, false,
         "X[2048,768]ᵀ·dY[2048,3072], db = column sum of dY"},
        {"gemm_fc_bias_f32", 1, 1, 32, 1001, 2048, false, false, false, kBias, true, "X[32,2048]·W[2048,1001] + b"},
        {"gemm_nt_f16", 1, 1, 100352, 128, 256, false, true, true, 0, true, "[100352,256]·[128,256]ᵀ, float16"},
    };
    return s;
}

constexpr float kScaleValue = 0.125f;
constexpr float kKeepProb = 0.9f, kLayerNormEpsilon = 1e-7f;

// ---- buffers ----

void *alloc_bytes(size_t bytes) {
    size_t n = (std::max<size_t>(bytes, 64) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, n);
    if (!p) {
        std::fprintf(stderr, "bench_gemm: out of memory (%zu bytes)\n", n);
        std::exit(1);
    }
    std::memset(p, 0, n);
    return p;
}

// Values like the suite's fill(): small, positive, varied; a GEMM over them stays finite.
void fill_values(void *p, size_t n, bool f16, float scale = 1.0f) {
    for (size_t i = 0; i < n; ++i) {
        float v = scale * (0.5f + 0.001f * static_cast<float>(i % 97)) - 0.25f * scale;
        if (f16) static_cast<_Float16 *>(p)[i] = static_cast<_Float16>(v);
        else static_cast<float *>(p)[i] = v;
    }
}

// One set per kernel, made on first use and kept (every peer of a kernel reads the same memory).
// a, b, c, bias and residual have the kernel's dtype; mask and db are float; a32/b32/c32 are the
// float copies a float16 kernel's OpenBLAS peer converts into (made lazily).
struct Buffers {
    void *a = nullptr, *b = nullptr, *c = nullptr, *bias = nullptr, *res = nullptr;
    float *mask = nullptr, *db = nullptr;
    // The row parts': the second output (dropout, y), the keep mask, gamma, beta, mean, variance.
    float *c2 = nullptr, *keep = nullptr, *gamma = nullptr, *beta = nullptr, *mean = nullptr, *var = nullptr;
    float *a32 = nullptr, *b32 = nullptr, *c32 = nullptr;
};

size_t elems_a(const GemmSpec &s) { return static_cast<size_t>(s.batch() * s.m * s.k); }
size_t elems_b(const GemmSpec &s) { return static_cast<size_t>(s.batch() * s.k * s.n); }
size_t elems_c(const GemmSpec &s) { return static_cast<size_t>(s.batch() * s.m * s.n); }

Buffers &buffers(const GemmSpec &s) {
    static std::map<std::string, std::unique_ptr<Buffers>> cache;
    auto &slot = cache[s.name];
    if (slot) return *slot;
    slot = std::make_unique<Buffers>();
    Buffers &b = *slot;
    const size_t es = s.f16 ? 2 : 4;
    // A is scaled by 1/K so that sums over K stay near 1 (GeLU and float16 outputs in range).
    b.a = alloc_bytes(elems_a(s) * es);
    fill_values(b.a, elems_a(s), s.f16, 4.0f / static_cast<float>(s.k));
    b.b = alloc_bytes(elems_b(s) * es);
    fill_values(b.b, elems_b(s), s.f16);
    b.c = alloc_bytes(elems_c(s) * es);
    if (s.epi & kBias) {
        b.bias = alloc_bytes(static_cast<size_t>(s.n) * es);
        fill_values(b.bias, static_cast<size_t>(s.n), s.f16, 0.1f);
    }
    if (s.epi & kResidual) {
        b.res = alloc_bytes(elems_c(s) * es);
        fill_values(b.res, elems_c(s), s.f16);
    }
    if (s.epi & kMask) {
        b.mask = static_cast<float *>(alloc_bytes(static_cast<size_t>(s.b0 * s.m * s.n) * 4));
        fill_values(b.mask, static_cast<size_t>(s.b0 * s.m * s.n), false, -1.0f);
    }
    if (s.epi & kColSum) b.db = static_cast<float *>(alloc_bytes(static_cast<size_t>(s.n) * 4));
    auto floats = [](size_t n) { return static_cast<float *>(alloc_bytes(n * 4)); };
    if (s.epi & kKeyMask) {
        b.mask = floats(static_cast<size_t>(s.b0 * s.n));
        for (int64_t i = 0; i < s.b0 * s.n; ++i) b.mask[i] = i % 7 == 6 ? -10000.0f : 0.0f;
    }
    if (s.epi & kRowParts) b.c2 = floats(elems_c(s));
    if (s.epi & kSoftmaxDropout) {
        b.keep = floats(elems_c(s));
        for (size_t i = 0; i < elems_c(s); ++i) b.keep[i] = i % 10 == 3 ? 0.0f : 1.0f;
    }
    if (s.epi & kLayerNorm) {
        b.gamma = floats(static_cast<size_t>(s.n));
        b.beta = floats(static_cast<size_t>(s.n));
        fill_values(b.gamma, static_cast<size_t>(s.n), false);
        fill_values(b.beta, static_cast<size_t>(s.n), false, 0.1f);
        b.mean = floats(static_cast<size_t>(s.batch() * s.m));
        b.var = floats(static_cast<size_t>(s.batch() * s.m));
    }
    return b;
}

// Runs body(i) for i in [0, n): without an OpenMP region at one thread (as the generated kernels
// do: libgomp's region entry is a cost the single-thread rows should not carry), else statically
// split over `threads`.
template <typename F>
void par_for(int threads, int64_t n, F &&body) {
    if (threads <= 1) {
        for (int64_t i = 0; i < n; ++i) body(i);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) body(i);
}

// exp(x) by range reduction and a degree-5 polynomial, in plain C++ that GCC vectorizes under
// `omp simd` (libm's expf is a scalar call without -ffast-math): the epilogue pass of a user who
// cares, not a libm bottleneck the peer would not have in PyTorch or oneDNN.
#pragma omp declare simd
inline float exp_vec(float x) {
    x = std::max(-87.0f, std::min(x, 88.0f)); // (min/max, not branches: they vectorize)
    // Round to nearest by adding and subtracting 1.5·2^23 (floorf does not vectorize under
    // -ftrapping-math, GCC's default).
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    // (__builtin_bit_cast, not memcpy: GCC 12 does not vectorize the memcpy's load)
    return p * __builtin_bit_cast(float, (static_cast<int32_t>(n) + 127) << 23);
}

// GeLU, tanh form: x·(1 + tanh(z))/2 = x / (1 + e^(-2z)), z = √(2/π)(x + 0.044715x³).
#pragma omp declare simd
inline float gelu_tanh(float x) {
    float z = 0.7978845608f * (x + 0.044715f * x * x * x);
    return x / (1.0f + exp_vec(-2.0f * z));
}

// float16 <-> float with the F16C / AVX-512 conversions: GCC 12 does not vectorize _Float16 casts
// on CPUs without AVX512-FP16, and a peer that converted element by element would be a straw man.
void h2f(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + i))));
#endif
    for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}

void f2h(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + i),
                            _mm512_maskz_cvtps_ph(0xffff, _mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}

void convert_to_float(const void *in, float *out, size_t n, int threads) {
    const int64_t blocks = static_cast<int64_t>((n + 16383) / 16384);
    par_for(threads, blocks, [&](int64_t blk) {
        size_t lo = static_cast<size_t>(blk) * 16384, hi = std::min(n, lo + 16384);
        h2f(static_cast<const uint16_t *>(in) + lo, out + lo, hi - lo);
    });
}

// One row of the epilogue, its terms fixed at compile time (a loop with run-time `if (bias)`
// tests inside is not vectorized by GCC 12). F: 1 bias, 2 residual, 4 mask, 8 GeLU.
template <unsigned F>
void epilogue_row(const float *c, const float *bias, const float *res, const float *mask, float *out, int64_t n, float scale) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
        float v = c[j] * scale;
        if constexpr ((F & 1) != 0) v += bias[j];
        if constexpr ((F & 2) != 0) v += res[j];
        if constexpr ((F & 4) != 0) v += mask[j];
        if constexpr ((F & 8) != 0) v = gelu_tanh(v);
        out[j] = v;
    }
}

using RowFn = void (*)(const float *, const float *, const float *, const float *, float *, int64_t, float);

template <unsigned... F>
RowFn pick_row(unsigned f, std::integer_sequence<unsigned, F...>) {
    static const RowFn table[] = {epilogue_row<F>...};
    return table[f];
}

// float16 kernels: the bias converted once per call, each residual row into an L1 row before the
// float row function, and the result row converted back (all timed: what a float16 peer pays).
void epilogue_rows(const GemmSpec &s, Buffers &b, const float *c32, int threads) {
    const int64_t n = s.n;
    const float scale = (s.epi & kScale) ? kScaleValue : 1.0f;
    const unsigned f = ((s.epi & kBias) ? 1u : 0u) | ((s.epi & kResidual) ? 2u : 0u) | ((s.epi & (kMask | kKeyMask)) ? 4u : 0u) |
                       ((s.epi & kGelu) ? 8u : 0u);
    const RowFn row = pick_row(f, std::make_integer_sequence<unsigned, 16>());
    std::vector<float> bias16;
    const float *bias = static_cast<const float *>(b.bias);
    if (s.f16 && b.bias) {
        bias16.resize(static_cast<size_t>(n));
        h2f(static_cast<const uint16_t *>(b.bias), bias16.data(), static_cast<size_t>(n));
        bias = bias16.data();
    }
    par_for(threads, s.batch() * s.m, [&](int64_t r) {
        const float *mrow = nullptr;
        if (s.epi & kMask) mrow = b.mask + (((r / s.m) / s.b1) * s.m + r % s.m) * n;
        if (s.epi & kKeyMask) mrow = b.mask + ((r / s.m) / s.b1) * n;
        if (s.epi & kSplitHeads) {
            // Row r = (batch, position) holds 3·NH heads of HD values, each stored where its head goes.
            const int64_t bi = r / kSeq, pos = r % kSeq, batches = s.m / kSeq;
            for (int64_t head = 0; head < n / kHeadDim; ++head) {
                const int64_t q = head / kHeads, h = head % kHeads;
                float *out = static_cast<float *>(b.c) + (((q * batches + bi) * kHeads + h) * kSeq + pos) * kHeadDim;
                row(c32 + r * n + head * kHeadDim, bias + head * kHeadDim, nullptr, nullptr, out, kHeadDim, scale);
            }
            return;
        }
        if (!s.f16) {
            const float *res = b.res ? static_cast<const float *>(b.res) + r * n : nullptr;
            row(c32 + r * n, bias, res, mrow, static_cast<float *>(b.c) + r * n, n, scale);
            return;
        }
        thread_local std::vector<float> res_row, out_row;
        res_row.resize(static_cast<size_t>(n));
        out_row.resize(static_cast<size_t>(n));
        if (b.res) h2f(static_cast<const uint16_t *>(b.res) + r * n, res_row.data(), static_cast<size_t>(n));
        row(c32 + r * n, bias, res_row.data(), mrow, out_row.data(), n, scale);
        f2h(out_row.data(), static_cast<uint16_t *>(b.c) + r * n, static_cast<size_t>(n));
    });
}

// The softmax of row x into p, and p · keep / 0.9 into y (x may be p).
void softmax_dropout_row(const float *x, const float *keep, float *p, float *y, int64_t n) {
    // The maximum in 16 lanes: GCC 12 leaves `omp simd reduction(max)` of std::max scalar.
    alignas(64) float lane[16];
    for (float &l : lane) l = -INFINITY;
    int64_t j0 = 0;
    for (; j0 + 16 <= n; j0 += 16) {
#pragma omp simd
        for (int l = 0; l < 16; ++l) lane[l] = lane[l] > x[j0 + l] ? lane[l] : x[j0 + l];
    }
    for (; j0 < n; ++j0) lane[0] = lane[0] > x[j0] ? lane[0] : x[j0];
    float mx = lane[0];
    for (float l : lane) mx = mx > l ? mx : l;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) {
        // Below -87, 0 as the true exponential rounds: exp_vec's clamp would leave a tiny normal
        // whose products are subnormal, tens of times slower (the masked keys' -10000).
        const float d = x[j] - mx;
        p[j] = d < -87.0f ? 0.0f : exp_vec(d);
        sum += p[j];
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
        p[j] *= inv;
        y[j] = p[j] * keep[j] * (1.0f / kKeepProb);
    }
}

// LayerNorm of row h into y, with its mean and biased variance.
void layer_norm_row(const float *h, const float *gamma, const float *beta, float *y, float *mean, float *var, int64_t n) {
    float sum = 0, sq = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += h[j];
    const float mu = sum / static_cast<float>(n);
#pragma omp simd reduction(+ : sq)
    for (int64_t j = 0; j < n; ++j) sq += (h[j] - mu) * (h[j] - mu);
    const float v = sq / static_cast<float>(n), rstd = 1.0f / std::sqrt(v + kLayerNormEpsilon);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = (h[j] - mu) * rstd * gamma[j] + beta[j];
    *mean = mu;
    *var = v;
}

// The row part after the epilogue, a second pass over C's rows (C is the kernel's first output).
void row_pass(const GemmSpec &s, Buffers &b, int threads) {
    const int64_t n = s.n;
    float *c = static_cast<float *>(b.c);
    par_for(threads, s.batch() * s.m, [&](int64_t r) {
        if (s.epi & kSoftmaxDropout) softmax_dropout_row(c + r * n, b.keep + r * n, c + r * n, b.c2 + r * n, n);
        else layer_norm_row(c + r * n, b.gamma, b.beta, b.c2 + r * n, b.mean + r, b.var + r, n);
    });
}

// The epilogue after a plain GEMM, one pass over C's rows (parallel like the GEMM): out =
// act(scale·C + bias + residual + mask) in the kernel's dtype; db = column sums of B (dW's dY);
// then a row part's pass.
void epilogue_pass(const GemmSpec &s, Buffers &b, const float *c32, int threads) {
    const int64_t n = s.n;
    if (s.epi & (kBias | kGelu | kResidual | kScale | kMask | kKeyMask) || s.f16) {
        epilogue_rows(s, b, c32, threads);
    }
    if (s.epi & kRowParts) row_pass(s, b, threads);
    if (s.epi & kColSum) {
        // Blocks of 256 columns, walked row by row with vector adds (dY is [K, N] here).
        const float *dy = static_cast<const float *>(b.b);
        const int64_t blocks = (n + 255) / 256;
        par_for(threads, blocks, [&](int64_t blk) {
            int64_t j0 = blk * 256, j1 = std::min(n, j0 + 256);
            alignas(64) float acc[256] = {};
            for (int64_t i = 0; i < s.k; ++i) {
                const float *row = dy + i * n;
#pragma omp simd
                for (int64_t j = j0; j < j1; ++j) acc[j - j0] += row[j];
            }
            for (int64_t j = j0; j < j1; ++j) b.db[j] = acc[j - j0];
        });
    }
}

// ---- FMA peak ----

#if defined(__AVX512F__)
// 16 independent chains: Zen 5 and Sapphire Rapids retire 2 FMAs a cycle with a 4-cycle latency,
// so at least 8 chains are needed to keep both pipes busy; 16 leaves margin. 512 flop/iteration.
__attribute__((noinline)) float fma_chains_512(long iters, float av, float bv) {
    const __m512 a = _mm512_set1_ps(av), b = _mm512_set1_ps(bv);
    __m512 c[16];
    for (int i = 0; i < 16; ++i) c[i] = _mm512_set1_ps(static_cast<float>(i));
    for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) c[i] = _mm512_fmadd_ps(c[i], a, b);
    }
    for (int i = 1; i < 16; ++i) c[0] = _mm512_add_ps(c[0], c[i]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, c[0]);
    float s = 0;
    for (float l : lanes) s += l;
    return s;
}
constexpr double kFlop512 = 16 * 16 * 2;
#endif

#if defined(__AVX2__) && defined(__FMA__)
// The same with 256-bit vectors and 12 chains (14 of AVX2's 16 ymm registers with a and b):
// what an AVX2 (x86-64-v3) GEMM could reach. 192 flop/iteration.
__attribute__((noinline)) float fma_chains_256(long iters, float av, float bv) {
    const __m256 a = _mm256_set1_ps(av), b = _mm256_set1_ps(bv);
    __m256 c[12];
    for (int i = 0; i < 12; ++i) c[i] = _mm256_set1_ps(static_cast<float>(i));
    for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) c[i] = _mm256_fmadd_ps(c[i], a, b);
    }
    for (int i = 1; i < 12; ++i) c[0] = _mm256_add_ps(c[0], c[i]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, c[0]);
    float s = 0;
    for (float l : lanes) s += l;
    return s;
}
constexpr double kFlop256 = 12 * 8 * 2;
#endif

constexpr long kFmaIters = 1L << 20; // ~2 ms per call per thread at ~230 GFLOP/s

void set_flop_counters(benchmark::State &state, double flop, int threads) {
    state.counters["flop"] = flop;
    state.counters["threads"] = threads;
    state.counters["GFLOPS"] = benchmark::Counter(flop * static_cast<double>(state.iterations()) * 1e-9,
                                                  benchmark::Counter::kIsRate);
}

void run_fma(benchmark::State &state, float (*chains)(long, float, float), double flop_per_iter) {
    const int threads = static_cast<int>(state.range(0));
    volatile float av = 0.999f, bv = 0.001f; // opaque: the chains cannot be folded
    auto once = [&]() {
        float s = 0;
        if (threads == 1) s = chains(kFmaIters, av, bv);
        else {
#pragma omp parallel num_threads(threads) reduction(+ : s)
            s += chains(kFmaIters, av, bv);
        }
        benchmark::DoNotOptimize(s);
    };
    once(); // warm-up (clocks up, threads started), untimed
    for (auto _ : state) once();
    set_flop_counters(state, flop_per_iter * static_cast<double>(kFmaIters) * threads, threads);
}

// ---- registration (its own, so that the standalone bench_gemm needs nothing of bench_catalog) ----

void add(const std::string &name, std::function<void(benchmark::State &)> run) {
    benchmark::RegisterBenchmark(name.c_str(), [run](benchmark::State &state) { run(state); })
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->ComputeStatistics("min", [](const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); });
}

void add_skip(const std::string &name, const std::string &reason) {
    benchmark::RegisterBenchmark(name.c_str(), [reason](benchmark::State &state) { state.SkipWithError(reason.c_str()); })
        ->Iterations(1)
        ->Repetitions(1);
}

// ---- OpenBLAS ----

#ifdef AKG_BENCH_HAVE_OPENBLAS

void set_blas_threads(int threads) {
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
}

// C32 = A·B for every batch entry. A batched GEMM at 2 threads runs its small GEMMs two at a time
// (OpenMP over the batch; OpenBLAS's OpenMP build runs single-threaded inside a parallel region),
// which beats splitting each 128×128 GEMM in two. `merged`: each entry (b, h) stored into the
// merged heads [b0·M, b1·N] through ldc, free for a BLAS.
void sgemm_all(const GemmSpec &s, const float *a, const float *b, float *c, int threads, bool merged = false) {
    const int lda = static_cast<int>(s.ta ? s.m : s.k), ldb = static_cast<int>(s.tb ? s.k : s.n);
    auto one = [&](int64_t bi) {
        const int64_t c_at = merged ? (bi / s.b1) * s.m * s.b1 * s.n + (bi % s.b1) * s.n : bi * s.m * s.n;
        cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, static_cast<int>(s.m),
                    static_cast<int>(s.n), static_cast<int>(s.k), 1.0f, a + bi * s.m * s.k, lda, b + bi * s.k * s.n, ldb,
                    0.0f, c + c_at, static_cast<int>(merged ? s.b1 * s.n : s.n));
    };
    if (s.batch() == 1) one(0);
    else par_for(threads, s.batch(), one);
}

void ensure_float_copies(const GemmSpec &s, Buffers &b) {
    if (!b.a32) b.a32 = static_cast<float *>(alloc_bytes(elems_a(s) * 4));
    if (!b.b32) b.b32 = static_cast<float *>(alloc_bytes(elems_b(s) * 4));
    if (!b.c32) b.c32 = static_cast<float *>(alloc_bytes(elems_c(s) * 4));
}

void openblas_epilogue_call(const GemmSpec &s, Buffers &b, int threads) {
    if (s.f16) {
        convert_to_float(b.a, b.a32, elems_a(s), threads);
        convert_to_float(b.b, b.b32, elems_b(s), threads);
        sgemm_all(s, b.a32, b.b32, b.c32, threads);
        epilogue_pass(s, b, b.c32, threads);
        return;
    }
    const bool in_place = !(s.epi & (kBias | kGelu | kResidual | kScale | kMask | kKeyMask));
    float *c = in_place ? static_cast<float *>(b.c) : b.c32;
    sgemm_all(s, static_cast<const float *>(b.a), static_cast<const float *>(b.b), c, threads, (s.epi & kMergeHeads) != 0);
    epilogue_pass(s, b, c, threads); // in place: only a column sum, or nothing
}

void run_openblas(benchmark::State &state, const GemmSpec *s, bool bare) {
    const int threads = static_cast<int>(state.range(0));
    set_blas_threads(threads);
    Buffers &b = buffers(*s);
    if (!b.c32) b.c32 = static_cast<float *>(alloc_bytes(elems_c(*s) * 4));
    const float *a = static_cast<const float *>(b.a), *bb = static_cast<const float *>(b.b);
    if (s->f16) { // bare runs on float copies made here, untimed: the GEMM alone, no conversion
        ensure_float_copies(*s, b);
        convert_to_float(b.a, b.a32, elems_a(*s), threads);
        convert_to_float(b.b, b.b32, elems_b(*s), threads);
        a = b.a32;
        bb = b.b32;
    }
    float *c = b.c32; // bare: into a float scratch (the kernel's output may be float16)
    auto call = [&]() {
        if (bare) sgemm_all(*s, a, bb, c, threads);
        else openblas_epilogue_call(*s, b, threads);
    };
    call(); // warm-up, untimed
    for (auto _ : state) {
        call();
        benchmark::ClobberMemory();
    }
    set_flop_counters(state, s->flop(), threads);
    state.SetLabel(bare ? (s->f16 ? "sgemm on float copies made outside the timing (no conversion, no epilogue)"
                                  : "sgemm alone (no epilogue)")
                        : (s->f16 ? "f16→f32 conversion of A and B, sgemm, epilogue pass writing float16 (all timed)"
                                  : "sgemm, then one row-parallel epilogue pass"));
}

#endif // AKG_BENCH_HAVE_OPENBLAS

// ---- oneDNN ----

#ifdef AKG_BENCH_HAVE_DNNL

using dnnl::algorithm;
using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine &eng() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

struct DnnlCase {
    std::vector<std::pair<dnnl::primitive, std::unordered_map<int, memory>>> steps;
    std::vector<memory> keep;
    std::string impls;
    void run(dnnl::stream &st) {
        for (auto &p : steps) p.first.execute(st, p.second);
        st.wait();
    }
};

std::string impl_of(const dnnl::primitive &p) {
    const char *n = nullptr;
    if (dnnl_primitive_desc_query(p.get_primitive_desc(), dnnl_query_impl_info_str, 0, &n) == dnnl_success && n) return n;
    return "?";
}

// The matmul's memory descriptors: 2-D, or 4-D [b0, b1, ., .] for the batched kernels (the mask
// then broadcasts over dimension 1 as a binary post-op's source).
DnnlCase build_dnnl(const GemmSpec &s, Buffers &b, bool packed) {
    DnnlCase c;
    const dt t = s.f16 ? dt::f16 : dt::f32;
    const bool batched = s.batch() > 1;
    memory::dims ad, bd, cd, biasd;
    tag at, bt, ct;
    if (batched) {
        ad = {s.b0, s.b1, s.m, s.k};
        bd = {s.b0, s.b1, s.k, s.n};
        cd = {s.b0, s.b1, s.m, s.n};
        biasd = {1, 1, 1, s.n};
        at = s.ta ? tag::abdc : tag::abcd;
        bt = s.tb ? tag::abdc : tag::abcd;
        ct = tag::abcd;
    } else {
        ad = {s.m, s.k};
        bd = {s.k, s.n};
        cd = {s.m, s.n};
        biasd = {1, s.n};
        at = s.ta ? tag::ba : tag::ab;
        bt = s.tb ? tag::ba : tag::ab;
        ct = tag::ab;
    }
    memory src(memory::desc(ad, t, at), eng(), b.a);
    memory wplain(memory::desc(bd, t, bt), eng(), b.b);
    // Merged heads: the [b0, b1, M, N] result written through strides into [b0·M, b1·N]. Split
    // heads: the product into a scratch C, then a reorder into [3, B, NH, S, HD].
    if ((s.epi & kSplitHeads) && !b.c32) b.c32 = static_cast<float *>(alloc_bytes(elems_c(s) * 4));
    memory dst((s.epi & kMergeHeads) ? memory::desc(cd, t, memory::dims{s.m * s.b1 * s.n, s.n, s.b1 * s.n, 1}) : memory::desc(cd, t, ct), eng(),
               (s.epi & kSplitHeads) ? static_cast<void *>(b.c32) : b.c);
    memory::desc bias_md = (s.epi & kBias) ? memory::desc(biasd, t, batched ? tag::abcd : tag::ab) : memory::desc();
    dnnl::primitive_attr attr;
    dnnl::post_ops po;
    std::vector<std::pair<int, memory>> post_args;
    if (s.epi & kScale) attr.set_output_scales(0, {kScaleValue});
    if (s.epi & kResidual) {
        memory r(dst.get_desc(), eng(), b.res);
        po.append_binary(algorithm::binary_add, r.get_desc());
        post_args.push_back({po.len() - 1, r});
    }
    if (s.epi & (kMask | kKeyMask)) {
        memory mk(memory::desc({s.b0, 1, (s.epi & kMask) ? s.m : 1, s.n}, dt::f32, tag::abcd), eng(), b.mask);
        po.append_binary(algorithm::binary_add, mk.get_desc());
        post_args.push_back({po.len() - 1, mk});
    }
    if (s.epi & kGelu) po.append_eltwise(1.0f, algorithm::eltwise_gelu_tanh, 0.f, 0.f);
    attr.set_post_ops(po);
    memory::desc wmd = packed ? memory::desc(bd, t, tag::any) : wplain.get_desc();
    dnnl::matmul::desc d(src.get_desc(), wmd, bias_md, dst.get_desc());
    dnnl::matmul::primitive_desc pd(d, attr, eng());
    memory w = wplain;
    if (packed) {
        w = memory(pd.weights_desc(), eng());
        dnnl::stream st(eng());
        dnnl::reorder(wplain, w).execute(st, wplain, w);
        st.wait();
        c.keep.push_back(w);
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
    if (s.epi & kBias) args[DNNL_ARG_BIAS] = memory(bias_md, eng(), b.bias);
    for (auto &pa : post_args) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(pa.first) | DNNL_ARG_SRC_1] = pa.second;
    dnnl::matmul mm(pd);
    c.impls = impl_of(mm);
    c.steps.push_back({mm, args});
    if (s.epi & kSplitHeads) {
        const int64_t batches = s.m / kSeq;
        const memory::dims heads = {3, batches, kHeads, kSeq, kHeadDim};
        memory from(memory::desc(heads, t, memory::dims{kHeads * kHeadDim, kSeq * s.n, kHeadDim, s.n, 1}), eng(), b.c32);
        memory to(memory::desc(heads, t, tag::abcde), eng(), b.c);
        dnnl::reorder split(from, to);
        c.impls += ", split heads by reorder " + impl_of(split);
        c.steps.push_back({split, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}});
    }
    if (s.epi & kSoftmaxDropout) {
        // The softmax in place, then the dropout as a binary multiply scaled by an eltwise post-op.
        dnnl::softmax_forward sm(dnnl::softmax_forward::primitive_desc(
            dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, dst.get_desc(), 3), eng()));
        c.impls += ", softmax " + impl_of(sm);
        c.steps.push_back({sm, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}}});
        memory keep(dst.get_desc(), eng(), b.keep), y(dst.get_desc(), eng(), b.c2);
        dnnl::primitive_attr da;
        dnnl::post_ops dpo;
        dpo.append_eltwise(1.0f, algorithm::eltwise_linear, 1.0f / kKeepProb, 0.0f);
        da.set_post_ops(dpo);
        dnnl::binary drop(dnnl::binary::primitive_desc(
            dnnl::binary::desc(algorithm::binary_mul, dst.get_desc(), keep.get_desc(), y.get_desc()), da, eng()));
        c.impls += ", dropout " + impl_of(drop);
        c.steps.push_back({drop, {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, keep}, {DNNL_ARG_DST, y}}});
    }
    if (s.epi & kLayerNorm) {
        memory y(dst.get_desc(), eng(), b.c2);
        memory::desc stat({s.m}, dt::f32, tag::a);
        memory mean(stat, eng(), b.mean), var(stat, eng(), b.var);
        memory gamma(memory::desc({s.n}, dt::f32, tag::a), eng(), b.gamma), beta(memory::desc({s.n}, dt::f32, tag::a), eng(), b.beta);
        dnnl::layer_normalization_forward ln(dnnl::layer_normalization_forward::primitive_desc(
            dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_training, dst.get_desc(), stat, kLayerNormEpsilon,
                                                    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
            eng()));
        c.impls += ", layer norm " + impl_of(ln);
        c.steps.push_back({ln, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, y}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
                                {DNNL_ARG_SCALE, gamma}, {DNNL_ARG_SHIFT, beta}}});
    }
    if (s.epi & kColSum) {
        // db as a second matmul, ones[1,K]·dY[K,N]: oneDNN 2.6's reduction primitive runs this
        // row reduction in its reference implementation (2× the GEMM's own time here).
        memory ones(memory::desc({1, s.k}, dt::f32, tag::ab), eng());
        std::fill_n(static_cast<float *>(ones.get_data_handle()), s.k, 1.0f);
        c.keep.push_back(ones);
        memory dy(memory::desc({s.k, s.n}, dt::f32, tag::ab), eng(), b.b);
        memory db(memory::desc({1, s.n}, dt::f32, tag::ab), eng(), b.db);
        dnnl::matmul::desc rd(ones.get_desc(), dy.get_desc(), db.get_desc());
        dnnl::matmul red(dnnl::matmul::primitive_desc(rd, eng()));
        c.impls += ", db as ones·dY matmul " + impl_of(red);
        c.steps.push_back({red, {{DNNL_ARG_SRC, ones}, {DNNL_ARG_WEIGHTS, dy}, {DNNL_ARG_DST, db}}});
    }
    return c;
}

struct DnnlPrepared {
    std::unique_ptr<DnnlCase> c;
    std::string error;
    bool tried = false;
};

// One primitive per thread count: the brgemm matmul fixes its thread partition when the
// primitive is created (with omp_get_max_threads()), so one made at 1 thread runs on 1 thread.
void run_dnnl(benchmark::State &state, const GemmSpec *s, bool packed, std::shared_ptr<std::map<int, DnnlPrepared>> preps) {
    const int threads = static_cast<int>(state.range(0));
    omp_set_num_threads(threads);
    Buffers &b = buffers(*s);
    DnnlPrepared *prep = &(*preps)[threads];
    if (!prep->tried) {
        prep->tried = true;
        try {
            prep->c = std::make_unique<DnnlCase>(build_dnnl(*s, b, packed));
        } catch (const dnnl::error &e) {
            prep->error = std::string("oneDNN cannot build this matmul on this CPU: ") + e.what() +
                          (s->f16 ? " (float16: oneDNN 2.6 has no implementation of this matmul for this CPU)" : "");
        }
    }
    if (!prep->c) {
        state.SkipWithError(prep->error.c_str());
        return;
    }
    dnnl::stream st(eng());
    prep->c->run(st); // warm-up, untimed
    for (auto _ : state) prep->c->run(st);
    set_flop_counters(state, s->flop(), threads);
    state.SetLabel(std::string(packed ? "matmul, weights prepacked (format_tag::any, reordered once)" : "matmul, plain weights") +
                   " [" + prep->c->impls + "]");
}

#endif // AKG_BENCH_HAVE_DNNL

// ---- the context for make_report.py ----

std::string dims_json(const std::vector<int64_t> &d) {
    std::string r = "[";
    for (size_t i = 0; i < d.size(); ++i) r += (i ? "," : "") + std::to_string(d[i]);
    return r + "]";
}

std::string epi_words(unsigned e) {
    std::string r;
    auto add_word = [&](const char *w) { r += (r.empty() ? "" : "+") + std::string(w); };
    if (e & kScale) add_word("scale");
    if (e & kBias) add_word("bias");
    if (e & kResidual) add_word("residual");
    if (e & kMask) add_word("mask");
    if (e & kGelu) add_word("gelu_tanh");
    if (e & kColSum) add_word("colsum");
    if (e & kSplitHeads) add_word("split_heads");
    if (e & kMergeHeads) add_word("merge_heads");
    if (e & kKeyMask) add_word("key_mask");
    if (e & kSoftmaxDropout) add_word("softmax+dropout");
    if (e & kLayerNorm) add_word("layernorm");
    return r;
}

std::string spec_json(const std::string &name, int64_t batch, int64_t m, int64_t n, int64_t k, const std::vector<int64_t> &a,
                      const std::vector<int64_t> &b, bool f16, const std::string &epi, bool bare, bool inferred,
                      const std::string &what) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "\"%s\":{\"batch\":%lld,\"m\":%lld,\"n\":%lld,\"k\":%lld,\"flop\":%.0f,\"a_shape\":%s,\"b_shape\":%s,"
                  "\"dtype\":\"%s\",\"epilogue\":\"%s\",\"bare\":%s,\"inferred\":%s,\"what\":\"%s\"}",
                  name.c_str(), static_cast<long long>(batch), static_cast<long long>(m), static_cast<long long>(n),
                  static_cast<long long>(k), 2.0 * batch * m * n * k, dims_json(a).c_str(), dims_json(b).c_str(),
                  f16 ? "float16" : "float32", epi.c_str(), bare ? "true" : "false", inferred ? "true" : "false", what.c_str());
    return buf;
}

} // namespace

// Registers the FMA probes and every GEMM peer, and the akg_gemm_specs context (the table, plus
// what the catalog's other gemm_*/bmm_* kernels' descriptors say: a bare twin's shapes).
int register_gemm(const akg_kernel *const *kernels, size_t count) {
    int n = 0;
#if defined(__AVX512F__)
    add("fma_peak/avx512", [](benchmark::State &s) { run_fma(s, fma_chains_512, kFlop512); });
    ++n;
#else
    add_skip("fma_peak/avx512", "built without AVX-512 (kernel_best's flags)");
#endif
#if defined(__AVX2__) && defined(__FMA__)
    add("fma_peak/avx2", [](benchmark::State &s) { run_fma(s, fma_chains_256, kFlop256); });
    ++n;
#endif
    for (const GemmSpec &sp : specs()) {
        const GemmSpec *s = &sp;
        const std::string k = s->name;
#ifdef AKG_BENCH_HAVE_DNNL
        for (int packed = 0; packed <= 1; ++packed) {
            const std::string impl = packed ? "onednn_packed" : "onednn";
            if (packed && !s->b_is_weight) {
                add_skip(k + "/" + impl, "B is an activation (computed every step): packing it once would not be a real peer");
                continue;
            }
            auto preps = std::make_shared<std::map<int, DnnlPrepared>>();
            add(k + "/" + impl, [s, packed, preps](benchmark::State &st) { run_dnnl(st, s, packed != 0, preps); });
            ++n;
        }
#else
        add_skip(k + "/onednn", "oneDNN not found at build time (libdnnl-dev)");
#endif
#ifdef AKG_BENCH_HAVE_OPENBLAS
        add(k + "/openblas_epilogue", [s](benchmark::State &st) { run_openblas(st, s, false); });
        add(k + "/openblas_bare", [s](benchmark::State &st) { run_openblas(st, s, true); });
        n += 2;
#else
        add_skip(k + "/openblas_epilogue", "OpenBLAS not found at build time (libopenblas-openmp-dev)");
#endif
    }
    // The context: the table's specs, then catalog gemm_*/bmm_* kernels it lacks, read from their
    // descriptors (C = the first output, A and B = the first two inputs; K from the element counts).
    std::string json = "{";
    for (const GemmSpec &s : specs()) {
        std::vector<int64_t> a, b;
        if (s.batch() > 1) a = {s.b0, s.b1}, b = {s.b0, s.b1};
        if (s.ta) a.insert(a.end(), {s.k, s.m});
        else a.insert(a.end(), {s.m, s.k});
        if (s.tb) b.insert(b.end(), {s.n, s.k});
        else b.insert(b.end(), {s.k, s.n});
        json += (json.size() > 1 ? "," : "") +
                spec_json(s.name, s.batch(), s.m, s.n, s.k, a, b, s.f16, epi_words(s.epi), s.epi == 0, false, s.what);
    }
    for (size_t i = 0; i < count; ++i) {
        const akg_kernel *kd = kernels[i];
        const std::string name = kd->name;
        if (name.rfind("gemm_", 0) != 0 && name.rfind("bmm_", 0) != 0) continue;
        bool known = false;
        for (const GemmSpec &s : specs()) known = known || name == s.name;
        if (known || kd->num_inputs < 2 || kd->num_outputs < 1 || kd->outputs[0].rank < 2) continue;
        const akg_tensor_def &c = kd->outputs[0];
        int64_t batch = 1;
        for (int d = 0; d + 2 < c.rank; ++d) batch *= c.shape[d];
        auto count_of = [](const akg_tensor_def &t) { // (not bench_catalog's tensor_elements: bench_gemm links alone)
            double e = 1;
            for (int d = 0; d < t.rank; ++d) e *= static_cast<double>(t.shape[d]);
            return e;
        };
        const double na = count_of(kd->inputs[0]), nb = count_of(kd->inputs[1]), nc = count_of(c);
        const int64_t kk = std::llround(std::sqrt(na * nb / (nc * static_cast<double>(batch))));
        std::vector<int64_t> a(kd->inputs[0].shape, kd->inputs[0].shape + kd->inputs[0].rank),
            b(kd->inputs[1].shape, kd->inputs[1].shape + kd->inputs[1].rank);
        json += (json.size() > 1 ? "," : "") +
                spec_json(name, batch, c.shape[c.rank - 2], c.shape[c.rank - 1], kk, a, b, c.dtype == AKG_DTYPE_FLOAT16, "?",
                          name.find("bare") != std::string::npos, true, "from the catalog descriptor");
    }
    json += "}";
    benchmark::AddCustomContext("akg_gemm_specs", json);
#ifdef AKG_BENCH_HAVE_OPENBLAS
    const char *par[] = {"sequential", "pthreads", "openmp"};
    int p = openblas_get_parallel();
    benchmark::AddCustomContext("openblas", std::string(openblas_get_config()) + "; core " + openblas_get_corename() +
                                                "; threading " + (p >= 0 && p <= 2 ? par[p] : "?"));
#endif
    return n;
}

} // namespace akgbench

#ifdef AKG_BENCH_GEMM_MAIN
// The standalone bench_gemm: the peers and the FMA probes without any akg kernel (the catalog's
// GEMM kernels do not exist yet, or the generator is not built). Same names as in bench_catalog.
int main(int argc, char **argv) {
    akgbench::register_gemm(nullptr, 0);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
#endif
