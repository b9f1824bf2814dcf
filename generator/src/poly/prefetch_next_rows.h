#pragma once
#include "poly/poly_model.h"

namespace akg {

// Under a parallel mark over one loop, every kernel input whose reads in one iteration form a
// single run of the tensor of 64 KiB or more, at an offset that moves with the iteration (a
// vocabulary row of a log-softmax, not the bias row every iteration shares), gets a RowPrefetch:
// the emitter's second lane reduction over that run prefetches the next iteration's run into
// L2, a share per block. The mark gets body plans (mark::Parallel::body_plans, shared with
// stage-float16).
//
// Measured on MindSpore's log-softmax over rows of 21128 floats (mlm_bias_log_softmax_f32):
// 2.91 -> 2.42 ms at 1 thread, 1.50 -> 1.21 ms at 2: its max pass read the row from memory at
// 18 GB/s, then two passes over the row in L2 left the memory idle.
void prefetch_next_rows(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
