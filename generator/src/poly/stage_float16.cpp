#include "poly/stage_float16.h"

#include "poly/schedule_transforms.h"
#include "poly/stream_outputs.h"

#include <cstdlib>

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/printer.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace akg {

namespace {

// Below these sizes the per-iteration conversion call costs about what it saves.
constexpr int64_t kMinStagedElements = 64;
// The float copies live on the stack of the parallel body (OpenMP threads get 2 MiB stacks by
// default with libgomp): at most 128 KiB per tensor and 512 KiB in all per body.
constexpr int64_t kMaxStagedElements = 1 << 15;
constexpr int64_t kMaxStagedElementsPerBody = 1 << 17;
// Boxes from this size on, accessed at unit stride, are left to the vector loops: inputs
// converted per block of 64 right before the loop, outputs right after it. Measured against
// staging the whole box per iteration (harness, 1 thread / 2 threads): inputs: bias +
// dropout + residual + LayerNorm f16 (rows of 768) 0.65 -> 0.54 / 0.28 -> 0.26 ms, BiasAdd +
// GeLU f16 (512) 1.57 -> 1.46 / 0.79 -> 0.74, the residual gradient (512) 0.79 / 0.35 -> 0.27,
// conv bias + residual + ReLU (8 planes of 196) 0.83 -> 0.63; outputs too: LayerNorm f16
// 0.149 -> 0.132 / 0.079 -> 0.068, bias + dropout + residual + LayerNorm f16 0.52 -> 0.49.
// Below it staging wins: the attention softmax (rows of 128) 1.44 vs 1.52 ms, the softmax
// gradient (128) slightly; so it does for the head split (64, read transposed: 0.07 vs 0.15).
constexpr int64_t kMinElementsConvertedPerLoop = 256;

struct Ctx {
    PolyModel *m;
    int64_t min_inner_extent; // one vector of the innermost dimension (ScheduleOptions::vector_width)
};

// Whether every statement of the accesses `reads` (kept) is a sum group-rows grouped.
bool read_only_by_grouped_sums(const PolyModel &m, isl_union_map *reads) {
    isl_union_set *readers = isl_union_map_domain(isl_union_map_copy(reads));
    bool only = true;
    for (const auto &st : m.statements) {
        if (m.grouped_row_sums.count(st.name)) continue;
        isl_union_set *mine = isl_union_set_from_set(isl_set_universe(st.space(isl_union_set_get_ctx(readers))));
        mine = isl_union_set_intersect(mine, isl_union_set_copy(readers));
        only &= isl_union_set_is_empty(mine) == isl_bool_true;
        isl_union_set_free(mine);
    }
    isl_union_set_free(readers);
    return only;
}

struct UnitStrideCtx {
    isl_union_map *accesses; // to the buffer
    isl_map *offsets;
    bool unit = true;
};

// Whether the accesses of the statements at `leaf` advance by one element from one iteration
// of the innermost loop around them to the next (and that loop runs more than once).
isl_bool leaf_accesses_unit_stride(isl_schedule_node *node, void *user) {
    auto &c = *static_cast<UnitStrideCtx *>(user);
    if (!c.unit) return isl_bool_false;
    if (isl_schedule_node_get_type(node) != isl_schedule_node_leaf) return isl_bool_true;
    isl_union_map *mine = isl_union_map_intersect_domain(isl_union_map_copy(c.accesses), isl_schedule_node_get_domain(node));
    if (isl_union_map_is_empty(mine) == isl_bool_true) {
        isl_union_map_free(mine);
        return isl_bool_true;
    }
    int depth = isl_schedule_node_get_schedule_depth(node);
    if (depth == 0) {
        isl_union_map_free(mine);
        c.unit = false;
        return isl_bool_false;
    }
    // [loops] -> [offset], then pairs of offsets at consecutive values of the innermost loop.
    isl_union_map *at = isl_union_map_apply_range(isl_union_map_reverse(isl_schedule_node_get_prefix_schedule_relation(node)), mine);
    isl_map *offset = isl_map_apply_range(isl_map_from_union_map(at), isl_map_copy(c.offsets));
    isl_space *loops = isl_space_domain(isl_map_get_space(offset));
    isl_multi_aff *next = isl_multi_aff_identity(isl_space_map_from_set(loops));
    next = isl_multi_aff_set_at(next, depth - 1, isl_aff_add_constant_si(isl_multi_aff_get_at(next, depth - 1), 1));
    isl_map *step = isl_map_apply_range(isl_map_apply_range(isl_map_reverse(isl_map_copy(offset)), isl_map_from_multi_aff(next)), offset);
    isl_set *deltas = isl_map_deltas(step);
    isl_set *one = isl_set_read_from_str(isl_set_get_ctx(deltas), "{ [1] }");
    c.unit = isl_set_is_empty(deltas) != isl_bool_true && isl_set_is_subset(deltas, one) == isl_bool_true;
    isl_set_free(one);
    isl_set_free(deltas);
    return c.unit ? isl_bool_true : isl_bool_false;
}

// Whether every access of `accesses` (kept, to buffer `b`) under `band` advances by one element
// per iteration of its innermost loop: the vector loops then convert it block by block.
bool accessed_at_unit_stride(const BufferInfo &b, isl_union_map *accesses, isl_schedule_node *band) {
    UnitStrideCtx c{accesses, row_major_offsets(isl_union_map_get_ctx(accesses), b)};
    isl_schedule_node_foreach_descendant_top_down(band, leaf_accesses_unit_stride, &c);
    isl_map_free(c.offsets);
    return c.unit;
}

// The staging of buffer `b` for one iteration of the parallel band, if it pays and is exact.
bool plan_staging(PolyModel &m, int64_t min_inner_extent, const BufferInfo &b, const ParallelIteration &iteration, Float16Staging &out) {
    isl_union_set *subtree = iteration.subtree;
    isl_union_map *prefix = iteration.prefix;
    int depth = iteration.depth;
    if (b.dtype != DType::Float16 || b.shape.empty()) return false;
    bool input = b.kind == BufferKind::KernelInput, output = b.kind == BufferKind::KernelOutput;
    if (!input && !output) return false;
    if (b.streamed) return false; // converted per vector loop, then streamed (stream_outputs.h)
    for (const auto &[name, tile] : m.transpose_tiles) // read and written by tiles (tile_transposes.h)
        if (m.statement(name).stage->buffer == b.name || tile.source == b.name) return false;
    isl_union_map *reads = accesses_to_buffer(m.reads.get(), b), *writes = accesses_to_buffer(m.writes.get(), b);
    bool eligible = false;
    isl_union_map *mine = nullptr;
    if (input && isl_union_map_is_empty(writes) == isl_bool_true) {
        // A read-only input: its reads under this loop, unless only grouped short-row sums read
        // it (akg_row_sums_f16 converts what it reads).
        mine = isl_union_map_intersect_domain(isl_union_map_copy(reads), isl_union_set_copy(subtree));
        eligible = isl_union_map_is_empty(mine) != isl_bool_true && !read_only_by_grouped_sums(m, mine);
    } else if (output && computed_and_never_read(m, b)) {
        // A write-only output computed (not accumulated) entirely under this loop.
        isl_union_set *writers = isl_union_map_domain(isl_union_map_copy(writes));
        eligible = isl_union_set_is_subset(writers, subtree) == isl_bool_true && isl_union_set_is_empty(writers) != isl_bool_true;
        isl_union_set_free(writers);
        for (const auto &st : m.statements)
            if (st.stage->buffer == b.name && m.float16_copy_source(*st.stage)) eligible = false; // copied as bits, nothing to convert
        mine = isl_union_map_copy(writes);
    }
    isl_union_map_free(reads);
    isl_union_map_free(writes);
    if (!eligible) {
        isl_union_map_free(mine);
        return false;
    }
    FootprintBox box;
    bool ok = footprint_box(isl_union_map_apply_range(isl_union_map_reverse(isl_union_map_copy(prefix)), isl_union_map_copy(mine)), b, box);
    int64_t elements = element_count(box.extent);
    // Smaller output boxes of whole vectors too: the 16 averages of a group of short rows
    // (group-rows) converted by one vcvtps2ph instead of the vector loop's integer code (global
    // average pooling: 0.205 -> 0.106 ms). A small box with a partial vector is left alone: the
    // 49 elements of a pooling gradient's row ran 8x slower staged.
    bool whole_vectors = output && elements % min_inner_extent == 0;
    ok = ok && (elements >= kMinStagedElements || whole_vectors) && elements <= kMaxStagedElements && box.extent.back() >= min_inner_extent;
    // A larger box is converted per vector loop instead, next to its use (the emitter's block
    // staging of inputs, its per-block conversion of outputs): converted for the whole
    // iteration at once, the conversions and the arithmetic ran one after the other. Only
    // where every access advances by one element per iteration of its innermost loop (a
    // column walk reading rows of 512 would convert element by element), and not for an
    // output whose staged run is streamed (stream_outputs.h): its lines must be whole.
    if (ok && elements >= kMinElementsConvertedPerLoop && !(output && b.streamed_when_staged) &&
        accessed_at_unit_stride(b, mine, iteration.band)) {
        if (output) m.buffer(b.name).converted_per_block = true;
        ok = false;
    }
    isl_union_map_free(mine);
    if (ok && output) {
        // The copy-out writes the whole box (within the tensor): every element of it must be
        // one the loop writes.
        ok = box_is_footprint(box, b);
    }
    if (ok) {
        out.buffer = b.name;
        out.output = output;
        out.box = box.extent;
        out.offset_c = offset_to_c(box.offset, depth);
        out.contiguous = contiguous_within_tensor(box.offset, box.extent, b, isl_map_domain(isl_map_copy(box.footprint)));
        out.streamed = output && b.streamed_when_staged && out.contiguous && elements * dtype_bytes(b.dtype) >= kMinStreamedRunBytes;
    }
    return ok;
}

isl_schedule_node *stage_under_mark(isl_schedule_node *node, void *user) {
    const Ctx &c = *static_cast<Ctx *>(user);
    PolyModel &m = *c.m;
    std::optional<mark::Parallel> parallel = mark_as<mark::Parallel>(node);
    if (!parallel || parallel->body_plans) return node;
    std::vector<Float16Staging> stagings;
    {
        ParallelIteration iteration(node);
        int64_t staged = 0;
        for (const auto &b : m.buffers) {
            Float16Staging s;
            if (plan_staging(m, c.min_inner_extent, b, iteration, s) &&
                staged + element_count(s.box) <= kMaxStagedElementsPerBody) {
                staged += element_count(s.box);
                stagings.push_back(s);
            }
        }
    }
    if (stagings.empty()) return node;
    m.float16_stagings.at(body_plans_of_mark(m, node)) = std::move(stagings);
    return node;
}

} // namespace

void stage_float16_buffers(PolyModel &m, const ScheduleOptions &options) {
    Ctx ctx{&m, options.vector_width};
    map_schedule_bottom_up(m, stage_under_mark, &ctx);
}

} // namespace akg
