// What the reference knows about dtypes: their class and how a value is stored in one.
// Internal to the reference library.
#pragma once

#include <cstdint>
#include <string>

namespace akg::reference {

// round_to_float16 for the values the evaluation stores in float16 tensors; while a
// Float16TiesFlipped is alive (on this thread), values within 2^-16 relative of a midpoint
// between two float16 values round to the other neighbour
// (see evaluate_with_float16_ties_flipped).
double round_to_float16_in_evaluation(double x);
struct Float16TiesFlipped {
  Float16TiesFlipped();
  ~Float16TiesFlipped();
  Float16TiesFlipped(const Float16TiesFlipped &) = delete;
  Float16TiesFlipped &operator=(const Float16TiesFlipped &) = delete;
};

enum class DtypeClass { Float, Integer, Bool };

// Returns false for dtype strings the reference does not know.
bool classify_dtype(const std::string &dtype, DtypeClass *cls);
bool is_integer_dtype(const std::string &dtype);

// The storage rules of one dtype, looked up once per tensor so that the per-element work
// involves no string comparisons.
class DtypeInfo {
 public:
  // Throws std::invalid_argument for an unknown dtype.
  explicit DtypeInfo(const std::string &dtype);

  DtypeClass cls() const { return cls_; }

  // The value `v` takes when stored in this dtype, i.e. Cast's semantics:
  //  - bool: v != 0 (NaN is nonzero);
  //  - integers: truncation toward zero; NaN becomes 0 and out-of-range values saturate, as
  //    CUDA's cvt.rzi does (C++ leaves both undefined, and AKG's kernels mostly ran on CUDA);
  //  - float16: round_to_float16; float32 and wider: unchanged, because the reference computes
  //    in double (docs/DESIGN.md, "Numerics").
  double convert(double v) const;

  // Two's-complement wrap of an exact integer result (as uint64_t bits) into this integer
  // dtype's width: how integer arithmetic overflows in the generated C++.
  double wrap(uint64_t bits) const;

 private:
  DtypeClass cls_ = DtypeClass::Float;
  bool is_float16_ = false;
  int bits_ = 0;  // integers only
  bool is_signed_ = false;
  double lowest_ = 0.0;
  double highest_ = 0.0;
};

// Convenience for single values: DtypeInfo(dtype).convert(v).
double convert_to_dtype(double v, const std::string &dtype);

}  // namespace akg::reference
