#include "dtype.h"

#include <cmath>
#include <stdexcept>

#include "reference_evaluator.h"

namespace akg::reference {
namespace {

struct IntegerRange {
  int bits;
  bool is_signed;
};

bool integer_range(const std::string &dtype, IntegerRange *range) {
  static const struct {
    const char *name;
    IntegerRange range;
  } kIntegers[] = {{"int8", {8, true}},    {"int16", {16, true}},  {"int32", {32, true}},
                   {"int64", {64, true}},  {"uint8", {8, false}},  {"uint16", {16, false}},
                   {"uint32", {32, false}}, {"uint64", {64, false}}};
  for (const auto &entry : kIntegers) {
    if (dtype == entry.name) {
      *range = entry.range;
      return true;
    }
  }
  return false;
}

}  // namespace

bool classify_dtype(const std::string &dtype, DtypeClass *cls) {
  IntegerRange range;
  if (dtype == "bool") {
    *cls = DtypeClass::Bool;
  } else if (integer_range(dtype, &range)) {
    *cls = DtypeClass::Integer;
  } else if (dtype == "float16" || dtype == "float32" || dtype == "float64") {
    *cls = DtypeClass::Float;
  } else {
    return false;
  }
  return true;
}

bool is_integer_dtype(const std::string &dtype) {
  IntegerRange range;
  return integer_range(dtype, &range);
}

DtypeInfo::DtypeInfo(const std::string &dtype) {
  if (!classify_dtype(dtype, &cls_)) throw std::invalid_argument("unknown dtype '" + dtype + "'");
  is_float16_ = dtype == "float16";
  IntegerRange range;
  if (integer_range(dtype, &range)) {
    bits_ = range.bits;
    is_signed_ = range.is_signed;
    lowest_ = is_signed_ ? -std::ldexp(1.0, bits_ - 1) : 0.0;
    // For 64 bits the largest value is not a double; saturating to the largest double below
    // 2^63 (or 2^64) keeps the result exact.
    const double limit = std::ldexp(1.0, is_signed_ ? bits_ - 1 : bits_);
    highest_ = bits_ == 64 ? std::nextafter(limit, 0.0) : limit - 1.0;
  }
}

double DtypeInfo::convert(double v) const {
  switch (cls_) {
    case DtypeClass::Bool:
      return v != 0.0 ? 1.0 : 0.0;
    case DtypeClass::Float:
      return is_float16_ ? round_to_float16_in_evaluation(v) : v;
    case DtypeClass::Integer:
      break;
  }
  if (std::isnan(v)) return 0.0;
  const double t = std::trunc(v);
  if (t < lowest_) return lowest_;
  if (t > highest_) return highest_;
  return t + 0.0;  // turns -0.0 (from truncating e.g. -0.3) into the integer 0
}

double DtypeInfo::wrap(uint64_t bits) const {
  if (cls_ != DtypeClass::Integer) throw std::invalid_argument("wrap() of a non-integer dtype");
  if (bits_ == 64) return is_signed_ ? static_cast<double>(static_cast<int64_t>(bits)) : static_cast<double>(bits);
  const uint64_t mask = (uint64_t{1} << bits_) - 1;
  bits &= mask;
  if (is_signed_ && (bits >> (bits_ - 1)) != 0) {
    // Negative in two's complement: value = bits - 2^bits_.
    return static_cast<double>(static_cast<int64_t>(bits) - static_cast<int64_t>(mask) - 1);
  }
  return static_cast<double>(bits);
}

double convert_to_dtype(double v, const std::string &dtype) { return DtypeInfo(dtype).convert(v); }

}  // namespace akg::reference
