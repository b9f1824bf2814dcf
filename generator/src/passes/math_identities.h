#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// Rewrites sums that lose their accuracy to a function that keeps it, and costs less:
//   tanh(x) + 1, 1 + tanh(x)  ->  akg_tanh_plus_one(x)       = 2 / (1 + e^-2x)
//   1 - tanh(x)               ->  akg_tanh_plus_one(-x)
// GeLU's tanh form 0.5 * x * (1 + tanh(z)) is the common case. For z < 0, 1 + tanh(z) in float
// cancels (at z = -8, every bit of the result is rounding error of tanh), while
// 2 / (1 + e^-2z) is within 2.5 ulp everywhere (akg_vmath.h). It is also one exponential and a
// division instead of tanh's exponential, division and polynomial: bias_gelu_f32 runs 1.3x
// faster. Float32 only (float16 stages compute in float32 too); the float16-precision tanh of
// an op declared float16 becomes akg_tanh_plus_one_h. A product of one such call with a
// constant c and other factors x then becomes one division:
//   x * akg_tanh_plus_one(z) * c  ->  akg_div_one_plus_exp(x * 2c, -2z) = x * 2c / (1 + e^-2z)
// (GeLU: c = 1/2, so x / (1 + e^-2z); three multiplications fewer, bias_gelu_f32 1.2x faster).
// And flags combined by max or min into one select:
//   max(c1 ? t : f, c2 ? t : f)  ->  (c1 || c2) ? t : f     (t > f constants; && for min)
// A gradient overflow check (isinf(x) or isnan(x) as 1.0 or 0.0) then costs one select.
// And a softmax's exponent, which is at most 0:
//   exp(x - max_r(x))            ->  akg_exp_no_overflow(x - max_r(x))   (akg_exp_h_...: float16)
// the exp without its overflow clamp (the same bits for x <= 88).
// And the logarithm of a softmax (s the row sum of those exponentials e, c > 0):
//   log(e / s), log(max(e / s, c))  ->  (x - max_r(x)) - log(s), max(that, log(c))
// one subtraction per element instead of an exponential, a division and a logarithm (a
// softmax cross-entropy 1.8x faster), and closer to the reference (no underflow of e).
void rewrite_math_identities(TensorGraph &graph);

// Whether `e` is a select between two constants, neither NaN: a max/min reduction of such
// values holds no NaN, and the emitter combines it with an ordered max/min.
bool is_nan_free_flag(const Halide::Expr &e);

} // namespace akg
