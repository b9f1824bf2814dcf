// Data-dependent indexing (docs/OPS.md): Gather, GatherNd, TensorScatterAdd, UnsortedSegmentSum,
// and OneHot. Index tensors hold integers (as doubles, like every tensor here); an index out of
// range never reads or writes: a gather gives 0, a scatter or segment sum skips it, OneHot gives
// off_value for the whole row. Sums follow the row-major order of the index positions (in
// double, so the order only matters for integer wrap-around, which it does not change either).
#include <cmath>
#include <cstdint>

#include "dtype.h"
#include "ops.h"

namespace akg::reference {
namespace {

// Index operand `i`: an integer tensor.
const Tensor &index_input(const OpCall &call, size_t i) {
  const Tensor &t = call.in(i);
  if (!is_integer_dtype(t.dtype)) call.fail("input " + std::to_string(i) + " (indices) must be an integer tensor, got " + t.dtype);
  return t;
}

// The index value `v` if it lies in [0, n), else -1.
int64_t checked_index(double v, int64_t n) {
  if (!(v >= 0.0) || v >= static_cast<double>(n)) return -1;
  return static_cast<int64_t>(v);
}

int64_t product(const Shape &shape, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= shape[d];
  return p;
}

// Integer sums wrap to the dtype like integer Add; float sums stay in double.
void finish_sums(const OpCall &call, Tensor *t) {
  const DtypeInfo info(call.out_dtype);
  if (info.cls() == DtypeClass::Integer) {
    for (double &v : t->data) v = info.wrap(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else if (info.cls() == DtypeClass::Bool) {
    for (double &v : t->data) v = info.convert(v);
  }
}

// Gather(params, indices), attr axis (default 0): params.shape[:axis] + indices.shape +
// params.shape[axis+1:]; an index outside [0, params.shape[axis]) gives 0.
Tensor gather(const OpCall &call) {
  call.expect_inputs(2);
  const Tensor &params = call.in(0);
  const Tensor &indices = index_input(call, 1);
  const int64_t rank = static_cast<int64_t>(params.shape.size());
  const int64_t axis_attr = call.int_attr("axis", 0);
  const int64_t axis = normalize_axis(axis_attr, rank);
  if (axis < 0) call.fail("axis " + std::to_string(axis_attr) + " out of range for rank " + std::to_string(rank));
  const int64_t outer = product(params.shape, 0, axis), n = params.shape[axis];
  const int64_t inner = product(params.shape, axis + 1, params.shape.size());
  const int64_t count = static_cast<int64_t>(indices.data.size());
  Shape out_shape(params.shape.begin(), params.shape.begin() + axis);
  out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
  out_shape.insert(out_shape.end(), params.shape.begin() + axis + 1, params.shape.end());
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(outer * count * inner), 0.0)};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t idx = checked_index(indices.data[j], n);
      if (idx < 0) continue;
      const double *src = params.data.data() + (o * n + idx) * inner;
      double *dst = r.data.data() + (o * count + j) * inner;
      for (int64_t k = 0; k < inner; ++k) dst[k] = src[k];
    }
  }
  return r;
}

// The row-major offset into `shape`'s leading q dims named by the index row `row`, in units of
// the trailing block; -1 when any component is out of range.
int64_t row_offset(const double *row, int64_t q, const Shape &shape) {
  int64_t offset = 0;
  for (int64_t c = 0; c < q; ++c) {
    const int64_t idx = checked_index(row[c], shape[c]);
    if (idx < 0) return -1;
    offset = offset * shape[c] + idx;
  }
  return offset;
}

// GatherNd(params, indices): indices [..., q], q <= rank(params); out shape indices.shape[:-1] +
// params.shape[q:]; a row with a component out of range gives 0.
Tensor gather_nd(const OpCall &call) {
  call.expect_inputs(2);
  const Tensor &params = call.in(0);
  const Tensor &indices = index_input(call, 1);
  if (indices.shape.empty()) call.fail("indices must have rank >= 1");
  const int64_t q = indices.shape.back();
  if (q > static_cast<int64_t>(params.shape.size())) {
    call.fail("indices rows of " + std::to_string(q) + " components for params of rank " +
              std::to_string(params.shape.size()));
  }
  const int64_t rows = product(indices.shape, 0, indices.shape.size() - 1);
  const int64_t inner = product(params.shape, static_cast<size_t>(q), params.shape.size());
  Shape out_shape(indices.shape.begin(), indices.shape.end() - 1);
  out_shape.insert(out_shape.end(), params.shape.begin() + q, params.shape.end());
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(rows * inner), 0.0)};
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t offset = row_offset(indices.data.data() + i * q, q, params.shape);
    if (offset < 0) continue;
    for (int64_t k = 0; k < inner; ++k) r.data[i * inner + k] = params.data[offset * inner + k];
  }
  return r;
}

// Adds row i of `rows` (`inner` elements) into row targets[i] of `r`, in row order; a negative
// target drops the row. Integer sums wrap to the output dtype; float ones are finished as sums.
Tensor add_rows(const OpCall &call, Tensor r, const std::vector<int64_t> &targets, const Tensor &rows, int64_t inner) {
  const bool integer = is_integer_dtype(call.out_dtype);
  std::vector<uint64_t> isum;
  if (integer) {
    for (double v : r.data) isum.push_back(static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] < 0) continue;
    for (int64_t k = 0; k < inner; ++k) {
      const double u = rows.data[i * inner + k];
      if (integer) {
        isum[targets[i] * inner + k] += static_cast<uint64_t>(static_cast<int64_t>(u));
      } else {
        r.data[targets[i] * inner + k] += u;
      }
    }
  }
  if (integer) {
    const DtypeInfo info(call.out_dtype);
    for (size_t e = 0; e < isum.size(); ++e) r.data[e] = info.wrap(isum[e]);
  } else {
    finish_sums(call, &r);
  }
  return r;
}

