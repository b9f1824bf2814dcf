#pragma once
#include "poly/poly_model.h"

namespace akg {

// Column reductions (BatchNorm statistics over NHWC, bias gradients, LayerNorm's dgamma/dbeta):
// isl's scheduler makes the column the outer, parallel loop and walks each column down the
// rows, a stride of a whole row per access. When the reads under a parallel band (one loop, or
// several collapsed: a sum over the outer dimension of a 3-D tensor) touch one column per
// iteration (isl's fixed box hull of the footprint is one element wide in the innermost
// dimension of more than one element), this pass tiles the band's innermost loop by a few
// vectors and sinks the point loop below every inner loop: each iteration then owns a block of
// adjacent columns, walks the rows, and updates the block's accumulators with contiguous vector
// loads. Reductions over rows of 2 to 4 elements are sunk the same way (the rows are the
// vector's lanes). Legal because the point loop is coincident (parallel): moving a parallel
// loop inwards keeps every dependence.
void sink_column_loops(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
