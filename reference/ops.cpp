#include "ops.h"

#include "kernel_desc.h"

namespace akg::reference {

void OpCall::fail(const std::string &message) const { throw Error(label + ": " + message); }

void OpCall::expect_inputs(size_t n) const {
  if (inputs.size() != n) {
    fail("expected " + std::to_string(n) + " inputs, got " + std::to_string(inputs.size()));
  }
}

const Tensor &OpCall::in(size_t i) const {
  if (i >= inputs.size()) fail("missing input " + std::to_string(i));
  if (inputs[i].size() != 1) {
    fail("input " + std::to_string(i) + " must be one tensor, got " + std::to_string(inputs[i].size()));
  }
  return *inputs[i][0];
}

const nlohmann::json *OpCall::attr(const std::string &name) const { return find_attr(*op, name); }

const nlohmann::json &OpCall::required_attr(const std::string &name) const {
  const nlohmann::json *value = attr(name);
  if (value == nullptr) fail("missing attr '" + name + "'");
  return *value;
}

std::vector<int64_t> OpCall::int_list_attr(const std::string &name) const {
  const nlohmann::json &value = required_attr(name);
  std::vector<int64_t> list;
  auto add = [&](const nlohmann::json &v) {
    if (!v.is_number_integer()) fail("attr '" + name + "' must hold integers, got " + value.dump());
    list.push_back(v.get<int64_t>());
  };
  if (value.is_array()) {
    for (const auto &v : value) add(v);
  } else {
    add(value);
  }
  return list;
}

int64_t OpCall::int_attr(const std::string &name, int64_t fallback) const {
  if (attr(name) == nullptr) return fallback;
  const std::vector<int64_t> list = int_list_attr(name);
  if (list.size() != 1) fail("attr '" + name + "' must be one int, got " + attr(name)->dump());
  return list[0];
}

bool OpCall::bool_attr(const std::string &name, bool fallback) const {
  const nlohmann::json *value = attr(name);
  if (value == nullptr) return fallback;
  if (value->is_boolean()) return value->get<bool>();
  if (value->is_number_integer() && (*value == 0 || *value == 1)) return *value == 1;
  fail("attr '" + name + "' must be a bool, got " + value->dump());
}

std::string OpCall::string_attr(const std::string &name, const std::string &fallback) const {
  const nlohmann::json *value = attr(name);
  if (value == nullptr) return fallback;
  if (!value->is_string()) fail("attr '" + name + "' must be a string, got " + value->dump());
  return value->get<std::string>();
}

std::vector<const Tensor *> OpCall::all_inputs() const {
  std::vector<const Tensor *> all;
  for (const auto &list : inputs) all.insert(all.end(), list.begin(), list.end());
  return all;
}

const OpFunction *find_op(const std::string &name) {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(&t);
    add_reduce_ops(&t);
    add_layout_ops(&t);
    add_matmul_ops(&t);
    add_scan_ops(&t);
    add_indexing_ops(&t);
    add_pool_ops(&t);
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace akg::reference
