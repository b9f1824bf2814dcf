// The graph walk: binds kernel inputs and inline constants to names, runs the ops in order
// (op_desc is topologically sorted), checks every op's result against its output_desc, rounds it
// as EvalOptions says, performs the buffer writes of InplaceAssign/Assign, and collects the
// outputs.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <new>
#include <set>
#include <unordered_map>

#include "dtype.h"
#include "kernel_desc.h"
#include "ops.h"
#include "reference_evaluator.h"

namespace akg::reference {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Ops the reference deliberately does not interpret, and why (docs/OPS.md, "Not supported").
const std::map<std::string, std::string> kUnsupportedOps = [] {
  std::map<std::string, std::string> m;
  m["Custom"] = "runs user Python inside AKG, not a composite op";
  for (const char *op : {"CSRDiv", "CSRMul", "CSRMV", "CSRMM", "CSRReduceSum", "CSRGather", "CSR2COO", "COO2CSR"}) {
    m[op] = "sparse CSR tensors are out of scope";
  }
  for (const char *op : {"Complex", "CReal", "CImag"}) m[op] = "complex dtypes are not supported";
  for (const char *op : {"StandardNormal", "UniformReal", "UniformInt", "RandomChoiceWithMask"}) {
    m[op] = "random ops are not reproducible against a reference";
  }
  m["Conv2D"] = "convolution is not interpreted by the reference";
  m["LayoutTransform"] = "Ascend/NCHWc layouts";
  return m;
}();

// Ops that compute their result's error_bound themselves (ops_matmul.cpp).
const std::set<std::string> kBoundingOps = {"MatMul", "BatchMatMul"};

// |x - y| as a deviation: 0 for two NaNs or the same infinity, infinite when only one is NaN.
double deviation(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y) ? 0.0 : kInfinity;
  if (x == y) return 0.0;
  return std::fabs(x - y);
}

// Sets p's values to those `t` may take within its error_bound, one side at a time:
// t + sign * bound, whole steps for integers (rounded outward) and flips for bools (either side
// flips a bool whose bound is nonzero: a comparison that float32 noise could decide either way).
void perturb(const Tensor &t, double sign, Tensor *p) {
  DtypeClass cls = DtypeClass::Float;
  classify_dtype(t.dtype, &cls);
  for (size_t i = 0; i < p->data.size(); ++i) {
    const double x = t.data[i], e = t.error_bound[i];
    if (e == 0.0) {
      p->data[i] = x;
    } else if (cls == DtypeClass::Bool) {
      p->data[i] = x != 0.0 ? 0.0 : 1.0;
    } else {
      p->data[i] = x + sign * (cls == DtypeClass::Integer ? std::ceil(e) : e);
    }
  }
}

// The error bound of an op's result from its operands' bounds, by evaluating the op again with
// each bounded operand moved to either end of its interval and taking the largest deviation of
// the result, summed over the operands (first order). Exact for the monotone elementwise ops,
// reductions and layout ops; for the others (Abs near 0, Mul by itself) a first-order estimate
// is enough, since the bounds themselves are tiny. Empty when no operand has a bound, so kernels
// without matrix products compare exactly as before.
std::vector<double> propagated_bound(const OpFunction &fn, const OpCall &call, const Tensor &result) {
  std::vector<double> bound;
  for (size_t k = 0; k < call.inputs.size(); ++k) {
    for (size_t j = 0; j < call.inputs[k].size(); ++j) {
      const Tensor &operand = *call.inputs[k][j];
      if (operand.error_bound.empty()) continue;
      if (bound.empty()) bound.assign(result.data.size(), 0.0);
      Tensor p{operand.shape, operand.dtype, std::vector<double>(operand.data.size())};
      OpCall moved = call;
      moved.inputs[k][j] = &p;
      perturb(operand, 1.0, &p);
      const Tensor up = fn(moved);
      perturb(operand, -1.0, &p);
      const Tensor down = fn(moved);
      for (size_t i = 0; i < bound.size(); ++i) {
        bound[i] += std::max(deviation(up.data[i], result.data[i]), deviation(down.data[i], result.data[i]));
      }
    }
  }
  return bound;
}

// Replaces every value x of `t` by convert(x). An error bound is carried through the conversion:
// the conversion is monotone, so a value within [x - e, x + e] converts to one within the
// conversions of the ends (for float16, a value near a rounding boundary may round to either
// neighbour of x's rounding: one float16 step more).
template <class Convert>
void convert_in_place(Tensor *t, Convert convert) {
  const bool bounded = !t->error_bound.empty();
  for (size_t i = 0; i < t->data.size(); ++i) {
    const double x = t->data[i];
    const double r = convert(x);
    if (bounded) {
      const double e = t->error_bound[i];
      t->error_bound[i] = std::max(deviation(convert(x + e), r), deviation(convert(x - e), r));
    }
    t->data[i] = r;
  }
}

