// Ops that move data without computing: Reshape, ExpandDims, Transpose, BroadcastTo, Tile.
#include "ops.h"

namespace akg::reference {
namespace {

// Reshape keeps the row-major data. The attr `shape` may hold -1 and is not always present, so
// the op's output_desc shape is taken as the truth; only the element count must agree.
Tensor reshape(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  if (element_count(call.out_shape) != element_count(x.shape)) {
    call.fail("cannot reshape " + shape_to_string(x.shape) + " to " + shape_to_string(call.out_shape));
  }
  return Tensor{call.out_shape, call.out_dtype, x.data};
}

// Inserts size-1 axes. Each axis (int or list) is a position in the result, negatives counting
// from the end of the result (so -1 appends), as in numpy's expand_dims.
Tensor expand_dims(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const std::vector<int64_t> axes = call.int_list_attr("axis");
  const int64_t out_rank = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t axis : axes) {
    const int64_t a = normalize_axis(axis, out_rank);
    if (a < 0 || inserted[a]) call.fail("bad axis " + std::to_string(axis));
    inserted[a] = true;
  }
  Shape shape;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) shape.push_back(inserted[d] ? 1 : x.shape[next++]);
  return Tensor{shape, call.out_dtype, x.data};
}

// Result dim k is input dim perm[k], so stepping along result dim k steps x by its stride of
// dim perm[k].
Tensor transpose(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const std::vector<int64_t> perm = call.int_list_attr("perm");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (static_cast<int64_t>(perm.size()) != rank) call.fail("perm length differs from rank");
  std::vector<bool> seen(x.shape.size(), false);
  const Strides in_strides = row_major_strides(x.shape);
  Shape out_shape;
  Strides gather;  // stride into x for each result dim
  for (int64_t p : perm) {
    const int64_t d = normalize_axis(p, rank);
    if (d < 0 || seen[d]) call.fail("perm is not a permutation of the axes");
    seen[d] = true;
    out_shape.push_back(x.shape[d]);
    gather.push_back(in_strides[d]);
  }
  Tensor r{out_shape, call.out_dtype, std::vector<double>(x.data.size())};
  const double *px = x.data.data();
  double *pr = r.data.data();
  for_each_element<1>(out_shape, {&gather},
                      [&](int64_t i, const std::array<int64_t, 1> &o) { pr[i] = px[o[0]]; });
  return r;
}

// Copies `x` broadcast to `shape` (numpy rules: right-aligned, size-1 dims stretch).
Tensor broadcast_copy(const OpCall &call, const Tensor &x, const Shape &shape) {
  for (int64_t extent : shape) {
    if (extent < 0) call.fail("negative extent in target shape " + shape_to_string(shape));
  }
  if (!broadcastable_to(x.shape, shape)) {
    call.fail("cannot broadcast " + shape_to_string(x.shape) + " to " + shape_to_string(shape));
  }
  const Strides strides = broadcast_strides(x.shape, shape);
  Tensor r{shape, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(shape)))};
  const double *px = x.data.data();
  double *pr = r.data.data();
  for_each_element<1>(shape, {&strides}, [&](int64_t i, const std::array<int64_t, 1> &o) { pr[i] = px[o[0]]; });
  return r;
}

// Attr `shape` (the output_desc shape when absent); as in MindSpore, -1 keeps the input's extent
// of that (right-aligned) dim.
Tensor broadcast_to(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  Shape shape = call.attr("shape") != nullptr ? call.int_list_attr("shape") : call.out_shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != -1) continue;
    const size_t lead = shape.size() - x.shape.size();
    if (shape.size() < x.shape.size() || d < lead) call.fail("-1 in attr shape has no input dim to keep");
    shape[d] = x.shape[d - lead];
  }
  return broadcast_copy(call, x, shape);
}

// numpy.tile: result dim d is x dim d repeated multiples[d] times (the shorter of the two lists
// is padded with leading 1s). Viewing each result dim m*s as the pair (m, s), the result is x
// broadcast from [1, s] to [m, s] per dim, which for_each_element walks directly.
Tensor tile(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  std::vector<int64_t> multiples = call.int_list_attr("multiples");
  Shape in_shape = x.shape;
  while (in_shape.size() < multiples.size()) in_shape.insert(in_shape.begin(), 1);
  while (multiples.size() < in_shape.size()) multiples.insert(multiples.begin(), 1);
  const Strides in_strides = row_major_strides(in_shape);
  Shape pair_shape;
  Strides pair_strides;
  Shape out_shape;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (multiples[d] < 0) call.fail("negative multiple");
    pair_shape.insert(pair_shape.end(), {multiples[d], in_shape[d]});
    pair_strides.insert(pair_strides.end(), {0, in_strides[d]});
    out_shape.push_back(multiples[d] * in_shape[d]);
  }
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out_shape)))};
  const double *px = x.data.data();
  double *pr = r.data.data();
  for_each_element<1>(pair_shape, {&pair_strides},
                      [&](int64_t i, const std::array<int64_t, 1> &o) { pr[i] = px[o[0]]; });
  return r;
}

}  // namespace

void add_layout_ops(OpTable *table) {
  (*table)["Reshape"] = reshape;
  (*table)["ExpandDims"] = expand_dims;
  (*table)["Transpose"] = transpose;
  (*table)["BroadcastTo"] = broadcast_to;
  (*table)["Tile"] = tile;
}

}  // namespace akg::reference
