#include "poly/stream_outputs.h"

#include "poly/schedule_transforms.h"

namespace akg {

namespace {

constexpr int64_t kCacheLineBytes = 64;
constexpr int64_t kMinStreamedBytes = int64_t{1} << 20;

// Whether `b` is an output worth streaming: float32/float16, computed elementwise and never
// read, and not small (per-channel statistics next to a large tensor cost nothing to read for
// ownership).
bool streamable(const PolyModel &m, const BufferInfo &b) {
    if (b.kind != BufferKind::KernelOutput || b.shape.empty() || (b.dtype != DType::Float32 && b.dtype != DType::Float16)) return false;
    for (const auto &st : m.statements) // written by akg_transpose (tile_transposes.h)
        if (st.stage->buffer == b.name && m.transpose_tiles.count(st.name)) return false;
    return element_count(b.shape) * dtype_bytes(b.dtype) >= kMinStreamedBytes && computed_and_never_read(m, b);
}

// Rows that start on cache-line boundaries (in a line-aligned tensor), or long rows.
bool rows_stream_by_blocks(const BufferInfo &b) {
    int64_t row_bytes = b.shape.back() * dtype_bytes(b.dtype);
    return row_bytes % kCacheLineBytes == 0 || row_bytes >= kLongStreamedRowBytes;
}

// The bytes of all the kernel's input and output tensors: what one run moves at least.
int64_t kernel_footprint_bytes(const PolyModel &m) {
    int64_t bytes = 0;
    for (const auto &b : m.buffers)
        if (b.kind == BufferKind::KernelInput || b.kind == BufferKind::KernelOutput) bytes += element_count(b.shape) * dtype_bytes(b.dtype);
    return bytes;
}

} // namespace

void stream_large_outputs(PolyModel &m, const ScheduleOptions &options) {
    if (kernel_footprint_bytes(m) <= options.stream_outputs_above_bytes) return;
    for (auto &b : m.buffers) {
        if (!streamable(m, b)) continue;
        b.streamed = rows_stream_by_blocks(b);
        b.streamed_when_staged = !b.streamed && b.dtype == DType::Float16;
    }
}

} // namespace akg
