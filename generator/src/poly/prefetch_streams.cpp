#include "poly/prefetch_streams.h"

#include "poly/schedule_transforms.h"

namespace akg {

namespace {

int64_t bytes_of(const BufferInfo &b) { return element_count(b.shape) * dtype_bytes(b.dtype); }

bool written(const PolyModel &m, const BufferInfo &b) {
    isl_union_map *writes = accesses_to_buffer(m.writes.get(), b);
    bool none = isl_union_map_is_empty(writes) == isl_bool_true;
    isl_union_map_free(writes);
    return !none;
}

} // namespace

void prefetch_input_streams(PolyModel &m, const ScheduleOptions &options) {
    int64_t read = 0, write = 0;
    for (const auto &b : m.buffers) {
        if (b.kind == BufferKind::KernelInput) read += bytes_of(b);
        // Outputs, and inputs the kernel updates in place.
        if (b.kind == BufferKind::KernelOutput || (b.kind == BufferKind::KernelInput && written(m, b))) write += bytes_of(b);
    }
    if (write * kReadsPerWrite > read) return;
    std::set<std::string> by_rows;
    for (const auto &plans : m.row_prefetches)
        for (const auto &p : plans) by_rows.insert(p.buffer);
    for (auto &b : m.buffers)
        if (b.kind == BufferKind::KernelInput && bytes_of(b) >= options.prefetch_streams_from_bytes && !by_rows.count(b.name)) {
            b.prefetched_ahead = true;
            b.prefetched_in_rows = bytes_of(b) >= options.prefetch_row_streams_from_bytes;
        }
}

} // namespace akg