// Converts every value to `dtype` as a store would (float16 rounding, integer truncation).
Tensor stored_as(const Tensor &t, const Shape &shape, const std::string &dtype) {
  Tensor r{shape, dtype, t.data, t.error_bound};
  const DtypeInfo info(dtype);
  convert_in_place(&r, [&](double v) { return info.convert(v); });
  return r;
}

// Ops whose float results kernels compute with the vector math functions of akg_vmath.h, to
// within kApproximationError relative (their stated accuracy is 1-2.5 float32 ulps, 2^-22.7; the
// bound leaves a margin). Arithmetic, Sqrt and division are correctly rounded in float32, and a
// float32 result of float16 operands rounds to float16 as the exact one does (float32 has more
// than 2 x 11 + 2 bits), so their per-op float16 roundings match exactly.
const std::set<std::string> kApproximatedOps = {
    "Exp", "Log", "Tanh", "Erf", "Pow", "Rsqrt",
    // docs/OPS.md's transcendental functions.
    "Sin", "Cos", "Asin", "ACos", "Atan", "Atan2", "Asinh", "Acosh", "Expm1", "FastGeLU"};
constexpr double kApproximationError = 0x1p-20;

double round_to_float32(double x) { return static_cast<double>(static_cast<float>(x)); }

// The rounding an op's float result gets before later ops read it (EvalOptions); integer and
// bool results are already in their dtype. Rounding an already rounded value (a Cast's, a
// Reshape's) changes nothing.
void round_per_op(const EvalOptions &options, const std::string &op, Tensor *result) {
  const bool is_float16 = result->dtype == "float16";
  if (is_float16 && options.float16 == Float16Rounding::PerOp) {
    if (kApproximatedOps.count(op)) {
      // A kernel computes these functions to a few float32 ulps, not exactly: where that error
      // reaches a float16 rounding boundary the kernel's rounding may go the other way, so the
      // value is bounded by the function's error before it is rounded (one float16 step after).
      if (result->error_bound.empty()) result->error_bound.assign(result->data.size(), 0.0);
      for (size_t i = 0; i < result->data.size(); ++i)
        if (std::isfinite(result->data[i]))
          result->error_bound[i] = std::max(result->error_bound[i], std::fabs(result->data[i]) * kApproximationError);
    }
    const DtypeInfo info("float16");  // round_to_float16_in_evaluation: ties may be flipped
    convert_in_place(result, [&](double v) { return info.convert(v); });
  } else if (options.round_float32_per_op && (is_float16 || result->dtype == "float32")) {
    // With AtStores, float16 ops are computed in float32 (the generator's
    // --float16-intermediates=float32); their stores still round to float16.
    convert_in_place(result, round_to_float32);
  }
}

class Evaluation {
 public:
  Evaluation(const nlohmann::json &kernel, const EvalOptions &options) : kernel_(kernel), options_(options) {}

  Result run(const std::vector<Tensor> &inputs) {
    bind_inputs(inputs);
    if (!kernel_.contains("op_desc") || !kernel_["op_desc"].is_array()) throw Error("kernel has no op_desc list");
    const nlohmann::json &ops = kernel_["op_desc"];
    compute_last_uses(ops);
    for (size_t i = 0; i < ops.size(); ++i) run_op(i, ops[i]);
    return collect_results();
  }

