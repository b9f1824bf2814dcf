// Small helpers to write composite JSON kernels in tests without spelling out every field.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference_evaluator.h"

namespace akg::reference::build {

using nlohmann::json;
using Attrs = std::vector<std::pair<std::string, json>>;

// A tensor desc.
inline json desc(const std::string &name, std::vector<int64_t> shape, const std::string &dtype = "float32") {
  return json{{"tensor_name", name}, {"shape", shape}, {"data_type", dtype}, {"format", "DefaultFormat"}};
}

// An inline scalar constant desc.
inline json constant(json value, const std::string &dtype = "float32", std::vector<int64_t> shape = {1}) {
  json d = desc("const", std::move(shape), dtype);
  d["value"] = std::move(value);
  return d;
}

// An op; each entry of `inputs` is one formal input (a desc, or a json array of descs).
inline json op(const std::string &name, const std::vector<json> &inputs, const json &output, const Attrs &attrs = {}) {
  json o{{"name", name}, {"input_desc", json::array()}, {"output_desc", json::array({output})}};
  for (const json &in : inputs) o["input_desc"].push_back(in.is_array() ? in : json::array({in}));
  if (attrs.empty()) {
    o["attr"] = nullptr;
  } else {
    o["attr"] = json::array();
    for (const auto &[key, value] : attrs) o["attr"].push_back(json{{"name", key}, {"value", value}});
  }
  return o;
}

inline json kernel(const std::vector<json> &inputs, const std::vector<json> &ops, const std::vector<json> &outputs) {
  json k{{"op", "test_kernel"}, {"composite", true}, {"process", "cuda"}};
  if (inputs.empty()) {
    k["input_desc"] = nullptr;
  } else {
    k["input_desc"] = json::array();
    for (const json &in : inputs) k["input_desc"].push_back(json::array({in}));
  }
  k["op_desc"] = ops;
  k["output_desc"] = outputs;
  return k;
}

inline Tensor tensor(std::vector<int64_t> shape, std::vector<double> data, const std::string &dtype = "float32") {
  return Tensor{std::move(shape), dtype, std::move(data)};
}

// Evaluates a single op applied to kernel inputs in0, in1, ... and returns its one output.
inline Tensor run_op(const std::string &name, const std::vector<Tensor> &inputs, std::vector<int64_t> out_shape,
                     const std::string &out_dtype = "float32", const Attrs &attrs = {}) {
  std::vector<json> in_descs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_descs.push_back(desc("in" + std::to_string(i), inputs[i].shape, inputs[i].dtype));
  }
  const json out = desc("out", std::move(out_shape), out_dtype);
  const json k = kernel(in_descs, {op(name, in_descs, out, attrs)}, {out});
  return evaluate(k, inputs).outputs.at(0);
}

}  // namespace akg::reference::build
