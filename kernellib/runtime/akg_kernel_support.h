// akg_kernel_support.h: the helpers that generated kernels call. Internal, not installed.
// Everything is static inline and branch-free where it sits in vector loops.
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "akg_kernel_def.h"
#include "akg_vmath.h"
#include "akg_reduce.h"
#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__SSE__)
#include <immintrin.h>
#endif
// Armv8's NEON (Advanced SIMD) is part of every aarch64 target: the vector paths below that have
// an Arm form test AKG_NEON.
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define AKG_NEON 1
#endif

// Whether a parallel loop runs on the calling thread alone: with one thread, the kernel skips
// the OpenMP region. libgomp makes a system call (a futex) per region even for one thread,
// and on hosts where system calls are expensive (the dev VM: a PVM guest with pti=on) the
// memory-bound loop after one ran ~30 us slower over 19 MB (clip_by_global_norm_f32 at 1
// thread 0.215 -> 0.180 ms). Same iterations in the same order: the same results.
static inline bool akg_single_thread() {
#if defined(_OPENMP)
    return omp_get_max_threads() == 1;
#else
    return true;
#endif
}

// Index arithmetic of isl's AST (64-bit).
// int32 arithmetic of int32 tensors wraps around (two's complement), like the reference.
static inline int32_t akg_wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t akg_wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static inline int32_t akg_wrap_mul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
static inline int64_t akg_imin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t akg_imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t akg_floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
// Index modulo with Halide's (Euclidean) semantics, for a positive divisor: in [0, b).
static inline int64_t akg_floormod(int64_t a, int64_t b) { return a - akg_floordiv(a, b) * b; }
// isl's C printer writes floor divisions in affine expressions (the offsets of promoted and
// staged buffers) as floord(a, b), b > 0.
static inline int64_t floord(int64_t a, int64_t b) { return akg_floordiv(a, b); }

// Integer RealDiv truncates toward zero like C; division by zero yields 0 instead of trapping.
static inline int32_t akg_idiv(int32_t a, int32_t b) { return b == 0 ? 0 : a / b; }
static inline int64_t akg_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }

static inline float akg_abs(float x) { return __builtin_fabsf(x); }
static inline int32_t akg_abs(int32_t x) { return x < 0 ? -x : x; }
static inline bool akg_isnan(float x) { return x != x; }
static inline bool akg_isinf(float x) { return __builtin_fabsf(x) == __builtin_inff(); }
static inline bool akg_isnan(int32_t) { return false; }
static inline bool akg_isinf(int32_t) { return false; }
static inline int64_t akg_abs(int64_t x) { return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }
static inline bool akg_isnan(int64_t) { return false; }
static inline bool akg_isinf(int64_t) { return false; }
static inline bool akg_isfinite(float x) { return __builtin_fabsf(x) < __builtin_inff(); }
static inline bool akg_isfinite(int32_t) { return true; }
static inline bool akg_isfinite(int64_t) { return true; }
static inline bool akg_nonzero(int64_t x) { return x != 0; }
// Sign: NaN and signed zeros pass through.
static inline float akg_sign(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }
static inline int32_t akg_sign(int32_t x) { return (x > 0) - (x < 0); }
static inline int64_t akg_sign(int64_t x) { return (x > 0) - (x < 0); }

// Floor division and the two modulos of integers (docs/OPS.md): a zero divisor gives 0, and
// MIN / -1 wraps instead of trapping.
template <typename T, typename U> static inline T akg_int_quotient(T a, T b) {
    T safe_b = (b == 0 || b == -1) ? 1 : b;
    T q = a / safe_b;
    return b == 0 ? 0 : b == -1 ? (T)(0 - (U)a) : q;
}
template <typename T, typename U> static inline T akg_int_floordiv(T a, T b) {
    T q = akg_int_quotient<T, U>(a, b);
    T r = (T)((U)a - (U)q * (U)b);
    return (r != 0 && ((r < 0) != (b < 0))) ? (T)((U)q - 1) : q;
}
static inline int32_t akg_ifloordiv(int32_t a, int32_t b) { return akg_int_floordiv<int32_t, uint32_t>(a, b); }
static inline int64_t akg_ifloordiv(int64_t a, int64_t b) { return akg_int_floordiv<int64_t, uint64_t>(a, b); }
static inline int32_t akg_imod(int32_t a, int32_t b) { return b == 0 ? 0 : (int32_t)((uint32_t)a - (uint32_t)akg_int_quotient<int32_t, uint32_t>(a, b) * (uint32_t)b); }
static inline int64_t akg_imod(int64_t a, int64_t b) { return b == 0 ? 0 : (int64_t)((uint64_t)a - (uint64_t)akg_int_quotient<int64_t, uint64_t>(a, b) * (uint64_t)b); }
static inline int32_t akg_ifloormod(int32_t a, int32_t b) { return b == 0 ? 0 : (int32_t)((uint32_t)a - (uint32_t)akg_ifloordiv(a, b) * (uint32_t)b); }
static inline int64_t akg_ifloormod(int64_t a, int64_t b) { return b == 0 ? 0 : (int64_t)((uint64_t)a - (uint64_t)akg_ifloordiv(a, b) * (uint64_t)b); }

// Float floor division and modulos in double: the quotient of two floats is exact enough there
// that floor and trunc land on the right integer, and a - q·b is exact while |a / b| < 2^24
// (beyond, the error stays below |b|·2^-24 absolute).
static inline float akg_ffloordiv(float a, float b) { return (float)__builtin_floor((double)a / (double)b); }
static inline float akg_fmod(float a, float b) {
    double q = __builtin_trunc((double)a / (double)b);
    double r = (double)a - q * (double)b;
    // fmod keeps the dividend's sign on a zero result and returns a for an infinite divisor.
    float rf = r == 0.0 ? __builtin_copysignf(0.0f, a) : (float)r;
    return __builtin_fabsf(b) == __builtin_inff() && __builtin_fabsf(a) < __builtin_inff() ? a : rf;
}
static inline float akg_ffloormod(float a, float b) {
    float r = akg_fmod(a, b);
    return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
}

