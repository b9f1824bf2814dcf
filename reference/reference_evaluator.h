// The reference evaluator: an independent, deliberately simple double-precision interpreter of
// MindSpore composite JSON (see docs/DESIGN.md, "Numerics"). Every generated kernel is tested
// against it, so clarity wins over speed everywhere except the inner element loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace akg::reference {

// A dense row-major tensor. Values of every dtype are held as doubles: float16/float32 exactly,
// int32/bool/small int64 exactly as integers (bool is 0 or 1).
struct Tensor {
  std::vector<int64_t> shape;
  std::string dtype;  // "float32", "float16", "int32", "bool", "int64", ...
  std::vector<double> data;
  // Empty, or one value per element: how far a correct float32 kernel may be from `data` on top
  // of AKG's tolerance because it sums the products of a MatMul/BatchMatMul in its own order
  // (README.md, "Matrix products"); set on results that depend on a matrix product, and used by
  // `compare`. Ignored in inputs. Infinite where nothing can be said (an overflow nearby).
  std::vector<double> error_bound = {};
};

struct Result {
  // One per top-level output_desc entry, in order, with that entry's shape and dtype.
  std::vector<Tensor> outputs;
  // Index of a kernel input (flattened top-level input_desc order) -> the contents the kernel
  // leaves in it, for the targets of InplaceAssign/Assign.
  std::map<size_t, Tensor> updated_inputs;
};

// Unsupported ops or layouts, inconsistent shapes or dtypes, malformed JSON. Messages name the op
// index and op name where one is involved ("op #3 (ReduceSum): ...").
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How float16 results are rounded during an evaluation.
enum class Float16Rounding {
  // Every op whose output dtype is float16 rounds its result to float16 before later ops use
  // it: what MindSpore, AKG and numpy compute. The default.
  PerOp,
  // Only Cast to float16 and the stored float16 results (outputs, in-place updates) round;
  // float16 ops in between keep double precision. The generator's
  // "--float16-intermediates=float32" mode.
  AtStores,
};

struct EvalOptions {
  Float16Rounding float16 = Float16Rounding::PerOp;
  // The evaluation "per op in the tensors' dtypes": additionally every op whose output dtype is
  // float32 rounds its result to float32 (and, with AtStores, every float16 op too, since that
  // mode computes float16 ops in float32). Reductions and matrix products still accumulate in
  // double and round their final result. Comparing it with the plain evaluation tells which
  // elements are ill-conditioned (compare_conditioned).
  bool round_float32_per_op = false;
};

// Evaluates the kernel on `inputs` (flattened top-level input_desc order; a Tensor with an empty
// dtype takes the declared one). The kernel's own "float16_intermediates" key is not read here:
// pass float16_rounding_of(kernel) in `options` to follow it.
Result evaluate(const nlohmann::json &kernel, const std::vector<Tensor> &inputs, const EvalOptions &options = {});
// The same, except that every value the graph rounds to float16 (a per-op rounding, a Cast, a
// store) that lies within float32 noise of a midpoint between two float16 values (2^-16
// relative) rounds the other way. A float32 kernel may legitimately round such a value either
// way, and a flipped intermediate (a softmax row sum) can move a result by more than AKG's
// tolerance: checks accept a result that matches either evaluation.
Result evaluate_with_float16_ties_flipped(const nlohmann::json &kernel, const std::vector<Tensor> &inputs,
                                          const EvalOptions &options = {});

// The float16 rounding a kernel asks for with the top-level key "float16_intermediates" of its
// composite JSON: "float32" -> AtStores, "float16" or no key -> PerOp; any other value is an
// Error.
Float16Rounding float16_rounding_of(const nlohmann::json &kernel);

// Shapes and dtypes of the kernel inputs (data empty), in flattened top-level input_desc order.
std::vector<Tensor> kernel_inputs_signature(const nlohmann::json &kernel);

// Random inputs the AKG way, deterministic for a given seed on every standard library:
// floats ~ N(0,1), or |N(0,1)| + 0.5 for inputs that feed Log, Sqrt, Rsqrt, Reciprocal, the base
// of Pow or the divisor of RealDiv; float32 values are rounded to float32 and float16 values to
// float16; bool 0/1; integers small (in [-8, 8], or [1, 8] where positivity is needed).
std::vector<Tensor> random_inputs(const nlohmann::json &kernel, uint64_t seed);

// AKG's tolerance check: |a - e| <= atol + rtol * |e| + expected.error_bound[i] (float32 and
// wider 1e-4/1e-4, float16 1e-3/1e-3, integers and bool exact; the bound only where `expected`
// has one: results of matrix products). NaN matches NaN, an infinity matches the same infinity;
// a finite expected value whose bound is infinite matches anything.
struct Comparison {
  bool ok = true;
  size_t mismatches = 0;
  // compare_conditioned only: elements where the per-op evaluation disagrees with the expected
  // one beyond the tolerance.
  size_t ill_conditioned = 0;
  // The mismatch with the largest absolute error, or the largest error overall when all match.
  // At an ill-conditioned element the error is the smaller of those to both evaluations.
  size_t worst_index = 0;
  double worst_abs_error = 0.0;
  double actual_at_worst = 0.0;
  double expected_at_worst = 0.0;
  std::string message;  // one line, suitable for a test failure
};
Comparison compare(const std::vector<double> &actual, const Tensor &expected);

// compare() that tells ill-conditioned elements from failures. `expected` is the evaluation in
// double (E), `per_op` the same graph evaluated per op in the tensors' dtypes (D,
// EvalOptions::round_float32_per_op). An element where D does not match E under compare()'s rule
// (E's tolerance and bound; a NaN or infinite D against a finite E included) is ill-conditioned:
// the graph itself amplifies rounding errors there, so any float implementation may land far
// from E. There the actual value passes if it matches E, or matches D, or is within
// tol(D) + |D - E| of D (tol(D): the tolerance and bound of D's own value). Elsewhere the rule
// is compare()'s.
Comparison compare_conditioned(const std::vector<double> &actual, const Tensor &expected, const Tensor &per_op);
// compare_conditioned's rule for element i alone (for callers that add allowances of their own);
// *ill_conditioned, when given, says whether the element is ill-conditioned.
bool element_matches_conditioned(double actual, const Tensor &expected, const Tensor &per_op, size_t i,
                                 bool *ill_conditioned = nullptr);

// IEEE 754 binary16 round-to-nearest-even of x (overflow to +-inf, subnormals, signed zero, NaN
// preserved), returned as the exactly representable double.
double round_to_float16(double x);
// The IEEE binary16 bits of round_to_float16(x) (NaN: 0x7e00), and the value of such bits.
uint16_t float16_bits(double x);
double float16_from_bits(uint16_t bits);

}  // namespace akg::reference
