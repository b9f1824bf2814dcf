#pragma once
#include <Halide.h>

namespace akg {

// A float16 output whose value is one of a few float constants, chosen by conditions (a dropout
// mask: select(keep, 1, 0); a bool cast to float16), can store the constants' float16 bits,
// chosen by the same conditions: the emitter then needs no float-to-float16 conversion for it
// (vcvtps2ph costs about two cycles per 16 values on the dev VM) and no float block to convert
// from. Returns that value as a uint16 expression (selects of the constants' bits), or undefined
// when `value` is anything else: a computed value, or a constant that is NaN or beyond float16's
// largest finite value (the conversion's NaN quieting and overflow are not repeated here).
// The bits are the constant rounded to nearest even, as akg_f32_to_f16 rounds it (checked for
// every float16 value and the midpoints between them in tests/generator).
Halide::Expr float16_bits_of_constants(const Halide::Expr &value);

} // namespace akg
