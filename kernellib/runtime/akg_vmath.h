/* akg_vmath.h: vectorizable float32 math for generated kernels.
 *
 * Header-only, C++17. Every function is `static inline` (always_inline), branch-free and free
 * of libm calls (except __builtin_sqrtf / __builtin_sqrt and __builtin_rintf, single
 * instructions under -fno-math-errno), so that GCC and clang vectorize it when it is called
 * inside a `#pragma omp simd` loop. Intended flags:
 * -O3 -march=native -mprefer-vector-width=512 -fopenmp -fno-math-errno, WITHOUT -ffast-math:
 * NaN and Inf behave as listed below.
 *
 * Methods: exp: Cody-Waite reduction by ln2 + degree-6 polynomial; log: exponent/mantissa split
 * around sqrt(2) + degree-10 polynomial for log1p; tanh: odd degree-11 polynomial below 0.625,
 * (1-e^-2|x|)/(1+e^-2|x|) above; erf: odd polynomial below 1, 1 - exp(poly(|x|) - x^2) up to 4;
 * pow: log2 and exp2 in double precision; tanh to float16 precision: a rational function (see
 * tanh_rational_h). The polynomial coefficients were fitted for this file with a weighted
 * (relative- or absolute-error) Remez exchange in mpmath, the rational one by iteratively
 * reweighted least squares (Lawson) on a dense grid, then rounded to float/double.
 * sin, cos: an integer Payne-Hanek reduction for every |x| >= pi/4 (no table lookup: 96 bits of
 * 2/pi cut out by variable shifts), polynomials in double; asin, acos: x + x^3 P(x^2) up to 1/2,
 * pi/2 - 2 asin(sqrt((1-|x|)/2)) above, in double; atan, atan2: u + u^3 P(u^2) on u = min/max
 * (one division) in double; asinh, acosh: log(|x| + sqrt(x^2 +- 1)) in double with akg_log's
 * polynomial; expm1: 2^k (e^r - 1) + (2^k - 1) in double; these polynomials were fitted with
 * mpmath's Chebyshev fit (near-minimax). Double precision where it buys a single rounding
 * (0.5-0.6 ulp) for about twice the float cost: the float forms tried first were 1.35 (atan)
 * and 1.50 ulp (atan2).
 * Every multiply-add is an explicit fma so that the scalar and the vector code round
 * identically whatever -ffp-contract is in force (tests check bit-for-bit agreement).
 *
 * ACCURACY. Max error in ULP of the float result against the double-precision libm value (the
 * unrounded double, so 0.5 = correctly rounded), measured EXHAUSTIVELY over all 2^32 float
 * inputs with GCC 12 (clang 14 builds give the same figures on the 1/97 sweep); "bound" is what
 * tests/vmath asserts:
 *                  measured  bound
 *   akg_exp        0.894     1.0   overflow -> +inf for x > 88.7228, subnormal results, then +0
 *   akg_log        0.852     1.0   subnormal inputs included
 *   akg_tanh       1.509     2.0   (worst at |x| ~ 1.25, on the (1-e)/(1+e) side)
 *   akg_tanh_plus_one  2.481  2.5  1 + tanh(x); results below 2^-126 flushed to +0
 *   akg_erf        1.214     1.5   (worst near |x| = 1, where the two pieces meet)
 *   akg_sigmoid    2.402     2.5   worst for x < 0 (e/(1+e)); subnormal tail kept for x < -87
 *   akg_div_one_plus_exp 2.453 2.5  x / (1 + e^y): NOT exhaustive (two arguments): every 13th y
 *                                  of all 2^32 times 32 numerators (1, 1.5, 2 - 2^-23, random);
 *                                  results of y >= 88.3763 flushed to x * 0
 *   akg_pow        0.508     1.0   10^8 pairs: random bits, integer y with x < 0, DL ranges,
 *                                  results near over/underflow and subnormal, x near 1 with
 *                                  |y| up to 2^23; special cases equal glibc powf
 *   akg_sqrt       0.5       0.5   correctly rounded (vsqrtps)
 *   akg_rsqrt      1.490     1.5   1.0f / sqrtf(x) (two roundings)
 *   akg_sin        0.500     1.0   every float, huge ones included (Payne-Hanek reduction)
 *   akg_cos        0.500     1.0
 *   akg_asin       0.501     1.0
 *   akg_acos       0.501     1.0
 *   akg_atan       0.522     1.0
 *   akg_atan2      0.522     1.0   NOT exhaustive (two arguments): 160 million pairs (every 997th
 *                                  bit pattern and every 31st float of +-[2^-8, 16] against 7
 *                                  values of the other argument, both ways, random pairs, |y|
 *                                  near |x|); the tests run 23 million of the same kinds
 *   akg_asinh      0.599     1.0
 *   akg_acosh      0.597     1.0
 *   akg_expm1      0.510     1.0
 *   akg_round_even, akg_floor: exact (the same bits as nearbyintf / floorf)
 *   akg_f32_to_f16, akg_f16_to_f32, akg_round_f16: exact (round to nearest even), bit-identical
 *   to the F16C instructions for all 2^32 floats / all 2^16 halves (NaNs quieted).
 *
 * FLOAT16 PRECISION (the generator calls these for Exp and Tanh ops declared float16): max
 * RELATIVE error against double-precision libm, exhaustive over all 2^32 floats; the bound is
 * 2^-16 = 1.5e-5, 1/32 of a float16 ulp (tests/vmath asserts it on the same sweeps as above):
 *                        measured
 *   akg_exp_h            6.44e-6   results below 2^-125.5 (x < -86.99) flushed to +0; results
 *                                  within 2^-16 of FLT_MAX may round up to +inf
 *   akg_tanh_h           3.08e-6   (worst at |x| = 6.692, from where it returns +-1; rational form)
 *   akg_tanh_plus_one_h  6.23e-6   results below 2^-126 flushed to +0, as akg_tanh_plus_one
 *   akg_div_one_plus_exp_h 6.25e-6 (the sweep of akg_div_one_plus_exp, not exhaustive)
 *
 * SPECIAL VALUES: exp(-inf)=+0, exp(+inf)=+inf, exp(NaN)=NaN; log(±0)=-inf, log(x<0)=NaN,
 * log(+inf)=+inf, log(NaN)=NaN; tanh(±inf)=±1, tanh(±0)=±0, tanh(NaN)=NaN, tanh(tiny x)=x;
 * tanh_plus_one(+inf)=2, tanh_plus_one(-inf)=+0, tanh_plus_one(NaN)=NaN;
 * erf(±inf)=±1, erf(±0)=±0, erf(NaN)=NaN; sigmoid(-inf)=0, sigmoid(+inf)=1; pow follows C powf
 * (pow(x,±0)=1 even for NaN x, pow(1,y)=1 even for NaN y, pow(-1,±inf)=1, pow(x<0 finite,
 * non-integer y)=NaN, odd-integer y keeps the sign of x (incl. -0 and -inf), pow(±0,y<0)=+inf
 * or ±inf, overflow -> inf, underflow -> subnormal / 0, NaN otherwise propagates);
 * sin(±inf)=cos(±inf)=NaN, sin(±0)=±0, cos(±0)=1, sin(tiny x)=x; asin(±0)=±0, asin(±1)=±pi/2,
 * acos(1)=+0, acos(-1)=pi, asin/acos(|x|>1 or ±inf)=NaN; atan(±0)=±0, atan(±inf)=±pi/2,
 * atan(1)=pi/4 (all rounded); atan2 follows C atan2f: atan2(±0, +0 or x>0)=±0, atan2(±0, -0 or
 * x<0)=±pi, atan2(y≠0, ±0)=±pi/2, atan2(±inf, +inf)=±pi/4, atan2(±inf, -inf)=±3pi/4,
 * atan2(±y, +inf)=±0, atan2(±y, -inf)=±pi, NaN if either is NaN; asinh(±inf)=±inf,
 * asinh(±0)=±0, asinh(tiny x)=x, acosh(1)=+0, acosh(+inf)=+inf, acosh(x<1 or -inf)=NaN;
 * expm1(±0)=±0, expm1(tiny x)=x, expm1(-inf)=-1 (and -1 for x < -17.3), overflow -> +inf for
 * x > 88.7228; round_even(-0.4)=-0, round_even(2.5)=2, floor(-0.4)=-1, floor(-0)=-0; all of
 * these map NaN to NaN.
 *
 * VECTORIZATION and COST. GCC 12.2 -fopt-info-vec reports "loop vectorized using 64 byte
 * vectors" for a `#pragma omp simd` loop over each function (also with -march=sapphirerapids),
 * and clang 14 "vectorization width: 16" (8 for most of the double-precision sin ... expm1);
 * the loop bodies are all zmm, with no calls.
 * Throughput on the dev VM (2 vCPU AMD EPYC with AVX-512, which GCC's -march=native calls
 * znver3; NOT the Sapphire Rapids of the stack notes), 1 thread, 2048-element arrays in L1,
 * minimum over repeated runs, ns per element; instrs = zmm-loop-body instructions per 16 lanes,
 * including ~5 of load/store/loop overhead:
 *                    ns/elem  instrs          (glibc scalar, not vectorized, for comparison)
 *   akg_exp           0.152                       expf  1.41
 *   akg_exp_no_overflow 0.121 (x <= 64)
 *   akg_log           0.24    44                  logf  1.88
 *   akg_tanh          0.24    40 (1 div)          tanhf 8.25
 *   akg_tanh_plus_one 0.152   (1 div)
 *   akg_div_one_plus_exp: GeLU x / (1 + e^(x (a x^2 + b))) 0.189 (_h: 0.140)
 *   akg_erf           0.333                       erff  6.98
 *   akg_sigmoid       0.181   (1 div)
 *   akg_sqrt          0.07     5
 *   akg_rsqrt         0.10     6 (1 div)
 *   akg_pow           1.29   172 (2 div, double precision)   powf 2.90
 *   akg_exp_h         0.086                       (float16 precision)
 *   akg_exp_h_no_overflow 0.079 (x <= 88)
 *   akg_tanh_h        0.081   (1 div; the exponential form it replaced: 0.159; clamped instead
 *                     of selected, 0.106 / 0.092 in one later run)
 *   akg_tanh_plus_one_h 0.109 (1 div)
 *   (Out-of-range arguments clamped by vmaxps/vminps (clamp_below, clamp_above) instead of
 *   selecting results by compare and masked move, and the float16 clamps of akg_round_f16 and
 *   akg_f32_to_f16 as integer min/max, before / after in one run, 2026-12-02, where the table
 *   above has the after figures: akg_exp 0.204 / 0.152, akg_exp_no_overflow 0.138 / 0.121,
 *   akg_tanh 0.255 / 0.243, akg_tanh_plus_one 0.157 / 0.152, akg_tanh_plus_one_h 0.118 / 0.109,
 *   akg_erf 0.381 / 0.333, akg_sigmoid 0.199 / 0.181, GeLU's akg_div_one_plus_exp 0.221 / 0.189
 *   and _h 0.181 / 0.140, akg_exp_h 0.107 / 0.086, akg_exp_h_no_overflow 0.087 / 0.079,
 *   akg_round_f16 0.098 / 0.074, akg_f32_to_f16 0.173 / 0.136.)
 *   (2^k from exp_scale instead of the integer k, measured before / after on one day:
 *   akg_exp_no_overflow 0.145 / 0.130, akg_exp_h_no_overflow 0.100 / 0.091,
 *   akg_tanh_plus_one 0.151 / 0.145, akg_tanh_plus_one_h 0.130 / 0.121, akg_tanh and akg_erf
 *   within 3%; the same bits for every float, NaN payloads included)
 *   akg_f16_to_f32    0.076   (uint16 -> float, integer path; vcvtph2ps: 0.036)
 *   akg_f32_to_f16    0.136   (integer path)
 *   akg_round_f16     0.074   (of 1.5f * x)
 *   (a plain y = 1.5f * x loop: 0.015 ns/elem)
 *   (the functions below measured on 2026-12-05, in a run where akg_exp took 0.148 and the
 *   1.5f * x loop 0.033; arguments uniform in [-10, 10], [-1, 1] for asin / acos, [1, 20] for
 *   acosh)
 *   akg_sin           1.19    (the integer reduction ~60%)  sinf  1.81
 *   akg_cos           1.22
 *   akg_asin          0.47    (double, 1 sqrt)
 *   akg_acos          0.62    (double, 1 sqrt)
 *   akg_atan          0.58    (double, 1 div; float: ~half)  atanf 4.67
 *   akg_atan2         0.95    (double, 1 div)
 *   akg_asinh         0.72    (double, 1 sqrt)
 *   akg_acosh         0.62    (double, 1 sqrt)
 *   akg_expm1         0.35    (double)                      expm1f 7.90
 *   akg_round_even    0.032   (vrndscaleps)
 *   akg_floor         0.056   (vrndscaleps, compare, masked subtract)
 *
 * FLOAT16: akg_f16_to_f32 / akg_f32_to_f16 are branch-free integer code (plus one float add
 * for f16 subnormals) with GCC, because GCC 12 does not vectorize _Float16 casts, even with
 * AVX512-FP16 (-march=sapphirerapids); generated code should call these helpers rather than
 * cast through _Float16, or the whole loop stays scalar. With clang and F16C they are __fp16
 * casts (vcvtph2ps / vcvtps2ph; clang 14 rejects _Float16 without AVX512-FP16). Both paths give
 * the same bits as the F16C instructions (tests check it). On aarch64 the widening is an __fp16
 * cast (fcvtl) with GCC too, and with clang both are; the same bits as the fcvt instructions.
 *
 * AARCH64: the same code compiles for Armv8 (NEON is always there, and so is fused
 * multiply-add): GCC 12 vectorizes the `#pragma omp simd` loops over these functions with
 * 16-byte vectors, multiply-adds as fmla, clamps and selects as compares and bsl, no calls.
 * (sin/cos multiply 32 x 32 -> 64 bits, umull: a 64 x 64-bit multiply would leave the loop
 * scalar, NEON has none.)
 *
 * ROUNDING: GCC 12 on x86 vectorizes neither __builtin_roundevenf nor __builtin_floorf without
 * -fno-trapping-math (the loop stays scalar, with no call but no vectors either; on aarch64 it
 * does, as frintn / frintm); it vectorizes __builtin_rintf on both (vrndscaleps / frintx). So akg_round_even is rintf, which rounds
 * ties to even in the default rounding mode (kernels never change it), and akg_floor is
 * rintf(x) minus 1 where that exceeds x.
 */
