#pragma once
#include "poly/poly_model.h"

namespace akg {

// Float16 tensors are stored as uint16_t and every use converts them to float. GCC vectorizes
// no _Float16 conversion, so in a loop those conversions are integer code that costs more than
// the loop's memory traffic, and a row read by three loops (LayerNorm) is converted three times.
// This pass gives each parallel loop iteration a float copy of the box of every float16 kernel
// input it reads (converted once, with vcvtph2ps), and a float array for every float16 output
// it writes completely and nobody reads (converted once at the end, with vcvtps2ph), unless
// stream-outputs streams it (then converted per vector loop). The box is isl's fixed box hull
// of the accesses per iteration; outputs are staged only when their writes cover that box
// within the tensor exactly, so the copy-out writes nothing the kernel did not.
// Each parallel mark that gets stagings gets body plans (mark::Parallel::body_plans), the index
// of its stagings in model.float16_stagings.
void stage_float16_buffers(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
