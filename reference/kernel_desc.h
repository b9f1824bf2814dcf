// Reading the pieces of a composite JSON kernel: tensor descs, attrs, the kernel inputs.
// Internal to the reference library.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference_evaluator.h"
#include "shape.h"

namespace akg::reference {

struct TensorDesc {
  std::string name;    // tensor_name: the SSA name linking producer and consumers
  Shape shape;
  std::string dtype;   // data_type
  std::string format;  // "" when absent
  const nlohmann::json *value = nullptr;  // the inline constant, when the desc has "value"
};

// `where` names the place for error messages ("op #3 (Add) input 1").
TensorDesc parse_tensor_desc(const nlohmann::json &desc, const std::string &where);

// The inline constant of a desc with "value": a number, a bool, or a list of them.
Tensor constant_tensor(const TensorDesc &desc, const std::string &where);

// Flattened top-level input_desc (null means none), without inline constants.
std::vector<TensorDesc> kernel_input_descs(const nlohmann::json &kernel);

// The op's list of inner input lists (op "input_desc"; null means none).
std::vector<std::vector<TensorDesc>> op_input_descs(const nlohmann::json &op, const std::string &where);

// The "value" of the op's attr called `name`, or nullptr (attr may be null or missing).
const nlohmann::json *find_attr(const nlohmann::json &op, const std::string &name);

// "op #<index> (<name>)", the prefix of every message about an op.
std::string op_label(size_t index, const nlohmann::json &op);

}  // namespace akg::reference
