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

bool finite(double v) { return !std::isnan(v) && !std::isinf(v); }

// compare_conditioned's element rule with the per-tensor lookups done once.
class ConditionedRule {
 public:
  ConditionedRule(const Tensor &expected, const Tensor &per_op)
      : tol_(tolerance_for(expected.dtype)),
        expected_(expected),
        per_op_(per_op),
        expected_bounded_(expected.error_bound.size() == expected.data.size()),
        per_op_bounded_(per_op.error_bound.size() == per_op.data.size()) {}

  bool ill_conditioned(size_t i) const { return !matches(per_op_.data[i], expected_.data[i], tol_, expected_bound(i)); }

  bool accepts(double a, size_t i, bool ill) const {
    const double e = expected_.data[i], d = per_op_.data[i];
    if (matches(a, e, tol_, expected_bound(i))) return true;
    if (!ill) return false;
    const double bd = per_op_bounded_ ? per_op_.error_bound[i] : 0.0;
    if (matches(a, d, tol_, bd)) return true;
    // A tolerance scaled by the disagreement only between finite values: with a NaN or an
    // infinity on either side, a match with one of them is required.
    if (!finite(a) || !finite(d) || !finite(e)) return false;
    return std::fabs(a - d) <= tol_.atol + tol_.rtol * std::fabs(d) + bd + std::fabs(d - e);
  }

  // The error to report: at an ill-conditioned element, to the nearer of both evaluations.
  double error(double a, size_t i, bool ill) const {
    const double to_expected = abs_error(a, expected_.data[i]);
    return ill ? std::min(to_expected, abs_error(a, per_op_.data[i])) : to_expected;
  }

 private:
  double expected_bound(size_t i) const { return expected_bounded_ ? expected_.error_bound[i] : 0.0; }

  Tolerance tol_;
  const Tensor &expected_;
  const Tensor &per_op_;
  bool expected_bounded_;
  bool per_op_bounded_;
};

// The comparison loop and its report, for an element rule `check(a, i, &ill, &error)` that says
// whether actual[i] matches, whether the element is ill-conditioned, and its error.
template <class Check>
Comparison compare_with(const std::vector<double> &actual, const Tensor &expected, Check check) {
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
    bool ill = false;
    double err = 0.0;
    const bool ok = check(actual[i], i, &ill, &err);
    if (ill) ++c.ill_conditioned;
    if (worst_overall == kNone || err > error_overall) {
      worst_overall = i;
      error_overall = err;
    }
    const double bound = bounded ? expected.error_bound[i] : 0.0;
    if (bounded && !(bound <= largest_bound)) largest_bound = bound;
    if (!ok) {
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
    c.worst_abs_error = worst_mismatch != kNone ? error_mismatch : error_overall;
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
  const std::string ill_text =
      c.ill_conditioned == 0 ? ""
                             : "; " + std::to_string(c.ill_conditioned) +
                                   " ill-conditioned (the per-op evaluation differs from the double one there)";
  if (c.ok) {
    c.message = "all " + std::to_string(actual.size()) + " " + expected.dtype + " values within " + tol_text +
                (actual.empty() ? "" : "; " + worst_text) + ill_text;
  } else {
    c.message = std::to_string(c.mismatches) + " of " + std::to_string(actual.size()) + " " + expected.dtype +
                " values outside " + tol_text + "; " + worst_text + ill_text;
  }
  return c;
}

}  // namespace

Comparison compare(const std::vector<double> &actual, const Tensor &expected) {
  const Tolerance tol = tolerance_for(expected.dtype);
  const bool bounded = expected.error_bound.size() == expected.data.size();
  return compare_with(actual, expected, [&](double a, size_t i, bool *, double *error) {
    *error = abs_error(a, expected.data[i]);
    return matches(a, expected.data[i], tol, bounded ? expected.error_bound[i] : 0.0);
  });
}

Comparison compare_conditioned(const std::vector<double> &actual, const Tensor &expected, const Tensor &per_op) {
  if (per_op.data.size() != expected.data.size()) {
    throw Error("compare_conditioned: the per-op evaluation has " + std::to_string(per_op.data.size()) +
                " values, the expected one " + std::to_string(expected.data.size()));
  }
  const ConditionedRule rule(expected, per_op);
  return compare_with(actual, expected, [&](double a, size_t i, bool *ill, double *error) {
    *ill = rule.ill_conditioned(i);
    *error = rule.error(a, i, *ill);
    return rule.accepts(a, i, *ill);
  });
}

bool element_matches_conditioned(double actual, const Tensor &expected, const Tensor &per_op, size_t i,
                                 bool *ill_conditioned) {
  const ConditionedRule rule(expected, per_op);
  const bool ill = rule.ill_conditioned(i);
  if (ill_conditioned != nullptr) *ill_conditioned = ill;
  return rule.accepts(actual, i, ill);
}

}  // namespace akg::reference