#ifndef AKG_VMATH_H
#define AKG_VMATH_H

#include <stdint.h>
#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

/* `static inline` alone is a hint: GCC stops inlining these once a translation unit calls them
 * often (seen with akg_log in the tests), and an out-of-line call in a simd loop prevents its
 * vectorization ("relevant stmt not supported"). */
#if defined(__GNUC__) || defined(__clang__)
#define AKG_VM_INLINE static inline __attribute__((always_inline))
#else
#define AKG_VM_INLINE static inline
#endif

namespace akg_vm_detail {

AKG_VM_INLINE uint32_t f2u(float x) { uint32_t u; __builtin_memcpy(&u, &x, sizeof u); return u; }
AKG_VM_INLINE float u2f(uint32_t u) { float x; __builtin_memcpy(&x, &u, sizeof x); return x; }
AKG_VM_INLINE uint64_t d2u(double x) { uint64_t u; __builtin_memcpy(&u, &x, sizeof u); return u; }
AKG_VM_INLINE double u2d(uint64_t u) { double x; __builtin_memcpy(&x, &u, sizeof x); return x; }

/* aarch64 always has fused multiply-add (fmadd, and fmla on vectors). */
#if defined(__FMA__) || defined(__FP_FAST_FMAF) || defined(__ARM_FEATURE_FMA)
AKG_VM_INLINE float fmaf_(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
AKG_VM_INLINE double fma_(double a, double b, double c) { return __builtin_fma(a, b, c); }
#else
/* No hardware FMA: plain multiply-add (still vectorizes; bit-exactness between scalar and vector
 * code then depends on -ffp-contract treating both alike). */
AKG_VM_INLINE float fmaf_(float a, float b, float c) { return a * b + c; }
AKG_VM_INLINE double fma_(double a, double b, double c) { return a * b + c; }
#endif

/* Selects as bit blends, never `c ? a : b`: GCC gimplifies a ternary into a branch, then
 * (a) sinks floating-point operations used by only one arm into it, and (b) jump-threads clamps
 * such as `a > 4 ? 4 : a` (the clamped value is a known constant on one path, so the whole
 * function gets duplicated); under the default -ftrapping-math the if-converter then refuses
 * the trapping FP operations in the conditional blocks and the loop is not vectorized at all
 * ("control flow in loop"). A blend of the bits has no branch, and GCC 12 compiles it to
 * masked moves (AVX-512) or blends. */
AKG_VM_INLINE uint32_t sel(bool c, uint32_t a, uint32_t b) {
    uint32_t m = 0u - (uint32_t)c;
    return (a & m) | (b & ~m);
}
AKG_VM_INLINE int32_t sel(bool c, int32_t a, int32_t b) {
    return (int32_t)sel(c, (uint32_t)a, (uint32_t)b);
}
AKG_VM_INLINE float sel(bool c, float a, float b) { return u2f(sel(c, f2u(a), f2u(b))); }
AKG_VM_INLINE uint64_t sel(bool c, uint64_t a, uint64_t b) {
    uint64_t m = 0u - (uint64_t)c;
    return (a & m) | (b & ~m);
}
AKG_VM_INLINE double sel(bool c, double a, double b) {
    uint64_t m = 0u - (uint64_t)c;
    return u2d((d2u(a) & m) | (d2u(b) & ~m));
}

/* Clamps in one vector instruction. `lo > x ? lo : x` is max(x, lo) with a NaN x passed through
 * (the comparison is false for NaN), which is exactly vmaxps(lo, x); GCC 12 emits that single
 * instruction only when lo is not a compile-time constant. With a constant bound it emits a
 * compare into a mask register plus a masked move, and it merges two clamps of one value into a
 * seven-instruction mask sequence. In GeLU's x / (1 + e^y) (2048 floats in L1, 1 thread, minimum
 * of 10 interleaved runs) the range handling by selects took 0.249 ns per element, clamps by
 * vmaxps/vminps 0.205, and no range handling at all 0.185. So the bounds are read from
 * variables GCC cannot fold: non-const globals with external linkage (another translation unit
 * could write them), loaded once before the loop. Nothing writes them. Unlike the ternaries
 * `sel` avoids, both arms here are plain values, so there is nothing to sink into a branch. */
struct ClampBounds {
    float exp_arg_floor;      /* -87: e^-87 < 2^-125, so 1 + e^y rounds to 1 and 2^k is normal */
    float exp_arg_ceil_inf;   /* 88.7: k = round(88.7 log2 e) = 128, whose 2^k from exp_scale is
                               * +inf (exponent field 255), so e^y saturates to +inf */
    float exp_arg_floor_zero; /* -104: e^-104 rounds to +0 */
    float exp_arg_ceil;       /* 89: e^89 overflows to +inf */
    float erf_arg_ceil;       /* 4: erf rounds to 1 from 3.92 on */
    float exp_h_arg_floor;    /* -87.5: k = -126, whose 2^(k-1) from exp_scale with bias 126 is
                               * +0 (akg_exp_h) */
    float tanh_h_arg_floor;   /* -+6.692: where tanh_rational_h's quotient is exactly -+1.0f */
    float tanh_h_arg_ceil;
};
inline ClampBounds clamp_bounds = {-87.0f, 88.7f, -104.0f, 89.0f, 4.0f, -87.5f, -0x1.ac4b38p+2f, 0x1.ac4b38p+2f};
AKG_VM_INLINE float clamp_below(float x, const float &lo) { return lo > x ? lo : x; }
AKG_VM_INLINE float clamp_above(float x, const float &hi) { return hi < x ? hi : x; }

static constexpr float kInf = __builtin_inff();
static constexpr float kNaN = __builtin_nanf("");

/* e^r = 1 + r + r^2 * q(r) on |r| <= ln2/2 (the r term exact), relative error 3.1e-9. */
AKG_VM_INLINE float exp_poly(float r) {
    float q = 0x1.6a2434p-10f;
    q = fmaf_(q, r, 0x1.1239e2p-7f);
    q = fmaf_(q, r, 0x1.5558f2p-5f);
    q = fmaf_(q, r, 0x1.555492p-3f);
    q = fmaf_(q, r, 0x1.fffffcp-2f);
    q = fmaf_(q, r, 1.0f);
    return fmaf_(q, r, 1.0f);
}

/* k = round(x * log2(e)), returned as a float and set as an integer. */
AKG_VM_INLINE float exp_round_k(float x, int32_t &k) {
    const float shifter = 0x1.8p23f;
    float t = fmaf_(x, 0x1.715476p+0f, shifter); /* round(x*log2(e)) in the low mantissa bits */
    k = (int32_t)(f2u(t) - f2u(shifter));
    return t - shifter;
}

/* Cody-Waite reduction x = k*ln2 + r, |r| <= ln2/2 (r exact thanks to FMA); returns e^r and k. */
AKG_VM_INLINE float exp_reduce(float x, int32_t &k) {
    float kf = exp_round_k(x, k);
    float r = fmaf_(kf, -0x1.62e430p-1f, x);
    r = fmaf_(kf, 0x1.05c610p-29f, r);
    return exp_poly(r);
}

/* e^r = 1 + r + r^2 * q(r) on |r| <= ln2/2, relative error 6.2e-6 (2^-17.3). */
AKG_VM_INLINE float exp_poly_h(float r) {
    float q = 0x1.4f3204p-5f;
    q = fmaf_(q, r, 0x1.571f16p-3f);
    q = fmaf_(q, r, 0x1.000bb4p-1f);
    q = fmaf_(q, r, 1.0f);
    return fmaf_(q, r, 1.0f);
}

/* The reduction of exp_reduce for a caller that scales with exp_scale: returns e^r and sets t,
 * the rounding float, whose low mantissa bits hold k + kBias. kFloat16Precision: one reduction
 * constant, so r is off by |k| * 1.9e-9 (k <= 128: 2^-22 relative in e^r, far below
 * exp_poly_h's error), and exp_poly_h. (An odd kBias rounds a tie of x*log2(e) + shifter to
 * the other neighbour, but ties need |x| >= 2^22, beyond every caller's range.) */
template <bool kFloat16Precision, int kBias>
AKG_VM_INLINE float exp_reduce_t(float x, float &t) {
    const float shifter = 0x1.8p23f + (float)kBias; /* an integer in [2^23, 2^24): exact */
    t = fmaf_(x, 0x1.715476p+0f, shifter);
    float kf = t - shifter; /* k, exactly */
    float r = fmaf_(kf, -0x1.62e430p-1f, x);
    if (kFloat16Precision) return exp_poly_h(r);
    r = fmaf_(kf, 0x1.05c610p-29f, r);
    return exp_poly(r);
}

/* 2^(k + kBias - 127) from exp_reduce_t's t: its low 9 mantissa bits, shifted left by 23, are
 * the exponent field of that power of two (the shifter's bits above them leave the word), a
 * normal float for k + kBias in [1, 254]. One vector operation where building 2^k from the
 * integer k takes three (k, the bias, the shift). Garbage, but no undefined behaviour, outside
 * that range: callers clamp x or select such results away. */
AKG_VM_INLINE float exp_scale(float t) { return u2f(f2u(t) << 23); }

/* e^x for x <= 0 where a result below 2^-126 may be flushed to 0 (used by tanh and erf).
 * NaN -> NaN. */
AKG_VM_INLINE float exp_nonpos_flush(float x) {
    x = clamp_below(x, clamp_bounds.exp_arg_floor);
    float t;
    float p = exp_reduce_t<false, 127>(x, t);
    return p * exp_scale(t); /* k in [-126, 0] */
}

/* Float bits -> (exponent, mantissa in [sqrt(1/2), sqrt(2))) for finite x > 0, subnormals
 * included: x = m * 2^e. Garbage (but no UB) for 0, negative, inf, NaN. */
AKG_VM_INLINE float log_reduce(float x, int32_t &e) {
    const bool sub = x < 0x1p-126f;
    float xs = sel(sub, x * 0x1p23f, x);
    int32_t ebias = sel(sub, (int32_t)-23, (int32_t)0);
    uint32_t i = f2u(xs);
    int32_t ix = (int32_t)(i - 0x3f3504f3u); /* 0x3f3504f3 = sqrt(1/2) */
    int32_t k = ix >> 23;                     /* arithmetic shift: floor */
    e = k + ebias;
    return u2f(i - ((uint32_t)k << 23));
}

/* Branch-free f32 -> f16 bits, round to nearest even, NaNs quieted (matches vcvtps2ph). */
AKG_VM_INLINE uint16_t f32_to_f16_soft(float x) {
    uint32_t u = f2u(x);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    /* normal f16 range: rebias exponent, round mantissa to 10 bits (RNE); overflow -> inf */
    uint32_t n = (a + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;
    n = n > 0x7c00u ? 0x7c00u : n; /* vpminud */
    /* subnormal f16 range (|x| < 2^-14): let the FPU round x + 0.5 to a multiple of 2^-24 */
    uint32_t s = f2u(u2f(a) + 0.5f) - 0x3f000000u;
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    uint32_t h = sel(a < 0x38800000u, s, n);
    h = sel(a > 0x7f800000u, nan, h);
    return (uint16_t)(h | sign);
}

/* Branch-free f16 bits -> f32 (exact; NaNs quieted, matches vcvtph2ps), in 11 vector
 * operations (the exponent-rebias method of the FP16 literature). With the half's exponent and
 * mantissa placed at the top of a float's (two_w >> 4), adding 224 to the exponent field and
 * multiplying by 2^-112 rebiases normals exactly and takes the all-ones exponent of inf/NaN to
 * inf/NaN (the multiplication also quiets a signalling NaN, as vcvtph2ps does). Zero and
 * subnormals (two_w < 2^27) are 0.5 + m * 2^-24 read as a float, minus 0.5: exact. */
AKG_VM_INLINE float f16_to_f32_soft(uint16_t hv) {
    uint32_t w = (uint32_t)hv << 16;
    uint32_t sign = w & 0x80000000u;
    uint32_t two_w = w + w;
    float normal = u2f((two_w >> 4) + (0xE0u << 23)) * 0x1p-112f;
    float subnormal = u2f((two_w >> 17) | (126u << 23)) - 0.5f;
    return u2f(sign | sel(two_w < (1u << 27), f2u(subnormal), f2u(normal)));
}

} /* namespace akg_vm_detail */

/* ---- exp ------------------------------------------------------------------------------ */
namespace akg_vm_detail {
/* e^x for x <= 175 (+inf from 88.73 on). */
AKG_VM_INLINE float exp_up_to_overflow(float x) {
    /* e^-104 rounds to 0, so the clamp changes no result; NaN passes (the comparison is false). */
    float xc = clamp_below(x, clamp_bounds.exp_arg_floor_zero);
    int32_t k;
    float p = exp_reduce(xc, k); /* k in [-150, 254] */
    /* 2^k in two normal factors so that subnormal results are rounded once, and overflow -> inf */
    int32_t k1 = k >> 1;
    int32_t k2 = k - k1;
    return (p * u2f((uint32_t)(k1 + 127) << 23)) * u2f((uint32_t)(k2 + 127) << 23);
}
} /* namespace akg_vm_detail */

AKG_VM_INLINE float akg_exp(float x) {
    /* e^89 overflows to inf, so the clamp changes no result; NaN passes. */
    using namespace akg_vm_detail;
    return exp_up_to_overflow(clamp_above(x, clamp_bounds.exp_arg_ceil));
}

/* e^x for x <= 64 only: a softmax's exp(x - max(x)), which the generator's math-identities pass
 * proves to be at most 16 (0 up to the rounding of the maximum). The same bits as akg_exp there
 * in 6 fewer vector operations (of 21), without its upper clamp and with one normal scale:
 * e^r * 2^(k+32) is exact and normal for every k in [-150, 95] (x in [-104, 66]); times 2^-32
 * it rounds a subnormal result once, as akg_exp's two factors do. Beyond x = 66, garbage. */
AKG_VM_INLINE float akg_exp_no_overflow(float x) {
    using namespace akg_vm_detail;
    float xc = clamp_below(x, clamp_bounds.exp_arg_floor_zero); /* e^-104 rounds to 0; NaN passes */
    float t;
    float p = exp_reduce_t<false, 127 + 32>(xc, t);
    return (p * exp_scale(t)) * 0x1p-32f;
}

/* ---- log ------------------------------------------------------------------------------ */
namespace akg_vm_detail {
/* P of log(1+f) = f - f^2/2 + f^3 P(f), highest degree first: float constants, shared by
 * akg_log (in float) and log_pos_d (in double). */
static constexpr double log1p_poly[8] = {-0x1.38c1aap-4, 0x1.056498p-3,  -0x1.0d875ap-3, 0x1.22d90ap-3,
                                         -0x1.5471f6p-3, 0x1.99a012p-3, -0x1.000228p-2, 0x1.555554p-2};
} // namespace akg_vm_detail

AKG_VM_INLINE float akg_log(float x) {
    using namespace akg_vm_detail;
    int32_t e;
    float m = log_reduce(x, e);
    float f = m - 1.0f; /* exact, in [-0.293, 0.415) */
    float ef = (float)e;
    /* log(1+f) = f - f^2/2 + f^3 * P(f), relative error 5.8e-9 */
    /* Written out: a loop over the coefficients keeps GCC 12 from vectorizing callers' loops. */
    float P = (float)log1p_poly[0];
    P = fmaf_(P, f, (float)log1p_poly[1]);
    P = fmaf_(P, f, (float)log1p_poly[2]);
    P = fmaf_(P, f, (float)log1p_poly[3]);
    P = fmaf_(P, f, (float)log1p_poly[4]);
    P = fmaf_(P, f, (float)log1p_poly[5]);
    P = fmaf_(P, f, (float)log1p_poly[6]);
    P = fmaf_(P, f, (float)log1p_poly[7]);
    float z = f * f;
    float hz = 0.5f * z;
    float lo = fmaf_(z * f, P, ef * -0x1.05c610p-29f); /* small terms first */
    lo = lo - hz;
    float r = fmaf_(ef, 0x1.62e430p-1f, lo + f);
    r = sel(x == 0.0f, -kInf, r);
    r = sel(x < 0.0f, kNaN, r);
    r = sel(x < kInf, r, x); /* +inf -> +inf, NaN -> NaN */
    return r;
}

/* ---- tanh ----------------------------------------------------------------------------- */
namespace akg_vm_detail {
/* tanh to float16 precision without an exponential: x * P(x^2) / Q(x^2), a rational minimax
 * fit of degree (3, 3) in x^2 on |x| < 6.5 (relative error 6.2e-7 before rounding; P(0) = Q(0)
 * = 1, so tiny x return x itself). All coefficients are positive, so neither polynomial
 * cancels. Beyond 6.5 the quotient keeps rising and, as evaluated here, is exactly 1.0f at
 * x = 0x1.ac4b38p+2 (6.692) and below 1 under it; |x| is clamped to that point, so larger x,
 * +-inf included, return +-1 with no select (tanh's own distance from 1 there is under
 * 3.1e-6, a fifth of the 2^-16 bound). NaN passes the clamps. Half the time of the exponential
 * form it replaced (0.081 vs 0.159 ns per element; bias_gelu_grad_f16 spends most of its time
 * here). */
AKG_VM_INLINE float tanh_rational_h(float x) {
    x = clamp_above(clamp_below(x, clamp_bounds.tanh_h_arg_floor), clamp_bounds.tanh_h_arg_ceil);
    float t = x * x;
    float P = fmaf_(fmaf_(fmaf_(0x1.20b362p-18f, t, 0x1.34ac0cp-9f), t, 0x1.fb7c30p-4f), t, 1.0f);
    float Q = fmaf_(fmaf_(fmaf_(0x1.3c5adep-13f, t, 0x1.5f34b6p-6f), t, 0x1.d43390p-2f), t, 1.0f);
    return (x * P) / Q;
}

AKG_VM_INLINE float tanh_f32(float x) {
    float a = __builtin_fabsf(x);
    /* |x| >= 0.625: (1 - e^-2a) / (1 + e^-2a); e^-2a in (0, 0.29] so no cancellation */
    float em = exp_nonpos_flush(-2.0f * a);
    float big = (1.0f - em) / (1.0f + em);
    /* |x| < 0.625: a + a^3 * P(a^2), relative error 4.4e-9 */
    float t = a * a;
    float P = -0x1.75e1cep-8f;
    P = fmaf_(P, t, 0x1.52269cp-6f);
    P = fmaf_(P, t, -0x1.b83c5ap-5f);
    P = fmaf_(P, t, 0x1.110726p-3f);
    P = fmaf_(P, t, -0x1.555532p-2f);
    float small = fmaf_(a * t, P, a);
    float r = sel(a < 0.625f, small, big); /* NaN -> big -> NaN */
    return __builtin_copysignf(r, x);
}

/* 1 + e^y, to float32 or float16 precision, saturating: y is clamped to [-87, 88.7] (NaN
 * passes), where exp_scale's 2^k is a normal float for k in [-126, 127] and +inf for k = 128
 * (y >= 127.5 ln 2 = 88.3763). So 1 + e^y rounds to 1 for y < -87, is +inf for y >= 88.3763 and
 * is computed (one fma) in between: the callers' quotients need no selects for out-of-range y. */
template <bool kFloat16Precision>
AKG_VM_INLINE float one_plus_exp_saturating(float y) {
    y = clamp_above(clamp_below(y, clamp_bounds.exp_arg_floor), clamp_bounds.exp_arg_ceil_inf);
    float t;
    float p = kFloat16Precision ? exp_reduce_t<true, 127>(y, t) : exp_reduce_t<false, 127>(y, t);
    return fmaf_(p, exp_scale(t), 1.0f);
}

/* 1 + tanh(x) = 2 / (1 + e^-2x), to float32 or float16 precision: 2 for x > 43.5, +0 for
 * x <= -44.19 (the result is below 2^-126 from x = -44.02 on); NaN -> NaN. */
template <bool kFloat16Precision>
AKG_VM_INLINE float tanh_plus_one_of(float x) {
    return 2.0f / one_plus_exp_saturating<kFloat16Precision>(-2.0f * x); /* -2x is exact */
}
} /* namespace akg_vm_detail */

AKG_VM_INLINE float akg_tanh(float x) { return akg_vm_detail::tanh_f32(x); }

namespace akg_vm_detail {
/* x / (1 + e^y), to float32 or float16 precision: 1 + e^y in one fma, then one division. For
 * y < -87, 1 + e^y rounds to 1 and the result is x; for y >= 88.3763 it is +inf and the result
 * is x * 0: +-0, or NaN for an infinite or NaN x, the value of x * akg_tanh_plus_one(-y/2) / 2
 * there. NaN y: NaN. */
template <bool kFloat16Precision>
AKG_VM_INLINE float div_one_plus_exp_of(float x, float y) {
    return x / one_plus_exp_saturating<kFloat16Precision>(y);
}
} /* namespace akg_vm_detail */

/* ---- 1 + tanh ------------------------------------------------------------------------- */
/* 1 + tanh(x) = 2 / (1 + e^-2x), for the generator's math-identities pass (GeLU's tanh form):
 * no cancellation for x < 0, where 1 + akg_tanh(x) loses up to every bit, and one exponential
 * plus a division. Results below 2^-126 (x < -44.02) may be flushed to +0; from x = -44.19 on
 * they are. */
AKG_VM_INLINE float akg_tanh_plus_one(float x) { return akg_vm_detail::tanh_plus_one_of<false>(x); }

/* ---- x / (1 + e^y) -------------------------------------------------------------------- */
/* x * (1 + tanh(z)) / 2 = x / (1 + e^-2z), for the math-identities pass (GeLU's tanh form,
 * whose constant 1/2 cancels the 2 of 1 + tanh): the multiplications by x, by 1/2 and by -2
 * fold into the division. Results of y >= 88.3763 are flushed to x * 0 (see
 * div_one_plus_exp_of). */
AKG_VM_INLINE float akg_div_one_plus_exp(float x, float y) { return akg_vm_detail::div_one_plus_exp_of<false>(x, y); }

/* ---- float16 precision: exp, tanh, 1 + tanh -------------------------------------------- */
/* For ops declared float16 (the generator's lowering): a float16 value carries 11 bits, so
 * these keep a relative error below 2^-16 (1/32 of a float16 ulp) instead of float32's 1-2.5
 * ulp, with a shorter polynomial and one reduction constant (exp, 1 + tanh: 1.3-1.4x cheaper) or
 * a rational function instead of an exponential (tanh: 2x cheaper). Same special values as the
 * float32 functions; akg_exp_h flushes results below 2^-125.5 (x < -86.99) to +0.
 * akg_exp_h_no_overflow is akg_exp_h for x <= 88 only (a softmax's exponent, as
 * akg_exp_no_overflow): the same bits there, without the upper clamp. */
AKG_VM_INLINE float akg_exp_h_no_overflow(float x) {
    using namespace akg_vm_detail;
    /* (2 e^r) * 2^(k-1), with 2^(k-1) from exp_scale (bias 126): a normal float for k in
     * [-125, 128] and +0 for k = -126, to which x is clamped from below (x = -87.5), so results
     * below 2^-125.5 (x < -86.99) are +0, as is e^-inf. NaN passes. */
    float t;
    float p = exp_reduce_t<true, 126>(clamp_below(x, clamp_bounds.exp_h_arg_floor), t);
    return (p + p) * exp_scale(t);
}

AKG_VM_INLINE float akg_exp_h(float x) {
    /* e^89 overflows (k = 128 with e^r > 1, so 2 e^r * 2^127 is +inf); NaN passes */
    return akg_exp_h_no_overflow(akg_vm_detail::clamp_above(x, akg_vm_detail::clamp_bounds.exp_arg_ceil));
}

AKG_VM_INLINE float akg_tanh_h(float x) { return akg_vm_detail::tanh_rational_h(x); }
AKG_VM_INLINE float akg_tanh_plus_one_h(float x) { return akg_vm_detail::tanh_plus_one_of<true>(x); }
AKG_VM_INLINE float akg_div_one_plus_exp_h(float x, float y) { return akg_vm_detail::div_one_plus_exp_of<true>(x, y); }

/* ---- erf ------------------------------------------------------------------------------ */
AKG_VM_INLINE float akg_erf(float x) {
    using namespace akg_vm_detail;
    float a = __builtin_fabsf(x);
    a = clamp_above(a, clamp_bounds.erf_arg_ceil); /* erf(x) rounds to 1 for |x| >= 3.92; NaN passes */
    float t = a * a;
    /* |x| < 1: erf(a) = a + a * S(t), S(t) = erf(a)/a - 1 in [-0.16, 0.13], error 1.2e-9 */
    float S = 0x1.4ae4d2p-14f;
    S = fmaf_(S, t, -0x1.a485ecp-11f);
    S = fmaf_(S, t, 0x1.5419f6p-8f);
    S = fmaf_(S, t, -0x1.b7fbb4p-6f);
    S = fmaf_(S, t, 0x1.ce2d20p-4f);
    S = fmaf_(S, t, -0x1.81273ep-2f);
    S = fmaf_(S, t, 0x1.06eba8p-3f);
    float small = fmaf_(a, S, a);
    /* 1 <= |x| <= 4: erf(a) = 1 - erfc(a), erfc(a) = exp(h(a) - a^2), h = log(erfc(a)) + a^2
     * polynomial in a; absolute error of erfc 1.0e-9 (so rounding in h only matters relative
     * to erfc <= 0.16) */
    float h = 0x1.852d44p-13f;
    h = fmaf_(h, a, -0x1.814cd8p-9f);
    h = fmaf_(h, a, 0x1.654220p-6f);
    h = fmaf_(h, a, -0x1.a60a82p-4f);
    h = fmaf_(h, a, 0x1.7274f8p-2f);
    h = fmaf_(h, a, -0x1.2085b2p+0f);
    h = fmaf_(h, a, -0x1.72e6fap-12f);
    float big = 1.0f - exp_nonpos_flush(h - t); /* h - t in [-18, -1.8] */
    float r = sel(a < 1.0f, small, big); /* NaN -> big -> NaN */
    return __builtin_copysignf(r, x);
}

/* ---- sigmoid -------------------------------------------------------------------------- */
AKG_VM_INLINE float akg_sigmoid(float x) {
    /* e = e^-|x| <= 1 never overflows; sigmoid = 1/(1+e) (x >= 0) or e/(1+e) (x < 0), which
     * keeps the subnormal results of x < -87 that 1/(1+e^-x) would flush to 0. */
    float e = akg_exp_no_overflow(-__builtin_fabsf(x));
    float num = akg_vm_detail::sel(x >= 0.0f, 1.0f, e); /* NaN -> e = NaN */
    return num / (1.0f + e);
}

/* ---- sqrt, rsqrt ---------------------------------------------------------------------- */
AKG_VM_INLINE float akg_sqrt(float x) { return __builtin_sqrtf(x); }
AKG_VM_INLINE float akg_rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }

/* ---- pow ------------------------------------------------------------------------------ */
/* x^y = 2^(y*log2|x|) evaluated in double (log2 and exp2 with ~1e-11 relative error), then
 * rounded once to float, so large |y*log2|x|| keeps full accuracy; C powf special cases by
 * selects. About 8x the cost of akg_exp (double-precision vectors, two divisions): generators
 * should keep emitting x*x, sqrt, rsqrt or exp(y*log(x)) forms where those are meant. */
AKG_VM_INLINE float akg_pow(float x, float y) {
    using namespace akg_vm_detail;
    float ax = __builtin_fabsf(x);
    int32_t e;
    float m = log_reduce(ax, e);
    double f = (double)m - 1.0; /* exact */
    double s = f / (2.0 + f);   /* log(1+f) = 2 atanh(s), |s| <= 0.1716 */
    double u = s * s;
    double R = fma_(0x1.e2fdd22c89739p-3, u, 0x1.2438a875d452dp-2);
    R = fma_(R, u, 0x1.999a7b3b9d2a3p-2);
    R = fma_(R, u, 0x1.555554fd41230p-1);
    double l1p = fma_(s * u, R, 2.0 * s);
    double L = fma_(l1p, 0x1.71547652b82fep+0, (double)e); /* log2|x| */
    L = sel(ax == 0.0f, -(double)kInf, L);
    L = sel(ax < kInf, L, (double)ax); /* inf -> inf, NaN -> NaN */

    double z = (double)y * L;
    z = sel(z > 200.0, 200.0, z); /* NaN passes */
    z = sel(z < -200.0, -200.0, z);
    const double shifter = 0x1.8p52;
    double tt = z + shifter;
    double kn = tt - shifter;
    double r = z - kn; /* exact, |r| <= 1/2 */
    double p = 0x1.c0480e89c2b7bp-17;
    p = fma_(p, r, 0x1.443fb5aa21398p-13);
    p = fma_(p, r, 0x1.5dc05727876b5p-10);
    p = fma_(p, r, 0x1.3b2a1bd60b26dp-7);
    p = fma_(p, r, 0x1.c6b05511b483cp-5);
    p = fma_(p, r, 0x1.ebfbe04587fb1p-3);
    p = fma_(p, r, 0x1.62e4300ba64acp-1);
    p = fma_(p, r, 1.0);
    double scale = u2d((d2u(tt) + 1023u) << 52); /* 2^kn, kn in [-200, 200] */
    float res = (float)(p * scale);              /* single rounding, subnormals included */

    /* classify y: integer? odd integer? (|y| >= 2^24, inf and NaN count as even integers) */
    uint32_t yb = f2u(y);
    int32_t ye = (int32_t)((yb >> 23) & 0xffu) - 127;
    int32_t yec = sel(ye < 0, (int32_t)0, sel(ye > 23, (int32_t)23, ye));
    uint32_t mant = (yb & 0x7fffffu) | 0x800000u;
    /* `&` and `|`, not `&&` / `||` (short-circuits are branches, see sel); the odd bit stays an
     * integer (GCC 12 cannot vectorize its conversion to bool) */
    bool y_int = (ye >= 0) & ((yb & (0x7fffffu >> yec)) == 0);
    uint32_t odd = (mant >> (23 - yec)) & (f2u(x) >> 31) & (uint32_t)(y_int & (ye <= 23));
    res = u2f(f2u(res) ^ (odd << 31)); /* negative x, odd integer y: negate */
    res = sel((x < 0.0f) & (x > -kInf) & !y_int, kNaN, res);
    res = sel((x == 1.0f) | (y == 0.0f) | ((ax == 1.0f) & (__builtin_fabsf(y) == kInf)), 1.0f, res);
    return res;
}

/* ---- sin, cos ------------------------------------------------------------------------- */
namespace akg_vm_detail {
/* 2/pi in binary after 32 zero bits, in 32-bit words (computed with mpmath): bit j of this
 * string (j = 0 the top bit of the first word) is bit i = j - 31 of 2/pi = 0.b1 b2 b3 ... */
static constexpr uint32_t kTwoOverPi[9] = {0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                           0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};

/* c[k] for k in [0, 4], by selects (no gather: NEON has none) */
AKG_VM_INLINE uint32_t pick5(uint32_t k, const uint32_t *c) {
    return sel(k == 0, c[0], sel(k == 1, c[1], sel(k == 2, c[2], sel(k == 3, c[3], c[4]))));
}

/* Argument reduction for sin and cos, for every finite float a >= pi/4: a * 2/pi = q + d (mod 4)
 * with q an integer in [0, 3] and |d| <= 1/2; returns r = d * pi/2 in double (relative error
 * about 2^-51) and sets q. Integer (Payne-Hanek) arithmetic without a table lookup, so it
 * vectorizes without gathers: a = M * 2^E (M the 24-bit mantissa); the bits of 2/pi of weight
 * 2^-i with i <= E - 2 contribute multiples of 4 to M * 2^E * 2/pi and are dropped, and the 96
 * bits from i = E - 1 on (W: three 32-bit limbs cut out of kTwoOverPi by variable shifts of
 * four selected words) give M * W * 2^-94, of which bits 94-95 (mod 2^96) are the quadrant
 * and bits 0-93 the fraction, accurate to 2^-70 (the bits of 2/pi after the window). Three
 * 32 x 32 -> 64-bit multiplications (umull on aarch64; GCC 12 emits vpmullq on x86). The float
 * closest to a multiple of pi/2, 0x1.f37c8ap+95 (16367173 * 2^72), leaves |r| = 2^-29.2 (every
 * float >= pi/4 scanned), so r keeps at least 40 correct bits. Garbage (no UB) for a < pi/4,
 * inf and NaN (the window start is clamped), which callers select away. */
AKG_VM_INLINE double trig_reduce(float a, uint64_t &q) {
    const uint32_t u = f2u(a);
    const uint32_t m = (u & 0x7fffffu) | 0x800000u;
    /* window start j = (E - 1) + 31 with E = (u >> 23) - 150; clamped to [0, 135] (a >= pi/4
     * gives j >= 6; the largest float gives 134, inf and NaN 135) */
    int32_t j = (int32_t)(u >> 23) - 120;
    j = j < 0 ? 0 : j;
    const uint32_t k = (uint32_t)j >> 5, sh = (uint32_t)j & 31u;
    const uint32_t K0 = pick5(k, kTwoOverPi), K1 = pick5(k, kTwoOverPi + 1);
    const uint32_t K2 = pick5(k, kTwoOverPi + 2), K3 = pick5(k, kTwoOverPi + 3);
    /* (X >> 1) >> (31 - sh) is X >> (32 - sh) without a shift by 32 at sh = 0 */
    const uint32_t L0 = (K0 << sh) | ((K1 >> 1) >> (31u - sh));
    const uint32_t L1 = (K1 << sh) | ((K2 >> 1) >> (31u - sh));
    const uint32_t L2 = (K2 << sh) | ((K3 >> 1) >> (31u - sh));
    /* P = M W = t2 2^64 + t1 2^32 + t0 (mod 2^96) = H 2^32 + (t0 mod 2^32), no carries to
     * propagate: H = t2 2^32 + t1 + (t0 >> 32) (mod 2^64) */
    const uint64_t t0 = (uint64_t)m * L2, t1 = (uint64_t)m * L1, t2 = (uint64_t)m * L0;
    const uint64_t H = (t2 << 32) + t1 + (t0 >> 32);
    q = (H + (1ull << 61)) >> 62;                                  /* nearest quadrant */
    const int64_t g = (int64_t)(H << 2);                            /* signed fraction * 2^64 */
    const double d = fma_((double)(int64_t)(t0 & 0xffffffffu), 0x1p-94, (double)g * 0x1p-64);
    return d * 0x1.921fb54442d18p+0;
}

/* sin(r) and cos(r) for |r| <= pi/4 in double, to ~2^-35 (polynomials fitted for this file with
 * mpmath's Chebyshev fit, relative to sin and absolute to cos; far below float's 2^-24). */
AKG_VM_INLINE double sin_poly_d(double r, double t) {
    double S = 0x1.6dbe0838a06e9p-19;
    S = fma_(S, t, -0x1.a013a793b98cep-13);
    S = fma_(S, t, 0x1.11110def2e1c9p-7);
    S = fma_(S, t, -0x1.555555545e0acp-3);
    return fma_(r * t, S, r);
}
AKG_VM_INLINE double cos_poly_d(double t) {
    double C = -0x1.25244e23e6e3ap-22;
    C = fma_(C, t, 0x1.a015c47d920acp-16);
    C = fma_(C, t, -0x1.6c16bf54e7232p-10);
    C = fma_(C, t, 0x1.5555555502cf4p-5);
    return fma_(t * t, C, fma_(t, -0.5, 1.0));
}

/* sin(x) (kCos = false) or cos(x) (kCos = true): |x| < pi/4 directly, else reduced by
 * trig_reduce; the polynomial in double, rounded once to float. cos(x) = sin(|x| + pi/2): the
 * quadrant plus one. sin is odd (sign of x applied at the end, so sin(-0) = -0), cos even. */
template <bool kCos>
AKG_VM_INLINE float sincos_f32(float x) {
    const float a = __builtin_fabsf(x);
    uint64_t qr;
    const double rr = trig_reduce(a, qr);
    const bool small = a < 0x1.921fb6p-1f; /* the float above pi/4 */
    const double r = sel(small, (double)a, rr);
    const uint64_t q = sel(small, (uint64_t)0, qr) + (kCos ? 1u : 0u);
    const double t = r * r;
    /* odd quadrant: the cosine polynomial (a mask from q's bit, not a bool: GCC 12 cannot
     * vectorize the conversion of `q & 1` to bool) */
    const uint64_t odd = 0u - (q & 1u);
    const double v = u2d((d2u(cos_poly_d(t)) & odd) | (d2u(sin_poly_d(r, t)) & ~odd));
    uint32_t sign = (uint32_t)(q & 2u) << 30;
    if (!kCos) sign ^= f2u(x) & 0x80000000u;
    const float res = u2f(f2u((float)v) ^ sign);
    return sel(a < kInf, res, x - x); /* inf, NaN -> NaN */
}
} /* namespace akg_vm_detail */

AKG_VM_INLINE float akg_sin(float x) { return akg_vm_detail::sincos_f32<false>(x); }
AKG_VM_INLINE float akg_cos(float x) { return akg_vm_detail::sincos_f32<true>(x); }

/* ---- asin, acos ----------------------------------------------------------------------- */
namespace akg_vm_detail {
/* asin(u) = u + u^3 A(u^2) for |u| <= 1/2, in double, A fitted to 2^-32 (mpmath). */
AKG_VM_INLINE double asin_poly_d(double u, double t) {
    double A = 0x1.fb7ca379d49c6p-6;
    A = fma_(A, t, 0x1.5a80a068e3ee2p-7);
    A = fma_(A, t, 0x1.82db23768c84fp-6);
    A = fma_(A, t, 0x1.efedf83ab6506p-6);
    A = fma_(A, t, 0x1.6dc0f007c13e8p-5);
    A = fma_(A, t, 0x1.33331ecf8b70bp-4);
    A = fma_(A, t, 0x1.5555555c0171dp-3);
    return fma_(u * t, A, u);
}
/* asin(|x|) for |x| <= 1/2, or asin(sqrt((1 - |x|) / 2)) = (pi/2 - asin(|x|)) / 2 above, in
 * double (1 - |x| and the halving are exact; NaN for |x| > 1 from the square root). */
AKG_VM_INLINE double asin_core_d(float x, bool &big) {
    const double a = (double)__builtin_fabsf(x);
    big = a > 0.5;
    const double z = (1.0 - a) * 0.5;
    const double t = sel(big, z, a * a);
    const double u = sel(big, __builtin_sqrt(z), a);
    return asin_poly_d(u, t);
}
} /* namespace akg_vm_detail */

AKG_VM_INLINE float akg_asin(float x) {
    using namespace akg_vm_detail;
    bool big;
    const double p = asin_core_d(x, big);
    const double r = sel(big, fma_(-2.0, p, 0x1.921fb54442d18p+0), p);
    return __builtin_copysignf((float)r, x); /* asin(-0) = -0; NaN -> NaN */
}

AKG_VM_INLINE float akg_acos(float x) {
    using namespace akg_vm_detail;
    bool big;
    const double p = asin_core_d(x, big);
    const bool neg = x < 0.0f;
    /* |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(sqrt((1-x)/2)); x < -1/2: pi - that */
    const double small = 0x1.921fb54442d18p+0 - sel(neg, -p, p);
    const double big_r = fma_(sel(neg, -2.0, 2.0), p, sel(neg, 0x1.921fb54442d18p+1, 0.0));
    return (float)sel(big, big_r, small);
}

/* ---- atan, atan2 ---------------------------------------------------------------------- */
namespace akg_vm_detail {
/* atan(u) = u + u^3 T(u^2) for 0 <= u <= 1 in double: T of degree 9, fitted with mpmath's
 * Chebyshev fit, relative error of atan 1.7e-9 (0.03 float ulp; with the coefficients rounded
 * to float it was 0.17 ulp, and akg_atan(1) missed pi/4). The float version of this function
 * measured 1.35 ulp (atan) and 1.50 (atan2) at half the cost. */
AKG_VM_INLINE double atan_poly_d(double u) {
    const double t = u * u;
    double T = 0x1.86406cc5c4982p-10;
    T = fma_(T, t, -0x1.2ba6b6e0bd288p-7);
    T = fma_(T, t, 0x1.aefb2bdf4b25ap-6);
    T = fma_(T, t, -0x1.9115a3d155a2fp-5);
    T = fma_(T, t, 0x1.2006f71525126p-4);
    T = fma_(T, t, -0x1.6dd8fdf061e31p-4);
    T = fma_(T, t, 0x1.c62cd9aa62ae5p-4);
    T = fma_(T, t, -0x1.2489515c587b6p-3);
    T = fma_(T, t, 0x1.999955947a191p-3);
    T = fma_(T, t, -0x1.55555529fed15p-2);
    return fma_(u * t, T, u);
}
static constexpr double kPio2 = 0x1.921fb54442d18p+0, kPi = 0x1.921fb54442d18p+1;
} /* namespace akg_vm_detail */

/* atan(|x|) = atan(u) with u = |x| (|x| <= 1) or pi/2 - atan(u) with u = 1/|x|: one division,
 * in double, and one rounding to float. atan(+-inf) = +-pi/2, atan(-0) = -0, NaN -> NaN. */
AKG_VM_INLINE float akg_atan(float x) {
    using namespace akg_vm_detail;
    const float a = __builtin_fabsf(x);
    const bool big = a > 1.0f; /* false for NaN, which passes */
    const double u = (double)sel(big, 1.0f, a) / (double)sel(big, a, 1.0f);
    const double p = atan_poly_d(u);
    return __builtin_copysignf((float)sel(big, kPio2 - p, p), x);
}

/* atan2(y, x): the angle of (|x|, |y|) from u = min / max of |x|, |y| as in akg_atan, then
 * pi - angle where x is negative (or -0), with the sign of y; in double. The C special cases:
 * atan2(+-0, +0 or x > 0) = +-0, atan2(+-0, -0 or x < 0) = +-pi, atan2(y != 0, +-0) = +-pi/2,
 * atan2(+-inf, +inf) = +-pi/4, atan2(+-inf, -inf) = +-3pi/4, atan2(+-y, +inf) = +-0,
 * atan2(+-y, -inf) = +-pi (finite y), NaN if either is NaN. */
AKG_VM_INLINE float akg_atan2(float y, float x) {
    using namespace akg_vm_detail;
    const float ax = __builtin_fabsf(x), ay = __builtin_fabsf(y);
    const bool swap = ay > ax;
    const float num = sel(swap, ax, ay), den = sel(swap, ay, ax);
    float uf = sel(den == 0.0f, 0.0f, num);                        /* 0 / 0 -> 0 */
    uf = sel((ax == kInf) & (ay == kInf), 1.0f, uf);               /* inf / inf -> 1 */
    const float df = sel((den == 0.0f) | ((ax == kInf) & (ay == kInf)), 1.0f, den);
    const double p = atan_poly_d((double)uf / (double)df);          /* angle below pi/4 */
    double r = sel(swap, kPio2 - p, p);
    r = sel((f2u(x) >> 31) != 0, kPi - r, r);                      /* x < 0, or x = -0 */
    const float res = __builtin_copysignf((float)r, y);
    return sel((x == x) & (y == y), res, x + y);                   /* NaN -> NaN */
}

/* ---- asinh, acosh --------------------------------------------------------------------- */
namespace akg_vm_detail {
/* log(w) for a normal double w > 0: w = m 2^k with m in [sqrt(1/2), sqrt(2)), log(m) = log1p(f)
 * by akg_log's polynomial evaluated in double (relative error 5.8e-9, 0.1 float ulp). Garbage
 * for 0, negative, inf, NaN. */
AKG_VM_INLINE double log_pos_d(double w) {
    const uint64_t i = d2u(w);
    const int64_t k = (int64_t)(i - 0x3fe6a09e667f3bcdull) >> 52; /* sqrt(1/2) */
    const double f = u2d(i - ((uint64_t)k << 52)) - 1.0;
    double P = log1p_poly[0];
    P = fma_(P, f, log1p_poly[1]);
    P = fma_(P, f, log1p_poly[2]);
    P = fma_(P, f, log1p_poly[3]);
    P = fma_(P, f, log1p_poly[4]);
    P = fma_(P, f, log1p_poly[5]);
    P = fma_(P, f, log1p_poly[6]);
    P = fma_(P, f, log1p_poly[7]);
    const double z = f * f;
    const double l1p = fma_(z * f, P, fma_(z, -0.5, f));
    return fma_((double)k, 0x1.62e42fefa39efp-1, l1p);
}
} /* namespace akg_vm_detail */

/* asinh(x) = log(|x| + sqrt(x^2 + 1)) with the sign of x, in double (x^2 exact, no overflow:
 * x^2 <= 2^256); |x| < 2^-12: x - x^3/6 in float (x for |x| < 2^-12.3 after rounding). */
AKG_VM_INLINE float akg_asinh(float x) {
    using namespace akg_vm_detail;
    const float a = __builtin_fabsf(x);
    const double ad = (double)a;
    const float big = (float)log_pos_d(ad + __builtin_sqrt(fma_(ad, ad, 1.0)));
    const float small = fmaf_(a * a * -0x1.555556p-3f, a, a);
    float r = sel(a < 0x1p-12f, small, big);
    r = sel(a < kInf, r, a); /* inf -> inf, NaN -> NaN */
    return __builtin_copysignf(r, x);
}

/* acosh(x) = log(x + sqrt(x^2 - 1)) in double (x^2 - 1 exact up to x = 2^3.5, no overflow);
 * acosh(1) = +0, NaN below 1. */
AKG_VM_INLINE float akg_acosh(float x) {
    using namespace akg_vm_detail;
    const double xd = (double)x;
    float r = (float)log_pos_d(xd + __builtin_sqrt(fma_(xd, xd, -1.0)));
    r = sel(x >= 1.0f, r, kNaN);
    return sel(x < kInf, r, x); /* inf -> inf, NaN -> NaN */
}

/* ---- expm1 ---------------------------------------------------------------------------- */
/* e^x - 1 in double: x = k ln2 + r (|r| <= ln2/2, exact for k = 0), e^r - 1 = r + r^2 E(r)
 * (E of degree 5 fitted to 2^-29 with mpmath), then 2^k (e^r - 1) + (2^k - 1) in one fma
 * (2^k - 1 exact), rounded once to float. x is clamped to [-104, 89] first (-1 and +inf there);
 * the sign of x is copied onto the result, which keeps expm1(-0) = -0. */
AKG_VM_INLINE float akg_expm1(float x) {
    using namespace akg_vm_detail;
    const float xc = clamp_above(clamp_below(x, clamp_bounds.exp_arg_floor_zero), clamp_bounds.exp_arg_ceil);
    const double xd = (double)xc;
    const double shifter = 0x1.8p52;
    const double tt = fma_(xd, 0x1.71547652b82fep+0, shifter);
    const double kn = tt - shifter;
    const double r = fma_(kn, -0x1.62e42fefa39efp-1, xd);
    double E = 0x1.a124e3f154d32p-13;
    E = fma_(E, r, 0x1.6d431504c53d3p-10);
    E = fma_(E, r, 0x1.1110e0f726534p-7);
    E = fma_(E, r, 0x1.5554e9114ecf9p-5);
    E = fma_(E, r, 0x1.5555555a78232p-3);
    E = fma_(E, r, 0x1.0000000b8f62bp-1);
    const double p = fma_(r * r, E, r);
    const double scale = u2d((d2u(tt) + 1023u) << 52); /* 2^k, k in [-150, 129] */
    return __builtin_copysignf((float)fma_(scale, p, scale - 1.0), x);
}

/* ---- rounding ------------------------------------------------------------------------- */
/* Round to the nearest integer, ties to even, and floor; exact, signed zeros kept
 * (round_even(-0.4) = -0, floor(-0) = -0), inf and NaN pass. Both through rintf (vrndscaleps
 * with the current rounding mode, frintx), the rounding GCC 12 vectorizes under the default
 * -ftrapping-math (see ROUNDING above): round_even is rintf in the default round-to-nearest-
 * even mode; floor subtracts 1 where rintf rounded up (r > x; false for NaN). */
AKG_VM_INLINE float akg_round_even(float x) { return __builtin_rintf(x); }
AKG_VM_INLINE float akg_floor(float x) {
    const float r = __builtin_rintf(x);
    return r - akg_vm_detail::sel(r > x, 1.0f, 0.0f); /* NaN: r > x is false */
}

/* ---- float16 -------------------------------------------------------------------------- */
/* clang vectorizes __fp16 casts into vcvtph2ps / vcvtps2ph (F16C). GCC 12 vectorizes no
 * _Float16 conversion at all, not even with AVX512-FP16 (-march=sapphirerapids: scalar
 * vcvtsh2ss in a loop that is then not vectorized), so GCC uses the integer path. */
#if defined(__clang__) && defined(__F16C__)
#define AKG_VM_F16_TYPE __fp16
#elif defined(__aarch64__) && defined(__ARM_FP16_FORMAT_IEEE)
/* aarch64: clang vectorizes __fp16 casts both ways (fcvtl / fcvtn); GCC 12 only the widening
 * one (fcvtl, 8 halves in two instructions instead of the integer path's 11 operations per 4
 * lanes) and leaves a loop with a narrowing cast scalar, so with GCC the narrowing stays on the
 * integer path. */
#define AKG_VM_F16_WIDEN_TYPE __fp16
#if defined(__clang__)
#define AKG_VM_F16_TYPE __fp16
#endif
#endif
#if defined(AKG_VM_F16_TYPE) && !defined(AKG_VM_F16_WIDEN_TYPE)
#define AKG_VM_F16_WIDEN_TYPE AKG_VM_F16_TYPE
#endif

AKG_VM_INLINE float akg_f16_to_f32(uint16_t h) {
#ifdef AKG_VM_F16_WIDEN_TYPE
    AKG_VM_F16_WIDEN_TYPE v;
    __builtin_memcpy(&v, &h, sizeof h);
    return (float)v;
#else
    return akg_vm_detail::f16_to_f32_soft(h);
#endif
}

AKG_VM_INLINE uint16_t akg_f32_to_f16(float x) {
#ifdef AKG_VM_F16_TYPE
    AKG_VM_F16_TYPE v = (AKG_VM_F16_TYPE)x;
    uint16_t h;
    __builtin_memcpy(&h, &v, sizeof h);
    return h;
#else
    return akg_vm_detail::f32_to_f16_soft(x);
#endif
}

/* The same conversions for code outside loops (the generator emits these where a statement is
 * never vectorized): one F16C instruction each where the target has F16C (one fcvt on
 * aarch64), the integer code otherwise. Bit-identical to the functions above (NaN payloads
 * aside, in the rounding). */
AKG_VM_INLINE uint16_t akg_f32_to_f16_scalar(float x) {
#if defined(__F16C__)
    return (uint16_t)_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
#elif defined(__aarch64__) && defined(__ARM_FP16_FORMAT_IEEE)
    __fp16 v = (__fp16)x;
    uint16_t h;
    __builtin_memcpy(&h, &v, sizeof h);
    return h;
#else
    return akg_f32_to_f16(x);
#endif
}
AKG_VM_INLINE float akg_f16_to_f32_scalar(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#elif defined(__aarch64__) && defined(__ARM_FP16_FORMAT_IEEE)
    __fp16 v;
    __builtin_memcpy(&v, &h, sizeof h);
    return (float)v;
#else
    return akg_f16_to_f32(h);
#endif
}
AKG_VM_INLINE float akg_round_f16_scalar(float x) { return akg_f16_to_f32_scalar(akg_f32_to_f16_scalar(x)); }

/* Round a float to the nearest float16 value (RNE), returned as float: the same value as
 * akg_f16_to_f32(akg_f32_to_f16(x)) for every non-NaN float (NaNs stay NaN), in float
 * arithmetic at 10 vector operations. For |x| in [2^e, 2^(e+1)), |x| + 2^(e+13) has float ulp
 * 2^(e-10), float16's ulp at that exponent, so the float addition rounds |x| to float16
 * precision, ties to even (2^(e+13) adds an even multiple of that ulp); subtracting 2^(e+13)
 * again is exact. e is clamped to [-14, 15]: below 2^-14 (float16 subnormals) the ulp stays
 * 2^-24, and from 2^15 on it stays 32, which also carries inf and NaN through unchanged (the
 * addition quiets a signalling NaN); 65520 and above round to inf. */
AKG_VM_INLINE float akg_round_f16(float x) {
    using namespace akg_vm_detail;
    uint32_t u = f2u(x);
    uint32_t a = u & 0x7fffffffu;
    uint32_t e = a & 0x7f800000u;
    e = e < 0x38800000u ? 0x38800000u : e; /* integer clamps: vpmaxud, vpminud */
    e = e > 0x47000000u ? 0x47000000u : e;
    float m = u2f(e + (13u << 23));
    uint32_t r = f2u((u2f(a) + m) - m);
    r = sel(u2f(a) >= 65520.0f, 0x7f800000u, r); /* false for NaN */
    return u2f(r | (u & 0x80000000u));
}

/* Whole arrays, with the hardware conversions where the target has them (vcvtph2ps/vcvtps2ph:
 * 16 lanes in one instruction with AVX-512, 8 with F16C; on aarch64 fcvtl/fcvtn and their
 * second-half forms, 8 lanes in two instructions) and the functions above for the tail.
 * Same bits as the element functions (RNE, NaNs quieted). The generator's stage-float16 pass
 * converts float16 tensors with these once per parallel iteration. The maskz forms avoid GCC 12's
 * false -Wmaybe-uninitialized on the plain ones' undefined pass-through operand. */
AKG_VM_INLINE void akg_f16_to_f32_n(const uint16_t *src, float *dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps((__mmask16)0xffff, _mm256_loadu_si256((const __m256i *)(src + i))));
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    if (i < n) { /* the tail in one masked step */
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_cvtph_ps(m, _mm256_maskz_loadu_epi16(m, src + i)));
        return;
    }
