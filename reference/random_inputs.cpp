// Random kernel inputs the way AKG's own tests make them: standard normal values, except where an
// input flows into an op that needs positive operands (Log, Sqrt, ...), nonzero divisors
// (FloorDiv, Mod), a domain (Asin, Acosh) or indices (Gather, OneHot, ...), so that the expected
// results stay finite and comparisons stay meaningful.
//
// Determinism across standard libraries: std::mt19937_64's output sequence is fixed by the C++
// standard, but std::normal_distribution's algorithm is not, so the normal values come from our
// own Box-Muller transform.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "dtype.h"
#include "kernel_desc.h"
#include "reference_evaluator.h"

namespace akg::reference {
namespace {

// What an input's values must look like for the kernel's results to be meaningful, from the
// ops that read it. Positive: |N(0, 1)| + 0.5 (ints [1, 8]). NonZero (divisors of FloorDiv, Mod,
// FloorMod): ±(|N(0, 1)| + 1), ints [-8, -1] and [1, 8] (a Cast to an integer keeps them
// nonzero). UnitInterval (Asin, ACos) and AtLeastOne (Acosh): mostly inside the domain, 1/16 of
// them outside. Index: integers mostly in [0, limit) with 1/16 of them out of range (half
// negative, half >= limit), so that the out-of-range rules are exercised; `limits` holds one limit
// for every element, or one per component of an index row (the last dim: GatherNd,
// TensorScatterAdd).
enum class Need { None, NonZero, Positive, UnitInterval, AtLeastOne, Index };

struct Requirement {
  Need need = Need::None;
  std::vector<int64_t> limits;  // Index only
};

int strength(Need n) {
  switch (n) {
    case Need::None: return 0;
    case Need::NonZero: return 1;
    case Need::Index: return 3;
    default: return 2;
  }
}

// Ops whose listed operands need values of a kind for a finite (meaningful) result.
const std::map<std::string, std::vector<size_t>> kNeedsPositive = {
    {"Log", {0}}, {"Sqrt", {0}}, {"Rsqrt", {0}}, {"Reciprocal", {0}}, {"Pow", {0}}, {"RealDiv", {1}}, {"Div", {1}},
};
const std::map<std::string, std::pair<Need, std::vector<size_t>>> kNeedsOther = {
    {"FloorDiv", {Need::NonZero, {1}}},     {"Mod", {Need::NonZero, {1}}},   {"FloorMod", {Need::NonZero, {1}}},
    {"Asin", {Need::UnitInterval, {0}}},    {"ACos", {Need::UnitInterval, {0}}},
    {"Acosh", {Need::AtLeastOne, {0}}},
};

// Ops whose result is positive when the listed operands are (kAll: every operand). A positive
// requirement on their result is passed on to those operands.
constexpr size_t kAll = static_cast<size_t>(-1);
const std::map<std::string, std::vector<size_t>> kPositivityPreserving = {
    {"Cast", {0}},         {"Reshape", {0}},      {"BroadcastTo", {0}},   {"Transpose", {0}},
    {"Tile", {0}},         {"ExpandDims", {0}},   {"ReduceSum", {0}},     {"ReduceMax", {0}},
    {"ReduceMin", {0}},    {"ReduceProd", {0}},   {"Add", {kAll}},        {"TensorAdd", {kAll}},
    {"Mul", {kAll}},       {"AddN", {kAll}},      {"Maximum", {kAll}},    {"Minimum", {kAll}},
    {"RealDiv", {0, 1}},   {"Div", {0, 1}},       {"Select", {1, 2}},     {"InplaceAssign", {2}},
    {"Assign", {1}},       {"MatMul", {kAll}},    {"BatchMatMul", {kAll}},  // sums of products (+ bias)
    {"SelectGE", {2, 3}},  {"SelectGT", {2, 3}},  {"SelectLE", {2, 3}},   {"SelectLT", {2, 3}},
    {"StridedSlice", {0}}, {"Concat", {kAll}},    {"UnPadAkg", {0}},      {"EquivFormat", {0}},
    {"TransData", {0}},    {"Gather", {0}},       {"GatherNd", {0}},      {"CumSum", {0}},
    {"CumProd", {0}},      {"Pool2D", {0}},       {"GlobalPool2D", {0}},  {"TensorScatterAdd", {0, 2}},
    {"UnsortedSegmentSum", {0}},
};

// Ops whose result holds (some of) the listed operands' values unchanged: every requirement on
// the result is passed on to them (an Index one with per-component limits only through ops that
// keep the element order: Cast and the assignments).
const std::map<std::string, std::vector<size_t>> kValuePreserving = {
    {"Cast", {0}},         {"Reshape", {0}},       {"BroadcastTo", {0}}, {"Transpose", {0}},
    {"Tile", {0}},         {"ExpandDims", {0}},    {"Select", {1, 2}},   {"InplaceAssign", {2}},
    {"Assign", {1}},       {"SelectGE", {2, 3}},   {"SelectGT", {2, 3}}, {"SelectLE", {2, 3}},
    {"SelectLT", {2, 3}},  {"StridedSlice", {0}},  {"Concat", {kAll}},   {"UnPadAkg", {0}},
    {"EquivFormat", {0}},  {"TransData", {0}},     {"Gather", {0}},      {"GatherNd", {0}},
    {"Maximum", {kAll}},   {"Minimum", {kAll}},
};
const std::set<std::string> kElementOrderPreserving = {"Cast", "InplaceAssign", "Assign"};

// An int attr (or a list of one) of an op, or `fallback`.
int64_t int_attr_or(const nlohmann::json &op, const std::string &name, int64_t fallback) {
  const nlohmann::json *v = find_attr(op, name);
  if (v != nullptr && v->is_array() && v->size() == 1) v = &(*v)[0];
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

// The index operand of a data-dependent indexing op and the limits of its values; false for
// other ops (or malformed ones: the evaluator reports those).
bool index_requirement(const nlohmann::json &op, const std::string &name,
                       const std::vector<std::vector<TensorDesc>> &inputs, size_t *operand, Requirement *req) {
  auto shape_of = [&](size_t k) -> const Shape * {
    return k < inputs.size() && inputs[k].size() == 1 ? &inputs[k][0].shape : nullptr;
  };
  req->need = Need::Index;
  req->limits.clear();
  if (name == "Gather") {
    const Shape *params = shape_of(0);
    if (params == nullptr || params->empty()) return false;
    const int64_t rank = static_cast<int64_t>(params->size());
    int64_t axis = int_attr_or(op, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    *operand = 1;
    req->limits = {(*params)[axis]};
    return true;
  }
  if (name == "GatherNd" || name == "TensorScatterAdd") {
    const Shape *params = shape_of(0), *indices = shape_of(1);
    if (params == nullptr || indices == nullptr || indices->empty()) return false;
    const size_t q = name == "TensorScatterAdd" && indices->size() == 1 ? 1 : static_cast<size_t>(indices->back());
    if (q == 0 || q > params->size()) return false;
    *operand = 1;
    req->limits.assign(params->begin(), params->begin() + q);
    return true;
  }
  if (name == "UnsortedSegmentSum" || name == "OneHot") {
    const int64_t limit = int_attr_or(op, name == "OneHot" ? "depth" : "num_segments", 0);
    if (limit <= 0) return false;
    *operand = name == "OneHot" ? 0 : 1;
    req->limits = {limit};
    return true;
  }
  return false;
}

// The requirement on each tensor name. op_desc is topologically sorted, so a backward walk sees
// every consumer of a tensor before its producer.
std::map<std::string, Requirement> input_requirements(const nlohmann::json &kernel) {
  std::map<std::string, Requirement> required;
  if (!kernel.contains("op_desc") || !kernel["op_desc"].is_array()) return required;
  const nlohmann::json &ops = kernel["op_desc"];
  for (size_t i = ops.size(); i-- > 0;) {
    const nlohmann::json &op = ops[i];
    const std::string name = op.value("name", "");
    const auto inputs = op_input_descs(op, op_label(i, op));
    // The stronger requirement wins (an index beats a range, a range beats nonzero).
    auto mark = [&](size_t k, const Requirement &req) {
      for (size_t j = 0; j < inputs.size(); ++j) {
        if (k != kAll && k != j) continue;
        for (const TensorDesc &d : inputs[j]) {
          Requirement &r = required[d.name];
          if (strength(req.need) > strength(r.need)) r = req;
        }
      }
    };
    if (auto it = kNeedsPositive.find(name); it != kNeedsPositive.end()) {
      for (size_t k : it->second) mark(k, Requirement{Need::Positive, {}});
    }
    if (auto it = kNeedsOther.find(name); it != kNeedsOther.end()) {
      for (size_t k : it->second.second) mark(k, Requirement{it->second.first, {}});
    }
    size_t index_operand = 0;
    Requirement index_req;
    if (index_requirement(op, name, inputs, &index_operand, &index_req)) mark(index_operand, index_req);

    Requirement result;  // what the op's result must hold
    if (op.contains("output_desc") && op["output_desc"].is_array()) {
      for (const auto &out : op["output_desc"]) {
        if (!out.contains("tensor_name") || !out["tensor_name"].is_string()) continue;
        auto it = required.find(out["tensor_name"].get<std::string>());
        if (it != required.end() && strength(it->second.need) > strength(result.need)) result = it->second;
      }
    }
    if (result.need == Need::None) continue;
    if (result.need == Need::Positive) {
      if (auto it = kPositivityPreserving.find(name); it != kPositivityPreserving.end()) {
        for (size_t k : it->second) mark(k, result);
      }
    } else if (result.need != Need::Index || result.limits.size() == 1 || kElementOrderPreserving.count(name)) {
      if (auto it = kValuePreserving.find(name); it != kValuePreserving.end()) {
        for (size_t k : it->second) mark(k, result);
      }
    }
  }
  return required;
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
  const std::map<std::string, Requirement> required = input_requirements(kernel);
  const std::vector<TensorDesc> descs = kernel_input_descs(kernel);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorDesc &d = descs[i];
    Requirement req;
    if (auto it = required.find(d.name); it != required.end()) req = it->second;
    Gaussian gen(mix(seed ^ mix(i)));
    Tensor t{d.shape, d.dtype, std::vector<double>(static_cast<size_t>(element_count(d.shape)))};
    DtypeClass cls;
    classify_dtype(d.dtype, &cls);
    const DtypeInfo info(d.dtype);
    const bool is_float32 = d.dtype == "float32", is_float16 = d.dtype == "float16";
    const bool is_unsigned = d.dtype[0] == 'u';  // unsigned integers
    const bool needs_positive = req.need == Need::Positive;
    const bool non_negative = needs_positive || is_unsigned;
    auto uniform = [&](uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; };  // [0, 1)
    for (size_t e = 0; e < t.data.size(); ++e) {
      double &v = t.data[e];
      if (req.need == Need::Index && cls != DtypeClass::Bool) {
        const int64_t limit = std::max<int64_t>(req.limits[e % req.limits.size()], 1);
        const uint64_t r = gen.bits();
        const uint64_t pick = r >> 59;  // 1/32 below the range, 1/32 above
        const int64_t offset = static_cast<int64_t>((r & 0xffffffffu) % static_cast<uint64_t>(limit));
        if (pick == 0) {
          v = static_cast<double>(-1 - offset);  // [-limit, -1]
        } else if (pick == 1) {
          v = static_cast<double>(limit + offset);  // [limit, 2 limit - 1]
        } else {
          v = static_cast<double>(offset);
        }
        v = info.convert(v);  // narrow dtypes saturate
        continue;
      }
      switch (cls) {
        case DtypeClass::Bool:
          v = static_cast<double>(gen.bits() >> 63);
          break;
        case DtypeClass::Integer: {
          const uint64_t r = gen.bits() >> 32;
          if (needs_positive || req.need == Need::AtLeastOne || (req.need == Need::NonZero && is_unsigned)) {
            v = 1.0 + static_cast<double>(r % 8);  // [1, 8]
          } else if (req.need == Need::NonZero) {
            const double k = static_cast<double>(r % 16);
            v = k < 8 ? k - 8.0 : k - 7.0;  // [-8, -1] and [1, 8]
          } else if (req.need == Need::UnitInterval) {
            v = static_cast<double>(r % (is_unsigned ? 2 : 3)) - (is_unsigned ? 0.0 : 1.0);  // [-1, 1]
          } else if (non_negative) {
            v = static_cast<double>(r % 9);  // [0, 8]
          } else {
            v = static_cast<double>(r % 17) - 8.0;  // [-8, 8]
          }
          break;
        }
        case DtypeClass::Float: {
          switch (req.need) {
            case Need::UnitInterval: {
              const uint64_t r = gen.bits();
              const double u = uniform(r);
              const double sign = (r & 1) != 0 ? -1.0 : 1.0;
              v = (r >> 60) == 0 ? sign * (1.0 + u) : 2.0 * u - 1.0;  // 1/16 outside [-1, 1]
              break;
            }
            case Need::AtLeastOne: {
              const uint64_t r = gen.bits();
              v = (r >> 60) == 0 ? uniform(r) : 1.0 + std::fabs(gen.next());  // 1/16 below 1
              break;
            }
            case Need::NonZero: {
              const double g = gen.next();
              v = g < 0.0 ? g - 1.0 : g + 1.0;
              break;
            }
            default: {
              const double g = gen.next();
              v = needs_positive ? std::fabs(g) + 0.5 : g;
            }
          }
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
