// Tests of kernellib/runtime/akg_vmath.h, compiled with the generated kernels' flags
// (-O3 -march=native -mprefer-vector-width=512 -fopenmp -fno-math-errno, no -ffast-math):
//  * max ULP error against double-precision libm over a sweep of all float bit patterns
//    (every 97th) plus dense sweeps of the ranges that matter, asserting the bounds stated in the
//    header (the header's figures come from exhaustive runs over all 2^32 floats);
//  * special values (NaN, +-inf, +-0, subnormals, overflow / underflow);
//  * bit-for-bit agreement of a `#pragma omp simd` loop with per-element scalar calls;
//  * float16 conversions against the F16C instructions (on aarch64: the NEON fcvtl/fcvtn ones)
//    and the portable integer path.
#include "akg_vmath.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#if defined(__F16C__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace {

// Bounds asserted here = the bounds stated in akg_vmath.h.
constexpr double kExpUlp = 1.0;
constexpr double kLogUlp = 1.0;
constexpr double kTanhUlp = 2.0;
constexpr double kTanhPlusOneUlp = 2.5;
constexpr double kErfUlp = 1.5;
constexpr double kSigmoidUlp = 2.5;
constexpr double kDivOnePlusExpUlp = 2.5;
constexpr double kRsqrtUlp = 1.5;
constexpr double kPowUlp = 1.0;
constexpr double kSinCosUlp = 1.0;
constexpr double kAsinAcosUlp = 1.0;
constexpr double kAtanUlp = 1.0;    // atan and atan2
constexpr double kAsinhAcoshUlp = 1.0;
constexpr double kExpm1Ulp = 1.0;
// akg_round_even and akg_floor are exact: the same bits as nearbyint / floor (signed zeros
// included); error_of reports any difference as 1e30.
// The float16-precision functions (akg_exp_h, akg_tanh_h, akg_tanh_plus_one_h): relative error
// at most 2^-16, measured here in units of 2^-16.
constexpr double kFloat16PrecisionUnits = 1.0;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
uint32_t float_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// Error of `got` in units of the float ULP at the exact value `ref` (a double-precision libm
// result). NaN must match NaN; an infinite result counts as 2^128 unless the reference rounds to
// the same infinity.
double ulp_error(float got, double ref) {
    if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e30;
    if (std::isnan(got)) return 1e30;
    double g = got;
    if (std::isinf(got)) {
        if (static_cast<float>(ref) == got) return 0.0;
        g = std::copysign(0x1p128, got);
    }
    double a = std::fabs(ref);
    if (a >= 0x1p128) ref = std::copysign(0x1p128, ref), a = 0x1p128;
    double ulp = a < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(a) - 23);
    return std::fabs(g - ref) / ulp;
}

enum Fn { kExp, kLog, kTanh, kTanhPlusOne, kErf, kSigmoid, kRsqrt, kSqrt, kExpH, kTanhH, kTanhPlusOneH,
          kSin, kCos, kAsin, kAcos, kAtan, kAsinh, kAcosh, kExpm1, kRoundEven, kFloor };

bool float16_precision(Fn fn) { return fn == kExpH || fn == kTanhH || fn == kTanhPlusOneH; }

double reference(Fn fn, double x) {
    switch (fn) {
    case kExp:
    case kExpH: return std::exp(x);
    case kLog: return std::log(x);
    case kTanh:
    case kTanhH: return std::tanh(x);
    case kTanhPlusOne:
    case kTanhPlusOneH: return x < 0 ? 2.0 * std::exp(2.0 * x) / (1.0 + std::exp(2.0 * x)) : 1.0 + std::tanh(x); // no cancellation
    case kErf: return std::erf(x);
    case kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case kRsqrt: return 1.0 / std::sqrt(x);
    case kSqrt: return std::sqrt(x);
    case kSin: return std::sin(x);
    case kCos: return std::cos(x);
    case kAsin: return std::asin(x);
    case kAcos: return std::acos(x);
    case kAtan: return std::atan(x);
    case kAsinh: return std::asinh(x);
    case kAcosh: return std::acosh(x);
    case kExpm1: return std::expm1(x);
    case kRoundEven: return std::nearbyint(x);  // the default rounding mode: ties to even
    case kFloor: return std::floor(x);
    }
    return 0.0;
}

// The vector path: one `#pragma omp simd` loop per function (the code generated kernels run).
__attribute__((noinline)) void eval_simd(Fn fn, const float *__restrict x, float *__restrict y,
                                         long n) {
    switch (fn) {
    case kExp:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_exp(x[i]);
        break;
    case kLog:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_log(x[i]);
        break;
    case kTanh:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_tanh(x[i]);
        break;
    case kTanhPlusOne:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_tanh_plus_one(x[i]);
        break;
    case kErf:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_erf(x[i]);
        break;
    case kSigmoid:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_sigmoid(x[i]);
        break;
    case kRsqrt:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_rsqrt(x[i]);
        break;
    case kSqrt:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_sqrt(x[i]);
        break;
    case kExpH:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_exp_h(x[i]);
        break;
    case kTanhH:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_tanh_h(x[i]);
        break;
    case kTanhPlusOneH:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_tanh_plus_one_h(x[i]);
        break;
    case kSin:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_sin(x[i]);
        break;
    case kCos:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_cos(x[i]);
        break;
    case kAsin:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_asin(x[i]);
        break;
    case kAcos:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_acos(x[i]);
        break;
    case kAtan:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_atan(x[i]);
        break;
    case kAsinh:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_asinh(x[i]);
        break;
    case kAcosh:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_acosh(x[i]);
        break;
    case kExpm1:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_expm1(x[i]);
        break;
    case kRoundEven:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_round_even(x[i]);
        break;
    case kFloor:
#pragma omp simd
        for (long i = 0; i < n; i++) y[i] = akg_floor(x[i]);
        break;
    }
}

// The scalar path: a call the compiler cannot inline into (and so cannot vectorize) the loop.
__attribute__((noinline)) float eval_scalar(Fn fn, float x) {
    switch (fn) {
    case kExp: return akg_exp(x);
    case kLog: return akg_log(x);
    case kTanh: return akg_tanh(x);
    case kTanhPlusOne: return akg_tanh_plus_one(x);
    case kErf: return akg_erf(x);
    case kSigmoid: return akg_sigmoid(x);
    case kRsqrt: return akg_rsqrt(x);
    case kSqrt: return akg_sqrt(x);
    case kExpH: return akg_exp_h(x);
    case kTanhH: return akg_tanh_h(x);
    case kTanhPlusOneH: return akg_tanh_plus_one_h(x);
    case kSin: return akg_sin(x);
    case kCos: return akg_cos(x);
    case kAsin: return akg_asin(x);
    case kAcos: return akg_acos(x);
    case kAtan: return akg_atan(x);
    case kAsinh: return akg_asinh(x);
    case kAcosh: return akg_acosh(x);
    case kExpm1: return akg_expm1(x);
    case kRoundEven: return akg_round_even(x);
    case kFloor: return akg_floor(x);
    }
    return 0.0f;
}

__attribute__((noinline)) void pow_simd(const float *__restrict x, const float *__restrict y,
                                        float *__restrict z, long n) {
#pragma omp simd
    for (long i = 0; i < n; i++) z[i] = akg_pow(x[i], y[i]);
}
__attribute__((noinline)) float pow_scalar(float x, float y) { return akg_pow(x, y); }

__attribute__((noinline)) void f32_to_f16_simd(const float *__restrict x, uint16_t *__restrict h,
                                               long n) {
#pragma omp simd
    for (long i = 0; i < n; i++) h[i] = akg_f32_to_f16(x[i]);
}
__attribute__((noinline)) void f16_to_f32_simd(const uint16_t *__restrict h, float *__restrict x,
                                               long n) {
#pragma omp simd
    for (long i = 0; i < n; i++) x[i] = akg_f16_to_f32(h[i]);
}
__attribute__((noinline)) void round_f16_simd(const float *__restrict x, float *__restrict y,
                                              long n) {
#pragma omp simd
    for (long i = 0; i < n; i++) y[i] = akg_round_f16(x[i]);
}