#endif
#elif defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#elif defined(__aarch64__) && defined(__ARM_NEON)
    for (; i + 8 <= n; i += 8) {
        float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(src + i));
        vst1q_f32(dst + i, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(dst + i + 4, vcvt_high_f32_f16(h));
    }
    if (i + 4 <= n) {
        vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
        i += 4;
    }
#endif
    for (; i < n; ++i) dst[i] = akg_f16_to_f32(src[i]);
}

/* akg_f16_to_f32_n into a block array of whole vectors: `dst` has room for n rounded up to 16
 * floats, and the elements past n are set to +0 (src is read for n elements only). The generator
 * stages a float16 block of a length that is no multiple of 16 (the 4 elements after three blocks
 * of 64 in a 14 x 14 image row) with this: its loop reads the array right after, and a load
 * from a masked store cannot take its data from the store (no store-to-load forwarding) and
 * waits until the store reaches the cache: bottleneck_end_f16 took 0.72 ms with such 4-element
 * tails, 0.61 ms with whole vectors (1 thread, 2026-12-03). */
#define AKG_F16_BLOCK_FLOATS(n) (((n) + 15) / 16 * 16)
AKG_VM_INLINE void akg_f16_to_f32_padded(const uint16_t *src, float *dst, int64_t n) {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    const int64_t full = n / 16 * 16;
    akg_f16_to_f32_n(src, dst, full);
    if (full < n) { /* the tail: a masked load, a whole store */
        __mmask16 m = (__mmask16)((1u << (n - full)) - 1u);
        _mm512_storeu_ps(dst + full, _mm512_maskz_cvtph_ps(m, _mm256_maskz_loadu_epi16(m, src + full)));
    }
#else
    akg_f16_to_f32_n(src, dst, n);
    for (int64_t i = n; i < AKG_F16_BLOCK_FLOATS(n); ++i) dst[i] = 0.0f;
#endif
}

