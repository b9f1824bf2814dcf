#pragma once
#include "poly/poly_model.h"

namespace akg {

// Column reductions (BatchNorm statistics over NHWC, bias gradients, LayerNorm's dgamma/dbeta):
// isl's scheduler makes the column the outer, parallel loop and walks each column down the
// rows, a stride of a whole row per access. When the reads under a one-dimensional parallel
// loop touch one column per iteration (isl's fixed box hull of the footprint is one element
// wide in the last dimension), this pass tiles that loop by a few vectors and sinks the point
// loop below every inner loop: each iteration then owns a block of adjacent columns, walks the
// rows, and updates the block's accumulators with contiguous vector loads. Legal because the
// point loop is coincident (parallel): moving a parallel loop inwards keeps every dependence.
void sink_column_loops(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