// TensorScatterAdd(x, indices, updates): out = x, then out[indices[i], k] += updates[i, k] for each
// index row i in row-major order; a rank-1 indices tensor has q = 1; rows out of range are skipped.
Tensor tensor_scatter_add(const OpCall &call) {
  call.expect_inputs(3);
  const Tensor &x = call.in(0);
  const Tensor &indices = index_input(call, 1);
  const Tensor &updates = call.in(2);
  if (indices.shape.empty()) call.fail("indices must have rank >= 1");
  const bool rank1 = indices.shape.size() == 1;
  const int64_t q = rank1 ? 1 : indices.shape.back();
  if (q > static_cast<int64_t>(x.shape.size())) {
    call.fail("indices rows of " + std::to_string(q) + " components for x of rank " + std::to_string(x.shape.size()));
  }
  Shape expected(indices.shape.begin(), rank1 ? indices.shape.end() : indices.shape.end() - 1);
  expected.insert(expected.end(), x.shape.begin() + q, x.shape.end());
  if (!same_shape(updates.shape, expected)) {
    call.fail("updates shape " + shape_to_string(updates.shape) + ", expected " + shape_to_string(expected));
  }
  const int64_t rows = rank1 ? indices.shape[0] : product(indices.shape, 0, indices.shape.size() - 1);
  const int64_t inner = product(x.shape, static_cast<size_t>(q), x.shape.size());
  std::vector<int64_t> targets(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) targets[i] = row_offset(indices.data.data() + i * q, q, x.shape);
  return add_rows(call, Tensor{x.shape, call.out_dtype, x.data}, targets, updates, inner);
}

// UnsortedSegmentSum(x, segment_ids), attr num_segments: out[s, k] = sum of x[i, k] over the id
// positions i with segment_ids[i] = s; ids out of [0, num_segments) are dropped.
Tensor unsorted_segment_sum(const OpCall &call) {
  call.expect_inputs(2);
  const Tensor &x = call.in(0);
  const Tensor &ids = index_input(call, 1);
  const int64_t segments = call.int_attr("num_segments", -1);
  if (segments <= 0) call.fail("attr 'num_segments' must be a positive int");
  bool prefix = ids.shape.size() <= x.shape.size();
  for (size_t d = 0; prefix && d < ids.shape.size(); ++d) prefix = ids.shape[d] == x.shape[d];
  if (!prefix) {
    call.fail("segment_ids shape " + shape_to_string(ids.shape) + " is not a prefix of x shape " +
              shape_to_string(x.shape));
  }
  const int64_t inner = product(x.shape, ids.shape.size(), x.shape.size());
  Shape out_shape{segments};
  out_shape.insert(out_shape.end(), x.shape.begin() + ids.shape.size(), x.shape.end());
  std::vector<int64_t> targets(ids.data.size());
  for (size_t i = 0; i < ids.data.size(); ++i) targets[i] = checked_index(ids.data[i], segments);
  Tensor zeros{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(segments * inner), 0.0)};
  return add_rows(call, std::move(zeros), targets, x, inner);
}

// The value of a scalar operand (an inline constant or a one-element tensor).
double scalar_input(const OpCall &call, size_t i, const char *what) {
  const Tensor &t = call.in(i);
  if (t.data.size() != 1) call.fail(std::string(what) + " must be a scalar, got shape " + shape_to_string(t.shape));
  return t.data[0];
}

// OneHot(indices, on_value, off_value), attrs depth and axis (-1: a new last dim, else 0..rank).
Tensor one_hot(const OpCall &call) {
  call.expect_inputs(3);
  const Tensor &indices = index_input(call, 0);
  const double on = scalar_input(call, 1, "on_value"), off = scalar_input(call, 2, "off_value");
  const int64_t depth = call.int_attr("depth", -1);
  if (depth <= 0) call.fail("attr 'depth' must be a positive int");
  const int64_t rank = static_cast<int64_t>(indices.shape.size());
  const int64_t axis_attr = call.int_attr("axis", -1);
  if (axis_attr < -1 || axis_attr > rank) {
    call.fail("axis " + std::to_string(axis_attr) + " out of range (-1 or 0.." + std::to_string(rank) + ")");
  }
  const int64_t axis = axis_attr == -1 ? rank : axis_attr;
  const int64_t outer = product(indices.shape, 0, axis);
  const int64_t inner = product(indices.shape, axis, indices.shape.size());
  Shape out_shape = indices.shape;
  out_shape.insert(out_shape.begin() + axis, depth);
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(outer * depth * inner), off)};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t idx = checked_index(indices.data[o * inner + i], depth);
      if (idx >= 0) r.data[(o * depth + idx) * inner + i] = on;
    }
  }
  const DtypeInfo info(call.out_dtype);
  if (info.cls() != DtypeClass::Float) {
    for (double &v : r.data) v = info.convert(v);
  }
  return r;
}

}  // namespace

void add_indexing_ops(OpTable *table) {
  (*table)["Gather"] = gather;
  (*table)["GatherNd"] = gather_nd;
  (*table)["TensorScatterAdd"] = tensor_scatter_add;
  (*table)["UnsortedSegmentSum"] = unsorted_segment_sum;
  (*table)["OneHot"] = one_hot;
}

}  // namespace akg::reference