// Relative error in units of 2^-16, for the float16-precision functions. akg_exp_h may flush
// results below 2^-124 to +0 and overflow to +inf within 2^-16 of FLT_MAX; akg_tanh_plus_one_h
// flushes results below 2^-126 to +0.
double float16_precision_error(Fn fn, float got, double ref) {
    if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e30;
    if (std::isnan(got)) return 1e30;
    const double flush = fn == kExpH ? 0x1p-124 : fn == kTanhPlusOneH ? 0x1p-126 : 0.0;
    if (ref < flush && got >= 0.0f && got <= flush) return 0.0;
    if (std::isinf(got))
        return static_cast<float>(ref) == got || (fn == kExpH && ref > std::numeric_limits<float>::max() * (1.0 - 0x1p-16)) ? 0.0 : 1e30;
    if (static_cast<double>(got) == ref) return 0.0;
    return std::fabs(got - ref) / std::fabs(ref) * 0x1p16;
}

// ulp_error, except that akg_tanh_plus_one may flush results below 2^-126 to +0; the
// float16-precision functions' relative error.
double error_of(Fn fn, float got, double ref) {
    if (float16_precision(fn)) return float16_precision_error(fn, got, ref);
    if (fn == kTanhPlusOne && ref < 0x1p-126 && got >= 0.0f && got <= 0x1p-126f) return 0.0;
    if (fn == kRoundEven || fn == kFloor) {
        const float want = static_cast<float>(ref);  // an integer or inf / NaN: exact
        return float_to_bits(got) == float_to_bits(want) || (std::isnan(got) && std::isnan(want)) ? 0.0 : 1e30;
    }
    return ulp_error(got, ref);
}

struct SweepResult {
    double max_ulp = 0.0;
    float worst_x = 0.0f;
    float worst_got = 0.0f;
};

// AKG_VMATH_SWEEP_SCALE=K (odd) takes every K-th input of each sweep: emulated (qemu-user,
// tools/cross-aarch64.sh) the full sweeps take about ten minutes.
uint64_t sweep_scale() {
    const char *e = std::getenv("AKG_VMATH_SWEEP_SCALE");
    uint64_t k = e ? std::strtoull(e, nullptr, 10) : 1;
    return k > 0 ? k : 1;
}

// Inputs: bit patterns first, first + stride, ... while <= last (64-bit arithmetic).
SweepResult sweep(Fn fn, uint64_t first, uint64_t last, uint64_t stride) {
    stride *= sweep_scale();
    const uint64_t count = (last - first) / stride + 1;
    const long kBlock = 4096;
    const long nblocks = static_cast<long>((count + kBlock - 1) / kBlock);
    SweepResult total;
#pragma omp parallel
    {
        SweepResult local;
        std::vector<float> x(kBlock), y(kBlock);
#pragma omp for schedule(dynamic, 16)
        for (long b = 0; b < nblocks; b++) {
            const uint64_t base = static_cast<uint64_t>(b) * kBlock;
            const long n = static_cast<long>(std::min<uint64_t>(kBlock, count - base));
            for (long i = 0; i < n; i++)
                x[i] = bits_to_float(static_cast<uint32_t>(first + (base + i) * stride));
            eval_simd(fn, x.data(), y.data(), n);
            for (long i = 0; i < n; i++) {
                double e = error_of(fn, y[i], reference(fn, x[i]));
                if (e > local.max_ulp) local = {e, x[i], y[i]};
            }
        }
#pragma omp critical
        if (local.max_ulp > total.max_ulp) total = local;
    }
    return total;
}

void expect_sweep(Fn fn, const char *name, uint64_t first, uint64_t last, uint64_t stride,
                  double bound) {
    SweepResult r = sweep(fn, first, last, stride);
    std::printf("  %-8s [%a, %a] stride %llu: max %.3f %s at x = %a\n", name,
                bits_to_float(static_cast<uint32_t>(first)),
                bits_to_float(static_cast<uint32_t>(last)),
                static_cast<unsigned long long>(stride), r.max_ulp, float16_precision(fn) ? "x 2^-16 relative" : "ULP", r.worst_x);
    EXPECT_LE(r.max_ulp, bound) << name << "(" << r.worst_x << ") = " << r.worst_got
                                << ", reference " << reference(fn, r.worst_x);
}

struct Range {
    float lo, hi;     // same sign; every `stride`-th float between them
    uint64_t stride;
};

// Every 97th bit pattern of all 2^32 (both signs, subnormals, inf and NaN patterns included),
// then dense sweeps of the listed ranges.
void accuracy_suite(Fn fn, const char *name, double bound, std::initializer_list<Range> dense) {
    expect_sweep(fn, name, 0, 0xffffffffull, 97, bound);
    for (const Range &r : dense) {
        uint32_t a = float_to_bits(r.lo), b = float_to_bits(r.hi);
        expect_sweep(fn, name, std::min(a, b), std::max(a, b), r.stride, bound);
    }
}

// ---------------------------------------------------------------------------------------------
// Accuracy (the dense ranges skip |x| < 2^-8, where the 1/97 sweep already covers the trivial
// behaviour and most bit patterns lie)

TEST(VmathAccuracy, Exp) {
    accuracy_suite(kExp, "exp", kExpUlp,
                   {{0x1p-8f, 20.0f, 5}, {-0x1p-8f, -20.0f, 5},  // softmax / sigmoid range
                    {0.125f, 1.0f, 1}, {-0.125f, -1.0f, 1},     // around the reduction core
                    {-85.0f, -104.0f, 1},                       // subnormal results, underflow
                    {85.0f, 89.0f, 1}});                        // overflow boundary
}

TEST(VmathAccuracy, Log) {
    accuracy_suite(kLog, "log", kLogUlp,
                   {{0.5f, 2.0f, 1},             // every float around 1
                    {0x1p-149f, 0x1p-126f, 7},   // subnormals
                    {1e-6f, 1e6f, 13}});
}

TEST(VmathAccuracy, Tanh) {
    accuracy_suite(kTanh, "tanh", kTanhUlp,
                   {{0x1p-8f, 10.0f, 5}, {-0x1p-8f, -10.0f, 5},
                    {0.5f, 1.0f, 1}});           // both sides of the polynomial/exp switch
}

TEST(VmathAccuracy, TanhPlusOne) {
    accuracy_suite(kTanhPlusOne, "tanh+1", kTanhPlusOneUlp,
                   {{0x1p-8f, 10.0f, 5}, {-0x1p-8f, -10.0f, 5},
                    {-7.0f, -9.0f, 1},            // the worst case, near -8.3
                    {-43.0f, -46.0f, 1}});        // down to the flush below 2^-126
}

TEST(VmathAccuracy, ExpFloat16Precision) {
    accuracy_suite(kExpH, "exp_h", kFloat16PrecisionUnits,
                   {{0x1p-8f, 20.0f, 3}, {-0x1p-8f, -20.0f, 3},  // softmax range
                    {0.125f, 1.0f, 1}, {-0.125f, -1.0f, 1},
                    {-80.0f, -90.0f, 1},                        // down to the flush below 2^-124
                    {85.0f, 89.0f, 1}});                        // overflow boundary
}

TEST(VmathAccuracy, TanhFloat16Precision) {
    accuracy_suite(kTanhH, "tanh_h", kFloat16PrecisionUnits,
                   {{0x1p-8f, 10.0f, 3}, {-0x1p-8f, -10.0f, 3},
                    {0.5f, 1.0f, 1}});           // both sides of the polynomial/exp switch
}

TEST(VmathAccuracy, TanhPlusOneFloat16Precision) {
    accuracy_suite(kTanhPlusOneH, "tanh+1_h", kFloat16PrecisionUnits,
                   {{0x1p-8f, 10.0f, 3}, {-0x1p-8f, -10.0f, 3},
                    {-43.0f, -46.0f, 1}});        // down to the flush below 2^-126
}

TEST(VmathAccuracy, Erf) {
    accuracy_suite(kErf, "erf", kErfUlp,
                   {{0x1p-8f, 5.0f, 5}, {-0x1p-8f, -5.0f, 5},
                    {0.75f, 1.25f, 1}});         // both sides of the polynomial/erfc switch
}

TEST(VmathAccuracy, Sigmoid) {
    accuracy_suite(kSigmoid, "sigmoid", kSigmoidUlp,
                   {{0x1p-8f, 20.0f, 5}, {-0x1p-8f, -20.0f, 5}, {-85.0f, -104.0f, 1}});
}

TEST(VmathAccuracy, SqrtRsqrt) {
    accuracy_suite(kSqrt, "sqrt", 0.5, {{0.5f, 2.0f, 5}});
    accuracy_suite(kRsqrt, "rsqrt", kRsqrtUlp, {{0.5f, 2.0f, 1}});
}

