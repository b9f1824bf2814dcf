// Ops that move data without computing: Reshape, ExpandDims, Transpose, BroadcastTo, Tile, and
// (docs/OPS.md) StridedSlice, Concat, PadAkg, UnPadAkg, EquivFormat, TransData.
#include <algorithm>
#include <set>

#include "dtype.h"
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

// Bits of a StridedSlice mask attr (an int; missing = 0).
bool mask_bit(int64_t mask, size_t k) { return k < 63 && ((mask >> k) & 1) != 0; }

// numpy/TensorFlow strided slicing (docs/OPS.md). Each slice entry k applies to one input dim,
// except an ellipsis entry (the dims no other entry names) and a new-axis entry (a new size-1
// dim); per entry, ellipsis beats new_axis beats shrink, as in TensorFlow. The result is read
// from x through one strided walk: a base offset (the begin of every dim) plus per result dim
// the step `stride * x's stride` (0 for new axes).
Tensor strided_slice(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t> begin = call.int_list_attr("begin");
  const std::vector<int64_t> end = call.int_list_attr("end");
  std::vector<int64_t> strides =
      call.attr("strides") != nullptr ? call.int_list_attr("strides") : std::vector<int64_t>(begin.size(), 1);
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    call.fail("begin, end and strides must have the same length (" + std::to_string(begin.size()) + ", " +
              std::to_string(end.size()) + ", " + std::to_string(strides.size()) + ")");
  }
  const int64_t begin_mask = call.int_attr("begin_mask", 0), end_mask = call.int_attr("end_mask", 0);
  const int64_t ellipsis_mask = call.int_attr("ellipsis_mask", 0);
  const int64_t new_axis_mask = call.int_attr("new_axis_mask", 0);
  const int64_t shrink_mask = call.int_attr("shrink_axis_mask", 0);
  const size_t entries = begin.size();

  // How many input dims the entries name, and where the (one) ellipsis is.
  int64_t named = 0;
  int64_t ellipsis = -1;
  for (size_t k = 0; k < entries; ++k) {
    if (mask_bit(ellipsis_mask, k)) {
      if (ellipsis >= 0) call.fail("more than one ellipsis in ellipsis_mask");
      ellipsis = static_cast<int64_t>(k);
    } else if (!mask_bit(new_axis_mask, k)) {
      ++named;
    }
  }
  if (named > rank) {
    call.fail(std::to_string(named) + " slice entries for a tensor of rank " + std::to_string(rank));
  }

  const Strides in_strides = row_major_strides(x.shape);
  int64_t base = 0;
  Shape out_shape;
  Strides gather;
  int64_t dim = 0;  // the next input dim
  auto whole_dim = [&]() {
    out_shape.push_back(x.shape[dim]);
    gather.push_back(in_strides[dim]);
    ++dim;
  };
  for (size_t k = 0; k < entries; ++k) {
    const std::string entry = "slice entry " + std::to_string(k);
    if (static_cast<int64_t>(k) == ellipsis) {
      const int64_t covered = rank - named;
      for (int64_t e = 0; e < covered; ++e) whole_dim();
      continue;
    }
    if (mask_bit(new_axis_mask, k)) {
      out_shape.push_back(1);
      gather.push_back(0);
      continue;
    }
    const int64_t n = x.shape[dim];
    const int64_t s = strides[k];
    if (s == 0) call.fail(entry + ": stride 0");
    if (mask_bit(shrink_mask, k)) {
      const int64_t index = begin[k] < 0 ? begin[k] + n : begin[k];
      if (index < 0 || index >= n) {
        call.fail(entry + ": shrink index " + std::to_string(begin[k]) + " out of range for a dim of size " +
                  std::to_string(n));
      }
      base += index * in_strides[dim];
      ++dim;
      continue;
    }
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
    auto bound = [&](int64_t v, bool masked, int64_t masked_value) {
      if (masked) return masked_value;
      if (v < 0) v += n;
      return std::clamp(v, lo, hi);
    };
    const int64_t b = bound(begin[k], mask_bit(begin_mask, k), s > 0 ? 0 : n - 1);
    const int64_t e = bound(end[k], mask_bit(end_mask, k), s > 0 ? n : -1);
    const int64_t length = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e - s - 1) / -s : 0);
    if (length > 0) base += b * in_strides[dim];
    out_shape.push_back(length);
    gather.push_back(s * in_strides[dim]);
    ++dim;
  }
  while (dim < rank) whole_dim();

  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out_shape)))};
  const double *px = x.data.data() + base;
  double *pr = r.data.data();
  for_each_element<1>(out_shape, {&gather}, [&](int64_t i, const std::array<int64_t, 1> &o) { pr[i] = px[o[0]]; });
  return r;
}

// Concat of every tensor of the (variadic) inputs along attr `axis` (default 0).
Tensor concat(const OpCall &call) {
  const std::vector<const Tensor *> parts = call.all_inputs();
  if (parts.empty()) call.fail("needs at least one input");
  const Shape &first = parts[0]->shape;
  const int64_t rank = static_cast<int64_t>(first.size());
  const int64_t axis_attr = call.int_attr("axis", 0);
  const int64_t axis = normalize_axis(axis_attr, rank);
  if (axis < 0) call.fail("axis " + std::to_string(axis_attr) + " out of range for rank " + std::to_string(rank));
  Shape out_shape = first;
  out_shape[axis] = 0;
  for (const Tensor *t : parts) {
    bool same = t->shape.size() == first.size();
    for (int64_t d = 0; same && d < rank; ++d) same = d == axis || t->shape[d] == first[d];
    if (!same) {
      call.fail("shapes " + shape_to_string(first) + " and " + shape_to_string(t->shape) +
                " differ outside axis " + std::to_string(axis));
    }
    if (t->dtype != parts[0]->dtype) call.fail("dtypes differ: " + parts[0]->dtype + " and " + t->dtype);
    out_shape[axis] += t->shape[axis];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= first[d];
  Tensor r{out_shape, call.out_dtype, {}};
  r.data.reserve(static_cast<size_t>(element_count(out_shape)));
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor *t : parts) {
      const int64_t chunk = t->shape[axis] * inner;
      r.data.insert(r.data.end(), t->data.begin() + o * chunk, t->data.begin() + (o + 1) * chunk);
    }
  }
  return r;
}

