#pragma once
#include "poly/poly_model.h"

namespace akg {

// A float16 output streamed when staged (stream_outputs.h) is copied out with non-temporal
// stores once per parallel iteration, as one run. When the run is not a whole number of cache
// lines (a plane of 14x14 halves is 392 bytes: six lines and a piece), its partial lines get
// ordinary stores, which read the line for ownership, and a neighbouring iteration writes the
// rest of that line: streamed so, such planes ran 2x slower than with ordinary stores.
//
// Under a parallel mark whose band's members are all coincident and whose iteration writes one
// contiguous run of such an output, the next iteration of the innermost member writing the
// next run, this pass tiles the innermost member by the number of runs that make whole lines
// (64 / gcd(run bytes, 64): eight planes of 392 bytes are 49 lines) and puts the point loop
// right below the tile loop, so that an iteration writes those runs as one. The order in which
// statement instances run does not change (a strip-mine of a parallel loop), so it is always
// legal. stage-float16 then stages the whole block of the output, its copy-out streams whole
// lines; the iteration's inputs, in blocks as large, are converted per vector loop.
// Applied only where the member's extent is a multiple of the block and enough iterations
// remain for two threads. Harness, 1 thread: conv_bias_residual_relu_f16 0.86 -> 0.60 ms,
// bottleneck_end_f16 0.83 -> 0.64 ms, bn_grad_dx_f16 1.65 -> 1.25 ms.
void give_iterations_whole_lines(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