// sin, cos: the direct range and its edge at pi/4, the reduction over moderate arguments and
// far out (the exhaustive run over all 2^32 floats is in the header's table).
TEST(VmathAccuracy, SinCos) {
    for (Fn fn : {kSin, kCos}) {
        accuracy_suite(fn, fn == kSin ? "sin" : "cos", kSinCosUlp,
                       {{0x1p-8f, 8.0f, 3}, {-0x1p-8f, -8.0f, 3},
                        {0.75f, 0.82f, 1}, {-0.75f, -0.82f, 1},  // |x| = pi/4: direct / reduced
                        {100.0f, 1e5f, 7}, {-100.0f, -1e5f, 7},   // positions x frequencies
                        {0x1p20f, 0x1p30f, 31},                   // large
                        {0x1p100f, 3.4e38f, 101}, {-0x1p60f, -0x1p70f, 101}});
    }
}

TEST(VmathAccuracy, AsinAcos) {
    for (Fn fn : {kAsin, kAcos}) {
        accuracy_suite(fn, fn == kAsin ? "asin" : "acos", kAsinAcosUlp,
                       {{0x1p-8f, 1.0f, 3}, {-0x1p-8f, -1.0f, 3},
                        {0.45f, 0.55f, 1}, {-0.45f, -0.55f, 1},   // |x| = 1/2: both forms
                        {0.99f, 1.0f, 1}, {-0.99f, -1.0f, 1}});   // up to the domain edge
    }
}

TEST(VmathAccuracy, Atan) {
    accuracy_suite(kAtan, "atan", kAtanUlp,
                   {{0x1p-8f, 16.0f, 3}, {-0x1p-8f, -16.0f, 3},
                    {0.9f, 1.1f, 1}, {-0.9f, -1.1f, 1}});  // |x| = 1: atan(x) / pi/2 - atan(1/x)
}

TEST(VmathAccuracy, AsinhAcosh) {
    accuracy_suite(kAsinh, "asinh", kAsinhAcoshUlp,
                   {{0x1p-14f, 0x1p-10f, 1}, {-0x1p-14f, -0x1p-10f, 1},  // x - x^3/6 / log form
                    {0x1p-8f, 100.0f, 5}, {-0x1p-8f, -100.0f, 5},
                    {1e30f, 3.4e38f, 101}});                             // no overflow
    accuracy_suite(kAcosh, "acosh", kAsinhAcoshUlp,
                   {{1.0f, 2.0f, 1},              // from acosh(1) = 0 on
                    {2.0f, 1e6f, 7}, {1e30f, 3.4e38f, 101}});
}

TEST(VmathAccuracy, Expm1) {
    accuracy_suite(kExpm1, "expm1", kExpm1Ulp,
                   {{0x1p-26f, 0x1p-8f, 3}, {-0x1p-26f, -0x1p-8f, 3},  // near 0: expm1(x) ~ x
                    {0x1p-8f, 1.0f, 1}, {-0x1p-8f, -1.0f, 1},       // k = 0, +-1
                    {1.0f, 89.0f, 5},                               // up to the overflow
                    {-1.0f, -110.0f, 5}});                          // down to -1
}

// Exact: the same bits as nearbyint / floor, signed zeros included.
TEST(VmathAccuracy, RoundEvenFloor) {
    for (Fn fn : {kRoundEven, kFloor}) {
        accuracy_suite(fn, fn == kRoundEven ? "round_even" : "floor", 0.0,
                       {{0x1p-2f, 4.0f, 1}, {-0x1p-2f, -4.0f, 1},      // ties at 0.5, 1.5, ...
                        {4.0f, 0x1p24f, 13}, {-4.0f, -0x1p24f, 13}});  // up to 2^24
    }
}

TEST(VmathAccuracy, Pow) {
    std::mt19937_64 rng(12345);
    const long n = 1 << 16;
    std::vector<float> x(n), y(n), z(n);
    double max_ulp = 0.0;
    float wx = 0.0f, wy = 0.0f, wz = 0.0f;
    for (int round = 0; round < 200; round++) {
        for (long i = 0; i < n; i++) {
            uint64_t r = rng();
            float u1 = static_cast<float>((r & 0xffffff) * 0x1p-24);
            float u2 = static_cast<float>(((r >> 24) & 0xffffff) * 0x1p-24);
            switch (round % 5) {
            case 0:  // arbitrary finite/non-finite x >= 0 and y
                x[i] = bits_to_float(static_cast<uint32_t>(r) & 0x7fffffffu);
                y[i] = bits_to_float(static_cast<uint32_t>(r >> 32));
                break;
            case 1:  // integer exponents, both signs of x
                x[i] = std::ldexp(1.0f + u1, static_cast<int>((r >> 48) % 40) - 20);
                y[i] = static_cast<float>(static_cast<int>((r >> 40) % 64) - 32);
                if (r >> 63) x[i] = -x[i];
                break;
            case 2:  // typical DL use
                x[i] = 4.0f * u1;
                y[i] = 20.0f * u2 - 10.0f;
                break;
            case 3: {  // results near overflow / underflow / subnormal
                float lx = 2.0f * u1 - 1.0f;
                x[i] = std::exp2(8.0f * lx);
                y[i] = (2.0f * u2 - 1.0f) * 140.0f / (8.0f * std::fabs(lx) + 1e-3f);
                break;
            }
            default:  // x near 1 with large y (where log(x) must be accurate)
                x[i] = 1.0f + (static_cast<float>(r & 0xffff) - 32768.0f) * 0x1p-23f;
                y[i] = bits_to_float(0x4b000000u - static_cast<uint32_t>((r >> 20) & 0xfffffff));
                break;
            }
        }
        pow_simd(x.data(), y.data(), z.data(), n);
        for (long i = 0; i < n; i++) {
            double e = ulp_error(z[i], std::pow(static_cast<double>(x[i]), static_cast<double>(y[i])));
            if (e > max_ulp) max_ulp = e, wx = x[i], wy = y[i], wz = z[i];
        }
    }
    std::printf("  pow random: max %.3f ULP at pow(%a, %a) = %a\n", max_ulp, wx, wy, wz);
    EXPECT_LE(max_ulp, kPowUlp);
    // exact cases
    EXPECT_EQ(akg_pow(2.0f, 10.0f), 1024.0f);
    EXPECT_EQ(akg_pow(3.0f, 2.0f), 9.0f);
    EXPECT_EQ(akg_pow(-2.0f, 3.0f), -8.0f);
    EXPECT_EQ(akg_pow(4.0f, 0.5f), 2.0f);
    EXPECT_EQ(akg_pow(2.0f, -1.0f), 0.5f);
    EXPECT_EQ(akg_pow(0x1p-70f, 2.0f), 0x1p-140f);  // subnormal result
    EXPECT_EQ(akg_pow(0x1p-75f, 2.0f), 0.0f);       // 2^-150: tie, rounds to even (0)
}

// x / (1 + e^y) (akg_div_one_plus_exp, and _h to float16 precision): its error is that of
// 1 / (1 + e^y), rounded once more on the grid of x / (1 + e^y), so the numerators span the
// mantissa range (1, 1.5, the float just below 2: the worst of 32 random mantissas over every
// 13th y, in a one-off run) and both signs. Every 997th y of all 2^32, every 31st of
// +-[2^-8, 20] (GeLU's range) and every y near the ends of the computed range (the one-off run
// over every 13th y of all 2^32 measured 2.453 ULP, and 0.41 x 2^-16 for the float16 version).
// From y = 127.5 ln 2 = 88.3763 on (where 1 + e^y saturates to +inf) the result is flushed to
// x * 0; around that point either that or the accurate value is accepted.
__attribute__((noinline)) void div_one_plus_exp_simd(bool float16_precision, const float *__restrict x,
                                                     const float *__restrict y, float *__restrict z, long n) {
    if (float16_precision) {
#pragma omp simd
        for (long i = 0; i < n; i++) z[i] = akg_div_one_plus_exp_h(x[i], y[i]);
    } else {
#pragma omp simd
        for (long i = 0; i < n; i++) z[i] = akg_div_one_plus_exp(x[i], y[i]);
    }
}
__attribute__((noinline)) float div_one_plus_exp_scalar(bool float16_precision, float x, float y) {
    return float16_precision ? akg_div_one_plus_exp_h(x, y) : akg_div_one_plus_exp(x, y);
}