AKG_VM_INLINE void akg_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_maskz_cvtps_ph((__mmask16)0xffff, _mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm256_mask_storeu_epi16(dst + i, m, _mm512_maskz_cvtps_ph(m, _mm512_maskz_loadu_ps(m, src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        return;
    }
#endif
#elif defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__aarch64__) && defined(__ARM_NEON)
    /* fcvtn rounds by the FPCR's mode, round to nearest even unless a program changes it */
    for (; i + 8 <= n; i += 8)
        vst1q_u16(dst + i, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(src + i)), vld1q_f32(src + i + 4))));
    if (i + 4 <= n) {
        vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
        i += 4;
    }
#endif
    for (; i < n; ++i) dst[i] = akg_f32_to_f16(src[i]);
}

/* Round every element of a float array to the nearest float16 value in place (RNE, as
 * akg_round_f16), with the hardware conversions where the target has them: a float16 chain
 * rounds once per op, and the vector loop that computes it is latency-bound on akg_round_f16's
 * ten dependent operations, so the generator's block staging computes each rounded operand of
 * a block into an array first and rounds the array here (expr_printer.cpp). */
AKG_VM_INLINE void akg_round_f16_n(float *p, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(p + i, _mm512_maskz_cvtph_ps((__mmask16)0xffff,
                                                      _mm512_maskz_cvtps_ph((__mmask16)0xffff, _mm512_loadu_ps(p + i),
                                                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
#elif defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(p + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(p + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
#elif defined(__aarch64__) && defined(__ARM_NEON)
    for (; i + 4 <= n; i += 4) vst1q_f32(p + i, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(p + i))));
#endif
    for (; i < n; ++i) p[i] = akg_round_f16(p[i]);
}

#endif /* AKG_VMATH_H */
