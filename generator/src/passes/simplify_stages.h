#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// Runs Halide's simplifier over every materialized stage, with the bounds of its loop indices,
// so that index maps cancel: a reshape [2048,768]→[16,128,12,64] followed by a read at
// (i0*98304 + i1*768 + i2*64 + i3) / 768 % 2048 becomes i0*128 + i1 (reshape elimination).
// A cast of a select between constants becomes a select between the cast constants.
void simplify_stages(TensorGraph &graph);

} // namespace akg
