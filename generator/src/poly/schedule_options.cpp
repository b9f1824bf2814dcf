#include "poly/poly_model.h"

#include <algorithm>

namespace akg {

ScheduleOptions ScheduleOptions::for_target(const Target &target) {
    ScheduleOptions o;
    o.target = &target;
    o.vector_width = target.lanes(32);
    // Strips of 64 floats on every target: the index maps of reshapes (a head dimension of 64)
    // then simplify as they do for AVX-512; strips of 32 left a `(c1 + c2) % 64` per element in
    // merge_heads_f16's vector loop.
    o.vector_unroll = std::max(1, 64 / o.vector_width);
    o.cache_line_bytes = target.cache_line_bytes;
    o.threads = target.cores;
    o.transpose_tile_bytes = target.l1d_bytes / 2;
    o.paired_row_max_bytes = target.l1d_bytes / 2;
    o.channel_block_bytes = target.l2_bytes / 2;
    o.prefetch_rows_from_bytes = 2 * target.l1d_bytes;
    // L1 holds the float copies of a task's float16 rows beside the rows they are read with.
    o.staged_bytes_per_task = target.l1d_bytes / 4;
    // Outputs are streamed past the caches once a kernel's tensors outgrow the last level, and
    // also the outputs read back where written once they take twice that.
    o.stream_outputs_above_bytes = target.llc_bytes;
    o.stream_read_back_above_bytes = 2 * target.llc_bytes;
    o.prefetch_streams_from_bytes = target.llc_bytes / 4;
    o.prefetch_row_streams_from_bytes = target.llc_bytes;
    return o;
}

} // namespace akg
