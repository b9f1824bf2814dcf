// Shape arithmetic and the one strided loop that every data-moving op is built on.
// Internal to the reference library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace akg::reference {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

int64_t element_count(const Shape &shape);
std::string shape_to_string(const Shape &shape);

// Shapes that describe the same data. Besides equality, every one-element shape ([], [1],
// [1, 1]) is accepted as the same scalar: MindSpore writes a scalar as [] in one place and [1]
// in another (the LambUpdateWithLR kernels of AKG's CI do this).
bool same_shape(const Shape &a, const Shape &b);

Strides row_major_strides(const Shape &shape);

// numpy broadcasting of two shapes (right-aligned, size-1 dims stretch). Returns false when they
// are incompatible.
bool broadcast_shapes(const Shape &a, const Shape &b, Shape *result);

// Strides that read a tensor of shape `from` as if it had been broadcast to `to` (right-aligned;
// stretched and missing dims get stride 0). `from` must be broadcastable to `to`.
Strides broadcast_strides(const Shape &from, const Shape &to);
bool broadcastable_to(const Shape &from, const Shape &to);

// Normalizes a possibly negative axis of a rank-`rank` tensor; returns -1 when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);

// Calls f(linear, offsets) for every element of `shape` in row-major order, where `linear` is the
// element's row-major index and offsets[k] = sum over dims d of index[d] * strides[k][d].
// The innermost dimension is a plain loop, so the per-element cost is a few additions.
template <size_t K, class F>
void for_each_element(const Shape &shape, const std::array<const Strides *, K> &strides, F &&f) {
  const size_t rank = shape.size();
  for (int64_t extent : shape) {
    if (extent == 0) return;
  }
  std::array<int64_t, K> offsets{};
  if (rank == 0) {
    f(int64_t{0}, offsets);
    return;
  }
  std::array<int64_t, K> inner_stride{};
  for (size_t k = 0; k < K; ++k) inner_stride[k] = (*strides[k])[rank - 1];
  const int64_t inner_extent = shape[rank - 1];

  std::vector<int64_t> index(rank, 0);  // odometer over the outer rank-1 dims
  std::array<int64_t, K> base{};
  int64_t linear = 0;
  for (;;) {
    offsets = base;
    for (int64_t i = 0; i < inner_extent; ++i) {
      f(linear++, offsets);
      for (size_t k = 0; k < K; ++k) offsets[k] += inner_stride[k];
    }
    // Advance the odometer; a dim that wraps rewinds its contribution to every offset.
    size_t d = rank - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      ++index[d];
      for (size_t k = 0; k < K; ++k) base[k] += (*strides[k])[d];
      if (index[d] < shape[d]) break;
      for (size_t k = 0; k < K; ++k) base[k] -= (*strides[k])[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace akg::reference
