#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// A kernel input that the kernel only reads through a reshape keeps the reshape's index map
// after simplification when the two shapes do not cancel: a bias gradient over a
// [32, 128, 12, 64] tensor reshaped to [4096, 768] reads
//   x[r0 / 128, r0 % 128, i0 / 64, i0 % 64]
// isl then sees a quasi-affine access whose footprint has no fixed box (sink-columns does not
// recognize the column sum), and the vector loops index with divisions and remainders.
//
// This pass views such an input with the shape its reads walk. For every read of the input's
// buffer it forms the row-major offset (the sum of index times stride) and simplifies it with
// the reading stage's loop bounds; when that offset is a dense row-major walk of loop
// variables, c_1 v_1 + ... + c_m v_m with c_m = 1 and c_k = c_{k+1} * extent(v_{k+1}) (here
// 768 r0 + i0), the read is (v_1, ..., v_m) of the view [elements / c_1, extent(v_2), ...,
// extent(v_m)] ([4096, 768]). When every read of the input agrees on one view that differs
// from its shape, the input stage takes that shape and each read those indices. The memory
// layout is the same, so the kernel's declared shapes (its C ABI) do not change.
//
// Then a kernel output that only copies another buffer through a reshape, and that no stage
// reads, takes the source's shape and reads it at its own indices (copy_in_source_shape).
void view_reshaped_inputs(TensorGraph &graph);

} // namespace akg
