#pragma once
#include "poly/poly_model.h"

namespace akg {

// Copies that move a tensor's innermost dimension (NHWC -> NCHW weights and activations, a
// head transpose of the last two dimensions) read their source in contiguous vectors but store
// every element on its own: about one element per cycle, 6-15 GB/s on the corpus's largest.
// A leaf band at the top of the schedule whose statements all copy a kernel input into a
// kernel output (PolyModel::copy_source) in the same way, with the innermost dimension of the
// output (the tile's rows r) and that of the source (its columns c) two different members of
// unit stride, is reordered so that those two members come last, then tiled: the tile loops
// (the other members, then tiles of rows and of columns) stay one coincident band that
// parallelize runs in parallel, and the two point loops go below a mark::TransposeTile. The
// emitter runs each tile as one call of akg_transpose per statement, which transposes blocks of
// 8 x 8 elements in registers; PolyModel::transpose_tiles records the strides. Tiles hold
// kTransposeTileBytes of each side: the source's rows stay in L1 while their columns go out.
// Fewer than 8 rows (one block) or 16 columns are left alone (see kMinColumns).
// A statement that computes with such a source (a bias added on the way), its other inputs
// read along the rows or not at all, is tiled the same way with its tile's source transposed
// into a local array first (TransposeTile::staged): the point loops go below a
// mark::TransposeTile{staged}, the columns outside and the rows inside as the vector loop
// (a mark::Simd), so that the output and the array are walked contiguously.
void tile_transposes(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
