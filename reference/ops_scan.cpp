// CumSum / CumProd (docs/OPS.md): running sums (products) along one axis, attrs `axis` (int or
// [int], default 0), `exclusive` and `reverse` (bools, default false). Floats accumulate in
// double and each result is rounded once by the evaluator (float16 per op); integers use exact
// 64-bit arithmetic wrapped to the dtype's width, like integer Add and Mul.
#include <cstdint>

#include "dtype.h"
#include "ops.h"

namespace akg::reference {
namespace {

Tensor scan(const OpCall &call, bool product) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis_attr = call.int_attr("axis", 0);
  // A scalar has one element along its only (implicit) axis.
  const int64_t axis = rank == 0 && (axis_attr == 0 || axis_attr == -1) ? 0 : normalize_axis(axis_attr, rank);
  if (axis < 0) call.fail("axis " + std::to_string(axis_attr) + " out of range for rank " + std::to_string(rank));
  const bool exclusive = call.bool_attr("exclusive", false);
  const bool reverse = call.bool_attr("reverse", false);

  int64_t outer = 1, inner = 1, n = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x.shape[d];
    if (d == axis) n = x.shape[d];
    if (d > axis) inner *= x.shape[d];
  }
  const DtypeInfo info(call.out_dtype);
  const bool integer = info.cls() == DtypeClass::Integer;
  Tensor r{x.shape, call.out_dtype, std::vector<double>(x.data.size())};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double acc = product ? 1.0 : 0.0;
      uint64_t iacc = product ? 1 : 0;
      for (int64_t step = 0; step < n; ++step) {
        const int64_t j = reverse ? n - 1 - step : step;
        const double v = x.data[base + j * inner];
        const uint64_t iv = static_cast<uint64_t>(static_cast<int64_t>(integer ? v : 0.0));
        double &out = r.data[base + j * inner];
        if (exclusive) out = integer ? info.wrap(iacc) : acc;
        acc = product ? acc * v : acc + v;
        iacc = product ? iacc * iv : iacc + iv;
        if (!exclusive) out = integer ? info.wrap(iacc) : acc;
      }
    }
  }
  if (info.cls() == DtypeClass::Bool) {
    for (double &v : r.data) v = info.convert(v);
  }
  return r;
}

}  // namespace

void add_scan_ops(OpTable *table) {
  (*table)["CumSum"] = [](const OpCall &call) { return scan(call, false); };
  (*table)["CumProd"] = [](const OpCall &call) { return scan(call, true); };
}

}  // namespace akg::reference
