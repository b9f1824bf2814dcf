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

// Evaluates the kernel on `inputs` (flattened top-level input_desc order; a Tensor with an empty
// dtype takes the declared one).
Result evaluate(const nlohmann::json &kernel, const std::vector<Tensor> &inputs);
// The same, except that every value the graph rounds to float16 (a float16 tensor) that lies
// within float32 noise of a midpoint between two float16 values (2^-20 relative) rounds the
// other way. A float32 kernel may legitimately round such a value either way, and a flipped
// intermediate (a softmax row sum) can move a result by more than AKG's tolerance: checks accept
// a result that matches either evaluation.
Result evaluate_with_float16_ties_flipped(const nlohmann::json &kernel, const std::vector<Tensor> &inputs);

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
  // The mismatch with the largest absolute error, or the largest error overall when all match.
  size_t worst_index = 0;
  double worst_abs_error = 0.0;
  double actual_at_worst = 0.0;
  double expected_at_worst = 0.0;
  std::string message;  // one line, suitable for a test failure
};
Comparison compare(const std::vector<double> &actual, const Tensor &expected);

// IEEE 754 binary16 round-to-nearest-even of x (overflow to +-inf, subnormals, signed zero, NaN
// preserved), returned as the exactly representable double.
double round_to_float16(double x);
// The IEEE binary16 bits of round_to_float16(x) (NaN: 0x7e00), and the value of such bits.
uint16_t float16_bits(double x);
double float16_from_bits(uint16_t bits);

}  // namespace akg::reference