 private:
  void bind_inputs(const std::vector<Tensor> &inputs) {
    input_descs_ = kernel_input_descs(kernel_);
    if (inputs.size() != input_descs_.size()) {
      throw Error("kernel has " + std::to_string(input_descs_.size()) + " inputs, got " +
                  std::to_string(inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorDesc &desc = input_descs_[i];
      const Tensor &given = inputs[i];
      const std::string where = "kernel input " + std::to_string(i) + " ('" + desc.name + "')";
      if (!same_shape(given.shape, desc.shape)) {
        throw Error(where + ": shape " + shape_to_string(given.shape) + ", declared " + shape_to_string(desc.shape));
      }
      if (!given.dtype.empty() && given.dtype != desc.dtype) {
        throw Error(where + ": dtype " + given.dtype + ", declared " + desc.dtype);
      }
      if (static_cast<int64_t>(given.data.size()) != element_count(desc.shape)) {
        throw Error(where + ": " + std::to_string(given.data.size()) + " values for shape " +
                    shape_to_string(desc.shape));
      }
      if (!input_index_.emplace(desc.name, i).second) throw Error(where + ": duplicate tensor name");
      defined_.insert(desc.name);
      values_[desc.name] = Tensor{desc.shape, desc.dtype, given.data};
    }
  }

  // The index of the last op reading each name, so that dead intermediates can be freed: with
  // tens of millions of elements per tensor, keeping them all would need many gigabytes.
  void compute_last_uses(const nlohmann::json &ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      for (const auto &list : op_input_descs(ops[i], op_label(i, ops[i]))) {
        for (const TensorDesc &d : list) {
          if (d.value == nullptr) last_use_[d.name] = i;
        }
      }
    }
    if (!kernel_.contains("output_desc") || !kernel_["output_desc"].is_array()) {
      throw Error("kernel has no output_desc list");
    }
    for (const auto &out : kernel_["output_desc"]) {
      last_use_[parse_tensor_desc(out, "kernel output").name] = std::numeric_limits<size_t>::max();
    }
  }

  void run_op(size_t index, const nlohmann::json &op) {
    const std::string label = op_label(index, op);
    if (!op.is_object() || !op.contains("name") || !op["name"].is_string()) throw Error(label + ": op has no name");
    const std::string name = op["name"].get<std::string>();
    if (auto it = kUnsupportedOps.find(name); it != kUnsupportedOps.end()) {
      throw Error(label + ": unsupported op " + name + " (" + it->second + ")");
    }

    // Operands: inline constants are materialized here; names must be defined already.
    const auto input_descs = op_input_descs(op, label);
    std::deque<Tensor> constants;  // a deque keeps the addresses stable
    std::vector<std::vector<const Tensor *>> operands;
    for (size_t k = 0; k < input_descs.size(); ++k) {
      operands.emplace_back();
      for (const TensorDesc &d : input_descs[k]) {
        const std::string where = label + " input " + std::to_string(k);
        if (d.value != nullptr) {
          constants.push_back(constant_tensor(d, where));
          operands.back().push_back(&constants.back());
          continue;
        }
        auto it = values_.find(d.name);
        if (it == values_.end()) {
          throw Error(where + ": tensor '" + d.name + "' is not a kernel input or an earlier op's output");
        }
        const Tensor &t = it->second;
        if (!same_shape(t.shape, d.shape) || t.dtype != d.dtype) {
          throw Error(where + ": tensor '" + d.name + "' is " + shape_to_string(t.shape) + " " + t.dtype +
                      " but described as " + shape_to_string(d.shape) + " " + d.dtype);
        }
        operands.back().push_back(&t);
      }
    }

    if (!op.contains("output_desc") || !op["output_desc"].is_array() || op["output_desc"].size() != 1) {
      throw Error(label + ": expected exactly one output_desc entry");
    }
    const TensorDesc out = parse_tensor_desc(op["output_desc"][0], label + " output");

    Tensor result;
    if (name == "InplaceAssign" || name == "Assign") {
      result = assign(label, name, input_descs, operands);
    } else {
      const OpFunction *fn = find_op(name);
      if (fn == nullptr) throw Error(label + ": unsupported op " + name);
      OpCall call{label, &op, operands, out.shape, out.dtype};
      result = (*fn)(call);
      if (kBoundingOps.count(name) == 0) result.error_bound = propagated_bound(*fn, call, result);
      // After the bound: a rounding widens it where the value could round either way.
      if (result.dtype == out.dtype) round_per_op(options_, name, &result);
    }
    if (!same_shape(result.shape, out.shape)) {
      throw Error(label + ": result shape is " + shape_to_string(result.shape) + " but output_desc says " +
                  shape_to_string(out.shape));
    }
    if (result.dtype != out.dtype) {
      throw Error(label + ": result dtype is " + result.dtype + " but output_desc says " + out.dtype);
    }
    result.shape = out.shape;
    if (!defined_.insert(out.name).second) throw Error(label + ": tensor name '" + out.name + "' is defined twice");

    // Free the operands this op was the last reader of, then publish the result.
    for (const auto &list : input_descs) {
      for (const TensorDesc &d : list) {
        if (d.value == nullptr && last_use_[d.name] == index) values_.erase(d.name);
      }
    }
    values_[out.name] = std::move(result);
  }

  // InplaceAssign(ref, value, passthrough) and Assign(ref, value): `ref` receives `value` when the
  // kernel finishes (ops later in the kernel still read the old contents; docs/DESIGN.md).
  Tensor assign(const std::string &label, const std::string &name,
                const std::vector<std::vector<TensorDesc>> &descs,
                const std::vector<std::vector<const Tensor *>> &operands) {
    const size_t arity = name == "InplaceAssign" ? 3 : 2;
    if (operands.size() != arity) {
      throw Error(label + ": expected " + std::to_string(arity) + " inputs, got " + std::to_string(operands.size()));
    }
    for (const auto &list : operands) {
      if (list.size() != 1) throw Error(label + ": every input must be one tensor");
    }
    const TensorDesc &ref = descs[0][0];
    if (ref.value != nullptr) throw Error(label + ": cannot assign to an inline constant");
    const Tensor &ref_tensor = *operands[0][0];
    const Tensor &value = *operands[1][0];
    if (!same_shape(ref_tensor.shape, value.shape)) {
      throw Error(label + ": value shape " + shape_to_string(value.shape) + " differs from ref '" + ref.name +
                  "' shape " + shape_to_string(ref_tensor.shape));
    }
    pending_writes_[ref.name] = stored_as(value, ref_tensor.shape, ref_tensor.dtype);
    return *operands[arity - 1][0];
  }

  Result collect_results() {
    Result result;
    for (const auto &out_json : kernel_["output_desc"]) {
      const TensorDesc out = parse_tensor_desc(out_json, "kernel output " + std::to_string(result.outputs.size()));
      const std::string where = "kernel output " + std::to_string(result.outputs.size()) + " ('" + out.name + "')";
      const Tensor *t = nullptr;
      auto written = pending_writes_.find(out.name);
      auto it = values_.find(out.name);
      if (written != pending_writes_.end()) {
        t = &written->second;  // an intermediate that an Assign wrote to
      } else if (it != values_.end()) {
        t = &it->second;
      } else {
        throw Error(where + ": no op produces it");
      }
      if (!same_shape(t->shape, out.shape) || t->dtype != out.dtype) {
        throw Error(where + ": computed " + shape_to_string(t->shape) + " " + t->dtype + " but declared " +
                    shape_to_string(out.shape) + " " + out.dtype);
      }
      result.outputs.push_back(stored_as(*t, out.shape, out.dtype));
    }
    for (const auto &[name, value] : pending_writes_) {
      auto idx = input_index_.find(name);
      if (idx != input_index_.end()) result.updated_inputs[idx->second] = value;
    }
    return result;
  }

  const nlohmann::json &kernel_;
  const EvalOptions options_;
  std::vector<TensorDesc> input_descs_;
  std::unordered_map<std::string, size_t> input_index_;      // kernel input name -> index
  std::unordered_map<std::string, Tensor> values_;           // live tensors by name
  std::set<std::string> defined_;                            // every name defined so far
  std::unordered_map<std::string, size_t> last_use_;         // name -> last reading op
  std::unordered_map<std::string, Tensor> pending_writes_;   // ref name -> contents at the end
};

}  // namespace

