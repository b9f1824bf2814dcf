#include "kernel_desc.h"

#include <cmath>

#include "dtype.h"

namespace akg::reference {
namespace {

double scalar_value(const nlohmann::json &v, const std::string &where) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  throw Error(where + ": constant value must be a number or a bool, got " + v.dump());
}

}  // namespace

TensorDesc parse_tensor_desc(const nlohmann::json &desc, const std::string &where) {
  if (!desc.is_object()) throw Error(where + ": tensor desc is not an object");
  TensorDesc t;
  try {
    t.name = desc.at("tensor_name").get<std::string>();
    t.shape = desc.at("shape").get<Shape>();
    t.dtype = desc.at("data_type").get<std::string>();
    if (desc.contains("format") && desc["format"].is_string()) t.format = desc["format"].get<std::string>();
  } catch (const nlohmann::json::exception &e) {
    throw Error(where + ": malformed tensor desc (" + e.what() + ")");
  }
  for (int64_t extent : t.shape) {
    if (extent < 0) throw Error(where + ": tensor '" + t.name + "' has a negative dimension");
  }
  DtypeClass cls;
  if (!classify_dtype(t.dtype, &cls)) throw Error(where + ": unsupported data_type '" + t.dtype + "'");
  // Fractal layouts reorder the data in blocks; their meaning is not the row-major one the
  // reference implements.
  if (t.format.rfind("FRACTAL", 0) == 0) {
    throw Error(where + ": unsupported layout " + t.format + " of tensor '" + t.name + "'");
  }
  if (desc.contains("value")) t.value = &desc["value"];
  return t;
}

Tensor constant_tensor(const TensorDesc &desc, const std::string &where) {
  Tensor t{desc.shape, desc.dtype, {}};
  const nlohmann::json &v = *desc.value;
  if (v.is_array()) {
    for (const auto &e : v) t.data.push_back(scalar_value(e, where));
  } else {
    t.data.push_back(scalar_value(v, where));
  }
  if (static_cast<int64_t>(t.data.size()) != element_count(t.shape)) {
    throw Error(where + ": constant '" + desc.name + "' has " + std::to_string(t.data.size()) +
                " values but shape " + shape_to_string(t.shape));
  }
  // A constant holds a value of its dtype: float16 ones round (convert_to_dtype), and so do
  // float32 ones (0.1 is the float32 0.100000001490116), although computed float32 values are
  // kept in double.
  for (double &x : t.data) {
    x = convert_to_dtype(x, t.dtype);
    if (t.dtype == "float32" && std::isfinite(x)) x = static_cast<double>(static_cast<float>(x));
  }
  return t;
}

std::vector<TensorDesc> kernel_input_descs(const nlohmann::json &kernel) {
  std::vector<TensorDesc> inputs;
  if (!kernel.is_object()) throw Error("kernel JSON is not an object");
  if (!kernel.contains("input_desc") || kernel["input_desc"].is_null()) return inputs;
  const auto &lists = kernel["input_desc"];
  if (!lists.is_array()) throw Error("kernel input_desc is not a list");
  for (const auto &list : lists) {
    if (!list.is_array()) throw Error("kernel input_desc entry is not a list");
    for (const auto &desc : list) {
      TensorDesc t = parse_tensor_desc(desc, "kernel input " + std::to_string(inputs.size()));
      if (t.value == nullptr) inputs.push_back(t);
    }
  }
  return inputs;
}

std::vector<std::vector<TensorDesc>> op_input_descs(const nlohmann::json &op, const std::string &where) {
  std::vector<std::vector<TensorDesc>> lists;
  if (!op.contains("input_desc") || op["input_desc"].is_null()) return lists;
  if (!op["input_desc"].is_array()) throw Error(where + ": input_desc is not a list");
  for (const auto &list : op["input_desc"]) {
    if (!list.is_array()) throw Error(where + ": input_desc entry is not a list");
    std::vector<TensorDesc> inner;
    for (const auto &desc : list) {
      inner.push_back(parse_tensor_desc(desc, where + " input " + std::to_string(lists.size())));
    }
    lists.push_back(std::move(inner));
  }
  return lists;
}

const nlohmann::json *find_attr(const nlohmann::json &op, const std::string &name) {
  if (!op.contains("attr") || !op["attr"].is_array()) return nullptr;
  for (const auto &a : op["attr"]) {
    if (a.is_object() && a.contains("name") && a["name"] == name && a.contains("value")) return &a["value"];
  }
  return nullptr;
}

std::string op_label(size_t index, const nlohmann::json &op) {
  std::string name = "?";
  if (op.is_object() && op.contains("name") && op["name"].is_string()) name = op["name"].get<std::string>();
  return "op #" + std::to_string(index) + " (" + name + ")";
}

}  // namespace akg::reference
