// MatMul and BatchMatMul as MindSpore emits them: attrs transpose_a/transpose_b (swap the last
// two dims of that operand), dst_type (the result dtype; default the inputs' dtype),
// left_format/right_format (only DefaultFormat: fractal layouts are refused), pack_b (a hint,
// ignored), and an optional third input, a bias broadcast onto the result (numpy; [N] is added to
// every row) before it is stored.
//
// The products are accumulated in double and the result is not rounded here: like every op's, a
// float16 (or float32) result is rounded by the evaluator as EvalOptions says. Each result carries an error bound
// (Tensor::error_bound): what a float32 kernel summing the K products in any order may differ
// by, documented in README.md, "Matrix products".
#include <algorithm>
#include <cmath>

#include "dtype.h"
#include "ops.h"

namespace akg::reference {
namespace {

// Higham and Mary's probabilistic bound: a float32 sum of n terms in any order is within
// lambda * sqrt(n) * u * sum|terms| of the exact sum except with probability below
// 2n exp(-lambda^2 / 2) (about n * 2.5e-14 for lambda = 8), under their model of independent
// rounding errors; for small n the deterministic n * u is smaller and is used instead.
constexpr double kLambda = 8.0;
constexpr double kUnitRoundoff = 0x1.0p-24;  // float32

double contraction_factor(int64_t k, bool bias) {
  const double n = static_cast<double>(k) + (bias ? 1.0 : 0.0) + 1.0;  // + the products' rounding
  return std::min(n, kLambda * std::sqrt(n)) * kUnitRoundoff;
}

bool bool_attr(const OpCall &call, const std::string &name) {
  const nlohmann::json *v = call.attr(name);
  if (v == nullptr) return false;
  if (!v->is_boolean()) call.fail("attr " + name + " must be a bool, got " + v->dump());
  return v->get<bool>();
}

void check_format_attr(const OpCall &call, const std::string &name) {
  const nlohmann::json *v = call.attr(name);
  if (v == nullptr || v->is_null()) return;
  if (!v->is_string()) call.fail("attr " + name + " must be a string, got " + v->dump());
  const std::string format = v->get<std::string>();
  if (format != "DefaultFormat") {
    call.fail(name + " " + format + ": fractal formats are not supported (only DefaultFormat)");
  }
}

// out[M x N] += x[M x K] * y[K x N], all row-major. Blocked so that a block of output rows stays
// in cache while the rows of y stream past it, and the inner loop (over output columns) has no
// dependence, so the compiler vectorizes it without reordering any sum: each output element is
// still the sum over k in order.
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const double *x, const double *y, double *out) {
  constexpr int64_t kRows = 16, kCols = 256;
  for (int64_t i0 = 0; i0 < m; i0 += kRows) {
    const int64_t i1 = std::min(m, i0 + kRows);
    for (int64_t j0 = 0; j0 < n; j0 += kCols) {
      const int64_t j1 = std::min(n, j0 + kCols);
      for (int64_t p = 0; p < k; ++p) {
        const double *__restrict yrow = y + p * n;
        for (int64_t i = i0; i < i1; ++i) {
          const double xv = x[i * k + p];
          if (xv == 0.0) continue;  // also skips the |A| * error terms of exact zeros
          double *__restrict orow = out + i * n;
          for (int64_t j = j0; j < j1; ++j) orow[j] += xv * yrow[j];
        }
      }
    }
  }
}

// One operand matrix as a row-major rows x cols double array, transposed from its stored
// layout when `transposed` (the stored matrix is then cols x rows).
std::vector<double> matrix(const double *src, int64_t rows, int64_t cols, bool transposed) {
  if (!transposed) return std::vector<double>(src, src + rows * cols);
  std::vector<double> m;
  m.reserve(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) m.push_back(src[c * rows + r]);
  }
  return m;
}

std::vector<double> absolute(std::vector<double> v) {
  for (double &x : v) x = std::fabs(x);
  return v;
}

