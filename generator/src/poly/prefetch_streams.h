#pragma once
#include "poly/poly_model.h"

namespace akg {

// Chooses the kernel inputs whose streams the emitter prefetches in software. A kernel that
// mostly reads (it writes at most a kReadsPerWrite-th of the bytes it reads: BatchNorm's
// statistics, a gradient's norm) runs its lane reductions through long read-only streams, and on
// the dev VM the hardware prefetchers keep one such stream at 19 GB/s per core, well below what
// the memory delivers. Each input of ScheduleOptions::prefetch_streams_from_bytes or more (one
// that does not stay in the last-level cache from one run to the next) not already prefetched by
// prefetch-rows is marked BufferInfo::prefetched_ahead. The emitter's first lane reduction of a
// parallel body that reads such an input contiguously then prefetches, in each block, the bytes
// AKG_STREAM_PREFETCH_AHEAD (16 KiB) further on (akg_prefetch_ahead); a later pass over the same
// data finds it cached and prefetches nothing.
//
// Such an input of ScheduleOptions::prefetch_row_streams_from_bytes or more (larger than the
// last-level cache) is also marked BufferInfo::prefetched_in_rows: column sums that walk it in
// whole rows, one after the other (the NHWC BatchNorm statistics), prefetch in each row the
// bytes AKG_STREAM_PREFETCH_AHEAD beyond it. `bn_train_stats_nhwc_f16` (51 MB): 1.44 -> 0.91 ms
// at 1 thread, 0.75 -> 0.52-0.58 ms at 2 (harness). A 16 MB input (a corpus ReduceSum over rows
// of 256 floats) stays in the cache between runs there and ran 8% slower prefetched.
//
// Measured on bn_train_stats_f16 (sum and sum of squares of 32x256x56x56 halves), harness
// minimum of runs: 1.32 -> 0.83 ms at 1 thread, 0.69 -> 0.53 ms at 2. Not chosen for kernels that
// also write as much as they read: the ReLU-gradient + BatchNorm-gradient reductions (three
// inputs, one output of the same size) ran 1.1x faster at 1 thread but 1.05x slower at 2, and
// add + ReLU no faster.
void prefetch_input_streams(PolyModel &model, const ScheduleOptions &options);

constexpr int64_t kReadsPerWrite = 8;

} // namespace akg
