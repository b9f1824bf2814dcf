// ReduceSum / ReduceMax / ReduceMin / ReduceProd. Accumulation is in double (the generated code
// accumulates in float32; the difference is what the tolerance is for). Attr `axis` is an int or
// a list, negatives count from the end, and [] or a missing attr means every axis; `keep_dims`
// keeps the reduced axes as size 1. Argmax / Argmin (docs/OPS.md): the index of the first
// maximum (minimum) along one axis, which is removed; a NaN beats every number.
#include <cmath>
#include <limits>

#include "dtype.h"
#include "ops.h"

namespace akg::reference {
namespace {

enum class ReduceKind { Sum, Max, Min, Prod };

double initial_value(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return 0.0;
    case ReduceKind::Prod: return 1.0;
    case ReduceKind::Max: return -std::numeric_limits<double>::infinity();
    case ReduceKind::Min: return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

// Once the accumulator is NaN it stays NaN: NaN compares false both ways, and the explicit test
// lets a NaN operand in.
double accumulate(ReduceKind kind, double acc, double v) {
  switch (kind) {
    case ReduceKind::Sum: return acc + v;
    case ReduceKind::Prod: return acc * v;
    case ReduceKind::Max: return (std::isnan(v) || v > acc) ? v : acc;
    case ReduceKind::Min: return (std::isnan(v) || v < acc) ? v : acc;
  }
  return acc;
}

Tensor reduce(const OpCall &call, ReduceKind kind) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());

  // Which axes are reduced.
  std::vector<bool> reduced(x.shape.size(), false);
  std::vector<int64_t> axes;
  if (call.attr("axis") != nullptr) axes = call.int_list_attr("axis");
  if (axes.empty()) {
    reduced.assign(x.shape.size(), true);
  } else {
    for (int64_t axis : axes) {
      const int64_t a = normalize_axis(axis, rank);
      if (a < 0) call.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
      reduced[a] = true;
    }
  }
  bool keep_dims = false;
  if (const nlohmann::json *k = call.attr("keep_dims")) {
    if (!k->is_boolean()) call.fail("attr keep_dims must be a bool");
    keep_dims = k->get<bool>();
  }

  // Result shape, and strides that map every input element onto its result element: the
  // result's row-major strides on kept axes, 0 on reduced ones.
  Shape kept_shape;  // the result with reduced axes as size 1
  for (size_t d = 0; d < x.shape.size(); ++d) kept_shape.push_back(reduced[d] ? 1 : x.shape[d]);
  const Strides kept_strides = row_major_strides(kept_shape);
  Strides to_result(x.shape.size(), 0);
  Shape out_shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (!reduced[d]) to_result[d] = kept_strides[d];
    if (!reduced[d] || keep_dims) out_shape.push_back(kept_shape[d]);
  }

  Tensor r{out_shape, call.out_dtype,
           std::vector<double>(static_cast<size_t>(element_count(kept_shape)), initial_value(kind))};
  const double *px = x.data.data();
  double *pr = r.data.data();
  for_each_element<1>(x.shape, {&to_result}, [&](int64_t i, const std::array<int64_t, 1> &o) {
    pr[o[0]] = accumulate(kind, pr[o[0]], px[i]);
  });
  const DtypeInfo info(call.out_dtype);
  if (info.cls() == DtypeClass::Integer && (kind == ReduceKind::Sum || kind == ReduceKind::Prod)) {
    // Integer sums wrap around like integer Add (the double sum is exact below 2^53).
    for (double &v : r.data) v = info.wrap(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else if (info.cls() != DtypeClass::Float) {
    for (double &v : r.data) v = info.convert(v);
  }
  return r;
}

// The index along `axis` of the first extreme element; NaN counts as more extreme than any
// number, so the first NaN wins (numpy).
Tensor arg_extreme(const OpCall &call, bool max) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  if (!is_integer_dtype(call.out_dtype)) call.fail("output dtype must be an integer, got " + call.out_dtype);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis_attr = call.int_attr("axis", -1);
  const int64_t axis = normalize_axis(axis_attr, rank);
  if (axis < 0) call.fail("axis " + std::to_string(axis_attr) + " out of range for rank " + std::to_string(rank));
  int64_t outer = 1, inner = 1;
  Shape out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x.shape[d];
    if (d > axis) inner *= x.shape[d];
    if (d != axis) out_shape.push_back(x.shape[d]);
  }
  const int64_t n = x.shape[axis];
  if (n == 0 && outer * inner > 0) call.fail("the reduced axis is empty");
  const DtypeInfo info(call.out_dtype);
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(outer * inner))};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double *p = x.data.data() + o * n * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < n && !std::isnan(p[best * inner]); ++j) {
        const double v = p[j * inner], b = p[best * inner];
        if (std::isnan(v) || (max ? v > b : v < b)) best = j;
      }
      r.data[o * inner + i] = info.convert(static_cast<double>(best));
    }
  }
  return r;
}

}  // namespace

void add_reduce_ops(OpTable *table) {
  (*table)["ReduceSum"] = [](const OpCall &call) { return reduce(call, ReduceKind::Sum); };
  (*table)["ReduceMax"] = [](const OpCall &call) { return reduce(call, ReduceKind::Max); };
  (*table)["ReduceMin"] = [](const OpCall &call) { return reduce(call, ReduceKind::Min); };
  (*table)["ReduceProd"] = [](const OpCall &call) { return reduce(call, ReduceKind::Prod); };
  (*table)["Argmax"] = [](const OpCall &call) { return arg_extreme(call, true); };
  (*table)["Argmin"] = [](const OpCall &call) { return arg_extreme(call, false); };
}

}  // namespace akg::reference