// Selects are bit blends: GCC 12 turns `c ? a : b` into a branch (and then refuses to vectorize
// the loop) when an arm computes something, even after inlining.
static inline float akg_blend(bool c, float a, float b) {
    uint32_t x, y, m = 0u - static_cast<uint32_t>(c);
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    x = (x & m) | (y & ~m);
    float r;
    memcpy(&r, &x, 4);
    return r;
}
static inline double akg_blend(bool c, double a, double b) {
    uint64_t x, y, m = 0ull - static_cast<uint64_t>(c);
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    x = (x & m) | (y & ~m);
    double r;
    memcpy(&r, &x, 8);
    return r;
}
static inline int32_t akg_blend(bool c, int32_t a, int32_t b) { return c ? a : b; }
static inline int64_t akg_blend(bool c, int64_t a, int64_t b) { return c ? a : b; }
static inline uint16_t akg_blend(bool c, uint16_t a, uint16_t b) { return c ? a : b; }
static inline bool akg_blend(bool c, bool a, bool b) { return (c & a) | (!c & b); }

// Maximum/Minimum propagate NaN like numpy (and the reference).
static inline float akg_fmax(float a, float b) { return akg_blend((a > b) | (a != a), a, b); }
static inline float akg_fmin(float a, float b) { return akg_blend((a < b) | (a != a), a, b); }
// The same against a constant c that is not NaN: a > c or a is NaN is "not a <= c", one
// unordered compare (vcmpps NLE_UQ) and a masked move instead of two compares and a mask or.
static inline float akg_fmax_c(float a, float c) { return akg_blend(!(a <= c), a, c); }
static inline float akg_fmin_c(float a, float c) { return akg_blend(!(a >= c), a, c); }
static inline double akg_fmax_c(double a, double c) { return akg_blend(!(a <= c), a, c); }
static inline double akg_fmin_c(double a, double c) { return akg_blend(!(a >= c), a, c); }
static inline int32_t akg_fmax(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t akg_fmin(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int64_t akg_fmax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t akg_fmin(int64_t a, int64_t b) { return a < b ? a : b; }
// Float (in)equality as calls, out of reach of Halide's non-IEEE simplifications (x != x).
static inline bool akg_feq(float a, float b) { return a == b; }
static inline bool akg_fne(float a, float b) { return a != b; }
// Float orderings likewise (Halide turns a <= b into !(b < a), which is true for NaN).
static inline bool akg_flt(float a, float b) { return a < b; }
static inline bool akg_fle(float a, float b) { return a <= b; }
static inline bool akg_fgt(float a, float b) { return a > b; }
static inline bool akg_fge(float a, float b) { return a >= b; }
static inline bool akg_flt(double a, double b) { return a < b; }
static inline bool akg_fle(double a, double b) { return a <= b; }
static inline bool akg_fgt(double a, double b) { return a > b; }
static inline bool akg_fge(double a, double b) { return a >= b; }

template <typename T> static inline T akg_select(bool c, T a, T b) { return akg_blend(c, a, b); }

// The lanes of an explicit-lane reduction (the generator's emit_lane_reduction), combined by a
// halving tree: lane l with lane l + L/2, then l + L/4, ... Each step is one vector operation,
// and the order is fixed, so results do not depend on the compiler.
template <int L, typename T, typename Combine> static inline T akg_combine_lanes(T *lanes, Combine combine) {
    if constexpr (L == 1) {
        return lanes[0];
    } else {
#pragma omp simd
        for (int l = 0; l < L / 2; ++l) lanes[l] = combine(lanes[l], lanes[l + L / 2]);
        return akg_combine_lanes<L / 2>(lanes, combine);
    }
}
// Ends the body of a lane reduction's block loop. GCC's unroll-and-jam (-O3) fuses two blocks
// of such a loop when its trip count is constant, and the fused loop then keeps the lanes in
// memory, adding a store-to-load round trip to every addition (LayerNorm's variance loop:
// 24 ns per 768-element row instead of 13). An empty asm statement in the block loop's body
// leaves the loop nest imperfect, which GCC does not jam; it costs no instruction. The flag
// -fno-loop-unroll-and-jam would do the same for every loop, also for the column reductions
// that gain from jamming.
static inline void akg_end_of_lane_block() { __asm__ volatile(""); }

// Software prefetch of the next parallel iteration's run of an input (the generator's
// prefetch-rows pass), spread over the block loop of a later pass over the current run:
// akg_prefetch_share is the bytes each of `blocks` blocks prefetches (whole cache lines), and
// akg_prefetch_l2 prefetches bytes [from, from + n) of a buffer of `size` bytes into L2, the
// part within the buffer only (the last iteration has no next run).
static inline int64_t akg_prefetch_share(int64_t bytes, int64_t blocks) { return blocks > 0 ? ((bytes + blocks - 1) / blocks + 63) / 64 * 64 : 0; }
static inline void akg_prefetch_l2(const void *buffer, int64_t from, int64_t n, int64_t size) {
    const int64_t to = from + n < size ? from + n : size;
    for (int64_t o = from; o < to; o += 64) __builtin_prefetch(static_cast<const char *>(buffer) + o, 0, 2);
}

// Software prefetch ahead of a lane reduction's stream through a large input of a kernel that
// mostly reads (the generator's prefetch-streams pass): each block of the reduction, at bytes
// [from, from + n) of the input, prefetches the bytes AKG_STREAM_PREFETCH_AHEAD further on, the
// part within the buffer of `size` bytes only. A read-only stream left to the hardware
// prefetchers of the dev VM ran at 19 GB/s on one core, 29 GB/s with this (BatchNorm statistics).
#define AKG_STREAM_PREFETCH_AHEAD 16384
static inline void akg_prefetch_ahead(const void *buffer, int64_t from, int64_t n, int64_t size) {
    const int64_t at = from + AKG_STREAM_PREFETCH_AHEAD, to = at + n < size ? at + n : size;
    for (int64_t o = at; o < to; o += 64) __builtin_prefetch(static_cast<const char *>(buffer) + o, 0, 3);
}

// Sums of short rows (the generator's group-rows pass): sums[r] = the sum of the n elements
// at src + r * stride, for r < rows <= 16. Each row's elements are added into 16 lanes (element
// j into lane j % 16, in order, the first 16 starting the lanes; the last partial vector is
// loaded masked, reading nothing past the row), and the lanes are combined by the halving tree
// of akg_combine_lanes<16>: lane l with lane l + 8, then l + 4, l + 2, l + 1. With AVX-512 the
// 16 rows' trees run together, as a transpose: four shuffle-and-add levels for all rows (global
// average pooling over rows of 49 halves: 2.6x faster than a lane reduction per row). The
// portable code adds in the same order, so both give the same bits.
template <typename T> static inline float akg_row_element(const T *p);
template <> inline float akg_row_element<float>(const float *p) { return *p; }
template <> inline float akg_row_element<uint16_t>(const uint16_t *p) { return akg_f16_to_f32(*p); }

template <typename T> static inline void akg_row_sums_portable(const T *src, int64_t stride, int64_t n, int64_t rows, float *sums) {
    for (int64_t r = 0; r < rows; ++r) {
        float lanes[16] = {0};
        int64_t j = 0;
        if (n >= 16) // the lanes start at the first 16 elements (as the vector code: one add less)
            for (; j < 16; ++j) lanes[j] = akg_row_element(src + r * stride + j);
        for (; j < n; ++j) lanes[j % 16] += akg_row_element(src + r * stride + j);
        sums[r] = akg_combine_lanes<16>(lanes, [](float a, float b) { return a + b; });
    }
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// (Masked and two-source forms throughout: GCC 12 warns that the unmasked intrinsics' undefined
// pass-through operand "may be used uninitialized".)
static inline __m512 akg_row_vector(const float *p, __mmask16 k) { return _mm512_maskz_loadu_ps(k, p); }
static inline __m512 akg_row_vector(const uint16_t *p, __mmask16 k) {
    return _mm512_maskz_cvtph_ps((__mmask16)0xffff, _mm256_maskz_loadu_epi16(k, p));
}
// The lanes of a and b that the indices pick (0-15: a, 16-31: b).
static inline __m512 akg_pick(__m512 a, __m512 b, __m512i indices) { return _mm512_permutex2var_ps(a, indices, b); }

template <typename T> static inline void akg_row_sums(const T *src, int64_t stride, int64_t n, int64_t rows, float *sums) {
    const int64_t full = n / 16 * 16;
    const __mmask16 tail = (__mmask16)((1u << (n - full)) - 1u);
    __m512 lanes[16];
    for (int r = 0; r < 16; ++r) {
        __m512 a = _mm512_setzero_ps();
        if (r < rows) {
            const T *row = src + r * stride;
            int64_t j = 0;
            if (full > 0) { // the lanes start at the first 16 elements, not at 0 + them
                a = akg_row_vector(row, (__mmask16)0xffff);
                j = 16;
            }
            for (; j < full; j += 16) a = _mm512_add_ps(a, akg_row_vector(row + j, (__mmask16)0xffff));
            if (tail) a = _mm512_mask_add_ps(a, tail, a, akg_row_vector(row + full, tail)); // lanes past the row: no add
        }
        lanes[r] = a;
    }
    // Level 1 (lane l + 8): rows 2k and 2k+1 share a vector, 8 lanes each.
    const __m512i lo1 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const __m512i hi1 = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    __m512 half[8];
    for (int k = 0; k < 8; ++k) half[k] = _mm512_add_ps(akg_pick(lanes[2 * k], lanes[2 * k + 1], lo1), akg_pick(lanes[2 * k], lanes[2 * k + 1], hi1));
    // Level 2 (lane l + 4): rows 4k..4k+3 share a vector, four lanes each.
    const __m512i lo2 = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
    const __m512i hi2 = _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    __m512 quarter[4];
    for (int k = 0; k < 4; ++k) quarter[k] = _mm512_add_ps(akg_pick(half[2 * k], half[2 * k + 1], lo2), akg_pick(half[2 * k], half[2 * k + 1], hi2));
    // Level 3 (lane l + 2): lanes (4j, 4j + 1, 4j + 2, 4j + 3) hold rows j and j + 4 of the
    // first pair of vectors, then of the second pair (rows j + 8, j + 12), two lanes each.
    const __m512i lo3 = _mm512_setr_epi32(0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    const __m512i hi3 = _mm512_setr_epi32(2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
    __m512 eighth0 = _mm512_add_ps(akg_pick(quarter[0], quarter[1], lo3), akg_pick(quarter[0], quarter[1], hi3));
    __m512 eighth1 = _mm512_add_ps(akg_pick(quarter[2], quarter[3], lo3), akg_pick(quarter[2], quarter[3], hi3));
    // Level 4 (lane l + 1): lane 4j + i holds row j + 4i.
    const __m512i lo4 = _mm512_setr_epi32(0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
    const __m512i hi4 = _mm512_setr_epi32(2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    __m512 sum = _mm512_add_ps(akg_pick(eighth0, eighth1, lo4), akg_pick(eighth0, eighth1, hi4));
    const __m512i row_order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_mask_storeu_ps(sums, (__mmask16)((1u << rows) - 1u), akg_pick(sum, sum, row_order));
}
#elif defined(AKG_NEON)
// NEON: each row's 16 lanes are four vectors; levels 1 and 2 (lane l + 8, l + 4) add whole
// vectors, levels 3 and 4 (l + 2, l + 1) run for four rows together: their low halves plus their
// high halves, then one pairwise add (faddp), which leaves the four rows' sums in one vector.
static inline float32x4_t akg_row_quad(const float *p) { return vld1q_f32(p); }
static inline float32x4_t akg_row_quad(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

template <typename T> static inline void akg_row_sums(const T *src, int64_t stride, int64_t n, int64_t rows, float *sums) {
    const int64_t full = n / 16 * 16;
    float32x4_t quarter[16]; // per row: its lanes 0-3 after levels 1 and 2
    for (int64_t r = 0; r < rows; ++r) {
        const T *row = src + r * stride;
        float32x4_t a[4];
        int64_t j = 0;
        if (full > 0) { // the lanes start at the first 16 elements, not at 0 + them
            for (int k = 0; k < 4; ++k) a[k] = akg_row_quad(row + 4 * k);
            j = 16;
        } else {
            for (int k = 0; k < 4; ++k) a[k] = vdupq_n_f32(0.0f);
        }
        for (; j < full; j += 16)
            for (int k = 0; k < 4; ++k) a[k] = vaddq_f32(a[k], akg_row_quad(row + j + 4 * k));
        if (j < n) { // the partial vector: its elements into their lanes one by one, the others unchanged
            float lanes[16];
            for (int k = 0; k < 4; ++k) vst1q_f32(lanes + 4 * k, a[k]);
            for (; j < n; ++j) lanes[j - full] += akg_row_element(row + j);
            for (int k = 0; k < 4; ++k) a[k] = vld1q_f32(lanes + 4 * k);
        }
        quarter[r] = vaddq_f32(vaddq_f32(a[0], a[2]), vaddq_f32(a[1], a[3]));
    }
    for (int64_t g = 0; g < rows; g += 4) {
        float32x4_t q[4];
        for (int k = 0; k < 4; ++k) q[k] = g + k < rows ? quarter[g + k] : vdupq_n_f32(0.0f);
        const float32x4_t eighth01 = vaddq_f32(vcombine_f32(vget_low_f32(q[0]), vget_low_f32(q[1])), vcombine_f32(vget_high_f32(q[0]), vget_high_f32(q[1])));
        const float32x4_t eighth23 = vaddq_f32(vcombine_f32(vget_low_f32(q[2]), vget_low_f32(q[3])), vcombine_f32(vget_high_f32(q[2]), vget_high_f32(q[3])));
        const float32x4_t sum = vpaddq_f32(eighth01, eighth23); // lane k: row g + k
        if (g + 4 <= rows) {
            vst1q_f32(sums + g, sum);
        } else {
            float last[4];
            vst1q_f32(last, sum);
            for (int64_t k = 0; g + k < rows; ++k) sums[g + k] = last[k];
        }
    }
}
#elif defined(__AVX__) && defined(__F16C__)
// AVX2 targets: each row's 16 lanes are two vectors of 8; levels 1 and 2 (lane l + 8, l + 4) add
// the two vectors, then their halves; levels 3 and 4 (l + 2, l + 1) run for four rows together
// as NEON's do (movelh/movehl, then one horizontal add).
static inline __m256 akg_row_octet(const float *p) { return _mm256_loadu_ps(p); }
static inline __m256 akg_row_octet(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }

template <typename T> static inline void akg_row_sums(const T *src, int64_t stride, int64_t n, int64_t rows, float *sums) {
    const int64_t full = n / 16 * 16;
    __m128 quarter[16]; // per row: its lanes 0-3 after levels 1 and 2
    for (int64_t r = 0; r < rows; ++r) {
        const T *row = src + r * stride;
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
        int64_t j = 0;
        if (full > 0) { // the lanes start at the first 16 elements, not at 0 + them
            lo = akg_row_octet(row);
            hi = akg_row_octet(row + 8);
            j = 16;
        }
        for (; j < full; j += 16) {
            lo = _mm256_add_ps(lo, akg_row_octet(row + j));
            hi = _mm256_add_ps(hi, akg_row_octet(row + j + 8));
        }
        if (j < n) { // the partial vector: its elements into their lanes one by one, the others unchanged
            alignas(32) float lanes[16];
            _mm256_store_ps(lanes, lo);
            _mm256_store_ps(lanes + 8, hi);
            for (; j < n; ++j) lanes[j - full] += akg_row_element(row + j);
            lo = _mm256_load_ps(lanes);
            hi = _mm256_load_ps(lanes + 8);
        }
        const __m256 half = _mm256_add_ps(lo, hi);
        quarter[r] = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
    }
    for (int64_t g = 0; g < rows; g += 4) {
        __m128 q[4];
        for (int k = 0; k < 4; ++k) q[k] = g + k < rows ? quarter[g + k] : _mm_setzero_ps();
        const __m128 eighth01 = _mm_add_ps(_mm_movelh_ps(q[0], q[1]), _mm_movehl_ps(q[1], q[0]));
        const __m128 eighth23 = _mm_add_ps(_mm_movelh_ps(q[2], q[3]), _mm_movehl_ps(q[3], q[2]));
        const __m128 sum = _mm_hadd_ps(eighth01, eighth23); // lane k: row g + k
        if (g + 4 <= rows) {
            _mm_storeu_ps(sums + g, sum);
        } else {
            alignas(16) float last[4];
            _mm_store_ps(last, sum);
            for (int64_t k = 0; g + k < rows; ++k) sums[g + k] = last[k];
        }
    }
}
#else
template <typename T> static inline void akg_row_sums(const T *src, int64_t stride, int64_t n, int64_t rows, float *sums) {
    akg_row_sums_portable(src, stride, n, rows, sums);
}
#endif
static inline void akg_row_sums_f32(const float *src, int64_t stride, int64_t n, int64_t rows, float *sums) { akg_row_sums(src, stride, n, rows, sums); }
static inline void akg_row_sums_f16(const uint16_t *src, int64_t stride, int64_t n, int64_t rows, float *sums) { akg_row_sums(src, stride, n, rows, sums); }

// Max and min of values that are never NaN (flags: the generator's is_nan_free_flag): one
// vmaxps / vminps.
template <typename A, typename B> static inline auto akg_max_ordered(A a, B b) -> decltype(a + b) { return a > b ? a : b; }
template <typename A, typename B> static inline auto akg_min_ordered(A a, B b) -> decltype(a + b) { return a < b ? a : b; }

static inline double akg_fmax(double a, double b) { return akg_blend((a > b) | (a != a), a, b); }
static inline double akg_fmin(double a, double b) { return akg_blend((a < b) | (a != a), a, b); }
// A double accumulator combined with a float value (float reductions accumulate in double):
// without these the call is ambiguous between the float and double overloads (clang rejects it).
static inline double akg_fmax(double a, float b) { return akg_fmax(a, static_cast<double>(b)); }
static inline double akg_fmax(float a, double b) { return akg_fmax(static_cast<double>(a), b); }
static inline double akg_fmin(double a, float b) { return akg_fmin(a, static_cast<double>(b)); }
static inline double akg_fmin(float a, double b) { return akg_fmin(static_cast<double>(a), b); }

// `#pragma omp simd reduction(akg_max:acc)` / akg_min: float max/min reductions whose lanes are
// combined with akg_fmax/akg_fmin, so that a NaN in any lane reaches the result (OpenMP's own
// max/min combiners drop it). GCC vectorizes these like the built-in ones.
#pragma omp declare reduction(akg_max : float : omp_out = akg_fmax(omp_out, omp_in)) initializer(omp_priv = -__builtin_inff())
#pragma omp declare reduction(akg_min : float : omp_out = akg_fmin(omp_out, omp_in)) initializer(omp_priv = __builtin_inff())
#pragma omp declare reduction(akg_max : double : omp_out = akg_fmax(omp_out, omp_in)) initializer(omp_priv = -__builtin_inf())
#pragma omp declare reduction(akg_min : double : omp_out = akg_fmin(omp_out, omp_in)) initializer(omp_priv = __builtin_inf())

// Non-temporal stores. The generator's stream-outputs pass picks the outputs of kernels whose
// tensors exceed the last-level cache; a vector loop computing a block of such an output stores
// it to a small array, then calls one of these. Whole cache lines are written around the cache,
// without first being read (read for ownership). Non-temporal stores are weakly ordered:
// akg_stream_fence() before another thread may read them.
//
// A 64-byte line must get either only non-temporal stores or only ordinary ones: a line that
// got both (part of it written through the cache, part around it) made a kernel 4x slower (a
// corpus kernel over rows of 30522 floats, which start 8 bytes apart from a line boundary:
// 1.21 -> 4.77 ms at 1 thread). A block shares its first and last line with its neighbours, and
// both sides decide alike from the address where they meet: a line boundary, nothing to share; 32
// bytes into a line, each streams its half with one 32-byte store (rows of 21128 floats start
// there every other row: ordinary stores on those lines made mlm_bias_log_softmax_f32 2.22 ms
// instead of 1.99); anywhere else, both write their part of the line with ordinary stores.
// Targets without the instructions use ordinary stores throughout. On aarch64 the streamed
// stores are STNP pairs of 16-byte registers (32 bytes each, a non-temporal hint that lets the
// core write whole lines without reading them first), by the same rules.
#if defined(AKG_NEON)
// 32 bytes at p, stored non-temporally. (No ACLE intrinsic stores a pair non-temporally.)
static inline void akg_stnp32(void *p, uint8x16_t lo, uint8x16_t hi) {
    __asm__ volatile("stnp %q0, %q1, [%2]" : : "w"(lo), "w"(hi), "r"(p) : "memory");
}
static inline void akg_stnp32_f32(float *p, const float *src) {
    akg_stnp32(p, vreinterpretq_u8_f32(vld1q_f32(src)), vreinterpretq_u8_f32(vld1q_f32(src + 4)));
}
#endif
#if defined(__AVX__) || defined(AKG_NEON)
// The elements of `size` bytes from `dst` to the first line boundary; `half`: whether they are
// exactly the second half of a line (then they are streamed, else stored through the cache).
static inline int64_t akg_stream_head(const void *dst, int64_t size, bool &half) {
    const uintptr_t offset = reinterpret_cast<uintptr_t>(dst) & 63;
    half = offset == 32;
    return offset == 0 ? 0 : static_cast<int64_t>((64 - offset) / static_cast<uintptr_t>(size));
}
#endif
static inline void akg_stream_f32_n(const float *src, float *dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX__)
    bool half = false;
    const int64_t head = akg_stream_head(dst, 4, half);
    if (half && n >= 8) {
        _mm256_stream_ps(dst, _mm256_loadu_ps(src));
        i = 8;
    } else {
        for (; i < n && i < head; ++i) dst[i] = src[i];
    }
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
    for (; i + 16 <= n; i += 16) { // two 32-byte halves of one line, back to back
        _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
        _mm256_stream_ps(dst + i + 8, _mm256_loadu_ps(src + i + 8));
    }
#endif
    if (n - i == 8) { // the first half of a line the next block completes
        _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
        i += 8;
    }
#elif defined(AKG_NEON)
    bool half = false;
    const int64_t head = akg_stream_head(dst, 4, half);
    if (half && n >= 8) {
        akg_stnp32_f32(dst, src);
        i = 8;
    } else {
        for (; i < n && i < head; ++i) dst[i] = src[i];
    }
    for (; i + 16 <= n; i += 16) akg_stnp32_f32(dst + i, src + i), akg_stnp32_f32(dst + i + 8, src + i + 8);
    if (n - i == 8) { // the first half of a line the next block completes
        akg_stnp32_f32(dst + i, src + i);
        i += 8;
    }
#endif
    for (; i < n; ++i) dst[i] = src[i];
}

#if defined(__AVX__) || defined(AKG_NEON)
// The walk of a run of n halves at dst by those rules: stream16(at) streams the 16 halves from
// element `at` (32 bytes), plain(at, count) stores `count` of them through the cache. Returns
// where the walk stopped; the caller stores the rest through the cache.
template <typename Stream16, typename Plain>
static inline int64_t akg_stream_halves(const uint16_t *dst, int64_t n, Stream16 stream16, Plain plain) {
    if ((reinterpret_cast<uintptr_t>(dst) & 1) != 0) return 0; // no half is ever aligned
    int64_t i = 0;
    bool half = false;
    const int64_t head = akg_stream_head(dst, 2, half);
    if (half && n >= 16) {
        stream16(0);
        i = 16;
    } else {
        i = head < n ? head : n;
        plain(0, i);
    }
    // Two 32-byte halves of one line, back to back: the write-combining buffer joins them.
    for (; i + 32 <= n; i += 32) stream16(i), stream16(i + 16);
    if (n - i == 16) stream16(i), i += 16; // the first half of a line the next block completes
    return i;
}
#endif

// akg_f32_to_f16_n with non-temporal stores of the converted halves, by the same rules.
static inline void akg_stream_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX__) && (defined(__AVX512F__) || defined(__F16C__))
    const int rne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    auto stream16 = [&](int64_t at) {
#if defined(__AVX512F__)
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + at), _mm512_maskz_cvtps_ph((__mmask16)0xffff, _mm512_loadu_ps(src + at), rne));
#else
        __m128i lo = _mm256_cvtps_ph(_mm256_loadu_ps(src + at), rne);
        __m128i hi = _mm256_cvtps_ph(_mm256_loadu_ps(src + at + 8), rne);
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + at), _mm256_set_m128i(hi, lo));
#endif
    };
    i = akg_stream_halves(dst, n, stream16, [&](int64_t at, int64_t count) { akg_f32_to_f16_n(src + at, dst + at, count); });
#elif defined(AKG_NEON)
    auto stream16 = [&](int64_t at) {
        const float16x8_t lo = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(src + at)), vld1q_f32(src + at + 4));
        const float16x8_t hi = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(src + at + 8)), vld1q_f32(src + at + 12));
        akg_stnp32(dst + at, vreinterpretq_u8_f16(lo), vreinterpretq_u8_f16(hi));
    };
    i = akg_stream_halves(dst, n, stream16, [&](int64_t at, int64_t count) { akg_f32_to_f16_n(src + at, dst + at, count); });
