// Rounding of doubles to IEEE binary16, done directly from double (not via float) so that there
// is exactly one rounding step and ties are resolved on the exact value. It runs once per
// element of every float16 input and output, hence the bit-level fast path for normal values.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "dtype.h"
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

namespace {
thread_local bool flip_float16_near_ties = false;
}  // namespace

double round_to_float16_in_evaluation(double x) {
  const double r = round_to_float16(x);
  if (!flip_float16_near_ties || !std::isfinite(r) || x == r) return r;
  // x near the midpoint m between r and its other neighbour o: 2x - r is near o, so it rounds to o.
  const double other = round_to_float16(2 * x - r);
  const double midpoint = r + (other - r) / 2;
  return std::fabs(x - midpoint) <= 0x1p-16 * std::fabs(x) ? other : r;
}

Float16TiesFlipped::Float16TiesFlipped() { flip_float16_near_ties = true; }
Float16TiesFlipped::~Float16TiesFlipped() { flip_float16_near_ties = false; }

// float16 bits <-> double without compiler support for _Float16 (clang 14 has it on x86 only
// with AVX512-FP16), for code that fills or reads float16 buffers.
uint16_t float16_bits(double v) {
  if (std::isnan(v)) return 0x7e00;
  const double r = round_to_float16(v);  // one rounding, half to even; +-Inf beyond the range
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::fabs(r);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(a * 0x1p24);  // subnormal: a multiple of 2^-24
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>((m * 2 - 1) * 1024);
}

double float16_from_bits(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

}  // namespace akg::reference