TEST(VmathAccuracy, DivOnePlusExp) {
    std::vector<float> y;
    for (uint64_t b = 0; b <= 0xffffffffull; b += 997) y.push_back(bits_to_float(static_cast<uint32_t>(b)));
    for (uint32_t b = float_to_bits(0x1p-8f); b <= float_to_bits(20.0f); b += 31) y.push_back(bits_to_float(b)), y.push_back(-bits_to_float(b));
    for (uint32_t b = float_to_bits(86.0f); b <= float_to_bits(88.5f); ++b) y.push_back(bits_to_float(b)), y.push_back(-bits_to_float(b));
    const long n = static_cast<long>(y.size());
    std::vector<float> x(y.size()), z(y.size());
    for (bool h : {false, true}) {
        double worst = 0.0;
        float wx = 0.0f, wy = 0.0f;
        long flush_mismatches = 0, simd_mismatches = 0;
        for (float numerator : {1.0f, 1.5f, 0x1.fffffep+0f, -0x1.4p+0f, 0x1.7c1f6ep+5f}) {
            std::fill(x.begin(), x.end(), numerator);
            div_one_plus_exp_simd(h, x.data(), y.data(), z.data(), n);
#pragma omp parallel
            {
            double local_worst = 0.0;
            float local_y = 0.0f;
#pragma omp for reduction(+ : flush_mismatches, simd_mismatches) schedule(static)
            for (long i = 0; i < n; i++) {
                const float scalar = div_one_plus_exp_scalar(h, numerator, y[i]);
                if (float_to_bits(scalar) != float_to_bits(z[i]) && !(std::isnan(scalar) && std::isnan(z[i]))) simd_mismatches++;
                const bool flushed = float_to_bits(z[i]) == float_to_bits(numerator * 0.0f);
                if (y[i] >= 88.377f || (y[i] >= 88.376f && flushed)) {
                    if (!flushed) flush_mismatches++;
                    continue;
                }
                const double yd = y[i], e = std::exp(-std::fabs(yd));
                const double ref = yd > 0 ? numerator * e / (1.0 + e) : numerator / (1.0 + e);
                const double err = h ? (std::isnan(ref) ? (std::isnan(z[i]) ? 0.0 : 1e30) : std::fabs(z[i] - ref) / std::fabs(ref) * 0x1p16)
                                     : ulp_error(z[i], ref);
                if (err > local_worst) local_worst = err, local_y = y[i];
            }
#pragma omp critical
            if (local_worst > worst) worst = local_worst, wx = numerator, wy = local_y;
            }
        }
        std::printf("  %s: max %.3f %s at x = %a, y = %a\n", h ? "div_one_plus_exp_h" : "div_one_plus_exp", worst,
                    h ? "x 2^-16 relative" : "ULP", wx, wy);
        EXPECT_LE(worst, h ? kFloat16PrecisionUnits : kDivOnePlusExpUlp) << "x = " << wx << ", y = " << wy;
        EXPECT_EQ(flush_mismatches, 0);
        EXPECT_EQ(simd_mismatches, 0) << "vector and scalar code differ";
    }
}

// atan2(y, x) (two arguments, so not exhaustive): every 9973rd bit pattern of all 2^32 and every
// 311th float of +-[2^-8, 16] as y against x in {1, -1, 1.5, -(2 - 2^-23), 3e38, -1e-30, 2^-140},
// and with the roles swapped; 2^22 random pairs of bit patterns; and 2^22 pairs with |y| within
// 2^-4 of |x| (where the two forms of the angle meet at pi/4), all sign combinations. (A run
// with every 997th bit pattern and every 31st float, 160 million pairs, measured the same
// 0.522 ULP.) Also checks the vector loop against scalar calls.
__attribute__((noinline)) void atan2_simd(const float *__restrict y, const float *__restrict x, float *__restrict z,
                                          long n) {
#pragma omp simd
    for (long i = 0; i < n; i++) z[i] = akg_atan2(y[i], x[i]);
}
__attribute__((noinline)) float atan2_scalar(float y, float x) { return akg_atan2(y, x); }

TEST(VmathAccuracy, Atan2) {
    std::vector<float> sweep_values;
    for (uint64_t b = 0; b <= 0xffffffffull; b += 9973 * sweep_scale())
        sweep_values.push_back(bits_to_float(static_cast<uint32_t>(b)));
    for (uint32_t b = float_to_bits(0x1p-8f); b <= float_to_bits(16.0f); b += 311 * sweep_scale())
        sweep_values.push_back(bits_to_float(b)), sweep_values.push_back(-bits_to_float(b));
    const float fixed[] = {1.0f, -1.0f, 1.5f, -0x1.fffffep+0f, 3e38f, -1e-30f, 0x1p-140f};
    std::vector<float> ys, xs;
    for (float f : fixed)
        for (float v : sweep_values) ys.push_back(v), xs.push_back(f), ys.push_back(f), xs.push_back(v);
    std::mt19937_64 rng(99);
    for (int i = 0; i < (1 << 22); i++) {
        const uint64_t r = rng();
        ys.push_back(bits_to_float(static_cast<uint32_t>(r)));
        xs.push_back(bits_to_float(static_cast<uint32_t>(r >> 32)));
        const float m = bits_to_float(0x3f800000u | (static_cast<uint32_t>(r) & 0x7fffffu));
        const float a = std::ldexp(m, static_cast<int>((r >> 32) % 80) - 40);
        const float b = a * (1.0f + (static_cast<float>((r >> 40) & 0xffff) - 32768.0f) * 0x1p-19f);
        ys.push_back((r >> 62) & 1 ? -a : a);
        xs.push_back((r >> 63) ? -b : b);
    }
    const long n = static_cast<long>(ys.size());
    std::vector<float> z(ys.size());
    atan2_simd(ys.data(), xs.data(), z.data(), n);
    double worst = 0.0;
    float wy = 0.0f, wx = 0.0f;
    long simd_mismatches = 0;
#pragma omp parallel
    {
        double local_worst = 0.0;
        float ly = 0.0f, lx = 0.0f;
#pragma omp for reduction(+ : simd_mismatches) schedule(static)
        for (long i = 0; i < n; i++) {
            const float s = atan2_scalar(ys[i], xs[i]);
            if (float_to_bits(s) != float_to_bits(z[i]) && !(std::isnan(s) && std::isnan(z[i]))) simd_mismatches++;
            const double e = ulp_error(z[i], std::atan2(static_cast<double>(ys[i]), static_cast<double>(xs[i])));
            if (e > local_worst) local_worst = e, ly = ys[i], lx = xs[i];
        }
#pragma omp critical
        if (local_worst > worst) worst = local_worst, wy = ly, wx = lx;
    }
    std::printf("  atan2: %ld pairs, max %.3f ULP at y = %a, x = %a\n", n, worst, wy, wx);
    EXPECT_LE(worst, kAtanUlp) << "y = " << wy << ", x = " << wx;
    EXPECT_EQ(simd_mismatches, 0) << "vector and scalar code differ";
}

// ---------------------------------------------------------------------------------------------
// Special values

#define EXPECT_BITS_EQ(a, b) EXPECT_EQ(float_to_bits(a), float_to_bits(b)) << (a) << " vs " << (b)

