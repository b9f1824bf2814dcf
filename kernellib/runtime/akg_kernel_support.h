// akg_kernel_support.h: the helpers that generated kernels call. Internal, not installed.
// Everything is static inline and branch-free where it sits in vector loops.
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "akg_kernel_def.h"
#include "akg_vmath.h"

// Index arithmetic of isl's AST (64-bit).
static inline int64_t akg_imin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t akg_imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t akg_floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Integer RealDiv truncates toward zero like C; division by zero yields 0 instead of trapping.
static inline int32_t akg_idiv(int32_t a, int32_t b) { return b == 0 ? 0 : a / b; }
static inline int64_t akg_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }

static inline float akg_abs(float x) { return __builtin_fabsf(x); }
static inline int32_t akg_abs(int32_t x) { return x < 0 ? -x : x; }
static inline bool akg_isnan(float x) { return x != x; }
static inline bool akg_isinf(float x) { return __builtin_fabsf(x) == __builtin_inff(); }
static inline bool akg_isnan(int32_t) { return false; }
static inline bool akg_isinf(int32_t) { return false; }

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
static inline bool akg_blend(bool c, bool a, bool b) { return (c & a) | (!c & b); }

// Maximum/Minimum propagate NaN like numpy (and the reference).
static inline float akg_fmax(float a, float b) { return akg_blend((a > b) | (a != a), a, b); }
static inline float akg_fmin(float a, float b) { return akg_blend((a < b) | (a != a), a, b); }
static inline int32_t akg_fmax(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t akg_fmin(int32_t a, int32_t b) { return a < b ? a : b; }
// Float (in)equality as calls, out of reach of Halide's non-IEEE simplifications (x != x).
static inline bool akg_feq(float a, float b) { return a == b; }
static inline bool akg_fne(float a, float b) { return a != b; }

template <typename T> static inline T akg_select(bool c, T a, T b) { return akg_blend(c, a, b); }
static inline double akg_fmax(double a, double b) { return akg_blend((a > b) | (a != a), a, b); }
static inline double akg_fmin(double a, double b) { return akg_blend((a < b) | (a != a), a, b); }
