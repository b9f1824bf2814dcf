#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// Lowers every op of a validated kernel to a stage of the formula IR (numpy broadcasting,
// reductions over their axes, reshapes/transposes as index maps). Kernel outputs and the
// in-place writes of InplaceAssign/Assign become store stages at the end of the graph.
TensorGraph lower_to_halide(const CompositeKernel &kernel);

} // namespace akg
