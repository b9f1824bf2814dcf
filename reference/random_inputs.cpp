// Random kernel inputs the way AKG's own tests make them: standard normal values, except where an
// input flows into an op that needs positive operands (Log, Sqrt, ...), so that the expected
// results stay finite and comparisons stay meaningful.
//
// Determinism across standard libraries: std::mt19937_64's output sequence is fixed by the C++
// standard, but std::normal_distribution's algorithm is not, so the normal values come from our
// own Box-Muller transform.
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "dtype.h"
#include "kernel_desc.h"
#include "reference_evaluator.h"

namespace akg::reference {
namespace {

// Ops whose listed operands must be positive for a finite result.
const std::map<std::string, std::vector<size_t>> kNeedsPositive = {
    {"Log", {0}}, {"Sqrt", {0}}, {"Rsqrt", {0}}, {"Reciprocal", {0}}, {"Pow", {0}}, {"RealDiv", {1}},
};

// Ops whose result is positive when the listed operands are (kAll: every operand). A positive
// requirement on their result is passed on to those operands.
constexpr size_t kAll = static_cast<size_t>(-1);
const std::map<std::string, std::vector<size_t>> kPositivityPreserving = {
    {"Cast", {0}},         {"Reshape", {0}},      {"BroadcastTo", {0}},   {"Transpose", {0}},
    {"Tile", {0}},         {"ExpandDims", {0}},   {"ReduceSum", {0}},     {"ReduceMax", {0}},
    {"ReduceMin", {0}},    {"ReduceProd", {0}},   {"Add", {kAll}},        {"TensorAdd", {kAll}},
    {"Mul", {kAll}},       {"AddN", {kAll}},      {"Maximum", {kAll}},    {"Minimum", {kAll}},
    {"RealDiv", {0, 1}},   {"Select", {1, 2}},    {"InplaceAssign", {2}}, {"Assign", {1}},
    {"MatMul", {kAll}},    {"BatchMatMul", {kAll}},  // sums of products (+ bias)
};

// Names of the tensors that must hold positive values. op_desc is topologically sorted, so a
// backward walk sees every consumer of a tensor before its producer.
std::set<std::string> tensors_needing_positive_values(const nlohmann::json &kernel) {
  std::set<std::string> positive;
  if (!kernel.contains("op_desc") || !kernel["op_desc"].is_array()) return positive;
  const nlohmann::json &ops = kernel["op_desc"];
  for (size_t i = ops.size(); i-- > 0;) {
    const nlohmann::json &op = ops[i];
    const std::string name = op.value("name", "");
    const auto inputs = op_input_descs(op, op_label(i, op));
    auto mark = [&](size_t k) {
      for (size_t j = 0; j < inputs.size(); ++j) {
        if (k != kAll && k != j) continue;
        for (const TensorDesc &d : inputs[j]) positive.insert(d.name);
      }
    };
    if (auto it = kNeedsPositive.find(name); it != kNeedsPositive.end()) {
      for (size_t k : it->second) mark(k);
    }
    bool result_positive = false;
    if (op.contains("output_desc") && op["output_desc"].is_array()) {
      for (const auto &out : op["output_desc"]) {
        if (out.contains("tensor_name") && positive.count(out["tensor_name"].get<std::string>())) {
          result_positive = true;
        }
      }
    }
    if (auto it = kPositivityPreserving.find(name); result_positive && it != kPositivityPreserving.end()) {
      for (size_t k : it->second) mark(k);
    }
  }
  return positive;
}

// Standard normal values by Marsaglia's polar form of the Box-Muller transform: a point uniform
// in the unit disc gives two independent normal values, with one log and one sqrt and no
// trigonometry (the trigonometric form was the bottleneck at tens of millions of values).
class Gaussian {
 public:
  explicit Gaussian(uint64_t seed) : rng_(seed) {}

  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      // One 64-bit draw gives both coordinates, 32 bits each, exactly representable in [-1, 1).
      const uint64_t draw = rng_();
      u = static_cast<double>(draw >> 32) * 0x1.0p-31 - 1.0;
      v = static_cast<double>(draw & 0xffffffffu) * 0x1.0p-31 - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double factor = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * factor;
    has_spare_ = true;
    return u * factor;
  }

  uint64_t bits() { return rng_(); }

 private:
  std::mt19937_64 rng_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// SplitMix64's finalizer: spreads (seed, input index) over the generator's seed space, so each
// input has its own stream and does not change when another input's shape does.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<Tensor> random_inputs(const nlohmann::json &kernel, uint64_t seed) {
  const std::set<std::string> positive = tensors_needing_positive_values(kernel);
  const std::vector<TensorDesc> descs = kernel_input_descs(kernel);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorDesc &d = descs[i];
    const bool needs_positive = positive.count(d.name) != 0;
    Gaussian gen(mix(seed ^ mix(i)));
    Tensor t{d.shape, d.dtype, std::vector<double>(static_cast<size_t>(element_count(d.shape)))};
    DtypeClass cls;
    classify_dtype(d.dtype, &cls);
    const bool is_float32 = d.dtype == "float32", is_float16 = d.dtype == "float16";
    const bool non_negative = needs_positive || d.dtype[0] == 'u';  // unsigned integers
    for (double &v : t.data) {
      switch (cls) {
        case DtypeClass::Bool:
          v = static_cast<double>(gen.bits() >> 63);
          break;
        case DtypeClass::Integer: {
          const uint64_t r = gen.bits() >> 32;
          if (needs_positive) {
            v = 1.0 + static_cast<double>(r % 8);  // [1, 8]
          } else if (non_negative) {
            v = static_cast<double>(r % 9);  // [0, 8]
          } else {
            v = static_cast<double>(r % 17) - 8.0;  // [-8, 8]
          }
          break;
        }
        case DtypeClass::Float: {
          const double g = gen.next();
          v = needs_positive ? std::fabs(g) + 0.5 : g;
          // The kernel under test will see the values in its own precision; give the reference
          // exactly the same values.
          if (is_float32) v = static_cast<double>(static_cast<float>(v));
          if (is_float16) v = round_to_float16(v);
          break;
        }
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace akg::reference