#endif
    akg_f32_to_f16_n(src + i, dst + i, n - i);
}

// The float16 bits of a block computed as bits (a float16 output selected between constants:
// the generator's float16_bits_of_constants), streamed by the same rules.
static inline void akg_stream_u16_n(const uint16_t *src, uint16_t *dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX__)
    auto stream16 = [&](int64_t at) {
        _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + at), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + at)));
    };
    i = akg_stream_halves(dst, n, stream16, [&](int64_t at, int64_t count) {
        for (int64_t k = at; k < at + count; ++k) dst[k] = src[k];
    });
#elif defined(AKG_NEON)
    auto stream16 = [&](int64_t at) { akg_stnp32(dst + at, vreinterpretq_u8_u16(vld1q_u16(src + at)), vreinterpretq_u8_u16(vld1q_u16(src + at + 8))); };
    i = akg_stream_halves(dst, n, stream16, [&](int64_t at, int64_t count) {
        for (int64_t k = at; k < at + count; ++k) dst[k] = src[k];
    });
#endif
    for (; i < n; ++i) dst[i] = src[i];
}

static inline void akg_stream_fence() {
#if defined(__SSE__)
    _mm_sfence();
#elif defined(AKG_NEON)
    // Arm orders STNP stores like ordinary ones (the OpenMP barrier after a parallel region
    // publishes both); a release fence (dmb ish) gives callers without such a barrier the same.
    __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

// Staging of float16 tensors (the generator's stage-float16 pass): the box
// [offset, offset + box) of a row-major float16 tensor of `rank` dimensions and `shape`, clamped
// to the tensor, is converted to or from a dense float array of the box's shape. Elements of the
// array outside the tensor are neither read nor written: the kernel does not access them.
template <bool kToFloat>
static inline void akg_stage_f16(uint16_t *tensor, int rank, const int64_t *shape, const int64_t *offset, const int64_t *box,
                                 float *local) {
    int64_t lo[8], hi[8], at[8];
    for (int d = 0; d < rank; ++d) {
        lo[d] = akg_imax(offset[d], 0);
        hi[d] = akg_imin(offset[d] + box[d], shape[d]);
        if (lo[d] >= hi[d]) return;
        at[d] = lo[d];
    }
    const int inner = rank - 1;
    for (;;) {
        int64_t t = 0, l = 0;
        for (int d = 0; d < rank; ++d) {
            t = t * shape[d] + at[d];
            l = l * box[d] + (at[d] - offset[d]);
        }
        if (kToFloat) akg_f16_to_f32_n(tensor + t, local + l, hi[inner] - lo[inner]);
        else akg_f32_to_f16_n(local + l, tensor + t, hi[inner] - lo[inner]);
        int d = inner - 1;
        while (d >= 0 && ++at[d] == hi[d]) at[d] = lo[d], --d;
        if (d < 0) return;
    }
}
static inline void akg_stage_f16_in(const uint16_t *tensor, int rank, const int64_t *shape, const int64_t *offset, const int64_t *box,
                                    float *local) {
    akg_stage_f16<true>(const_cast<uint16_t *>(tensor), rank, shape, offset, box, local);
}
static inline void akg_stage_f16_out(uint16_t *tensor, int rank, const int64_t *shape, const int64_t *offset, const int64_t *box,
                                     const float *local) {
    akg_stage_f16<false>(tensor, rank, shape, offset, box, const_cast<float *>(local));
}

// Transposes (the generator's tile-transposes pass): out[c * out_stride + r] = in[r * in_stride
// + c] for r < rows, c < cols, the bits of 2- or 4-byte elements copied unchanged, `in` and
// `out` not overlapping. A copy that permutes a tensor's innermost dimension away (NHWC ->
// NCHW) otherwise loads contiguous vectors and stores every element on its own: about one
// element per cycle. Here blocks of 8 rows are transposed in registers (unpack levels: 16-bit,
// 32-bit, 64-bit lanes) and stored as vectors. A tile of at least 8 rows and 8 columns needs no
// element-by-element remainder: its last block of rows (or of columns) starts 8 before the end
// and overlaps the one before, rewriting the same values (9 rows as rows 0-7, then 1-8: 1.2x
// faster than a ninth row one element at a time). Smaller tiles go one element at a time.
#if defined(__AVX__)
// 8 x 8 32-bit elements: rows at in + r * in_stride, columns to out + c * out_stride.
static inline void akg_transpose_8x8_b32(const uint32_t *in, int64_t in_stride, uint32_t *out, int64_t out_stride) {
    __m256 r[8], t[8], u[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(reinterpret_cast<const float *>(in + k * in_stride));
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int k = 0; k < 4; ++k) {
        _mm256_storeu_ps(reinterpret_cast<float *>(out + k * out_stride), _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps(reinterpret_cast<float *>(out + (k + 4) * out_stride), _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
    }
}
#endif
#if defined(__SSE2__)
// 8 x 8 16-bit elements, as above.
static inline void akg_transpose_8x8_b16(const uint16_t *in, int64_t in_stride, uint16_t *out, int64_t out_stride) {
    __m128i r[8], t[8], u[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + k * in_stride));
    for (int k = 0; k < 8; k += 2) { // t[k]: columns 0-3 of rows k, k+1 interleaved; t[k+1]: columns 4-7
        t[k] = _mm_unpacklo_epi16(r[k], r[k + 1]);
        t[k + 1] = _mm_unpackhi_epi16(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) { // u[k + j]: columns 2j, 2j+1 of rows k..k+3
        u[k] = _mm_unpacklo_epi32(t[k], t[k + 2]);
        u[k + 1] = _mm_unpackhi_epi32(t[k], t[k + 2]);
        u[k + 2] = _mm_unpacklo_epi32(t[k + 1], t[k + 3]);
        u[k + 3] = _mm_unpackhi_epi32(t[k + 1], t[k + 3]);
    }
    for (int j = 0; j < 4; ++j) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + (2 * j) * out_stride), _mm_unpacklo_epi64(u[j], u[j + 4]));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + (2 * j + 1) * out_stride), _mm_unpackhi_epi64(u[j], u[j + 4]));
    }
}
#endif
#if defined(__AVX2__)
// 8 x 16 16-bit elements: the same unpacks on 256-bit rows transpose two 8 x 8 blocks at once
// (columns 0-7 in the low 128-bit lanes, 8-15 in the high ones): 1.1-1.2x faster.
static inline void akg_transpose_8x16_b16(const uint16_t *in, int64_t in_stride, uint16_t *out, int64_t out_stride) {
    __m256i r[8], t[8], u[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + k * in_stride));
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_epi16(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_epi16(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_unpacklo_epi32(t[k], t[k + 2]);
        u[k + 1] = _mm256_unpackhi_epi32(t[k], t[k + 2]);
        u[k + 2] = _mm256_unpacklo_epi32(t[k + 1], t[k + 3]);
        u[k + 3] = _mm256_unpackhi_epi32(t[k + 1], t[k + 3]);
    }
    for (int j = 0; j < 4; ++j) {
        __m256i even = _mm256_unpacklo_epi64(u[j], u[j + 4]), odd = _mm256_unpackhi_epi64(u[j], u[j + 4]);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + (2 * j) * out_stride), _mm256_castsi256_si128(even));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + (2 * j + 1) * out_stride), _mm256_castsi256_si128(odd));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + (2 * j + 8) * out_stride), _mm256_extracti128_si256(even, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + (2 * j + 9) * out_stride), _mm256_extracti128_si256(odd, 1));
    }
}
#endif
#if defined(AKG_NEON)
// NEON: the same levels as trn1/trn2 (the even, or the odd, lanes of two rows interleaved) on
// 16-, 32- and 64-bit lanes of 16-byte rows. 4 x 4 32-bit elements; an 8 x 8 block is four.
static inline void akg_transpose_4x4_b32(const uint32_t *in, int64_t in_stride, uint32_t *out, int64_t out_stride) {
    uint32x4_t r[4];
    for (int k = 0; k < 4; ++k) r[k] = vld1q_u32(in + k * in_stride);
    const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(r[0], r[1])), t1 = vreinterpretq_u64_u32(vtrn2q_u32(r[0], r[1]));
    const uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(r[2], r[3])), t3 = vreinterpretq_u64_u32(vtrn2q_u32(r[2], r[3]));
    vst1q_u32(out, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
    vst1q_u32(out + out_stride, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
    vst1q_u32(out + 2 * out_stride, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
    vst1q_u32(out + 3 * out_stride, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
}
static inline void akg_transpose_8x8_b32(const uint32_t *in, int64_t in_stride, uint32_t *out, int64_t out_stride) {
    for (int r = 0; r < 8; r += 4)
        for (int c = 0; c < 8; c += 4) akg_transpose_4x4_b32(in + r * in_stride + c, in_stride, out + c * out_stride + r, out_stride);
}
// 8 x 8 16-bit elements.
static inline void akg_transpose_8x8_b16(const uint16_t *in, int64_t in_stride, uint16_t *out, int64_t out_stride) {
    uint16x8_t r[8];
    uint32x4_t t[8];
    uint64x2_t u[8];
    for (int k = 0; k < 8; ++k) r[k] = vld1q_u16(in + k * in_stride);
    for (int k = 0; k < 8; k += 2) { // t[k]: even columns of rows k, k+1 interleaved; t[k+1]: odd ones
        t[k] = vreinterpretq_u32_u16(vtrn1q_u16(r[k], r[k + 1]));
        t[k + 1] = vreinterpretq_u32_u16(vtrn2q_u16(r[k], r[k + 1]));
    }
    for (int k = 0; k < 8; k += 4) { // u[k + j]: columns j and j + 4 of rows k..k+3
        u[k] = vreinterpretq_u64_u32(vtrn1q_u32(t[k], t[k + 2]));
        u[k + 1] = vreinterpretq_u64_u32(vtrn1q_u32(t[k + 1], t[k + 3]));
        u[k + 2] = vreinterpretq_u64_u32(vtrn2q_u32(t[k], t[k + 2]));
        u[k + 3] = vreinterpretq_u64_u32(vtrn2q_u32(t[k + 1], t[k + 3]));
    }
    for (int j = 0; j < 4; ++j) {
        vst1q_u16(out + j * out_stride, vreinterpretq_u16_u64(vtrn1q_u64(u[j], u[j + 4])));
        vst1q_u16(out + (j + 4) * out_stride, vreinterpretq_u16_u64(vtrn2q_u64(u[j], u[j + 4])));
    }
}
#endif
template <typename T>
static inline void akg_transpose_block_8x8(const T *in, int64_t in_stride, T *out, int64_t out_stride) {
    if constexpr (sizeof(T) == 4) {
#if defined(__AVX__) || defined(AKG_NEON)
        akg_transpose_8x8_b32(reinterpret_cast<const uint32_t *>(in), in_stride, reinterpret_cast<uint32_t *>(out), out_stride);
        return;
#endif
    } else {
#if defined(__SSE2__) || defined(AKG_NEON)
        akg_transpose_8x8_b16(reinterpret_cast<const uint16_t *>(in), in_stride, reinterpret_cast<uint16_t *>(out), out_stride);
        return;
#endif
    }
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) out[c * out_stride + r] = in[r * in_stride + c];
}
template <typename T>
static inline void akg_transpose(const T *__restrict in, int64_t in_stride, T *__restrict out, int64_t out_stride, int64_t rows, int64_t cols) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "2- or 4-byte elements");
    if (rows < 8 || cols < 8) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) out[c * out_stride + r] = in[r * in_stride + c];
        return;
    }
    for (int64_t first_row = 0; first_row < rows; first_row += 8) {
        const int64_t r = first_row + 8 <= rows ? first_row : rows - 8;
        int64_t first_col = 0;
#if defined(__AVX2__)
        if constexpr (sizeof(T) == 2)
            for (; first_col + 16 <= cols; first_col += 16)
                akg_transpose_8x16_b16(reinterpret_cast<const uint16_t *>(in + r * in_stride + first_col), in_stride,
                                       reinterpret_cast<uint16_t *>(out + first_col * out_stride + r), out_stride);
#endif
        for (; first_col < cols; first_col += 8) {
            const int64_t c = first_col + 8 <= cols ? first_col : cols - 8;
            akg_transpose_block_8x8(in + r * in_stride + c, in_stride, out + c * out_stride + r, out_stride);
        }
    }
}
// A tile whose output is one contiguous run (out_stride == rows: the tile spans whole output
// rows) of a kernel larger than the last-level cache (the generator's stream-outputs): the
// tile is transposed into an aligned local array, then written out with non-temporal stores
// for its whole 64-byte lines (the partial lines at its two ends with ordinary stores). Without
// them every output line is first read for ownership: [512, 9, 512] float16 weights (37.7 MB),
// 1.69 -> 1.06 ms at 1 thread, 0.90 -> 0.70 at 2. Needs akg_stream_fence() like the other
// streamed stores.
#define AKG_TRANSPOSE_TILE_BYTES 16384
template <typename T>
static inline void akg_transpose_streamed(const T *__restrict in, int64_t in_stride, T *__restrict out, int64_t rows, int64_t cols) {
    if (rows * cols * static_cast<int64_t>(sizeof(T)) > AKG_TRANSPOSE_TILE_BYTES) {
        akg_transpose(in, in_stride, out, rows, rows, cols);
        return;
    }
    alignas(64) T local[AKG_TRANSPOSE_TILE_BYTES / sizeof(T)];
    akg_transpose(in, in_stride, local, rows, rows, cols);
    const char *src = reinterpret_cast<const char *>(local);
    char *dst = reinterpret_cast<char *>(out);
    const int64_t n = rows * cols * static_cast<int64_t>(sizeof(T));
    int64_t i = 0;
#if defined(__AVX512F__)
    const int64_t head = (64 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 63)) & 63;
    i = head < n ? head : n;
    memcpy(dst, src, static_cast<size_t>(i));
    for (; i + 64 <= n; i += 64) _mm512_stream_si512(reinterpret_cast<__m512i *>(dst + i), _mm512_loadu_si512(src + i));
#elif defined(AKG_NEON)
    const int64_t head = (64 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 63)) & 63;
    i = head < n ? head : n;
    memcpy(dst, src, static_cast<size_t>(i));
    for (; i + 64 <= n; i += 64) {
        const uint8_t *line = reinterpret_cast<const uint8_t *>(src + i);
        akg_stnp32(dst + i, vld1q_u8(line), vld1q_u8(line + 16));
        akg_stnp32(dst + i + 32, vld1q_u8(line + 32), vld1q_u8(line + 48));
    }
#endif
    memcpy(dst + i, src + i, static_cast<size_t>(n - i));
}
