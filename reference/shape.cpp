#include "shape.h"

#include <algorithm>

namespace akg::reference {

int64_t element_count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

std::string shape_to_string(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool same_shape(const Shape &a, const Shape &b) {
  if (a == b) return true;
  auto all_ones = [](const Shape &s) {
    return std::all_of(s.begin(), s.end(), [](int64_t e) { return e == 1; });
  };
  return all_ones(a) && all_ones(b);
}

Strides row_major_strides(const Shape &shape) {
  Strides strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

bool broadcast_shapes(const Shape &a, const Shape &b, Shape *result) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {  // i counts from the right
    const int64_t ea = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t eb = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t e;
    if (ea == eb || eb == 1) {
      e = ea;
    } else if (ea == 1) {
      e = eb;
    } else {
      return false;
    }
    out[rank - 1 - i] = e;
  }
  *result = out;
  return true;
}

bool broadcastable_to(const Shape &from, const Shape &to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  }
  return true;
}

Strides broadcast_strides(const Shape &from, const Shape &to) {
  const Strides own = row_major_strides(from);
  const size_t lead = to.size() - from.size();
  Strides strides(to.size(), 0);
  for (size_t d = 0; d < from.size(); ++d) {
    strides[lead + d] = from[d] == 1 ? 0 : own[d];
  }
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  return (a < 0 || a >= rank) ? -1 : a;
}

}  // namespace akg::reference
