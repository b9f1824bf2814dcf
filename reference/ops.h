// The interface between the evaluator (which walks the graph) and the op implementations (which
// compute one op's result from its operand tensors). Internal to the reference library.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference_evaluator.h"
#include "shape.h"

namespace akg::reference {

// One op application, with its operands already resolved to tensors.
struct OpCall {
  std::string label;                               // "op #3 (ReduceSum)", for messages
  const nlohmann::json *op = nullptr;              // the op's JSON, for attrs
  std::vector<std::vector<const Tensor *>> inputs;  // one inner list per formal input
  Shape out_shape;                                 // from the op's output_desc
  std::string out_dtype;

  [[noreturn]] void fail(const std::string &message) const;
  // The single tensor of formal input `i`; fails unless there is exactly one.
  const Tensor &in(size_t i) const;
  // Fails unless the op has exactly `n` formal inputs.
  void expect_inputs(size_t n) const;
  // The attr's value, or nullptr when absent.
  const nlohmann::json *attr(const std::string &name) const;
  const nlohmann::json &required_attr(const std::string &name) const;
  // Reads an attr that must be an int or a list of ints.
  std::vector<int64_t> int_list_attr(const std::string &name) const;
  // An int attr, also written as a list of one int; `fallback` when absent.
  int64_t int_attr(const std::string &name, int64_t fallback) const;
  // A bool attr (true/false, or an int 0/1); `fallback` when absent.
  bool bool_attr(const std::string &name, bool fallback) const;
  // A string attr; `fallback` when absent.
  std::string string_attr(const std::string &name, const std::string &fallback) const;
  // Every tensor of every formal input, in order (variadic ops: Concat, AddN).
  std::vector<const Tensor *> all_inputs() const;
};

// Computes the op's result. Its shape must be the op's own idea of the output shape; the
// evaluator checks it against output_desc. Its data must already be in out_dtype's domain
// (integers integral, bool 0/1), but float values are not rounded: the evaluator rounds every
// op's result as EvalOptions says, after computing its error bound from the unrounded one.
using OpFunction = std::function<Tensor(const OpCall &)>;
using OpTable = std::map<std::string, OpFunction>;

void add_elementwise_ops(OpTable *table);  // ops_elementwise.cpp
void add_reduce_ops(OpTable *table);       // ops_reduce.cpp
void add_layout_ops(OpTable *table);       // ops_layout.cpp
void add_matmul_ops(OpTable *table);       // ops_matmul.cpp (results carry their error_bound)
void add_scan_ops(OpTable *table);         // ops_scan.cpp
void add_indexing_ops(OpTable *table);     // ops_indexing.cpp
void add_pool_ops(OpTable *table);         // ops_pool.cpp

// All ops above; nullptr for an op the reference does not implement.
const OpFunction *find_op(const std::string &name);

}  // namespace akg::reference
