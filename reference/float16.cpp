// Rounding of doubles to IEEE binary16, done directly from double (not via float) so that there
// is exactly one rounding step and ties are resolved on the exact value. It runs once per
// element of every float16 input and output, hence the bit-level fast path for normal values.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "reference_evaluator.h"

namespace akg::reference {
namespace {

// Round-half-to-even of a non-negative value below 2^52, independent of the FPU rounding mode.
double round_half_even(double v) {
  const double floor_v = std::floor(v);
  const double frac = v - floor_v;  // exact
  if (frac > 0.5) return floor_v + 1.0;
  if (frac < 0.5) return floor_v;
  return std::fmod(floor_v, 2.0) == 0.0 ? floor_v : floor_v + 1.0;
}

}  // namespace

double round_to_float16(double x) {
  if (std::isnan(x)) return x;
  const double magnitude = std::fabs(x);
  // 65504 is the largest finite half; 65520 is the midpoint to the next (nonexistent) binade
  // value 65536, and the tie goes to the even significand, which is 65536: overflow.
  if (magnitude >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), x);

  double rounded;
  if (magnitude >= 0x1p-14) {
    // Normal halves keep 10 of the double's 52 fraction bits. Rounding the bit pattern at bit
    // 42, half to even: adding 2^41 - 1 plus the lowest kept bit carries into the kept bits
    // exactly when the dropped bits are above one half, or exactly one half with an odd kept
    // part. A carry out of the fraction increments the exponent, which is the correct result.
    uint64_t bits;
    std::memcpy(&bits, &magnitude, sizeof bits);
    const uint64_t lowest_kept_bit = (bits >> 42) & 1;
    bits += (uint64_t{1} << 41) - 1 + lowest_kept_bit;
    bits &= ~((uint64_t{1} << 42) - 1);
    std::memcpy(&rounded, &bits, sizeof rounded);
  } else {
    // Subnormal halves are the multiples of 2^-24. Scaling by a power of two is exact (also
    // for subnormal doubles), so the only rounding is round_half_even's.
    rounded = round_half_even(magnitude * 0x1p24) * 0x1p-24;
  }
  return std::copysign(rounded, x);
}

}  // namespace akg::reference