std::vector<Tensor> kernel_inputs_signature(const nlohmann::json &kernel) {
  std::vector<Tensor> signature;
  for (const TensorDesc &d : kernel_input_descs(kernel)) signature.push_back(Tensor{d.shape, d.dtype, {}});
  return signature;
}

Result evaluate(const nlohmann::json &kernel, const std::vector<Tensor> &inputs, const EvalOptions &options) {
  try {
    return Evaluation(kernel, options).run(inputs);
  } catch (const Error &) {
    throw;
  } catch (const std::bad_alloc &) {
    throw;
  } catch (const std::exception &e) {
    // Anything else (a malformed attr read by nlohmann, an unknown dtype) still becomes an Error.
    throw Error(std::string("cannot evaluate kernel: ") + e.what());
  }
}

Result evaluate_with_float16_ties_flipped(const nlohmann::json &kernel, const std::vector<Tensor> &inputs,
                                          const EvalOptions &options) {
  Float16TiesFlipped flipped;
  return evaluate(kernel, inputs, options);
}

Float16Rounding float16_rounding_of(const nlohmann::json &kernel) {
  constexpr const char *kKey = "float16_intermediates";
  if (!kernel.is_object() || !kernel.contains(kKey)) return Float16Rounding::PerOp;
  const nlohmann::json &value = kernel[kKey];
  if (value == "float16") return Float16Rounding::PerOp;
  if (value == "float32") return Float16Rounding::AtStores;
  throw Error(std::string(kKey) + " must be \"float16\" or \"float32\", got " + value.dump());
}

}  // namespace akg::reference