Tensor matmul(const OpCall &call, bool batched) {
  if (call.inputs.size() != 2 && call.inputs.size() != 3) {
    call.fail("expected 2 inputs (3 with a bias), got " + std::to_string(call.inputs.size()));
  }
  const Tensor &a = call.in(0);
  const Tensor &b = call.in(1);
  const Tensor *bias = call.inputs.size() == 3 ? &call.in(2) : nullptr;
  for (const Tensor *t : {&a, &b}) {
    if (t->dtype != "float32" && t->dtype != "float16") {
      call.fail("inputs must be float32 or float16, got " + t->dtype);
    }
  }
  if (a.dtype != b.dtype) call.fail("inputs have different dtypes " + a.dtype + " and " + b.dtype);
  DtypeClass cls = DtypeClass::Float;
  if (bias != nullptr && (!classify_dtype(bias->dtype, &cls) || cls != DtypeClass::Float)) {
    call.fail("bias must be a float tensor, got " + bias->dtype);
  }
  check_format_attr(call, "left_format");
  check_format_attr(call, "right_format");
  const bool ta = bool_attr(call, "transpose_a");
  const bool tb = bool_attr(call, "transpose_b");
  std::string dst = a.dtype;
  if (const nlohmann::json *d = call.attr("dst_type")) {
    if (!d->is_string()) call.fail("attr dst_type must be a string, got " + d->dump());
    dst = d->get<std::string>();
    if (!classify_dtype(dst, &cls) || cls != DtypeClass::Float) call.fail("dst_type " + dst + " is not a float type");
  }

  // MatMul is rank 2; BatchMatMul rank >= 2 (MindSpore documents >= 3; a rank-2 side has no
  // batch dims) with the batch dims broadcast like numpy.
  const size_t ra = a.shape.size(), rb = b.shape.size();
  if (!batched && (ra != 2 || rb != 2)) {
    call.fail("MatMul needs rank-2 inputs, got " + shape_to_string(a.shape) + " and " + shape_to_string(b.shape));
  }
  if (batched && (ra < 2 || rb < 2)) {
    call.fail("BatchMatMul needs inputs of rank 2 or more, got " + shape_to_string(a.shape) + " and " +
              shape_to_string(b.shape));
  }
  const int64_t m = ta ? a.shape[ra - 1] : a.shape[ra - 2];
  const int64_t k = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  const int64_t kb = tb ? b.shape[rb - 1] : b.shape[rb - 2];
  const int64_t n = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  if (k != kb) {
    call.fail("contracted dims differ: " + shape_to_string(a.shape) + (ta ? " (transposed)" : "") + " times " +
              shape_to_string(b.shape) + (tb ? " (transposed)" : "") + " gives K = " + std::to_string(k) +
              " and " + std::to_string(kb));
  }
  const Shape batch_a(a.shape.begin(), a.shape.end() - 2), batch_b(b.shape.begin(), b.shape.end() - 2);
  Shape batch;
  if (!broadcast_shapes(batch_a, batch_b, &batch)) {
    call.fail("batch dims " + shape_to_string(batch_a) + " and " + shape_to_string(batch_b) + " do not broadcast");
  }
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  if (bias != nullptr && !broadcastable_to(bias->shape, out_shape)) {
    call.fail("bias " + shape_to_string(bias->shape) + " does not broadcast to the result " + shape_to_string(out_shape));
  }

  const size_t count = static_cast<size_t>(element_count(out_shape));
  Tensor r{out_shape, dst, std::vector<double>(count, 0.0)};
  std::vector<double> magnitude(count, 0.0);  // sum_k |a_k * b_k| (+ |bias|)
  const bool inputs_bounded = !a.error_bound.empty() || !b.error_bound.empty();
  std::vector<double> propagated(inputs_bounded ? count : 0, 0.0);  // from the operands' bounds

  // Matrix offsets (in matrices) of each batch element in a and b.
  Strides sa = broadcast_strides(batch_a, batch);
  Strides sb = broadcast_strides(batch_b, batch);
  const int64_t size_a = m * k, size_b = k * n, size_out = m * n;
  for_each_element<2>(batch, {&sa, &sb}, [&](int64_t index, const std::array<int64_t, 2> &o) {
    const std::vector<double> x = matrix(a.data.data() + o[0] * size_a, m, k, ta);
    const std::vector<double> y = matrix(b.data.data() + o[1] * size_b, k, n, tb);
    const std::vector<double> ax = absolute(x), ay = absolute(y);
    gemm_accumulate(m, n, k, x.data(), y.data(), r.data.data() + index * size_out);
    gemm_accumulate(m, n, k, ax.data(), ay.data(), magnitude.data() + index * size_out);
    if (inputs_bounded) {
      // |x'y' - xy| <= |x| e_y + e_x (|y| + e_y) elementwise, for |x' - x| <= e_x, |y' - y| <= e_y.
      const std::vector<double> zeros_a(static_cast<size_t>(size_a), 0.0), zeros_b(static_cast<size_t>(size_b), 0.0);
      const std::vector<double> ex = a.error_bound.empty() ? zeros_a : matrix(a.error_bound.data() + o[0] * size_a, m, k, ta);
      std::vector<double> ey = b.error_bound.empty() ? zeros_b : matrix(b.error_bound.data() + o[1] * size_b, k, n, tb);
      double *e = propagated.data() + index * size_out;
      gemm_accumulate(m, n, k, ax.data(), ey.data(), e);
      for (size_t i = 0; i < ey.size(); ++i) ey[i] += ay[i];
      gemm_accumulate(m, n, k, ex.data(), ey.data(), e);
    }
  });

  if (bias != nullptr) {
    const Strides s = broadcast_strides(bias->shape, out_shape);
    const double *pb = bias->data.data();
    const std::vector<double> *bias_bound = bias->error_bound.empty() ? nullptr : &bias->error_bound;
    if (bias_bound != nullptr && propagated.empty()) propagated.assign(count, 0.0);
    for_each_element<1>(out_shape, {&s}, [&](int64_t i, const std::array<int64_t, 1> &o) {
      r.data[i] += pb[o[0]];
      magnitude[i] += std::fabs(pb[o[0]]);
      if (bias_bound != nullptr) propagated[i] += (*bias_bound)[o[0]];
    });
  }
  const double factor = contraction_factor(k, bias != nullptr);
  r.error_bound.resize(count);
  for (size_t i = 0; i < count; ++i) {
    r.error_bound[i] = factor * magnitude[i] + (propagated.empty() ? 0.0 : propagated[i]);
  }
  return r;
}

}  // namespace

void add_matmul_ops(OpTable *table) {
  (*table)["MatMul"] = [](const OpCall &call) { return matmul(call, false); };
  (*table)["BatchMatMul"] = [](const OpCall &call) { return matmul(call, true); };
}

}  // namespace akg::reference