TEST(VmathSpecial, Exp) {
    EXPECT_BITS_EQ(akg_exp(-kInf), 0.0f);
    EXPECT_BITS_EQ(akg_exp(kInf), kInf);
    EXPECT_TRUE(std::isnan(akg_exp(kNaN)));
    EXPECT_TRUE(std::isnan(akg_exp(-kNaN)));
    EXPECT_BITS_EQ(akg_exp(0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_exp(-0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_exp(88.8f), kInf);      // overflow
    EXPECT_BITS_EQ(akg_exp(1e30f), kInf);
    EXPECT_LE(ulp_error(akg_exp(88.72f), std::exp(static_cast<double>(88.72f))), kExpUlp);
    EXPECT_LT(akg_exp(88.72f), kInf);
    EXPECT_BITS_EQ(akg_exp(-104.0f), 0.0f);    // underflow
    EXPECT_BITS_EQ(akg_exp(-1e30f), 0.0f);
    EXPECT_EQ(akg_exp(-103.2f), 0x1p-149f);    // smallest subnormal
    EXPECT_GT(akg_exp(-90.0f), 0.0f);          // subnormal, not flushed
    EXPECT_LT(akg_exp(-90.0f), 0x1p-126f);
    EXPECT_BITS_EQ(akg_exp(0x1p-149f), 1.0f);
}

TEST(VmathSpecial, Log) {
    EXPECT_BITS_EQ(akg_log(0.0f), -kInf);
    EXPECT_BITS_EQ(akg_log(-0.0f), -kInf);
    EXPECT_TRUE(std::isnan(akg_log(-1.0f)));
    EXPECT_TRUE(std::isnan(akg_log(-0x1p-149f)));
    EXPECT_TRUE(std::isnan(akg_log(-kInf)));
    EXPECT_BITS_EQ(akg_log(kInf), kInf);
    EXPECT_TRUE(std::isnan(akg_log(kNaN)));
    EXPECT_BITS_EQ(akg_log(1.0f), 0.0f);
    EXPECT_LE(ulp_error(akg_log(0x1p-149f), std::log(0x1p-149)), kLogUlp);  // subnormals
    EXPECT_LE(ulp_error(akg_log(0x1.8p-140f), std::log(0x1.8p-140)), kLogUlp);
    EXPECT_LE(ulp_error(akg_log(std::numeric_limits<float>::max()),
                        std::log(static_cast<double>(std::numeric_limits<float>::max()))),
              kLogUlp);
}

TEST(VmathSpecial, Tanh) {
    EXPECT_BITS_EQ(akg_tanh(kInf), 1.0f);
    EXPECT_BITS_EQ(akg_tanh(-kInf), -1.0f);
    EXPECT_TRUE(std::isnan(akg_tanh(kNaN)));
    EXPECT_BITS_EQ(akg_tanh(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_tanh(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_tanh(1e-20f), 1e-20f);   // tiny x: tanh(x) = x
    EXPECT_BITS_EQ(akg_tanh(-1e-20f), -1e-20f);
    EXPECT_BITS_EQ(akg_tanh(0x1p-149f), 0x1p-149f);
    EXPECT_BITS_EQ(akg_tanh(0x1p-13f), 0x1p-13f);
    EXPECT_BITS_EQ(akg_tanh(20.0f), 1.0f);
    EXPECT_BITS_EQ(akg_tanh(-1e30f), -1.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(kInf), 2.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(-kInf), 0.0f);
    EXPECT_TRUE(std::isnan(akg_tanh_plus_one(kNaN)));
    EXPECT_BITS_EQ(akg_tanh_plus_one(0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(-0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(20.0f), 2.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(-50.0f), 0.0f);
    // The clamp of -2x at 88.7 (k = 128): 1 + e^-2x saturates to +inf from x = -44.19 on, so the
    // result is +0 without a select; just above, the subnormal result is computed.
    EXPECT_BITS_EQ(akg_tanh_plus_one(-44.19f), 0.0f);
    EXPECT_GT(akg_tanh_plus_one(-44.18f), 0.0f);
    EXPECT_LT(akg_tanh_plus_one(-44.18f), 0x1p-126f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(-1e30f), 0.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one(1e30f), 2.0f);
    // Where 1 + akg_tanh(x) has cancelled to 0, the identity keeps the value.
    EXPECT_EQ(1.0f + akg_tanh(-10.0f), 0.0f);
    EXPECT_LE(ulp_error(akg_tanh_plus_one(-10.0f), 2.0 * std::exp(-20.0) / (1.0 + std::exp(-20.0))), kTanhPlusOneUlp);
}

TEST(VmathSpecial, Float16Precision) {
    EXPECT_BITS_EQ(akg_exp_h(-kInf), 0.0f);
    EXPECT_BITS_EQ(akg_exp_h(kInf), kInf);
    EXPECT_TRUE(std::isnan(akg_exp_h(kNaN)));
    EXPECT_TRUE(std::isnan(akg_exp_h(-kNaN)));
    EXPECT_BITS_EQ(akg_exp_h(0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_exp_h(-0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_exp_h(88.8f), kInf);     // overflow
    EXPECT_BITS_EQ(akg_exp_h(1e30f), kInf);
    EXPECT_LT(akg_exp_h(88.7f), kInf);
    EXPECT_BITS_EQ(akg_exp_h(-87.0f), 0.0f);    // flushed below 2^-125.5 (k = -126)
    EXPECT_GT(akg_exp_h(-86.9f), 0x1p-126f);    // k = -125: computed, normal
    EXPECT_BITS_EQ(akg_exp_h_no_overflow(-87.0f), 0.0f);
    EXPECT_BITS_EQ(akg_exp_h_no_overflow(-kInf), 0.0f);
    EXPECT_TRUE(std::isnan(akg_exp_h_no_overflow(kNaN)));
    EXPECT_BITS_EQ(akg_exp_h(-1e30f), 0.0f);
    EXPECT_GT(akg_exp_h(-86.5f), 0x1p-126f);    // still normal
    EXPECT_BITS_EQ(akg_tanh_h(kInf), 1.0f);
    // |x| is clamped to 6.692, where the rational function is exactly 1.0f; it stays below 1 under it
    EXPECT_BITS_EQ(akg_tanh_h(0x1.ac4b38p+2f), 1.0f);
    EXPECT_BITS_EQ(akg_tanh_h(-7.0f), -1.0f);
    EXPECT_LT(akg_tanh_h(0x1.ac4b36p+2f), 1.0f);
    EXPECT_BITS_EQ(akg_tanh_h(-kInf), -1.0f);
    EXPECT_TRUE(std::isnan(akg_tanh_h(kNaN)));
    EXPECT_BITS_EQ(akg_tanh_h(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_tanh_h(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_tanh_h(1e-20f), 1e-20f);
    EXPECT_BITS_EQ(akg_tanh_h(-0x1p-149f), -0x1p-149f);
    EXPECT_BITS_EQ(akg_tanh_h(20.0f), 1.0f);
    EXPECT_BITS_EQ(akg_tanh_h(-1e30f), -1.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one_h(kInf), 2.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one_h(-kInf), 0.0f);
    EXPECT_TRUE(std::isnan(akg_tanh_plus_one_h(kNaN)));
    EXPECT_BITS_EQ(akg_tanh_plus_one_h(20.0f), 2.0f);
    EXPECT_BITS_EQ(akg_tanh_plus_one_h(-50.0f), 0.0f);
    EXPECT_LE(float16_precision_error(kTanhPlusOneH, akg_tanh_plus_one_h(-10.0f), 2.0 * std::exp(-20.0) / (1.0 + std::exp(-20.0))),
              kFloat16PrecisionUnits);
}

TEST(VmathSpecial, DivOnePlusExp) {
    for (bool h : {false, true}) {
        auto f = [h](float x, float y) { return div_one_plus_exp_scalar(h, x, y); };
        EXPECT_BITS_EQ(f(2.0f, 0.0f), 1.0f);
        EXPECT_BITS_EQ(f(3.0f, -kInf), 3.0f);    // 1 + e^y rounds to 1
        EXPECT_BITS_EQ(f(-3.0f, -100.0f), -3.0f);
        EXPECT_BITS_EQ(f(3.0f, kInf), 0.0f);     // flushed to x * 0
        EXPECT_BITS_EQ(f(-3.0f, 100.0f), -0.0f);
        EXPECT_BITS_EQ(f(kInf, 0.0f), kInf);
        EXPECT_TRUE(std::isnan(f(-kInf, 100.0f))); // -inf * 0, as x * (1 + tanh(-50)) / 2
        EXPECT_TRUE(std::isnan(f(kNaN, 0.0f)));
        EXPECT_TRUE(std::isnan(f(1.0f, kNaN)));
        EXPECT_TRUE(std::isnan(f(kNaN, -kInf)));
        EXPECT_TRUE(std::isnan(f(kNaN, kInf)));
    }
}

TEST(VmathSpecial, Erf) {
    EXPECT_BITS_EQ(akg_erf(kInf), 1.0f);
    EXPECT_BITS_EQ(akg_erf(-kInf), -1.0f);
    EXPECT_TRUE(std::isnan(akg_erf(kNaN)));
    EXPECT_BITS_EQ(akg_erf(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_erf(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_erf(4.0f), 1.0f);
    EXPECT_BITS_EQ(akg_erf(-1e30f), -1.0f);
    EXPECT_LE(ulp_error(akg_erf(0x1p-140f), std::erf(0x1p-140)), kErfUlp);
    EXPECT_LE(ulp_error(akg_erf(1e-20f), std::erf(1e-20)), kErfUlp);
}

TEST(VmathSpecial, SigmoidSqrt) {
    EXPECT_BITS_EQ(akg_sigmoid(-kInf), 0.0f);
    EXPECT_BITS_EQ(akg_sigmoid(kInf), 1.0f);
    EXPECT_TRUE(std::isnan(akg_sigmoid(kNaN)));
    EXPECT_BITS_EQ(akg_sigmoid(0.0f), 0.5f);
    EXPECT_GT(akg_sigmoid(-95.0f), 0.0f);  // subnormal tail, not flushed
    EXPECT_BITS_EQ(akg_sqrt(4.0f), 2.0f);
    EXPECT_BITS_EQ(akg_sqrt(-0.0f), -0.0f);
    EXPECT_TRUE(std::isnan(akg_sqrt(-1.0f)));
    EXPECT_BITS_EQ(akg_sqrt(kInf), kInf);
    EXPECT_BITS_EQ(akg_rsqrt(4.0f), 0.5f);
    EXPECT_BITS_EQ(akg_rsqrt(0.0f), kInf);
    EXPECT_BITS_EQ(akg_rsqrt(kInf), 0.0f);
    EXPECT_TRUE(std::isnan(akg_rsqrt(-1.0f)));
}

TEST(VmathSpecial, SinCos) {
    for (float x : {kInf, -kInf, kNaN, -kNaN}) {
        EXPECT_TRUE(std::isnan(akg_sin(x))) << x;
        EXPECT_TRUE(std::isnan(akg_cos(x))) << x;
    }
    EXPECT_BITS_EQ(akg_sin(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_sin(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_cos(0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_cos(-0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_sin(0x1p-149f), 0x1p-149f);  // tiny x: sin(x) = x, subnormals included
    EXPECT_BITS_EQ(akg_sin(-1e-20f), -1e-20f);
    EXPECT_BITS_EQ(akg_sin(0x1p-12f), 0x1p-12f);
    EXPECT_BITS_EQ(akg_cos(0x1p-149f), 1.0f);
    EXPECT_BITS_EQ(akg_cos(0x1p-13f), 1.0f);
    // The largest floats (the reduction's last window of 2/pi), the floats nearest pi/4, pi/2 and
    // pi, and the float closest to a multiple of pi/2 (16367173 * 2^72: |x mod pi/2| = 2^-29.2)
    for (float x : {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 0x1.921fb6p+0f,
                    0x1.921fb6p+1f, 0x1p127f, 0x1.921fb6p-1f, 0x1.921fb4p-1f, 0x1.f37c8ap+95f, -0x1.f37c8ap+95f}) {
        EXPECT_LE(ulp_error(akg_sin(x), std::sin(static_cast<double>(x))), kSinCosUlp) << x;
        EXPECT_LE(ulp_error(akg_cos(x), std::cos(static_cast<double>(x))), kSinCosUlp) << x;
    }
}

TEST(VmathSpecial, AsinAcosAtan) {
    EXPECT_BITS_EQ(akg_asin(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_asin(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_asin(0x1p-149f), 0x1p-149f);
    EXPECT_BITS_EQ(akg_asin(1.0f), std::asin(1.0f));  // pi/2, rounded
    EXPECT_BITS_EQ(akg_asin(-1.0f), -std::asin(1.0f));
    EXPECT_BITS_EQ(akg_acos(1.0f), 0.0f);
    EXPECT_BITS_EQ(akg_acos(-1.0f), std::acos(-1.0f));  // pi
    EXPECT_BITS_EQ(akg_acos(0.0f), std::acos(0.0f));
    EXPECT_BITS_EQ(akg_acos(-0.0f), std::acos(0.0f));
    for (float x : {0x1.000002p+0f, -0x1.000002p+0f, 2.0f, kInf, -kInf, kNaN, -kNaN}) {
        EXPECT_TRUE(std::isnan(akg_asin(x))) << x;
        EXPECT_TRUE(std::isnan(akg_acos(x))) << x;
    }
    EXPECT_BITS_EQ(akg_atan(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_atan(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_atan(-0x1p-149f), -0x1p-149f);
    EXPECT_BITS_EQ(akg_atan(kInf), std::atan(kInf));  // pi/2, rounded
    EXPECT_BITS_EQ(akg_atan(-kInf), -std::atan(kInf));
    EXPECT_BITS_EQ(akg_atan(1.0f), std::atan(1.0f));  // pi/4, rounded
    EXPECT_BITS_EQ(akg_atan(3e38f), std::atan(kInf));
    EXPECT_TRUE(std::isnan(akg_atan(kNaN)));
}

// C atan2f (Annex F) special cases, compared with the C library's atan2f: bit-exact where a
// zero, an infinity or a NaN is involved, else within the bound.
TEST(VmathSpecial, Atan2) {
    const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.0f, kInf, -kInf, kNaN, -kNaN, 0x1p-149f, -0x1p-149f,
                       std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1e-30f, 3.0f};
    for (float y : v) {
        for (float x : v) {
            const float got = akg_atan2(y, x), want = std::atan2(y, x);
            if (std::isnan(want)) {
                EXPECT_TRUE(std::isnan(got)) << "atan2(" << y << ", " << x << ") = " << got;
            } else if (y == 0.0f || x == 0.0f || std::isinf(x) || std::isinf(y)) {
                EXPECT_BITS_EQ(got, want) << " at atan2(" << y << ", " << x << ")";
            } else {
                EXPECT_LE(ulp_error(got, std::atan2(static_cast<double>(y), static_cast<double>(x))), kAtanUlp)
                    << "atan2(" << y << ", " << x << ") = " << got;
            }
        }
    }
    EXPECT_BITS_EQ(akg_atan2(-0.0f, -0.0f), -std::acos(-1.0f));  // -pi
    EXPECT_BITS_EQ(akg_atan2(0.0f, -1.0f), std::acos(-1.0f));    // pi
    EXPECT_BITS_EQ(akg_atan2(-kInf, kInf), -std::atan(1.0f));    // -pi/4
    EXPECT_BITS_EQ(akg_atan2(1.0f, 1.0f), std::atan(1.0f));
}

TEST(VmathSpecial, AsinhAcosh) {
    EXPECT_BITS_EQ(akg_asinh(kInf), kInf);
    EXPECT_BITS_EQ(akg_asinh(-kInf), -kInf);
    EXPECT_TRUE(std::isnan(akg_asinh(kNaN)));
    EXPECT_BITS_EQ(akg_asinh(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_asinh(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_asinh(-0x1p-149f), -0x1p-149f);  // tiny x: asinh(x) = x
    EXPECT_BITS_EQ(akg_asinh(1e-20f), 1e-20f);
    EXPECT_BITS_EQ(akg_asinh(0x1p-13f), 0x1p-13f);
    EXPECT_LE(ulp_error(akg_asinh(std::numeric_limits<float>::max()),
                        std::asinh(static_cast<double>(std::numeric_limits<float>::max()))),
              kAsinhAcoshUlp);  // log(2x), without overflow
    EXPECT_BITS_EQ(akg_acosh(1.0f), 0.0f);
    EXPECT_BITS_EQ(akg_acosh(kInf), kInf);
    for (float x : {0x1.fffffep-1f, 0.0f, -0.0f, -1.0f, -kInf, kNaN, -kNaN}) EXPECT_TRUE(std::isnan(akg_acosh(x))) << x;
    EXPECT_LE(ulp_error(akg_acosh(0x1.000002p+0f), std::acosh(static_cast<double>(0x1.000002p+0f))), kAsinhAcoshUlp);
    EXPECT_LE(ulp_error(akg_acosh(std::numeric_limits<float>::max()),
                        std::acosh(static_cast<double>(std::numeric_limits<float>::max()))),
              kAsinhAcoshUlp);
}

TEST(VmathSpecial, Expm1) {
    EXPECT_BITS_EQ(akg_expm1(0.0f), 0.0f);
    EXPECT_BITS_EQ(akg_expm1(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_expm1(kInf), kInf);
    EXPECT_BITS_EQ(akg_expm1(-kInf), -1.0f);
    EXPECT_TRUE(std::isnan(akg_expm1(kNaN)));
    EXPECT_TRUE(std::isnan(akg_expm1(-kNaN)));
    EXPECT_BITS_EQ(akg_expm1(0x1p-149f), 0x1p-149f);  // tiny x: expm1(x) = x
    EXPECT_BITS_EQ(akg_expm1(-1e-20f), -1e-20f);
    EXPECT_BITS_EQ(akg_expm1(0x1p-25f), 0x1p-25f);
    EXPECT_BITS_EQ(akg_expm1(88.73f), kInf);          // overflow
    EXPECT_BITS_EQ(akg_expm1(1e30f), kInf);
    EXPECT_LE(ulp_error(akg_expm1(88.72f), std::expm1(static_cast<double>(88.72f))), kExpm1Ulp);
    EXPECT_LT(akg_expm1(88.72f), kInf);
    EXPECT_BITS_EQ(akg_expm1(-20.0f), std::expm1(-20.0f));
    EXPECT_BITS_EQ(akg_expm1(-100.0f), -1.0f);
    EXPECT_BITS_EQ(akg_expm1(-1e30f), -1.0f);
}

TEST(VmathSpecial, RoundEvenFloor) {
    EXPECT_BITS_EQ(akg_round_even(-0.4f), -0.0f);
    EXPECT_BITS_EQ(akg_round_even(-0.5f), -0.0f);
    EXPECT_BITS_EQ(akg_round_even(0.5f), 0.0f);
    EXPECT_BITS_EQ(akg_round_even(1.5f), 2.0f);
    EXPECT_BITS_EQ(akg_round_even(2.5f), 2.0f);
    EXPECT_BITS_EQ(akg_round_even(-2.5f), -2.0f);
    EXPECT_BITS_EQ(akg_round_even(0x1.fffffep+22f), 0x1p23f);  // 8388607.5: tie, to even
    EXPECT_BITS_EQ(akg_round_even(0x1.000002p+23f), 0x1.000002p+23f);
    EXPECT_BITS_EQ(akg_round_even(kInf), kInf);
    EXPECT_BITS_EQ(akg_round_even(-kInf), -kInf);
    EXPECT_TRUE(std::isnan(akg_round_even(kNaN)));
    EXPECT_BITS_EQ(akg_floor(-0.4f), -1.0f);
    EXPECT_BITS_EQ(akg_floor(-0.0f), -0.0f);
    EXPECT_BITS_EQ(akg_floor(0.4f), 0.0f);
    EXPECT_BITS_EQ(akg_floor(0.99999994f), 0.0f);
    EXPECT_BITS_EQ(akg_floor(-0x1p-149f), -1.0f);
    EXPECT_BITS_EQ(akg_floor(-2.5f), -3.0f);
    EXPECT_BITS_EQ(akg_floor(2.5f), 2.0f);
    EXPECT_BITS_EQ(akg_floor(-0x1.fffffep+22f), -0x1p23f);
    EXPECT_BITS_EQ(akg_floor(kInf), kInf);
    EXPECT_BITS_EQ(akg_floor(-kInf), -kInf);
    EXPECT_TRUE(std::isnan(akg_floor(kNaN)));
}

// C powf (Annex F) special cases, compared with the C library's powf (bit-exact, or both NaN).
TEST(VmathSpecial, Pow) {
    const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 0.25f,
                       1.5f, -1.5f, kInf, -kInf, kNaN, -kNaN, 0x1p-149f, -0x1p-149f, 1e-40f,
                       3.4e38f, -3.4e38f, 0x1p24f, -0x1p24f, 0x1p24f + 2.0f, 0x1p23f + 1.0f,
                       -(0x1p23f + 1.0f), 1e30f, -1e30f, 7.0f, -7.0f, 0.1f, -0.1f, 100.0f,
                       -100.0f, 2.5f, -2.5f, 127.0f, -149.0f, 0x1.fffffep-1f, 0x1.000002p+0f};
    for (float x : v) {
        for (float y : v) {
            float got = akg_pow(x, y);
            float want = std::pow(x, y);
            if (std::isnan(want)) {
                EXPECT_TRUE(std::isnan(got)) << "pow(" << x << ", " << y << ") = " << got;
            } else if (std::isinf(want) || want == 0.0f) {
                EXPECT_BITS_EQ(got, want) << " at pow(" << x << ", " << y << ")";
            } else {
                EXPECT_LE(ulp_error(got, std::pow(static_cast<double>(x), static_cast<double>(y))),
                          kPowUlp)
                    << "pow(" << x << ", " << y << ") = " << got;
                EXPECT_EQ(std::signbit(got), std::signbit(want)) << "pow(" << x << ", " << y << ")";
            }
        }
    }
    EXPECT_BITS_EQ(akg_pow(kNaN, 0.0f), 1.0f);
    EXPECT_BITS_EQ(akg_pow(1.0f, kNaN), 1.0f);
    EXPECT_BITS_EQ(akg_pow(-1.0f, kInf), 1.0f);
    EXPECT_BITS_EQ(akg_pow(-0.0f, -3.0f), -kInf);
    EXPECT_BITS_EQ(akg_pow(-0.0f, 3.0f), -0.0f);
    EXPECT_BITS_EQ(akg_pow(-0.0f, 0.5f), 0.0f);
    EXPECT_BITS_EQ(akg_pow(0.0f, -2.0f), kInf);
    EXPECT_TRUE(std::isnan(akg_pow(-2.0f, 0.5f)));
    EXPECT_BITS_EQ(akg_pow(-kInf, 0.5f), kInf);
    EXPECT_BITS_EQ(akg_pow(-kInf, -3.0f), -0.0f);
}

// ---------------------------------------------------------------------------------------------
// Vector path == scalar path, bit for bit

std::vector<float> agreement_inputs() {
    std::vector<float> x = {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN, 1.0f, -1.0f, 0x1p-149f,
                            -0x1p-149f, 0x1p-126f, 88.72f, 88.8f, -87.3f, -103.9f, -104.5f,
                            0.625f, 0.62499997f, 1.0f, 0.99999994f, 3.92f, 4.0f, 4.0000005f,
                            std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                            0x1.921fb6p-1f, 0x1.921fb4p-1f, -0x1.921fb6p-1f, 0.5f, -0.5f, 0x1.000002p-1f,
                            0x1.000002p+0f, -0x1.000002p+0f, 0x1p-12f, 0x1.fffffep-13f, 2.5f, -2.5f, -0.4f,
                            0x1p127f, 1e5f, -88.72f};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dense(-30.0f, 30.0f);
    for (int i = 0; i < (1 << 18); i++) x.push_back(bits_to_float(rng()));
    for (int i = 0; i < (1 << 18); i++) x.push_back(dense(rng));
    x.push_back(0.5f);  // odd total length: the loop has a remainder
    return x;
}

TEST(VmathSimd, MatchesScalarBitForBit) {
    const std::vector<float> x = agreement_inputs();
    std::vector<float> y(x.size());
    const std::pair<Fn, const char *> fns[] = {{kExp, "exp"}, {kLog, "log"},
                                               {kTanh, "tanh"}, {kTanhPlusOne, "tanh+1"}, {kErf, "erf"},
                                               {kSigmoid, "sigmoid"}, {kRsqrt, "rsqrt"},
                                               {kSqrt, "sqrt"}, {kExpH, "exp_h"}, {kTanhH, "tanh_h"},
                                               {kTanhPlusOneH, "tanh+1_h"}, {kSin, "sin"}, {kCos, "cos"},
                                               {kAsin, "asin"}, {kAcos, "acos"}, {kAtan, "atan"},
                                               {kAsinh, "asinh"}, {kAcosh, "acosh"}, {kExpm1, "expm1"},
                                               {kRoundEven, "round_even"}, {kFloor, "floor"}};
    for (const auto &[fn, name] : fns) {
        eval_simd(fn, x.data(), y.data(), static_cast<long>(x.size()));
        long mismatches = 0;
        for (size_t i = 0; i < x.size(); i++) {
            float s = eval_scalar(fn, x[i]);
            if (float_to_bits(s) != float_to_bits(y[i]) && !(std::isnan(s) && std::isnan(y[i]))) {
                if (mismatches++ < 5)
                    ADD_FAILURE() << name << "(" << std::hexfloat << x[i] << "): simd " << y[i]
                                  << " scalar " << s;
            }
        }
        EXPECT_EQ(mismatches, 0) << name;
    }
    // pow: pair up the inputs with a shuffled copy
    std::vector<float> y2(x.rbegin(), x.rend()), z(x.size());
    pow_simd(x.data(), y2.data(), z.data(), static_cast<long>(x.size()));
    long mismatches = 0;
    for (size_t i = 0; i < x.size(); i++) {
        float s = pow_scalar(x[i], y2[i]);
        if (float_to_bits(s) != float_to_bits(z[i]) && !(std::isnan(s) && std::isnan(z[i])))
            mismatches++;
    }
    EXPECT_EQ(mismatches, 0) << "pow";
    // atan2: the same pairs
    atan2_simd(x.data(), y2.data(), z.data(), static_cast<long>(x.size()));
    mismatches = 0;
    for (size_t i = 0; i < x.size(); i++) {
        float s = atan2_scalar(x[i], y2[i]);
        if (float_to_bits(s) != float_to_bits(z[i]) && !(std::isnan(s) && std::isnan(z[i])))
            mismatches++;
    }
    EXPECT_EQ(mismatches, 0) << "atan2";
}

// ---------------------------------------------------------------------------------------------
// float16

uint16_t f32_to_f16_reference(float x) {
#if defined(__F16C__)
    return _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
#elif defined(__aarch64__) && defined(__ARM_NEON)
    return vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(x))), 0); // fcvtn
#else
    return akg_vm_detail::f32_to_f16_soft(x);
#endif
}

// akg_exp_no_overflow / akg_exp_h_no_overflow (a softmax's exponent, which the generator proves
// to be at most 16): the same bits as akg_exp for every x <= 64 and as akg_exp_h for every
// x <= 88 of a sweep of all floats (every 61st bit pattern), every float in [56, 64] and in
// [80, 88], NaN and -inf; in vector loops and called alone. (The exhaustive sweep of all 2^32
// floats, NaN payloads included, agreed too when the scale became exp_scale.)
TEST(VmathSimd, ExpWithoutOverflowClampMatchesExpInItsRange) {
    long mismatches = 0, checked = 0;
    auto check = [&](const std::vector<float> &x, bool float32_range) {
        const long n = static_cast<long>(x.size());
        std::vector<float> a(x.size()), b(x.size()), ah(x.size()), bh(x.size());
#pragma omp simd
        for (long i = 0; i < n; i++) a[i] = akg_exp(x[i]);
#pragma omp simd
        for (long i = 0; i < n; i++) b[i] = akg_exp_no_overflow(x[i]);
#pragma omp simd
        for (long i = 0; i < n; i++) ah[i] = akg_exp_h(x[i]);
#pragma omp simd
        for (long i = 0; i < n; i++) bh[i] = akg_exp_h_no_overflow(x[i]);
        for (long i = 0; i < n; i++) {
            const bool same32 = !float32_range || (float_to_bits(a[i]) == float_to_bits(b[i]) &&
                                                   float_to_bits(akg_exp_no_overflow(x[i])) == float_to_bits(b[i]));
            const bool same16 = float_to_bits(ah[i]) == float_to_bits(bh[i]) && float_to_bits(akg_exp_h_no_overflow(x[i])) == float_to_bits(bh[i]);
            if (!(same32 && same16) && mismatches++ < 5)
                ADD_FAILURE() << std::hexfloat << "x = " << x[i] << ": " << a[i] << " " << b[i] << " " << ah[i] << " " << bh[i];
        }
        checked += n;
    };
    std::vector<float> x, above64;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
        const float f = bits_to_float(static_cast<uint32_t>(u));
        if (!(f > 64.0f)) x.push_back(f); // NaN included
        else if (f <= 88.0f) above64.push_back(f);
        if (x.size() == (1u << 16)) check(x, true), x.clear();
    }
    for (float f = 56.0f; f <= 64.0f; f = std::nextafter(f, 100.0f)) x.push_back(f);
    x.push_back(-kInf);
    check(x, true);
    for (float f = 80.0f; f <= 88.0f; f = std::nextafter(f, 100.0f)) above64.push_back(f);
    check(above64, false);
    EXPECT_GT(checked, 50000000L); // three quarters of the sweep: every x <= 64 and NaN
    EXPECT_EQ(mismatches, 0) << "of " << checked;
}

TEST(VmathF16, AllHalvesToFloat) {
    std::vector<uint16_t> h(1 << 16);
    for (uint32_t i = 0; i < (1u << 16); i++) h[i] = static_cast<uint16_t>(i);
    std::vector<float> f(h.size());
    f16_to_f32_simd(h.data(), f.data(), static_cast<long>(h.size()));
    for (uint32_t i = 0; i < (1u << 16); i++) {
        float soft = akg_vm_detail::f16_to_f32_soft(h[i]);
        bool nan = std::isnan(soft);
        ASSERT_TRUE(nan ? std::isnan(f[i]) : float_to_bits(f[i]) == float_to_bits(soft))
            << std::hex << i;
        ASSERT_EQ(float_to_bits(akg_f16_to_f32(h[i])), float_to_bits(f[i])) << std::hex << i;
#if defined(__F16C__)
        float hw = _cvtsh_ss(h[i]);
        ASSERT_EQ(float_to_bits(soft), float_to_bits(hw)) << std::hex << i;
#elif defined(__aarch64__) && defined(__ARM_NEON)
        float hw = vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h[i]))), 0); // fcvtl
        ASSERT_EQ(float_to_bits(soft), float_to_bits(hw)) << std::hex << i;
#endif
        // round trip (NaNs come back quieted)
        uint16_t back = akg_f32_to_f16(f[i]);
        ASSERT_EQ(back, nan ? static_cast<uint16_t>(h[i] | 0x0200u) : h[i]) << std::hex << i;
    }
    EXPECT_EQ(akg_f16_to_f32(0x3c00), 1.0f);
    EXPECT_EQ(akg_f16_to_f32(0x0001), 0x1p-24f);
    EXPECT_EQ(akg_f16_to_f32(0x7bff), 65504.0f);
    EXPECT_EQ(akg_f16_to_f32(0xfc00), -kInf);
}

// Checks one run of float bit patterns through the vector loops against F16C and the portable
// path; returns the number of mismatches.
long check_f32_to_f16(uint64_t first, uint64_t last, uint64_t stride) {
    stride *= sweep_scale();
    const uint64_t count = (last - first) / stride + 1;
    const long kBlock = 4096;
    const long nblocks = static_cast<long>((count + kBlock - 1) / kBlock);
    long bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        std::vector<float> x(kBlock), r(kBlock);
        std::vector<uint16_t> h(kBlock);
#pragma omp for schedule(dynamic, 16)
        for (long b = 0; b < nblocks; b++) {
            const uint64_t base = static_cast<uint64_t>(b) * kBlock;
            const long n = static_cast<long>(std::min<uint64_t>(kBlock, count - base));
            for (long i = 0; i < n; i++)
                x[i] = bits_to_float(static_cast<uint32_t>(first + (base + i) * stride));
            f32_to_f16_simd(x.data(), h.data(), n);
            round_f16_simd(x.data(), r.data(), n);
            for (long i = 0; i < n; i++) {
                uint16_t want = f32_to_f16_reference(x[i]);
                uint16_t soft = akg_vm_detail::f32_to_f16_soft(x[i]);
                float rt = akg_vm_detail::f16_to_f32_soft(want);
                bool ok = h[i] == want && soft == want &&
                          (std::isnan(rt) ? std::isnan(r[i])
                                          : float_to_bits(r[i]) == float_to_bits(rt));
                bad += ok ? 0 : 1;
            }
        }
    }
    return bad;
}

TEST(VmathF16, FloatToHalf) {
    // Every 13th float bit pattern, and every float of the f16 subnormal range, the
    // subnormal/normal boundary and the overflow zone (both signs).
    EXPECT_EQ(check_f32_to_f16(0, 0xffffffffull, 13), 0);
    for (uint32_t sign : {0u, 0x80000000u}) {
        EXPECT_EQ(check_f32_to_f16(sign | float_to_bits(0x1p-26f), sign | float_to_bits(0x1p-13f), 1), 0);
        EXPECT_EQ(check_f32_to_f16(sign | float_to_bits(65000.0f), sign | float_to_bits(66000.0f), 1), 0);
    }
    EXPECT_EQ(akg_f32_to_f16(65504.0f), 0x7bff);
    EXPECT_EQ(akg_f32_to_f16(65519.996f), 0x7bff);
    EXPECT_EQ(akg_f32_to_f16(65520.0f), 0x7c00);  // rounds to inf
    EXPECT_EQ(akg_f32_to_f16(1e10f), 0x7c00);
    EXPECT_EQ(akg_f32_to_f16(-kInf), 0xfc00);
    EXPECT_EQ(akg_f32_to_f16(0x1p-25f), 0x0000);   // tie to even -> 0
    EXPECT_EQ(akg_f32_to_f16(0x1.8p-24f), 0x0002);  // tie to even -> 2
    EXPECT_EQ(akg_f32_to_f16(0x1.000002p-25f), 0x0001);
    EXPECT_EQ(akg_f32_to_f16(-0.0f), 0x8000);
    EXPECT_EQ(akg_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);  // tie to even
    EXPECT_EQ(akg_f32_to_f16(1.0f + 0x1.8p-10f), 0x3c02);
    EXPECT_EQ(akg_round_f16(0.1f), 0.0999755859375f);
    EXPECT_EQ(akg_round_f16(1e-9f), 0.0f);
}

}  // namespace
