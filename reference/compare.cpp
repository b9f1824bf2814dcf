// AKG's tolerance check of a kernel's output against the reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "dtype.h"
#include "reference_evaluator.h"

namespace akg::reference {
namespace {

struct Tolerance {
  double atol;
  double rtol;
};

Tolerance tolerance_for(const std::string &dtype) {
  if (dtype == "float16") return {1e-3, 1e-3};
  DtypeClass cls = DtypeClass::Float;
  if (classify_dtype(dtype, &cls) && cls != DtypeClass::Float) return {0.0, 0.0};  // exact
  return {1e-4, 1e-4};  // float32, float64, and anything unknown
}

// |a - e| for the report; infinite where the values cannot be compared numerically.
double abs_error(double a, double e) {
  if (std::isnan(a) || std::isnan(e)) return (std::isnan(a) && std::isnan(e)) ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(a) || std::isinf(e)) return a == e ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs(a - e);
}

// `bound`: the element's error_bound (0 without one). An infinite or NaN bound of a finite
// expected value says the reference cannot tell what a float32 kernel gives there.
bool matches(double a, double e, const Tolerance &tol, double bound) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return a == e;
  if (!(bound < std::numeric_limits<double>::infinity())) return true;
  if (std::isnan(a) || std::isinf(a)) return false;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e) + bound;
}

std::string format_double(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

}  // namespace

Comparison compare(const std::vector<double> &actual, const Tensor &expected) {
  Comparison c;
  if (actual.size() != expected.data.size()) {
    c.ok = false;
    c.mismatches = std::max(actual.size(), expected.data.size());
    c.message = "size mismatch: " + std::to_string(actual.size()) + " actual values, " +
                std::to_string(expected.data.size()) + " expected";
    return c;
  }
  const Tolerance tol = tolerance_for(expected.dtype);
  const bool bounded = expected.error_bound.size() == expected.data.size() && !expected.data.empty();
  double largest_bound = 0.0;
  // The element to report: the largest error among the mismatches, or overall when all match.
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t worst_overall = kNone;
  size_t worst_mismatch = kNone;
  double error_overall = 0.0;
  double error_mismatch = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double err = abs_error(actual[i], expected.data[i]);
    if (worst_overall == kNone || err > error_overall) {
      worst_overall = i;
      error_overall = err;
    }
    const double bound = bounded ? expected.error_bound[i] : 0.0;
    if (bounded && !(bound <= largest_bound)) largest_bound = bound;
    if (!matches(actual[i], expected.data[i], tol, bound)) {
      ++c.mismatches;
      if (worst_mismatch == kNone || err > error_mismatch) {
        worst_mismatch = i;
        error_mismatch = err;
      }
    }
  }
  const size_t worst = worst_mismatch != kNone ? worst_mismatch : worst_overall;
  if (worst != kNone) {
    c.worst_index = worst;
    c.worst_abs_error = abs_error(actual[worst], expected.data[worst]);
    c.actual_at_worst = actual[worst];
    c.expected_at_worst = expected.data[worst];
  }
  c.ok = c.mismatches == 0;
  const std::string tol_text = "atol " + format_double(tol.atol) + ", rtol " + format_double(tol.rtol) +
                               (bounded ? " + matrix-product bound (at most " + format_double(largest_bound) + ")" : "");
  const std::string worst_text = "worst at index " + std::to_string(c.worst_index) + ": actual " +
                                 format_double(c.actual_at_worst) + ", expected " +
                                 format_double(c.expected_at_worst) + " (abs error " +
                                 format_double(c.worst_abs_error) + ")";
  if (c.ok) {
    c.message = "all " + std::to_string(actual.size()) + " " + expected.dtype + " values within " + tol_text +
                (actual.empty() ? "" : "; " + worst_text);
  } else {
    c.message = std::to_string(c.mismatches) + " of " + std::to_string(actual.size()) + " " + expected.dtype +
                " values outside " + tol_text + "; " + worst_text;
  }
  return c;
}

}  // namespace akg::reference