// One non-negative int per dim of `x`.
std::vector<int64_t> per_dim_attr(const OpCall &call, const std::string &name, const Tensor &x) {
  const std::vector<int64_t> v = call.int_list_attr(name);
  if (v.size() != x.shape.size()) {
    call.fail("attr '" + name + "' has " + std::to_string(v.size()) + " entries for a tensor of rank " +
              std::to_string(x.shape.size()));
  }
  for (int64_t e : v) {
    if (e < 0) call.fail("attr '" + name + "' must not be negative");
  }
  return v;
}

// PadAkg: head + shape + tail, pad_val (default 0) outside the copy of x.
Tensor pad_akg(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const std::vector<int64_t> head = per_dim_attr(call, "head", x), tail = per_dim_attr(call, "tail", x);
  double pad_value = 0.0;
  if (const nlohmann::json *p = call.attr("pad_val")) {
    if (!p->is_number()) call.fail("attr 'pad_val' must be a number, got " + p->dump());
    pad_value = p->get<double>();
  }
  const DtypeInfo info(call.out_dtype);
  if (info.cls() != DtypeClass::Float) pad_value = info.convert(pad_value);  // floats round per op
  Shape out_shape;
  for (size_t d = 0; d < x.shape.size(); ++d) out_shape.push_back(head[d] + x.shape[d] + tail[d]);
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out_shape)), pad_value)};
  // Walk x and write each element to its place: the result's strides, offset by the head.
  const Strides out_strides = row_major_strides(out_shape);
  int64_t offset = 0;
  for (size_t d = 0; d < x.shape.size(); ++d) offset += head[d] * out_strides[d];
  double *pr = r.data.data() + offset;
  for_each_element<1>(x.shape, {&out_strides},
                      [&](int64_t i, const std::array<int64_t, 1> &o) { pr[o[0]] = x.data[i]; });
  return r;
}

// UnPadAkg: the leading shape - tail part of x.
Tensor unpad_akg(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  const std::vector<int64_t> tail = per_dim_attr(call, "tail", x);
  Shape out_shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (tail[d] > x.shape[d]) call.fail("tail " + std::to_string(tail[d]) + " exceeds dim " + std::to_string(d));
    out_shape.push_back(x.shape[d] - tail[d]);
  }
  const Strides in_strides = row_major_strides(x.shape);
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out_shape)))};
  double *pr = r.data.data();
  for_each_element<1>(out_shape, {&in_strides},
                      [&](int64_t i, const std::array<int64_t, 1> &o) { pr[i] = x.data[o[0]]; });
  return r;
}

// EquivFormat: a reshape to attr `shape` (one -1 is inferred), or to the output desc's shape.
Tensor equiv_format(const OpCall &call) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  Shape shape = call.out_shape;
  if (call.attr("shape") != nullptr) {
    shape = call.int_list_attr("shape");
    int64_t known = 1, unknown = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == -1 && unknown < 0) {
        unknown = static_cast<int64_t>(d);
      } else if (shape[d] < 0) {
        call.fail("bad attr shape " + shape_to_string(shape));
      } else {
        known *= shape[d];
      }
    }
    if (unknown >= 0 && known > 0) shape[unknown] = element_count(x.shape) / known;
  }
  if (element_count(shape) != element_count(x.shape)) {
    call.fail("cannot reshape " + shape_to_string(x.shape) + " to " + shape_to_string(shape));
  }
  return Tensor{shape, call.out_dtype, x.data};
}

// TransData between default formats is a copy; Ascend's fractal and 5-D formats are refused.
Tensor trans_data(const OpCall &call) {
  call.expect_inputs(1);
  static const std::set<std::string> kDefaultFormats = {"DefaultFormat", "ND", "NCHW", "NHWC"};
  for (const char *name : {"src_format", "dst_format"}) {
    const std::string format = call.string_attr(name, "DefaultFormat");
    if (kDefaultFormats.count(format) == 0) {
      call.fail(std::string(name) + " " + format +
                ": unsupported format (only DefaultFormat, ND, NCHW and NHWC, which are the same data)");
    }
  }
  const Tensor &x = call.in(0);
  return Tensor{x.shape, call.out_dtype, x.data};
}

}  // namespace

void add_layout_ops(OpTable *table) {
  (*table)["Reshape"] = reshape;
  (*table)["ExpandDims"] = expand_dims;
  (*table)["Transpose"] = transpose;
  (*table)["BroadcastTo"] = broadcast_to;
  (*table)["Tile"] = tile;
  (*table)["StridedSlice"] = strided_slice;
  (*table)["Concat"] = concat;
  (*table)["PadAkg"] = pad_akg;
  (*table)["UnPadAkg"] = unpad_akg;
  (*table)["EquivFormat"] = equiv_format;
  (*table)["TransData"] = trans_data;
}

}  // namespace akg::reference
