#include "poly/stream_outputs.h"

#include "poly/schedule_transforms.h"

#include <algorithm>
#include <set>

namespace akg {

namespace {

// The innermost band above statement `name` (kept), or null.
isl_schedule_node *leaf_band_of(isl_schedule_node *root, const std::string &name) {
    struct Ctx {
        std::string name;
        isl_schedule_node *found = nullptr;
    } ctx{name, nullptr};
    isl_schedule_node_foreach_descendant_top_down(
        root,
        [](isl_schedule_node *node, void *user) -> isl_bool {
            auto &c = *static_cast<Ctx *>(user);
            if (isl_schedule_node_get_type(node) != isl_schedule_node_band || has_band_below(node)) return isl_bool_true;
            std::set<std::string> names;
            add_statement_names(node, names);
            if (names.count(c.name) && !c.found) c.found = isl_schedule_node_copy(node);
            return isl_bool_true;
        },
        &ctx);
    return ctx.found;
}

// Whether every read of float32 buffer `b` (computed elementwise by one statement) reads the
// element that the same iteration of the innermost loops has just written: the readers lie
// below the writer's innermost band, and the loops around give each reader the iteration of
// the writer of the element it reads. The emitter then reads it from the block array being
// filled (an Adam update reads the moments it writes back): streamed from memory, it would not
// be written yet.
bool read_only_where_written(const PolyModel &m, const BufferInfo &b) {
    if (b.dtype != DType::Float32) return false;
    const PolyStatement *writer = nullptr;
    for (const auto &st : m.statements)
        if (st.stage->buffer == b.name) {
            if (writer || st.stage->kind != StageKind::Compute || st.role != StatementRole::Assign) return false;
            writer = &st;
        }
    if (!writer) return false;
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    isl_schedule_node *band = leaf_band_of(root, writer->name);
    isl_schedule_node_free(root);
    if (!band) return false;
    isl_union_map *reads = accesses_to_buffer(m.reads.get(), b), *writes = accesses_to_buffer(m.writes.get(), b);
    isl_union_set *below = isl_schedule_node_get_domain(band);
    isl_union_set *readers = isl_union_map_domain(isl_union_map_copy(reads));
    bool ok = isl_union_set_is_subset(readers, below) == isl_bool_true;
    isl_union_set_free(readers);
    if (ok) {
        isl_schedule_node *body = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
        isl_union_map *loops = isl_schedule_node_get_prefix_schedule_union_map(body); // instance -> loops around
        isl_schedule_node_free(body);
        isl_union_map *writer_of = isl_union_map_apply_range(isl_union_map_copy(reads), isl_union_map_reverse(isl_union_map_copy(writes)));
        isl_union_map *writer_loops = isl_union_map_apply_range(writer_of, isl_union_map_copy(loops));
        isl_union_map *reader_loops = isl_union_map_intersect_domain(loops, isl_union_map_domain(isl_union_map_copy(reads)));
        ok = isl_union_map_is_equal(writer_loops, reader_loops) == isl_bool_true;
        isl_union_map_free(writer_loops);
        isl_union_map_free(reader_loops);
    }
    isl_union_set_free(below);
    isl_union_map_free(reads);
    isl_union_map_free(writes);
    isl_schedule_node_free(band);
    return ok;
}

// Whether `b` is an output that tile-transposes copies tile by tile (tile_transposes.h) into
// whole output rows, one contiguous run per tile: akg_transpose_streamed streams each run.
bool tile_streams(const PolyModel &m, const BufferInfo &b, int64_t min_bytes) {
    for (const auto &st : m.statements) {
        auto tile = m.transpose_tiles.find(st.name);
        if (st.stage->buffer == b.name && tile != m.transpose_tiles.end())
            return !tile->second.staged && tile->second.tile_rows == tile->second.output_column_stride &&
                   element_count(b.shape) * dtype_bytes(b.dtype) >= min_bytes;
    }
    return false;
}

// Whether `b` is an output worth streaming: float32/float16, computed elementwise and never
// read, and not smaller than `min_bytes`. With `read_back`, also a float32 output read only
// where just written, and an input updated in place that the kernel never reads (an
// optimizer's parameter, read through another input); one that it reads first gains nothing:
// the read brings its lines in anyway.
bool streamable(const PolyModel &m, const BufferInfo &b, bool read_back, int64_t min_bytes) {
    if (b.shape.empty() || (b.dtype != DType::Float32 && b.dtype != DType::Float16)) return false;
    bool written = false;
    for (const auto &st : m.statements) {
        written |= st.stage->buffer == b.name;
        if (st.stage->buffer == b.name && m.transpose_tiles.count(st.name)) return false; // see tile_streams
    }
    if (!written || element_count(b.shape) * dtype_bytes(b.dtype) < min_bytes) return false;
    if (b.kind == BufferKind::KernelOutput) return computed_and_never_read(m, b) || (read_back && read_only_where_written(m, b));
    return b.kind == BufferKind::KernelInput && read_back && computed_and_never_read(m, b);
}

// Rows that start on cache-line boundaries (in a line-aligned tensor; one row, as a tensor folded
// to one dimension: its blocks start at its first element), or long rows that start on half lines
// (see kLongStreamedRowBytes).
int64_t row_bytes(const BufferInfo &b) { return b.shape.back() * dtype_bytes(b.dtype); }

bool rows_stream_by_blocks(const BufferInfo &b, int64_t line) {
    const int64_t row_bytes = akg::row_bytes(b);
    bool one_row = element_count(b.shape) == b.shape.back();
    return row_bytes % line == 0 || one_row || (row_bytes >= kLongStreamedRowBytes && row_bytes % (line / 2) == 0);
}

} // namespace

void stream_contraction_outputs(PolyModel &m, const ScheduleOptions &options) {
    if (!m.contraction || !options.non_temporal_stores) return;
    const ContractionPlan &p = *m.contraction;
    // A row part reads the tiles' values back; a staged float16 epilogue stores element by element.
    if (p.row_epilogue || p.staged_float16_epilogue) return;
    // Each tile row must stream whole lines: the tiles of a row then share none.
    if (p.blocking.nr * 4 % options.cache_line_bytes != 0) return;
    if (kernel_footprint_bytes(m) <= options.stream_outputs_above_bytes) return;
    std::set<std::string> at_product{p.stage->buffer}, elsewhere;
    for (const auto &name : p.epilogue)
        (p.permuted.count(name) ? elsewhere : at_product).insert(m.statement(name).stage->buffer);
    for (auto &b : m.buffers) {
        if (b.kind != BufferKind::KernelOutput || b.dtype != DType::Float32 || !at_product.count(b.name) || elsewhere.count(b.name)) continue;
        if (p.column_sum && p.column_sum->output == b.name) continue;
        if (b.shape != p.stage->shape || element_count(b.shape) * 4 < options.stream_min_output_bytes) continue;
        b.streamed = rows_stream_by_blocks(b, options.cache_line_bytes);
    }
    // A streamed output's lines are not read for ownership: no prefetch for writing them.
    auto &writes = m.contraction->tile_write_prefetches;
    writes.erase(std::remove_if(writes.begin(), writes.end(), [&](const std::string &name) { return m.buffer(name).streamed; }), writes.end());
}

int64_t kernel_footprint_bytes(const PolyModel &m) {
    int64_t bytes = 0;
    for (const auto &b : m.buffers)
        if (b.kind == BufferKind::KernelInput || b.kind == BufferKind::KernelOutput) bytes += element_count(b.shape) * dtype_bytes(b.dtype);
    return bytes;
}

void stream_large_outputs(PolyModel &m, const ScheduleOptions &options) {
    int64_t footprint = kernel_footprint_bytes(m);
    if (footprint <= options.stream_outputs_above_bytes) return;
    bool read_back = footprint > options.stream_read_back_above_bytes;
    for (auto &b : m.buffers) {
        if (tile_streams(m, b, options.stream_min_output_bytes)) {
            b.streamed = true;
            continue;
        }
        if (!streamable(m, b, read_back, options.stream_min_output_bytes)) continue;
        if (!options.non_temporal_stores) {
            // Ordinary stores; a float16 output is still converted a block at a time.
            b.converted_per_block = b.dtype == DType::Float16;
            continue;
        }
        b.streamed = rows_stream_by_blocks(b, options.cache_line_bytes);
        // Long float16 rows left to ordinary stores (not made of half lines) are still converted
        // a vector loop's block at a time (vcvtps2ph), as streamed ones are: stage-float16 would
        // not stage a run that long, and the vector loop's own conversion is integer code.
        const bool long_rows = row_bytes(b) >= kLongStreamedRowBytes;
        if (!b.streamed && b.dtype == DType::Float16 && long_rows) b.converted_per_block = true;
        b.streamed_when_staged = !b.streamed && b.dtype == DType::Float16 && !long_rows;
    }
}

} // namespace akg
