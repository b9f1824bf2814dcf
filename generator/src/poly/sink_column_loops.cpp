#include "poly/sink_column_loops.h"

#include "poly/schedule_transforms.h"

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

namespace akg {

namespace {

// Rows this short that a reduction adds up are sunk like columns (sink_under_mark).
constexpr int64_t kTinyRowElements = 4;
// Outer iterations of a parallel band that keep the cores busy without its innermost loop.
constexpr int64_t kBusyOuterIterations = 64;

struct Ctx {
    PolyModel *m;
    const ScheduleOptions *options;
};

// Whether one iteration of `band` reads a column: the largest buffer read below it has a fixed
// footprint per iteration that spans several rows but one element of the innermost dimension
// (of more than one element). Returns that buffer, or null when the band does not read columns.
// With `reduces` (a reduction below the band adds the columns up), a column of 2 or more does,
// and so does a whole row of 2 to kTinyRowElements elements (one iteration reads
// the last dimension whole), and `*tiny_row` says which one it was.
const BufferInfo *column_buffer(const PolyModel &m, isl_schedule_node *band, bool reduces, bool *tiny_row) {
    isl_schedule_node *inside = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(inside);
    isl_union_set *subtree = isl_schedule_node_get_domain(band);
    isl_schedule_node_free(inside);
    const BufferInfo *largest = nullptr;
    isl_map *footprint = nullptr;
    for (const auto &b : m.buffers) {
        if (b.shape.size() < 2 || (largest && element_count(b.shape) <= element_count(largest->shape))) continue;
        isl_union_map *reads = isl_union_map_intersect_domain(accesses_to_buffer(m.reads.get(), b), isl_union_set_copy(subtree));
        if (isl_union_map_is_empty(reads) == isl_bool_true) {
            isl_union_map_free(reads);
            continue;
        }
        isl_map_free(footprint);
        footprint = isl_map_from_union_map(isl_union_map_apply_range(isl_union_map_reverse(isl_union_map_copy(prefix)), reads));
        largest = &b;
    }
    isl_union_map_free(prefix);
    isl_union_set_free(subtree);
    if (!footprint) return nullptr;
    bool column = false;
    isl_fixed_box *box = isl_map_get_range_simple_fixed_box_hull(footprint);
    if (isl_fixed_box_is_valid(box) == isl_bool_true) {
        isl_multi_val *size = isl_fixed_box_get_size(box);
        int n = isl_multi_val_size(size);
        int64_t elements = 1, last = 0;
        for (int d = 0; d < n; ++d) {
            isl_val *v = isl_multi_val_get_at(size, d);
            int64_t e = isl_val_get_num_si(v);
            isl_val_free(v);
            elements *= e;
            // The innermost dimension that has more than one element: trailing dimensions of
            // extent 1 (MindSpore's [N, C, 1, 1] weights) say nothing about the column.
            if (d >= static_cast<int>(largest->shape.size()) || largest->shape[d] > 1) last = e;
        }
        *tiny_row = reduces && elements == last && last >= 2 && last <= kTinyRowElements && largest->shape.back() == last;
        column = (last == 1 && elements >= (reduces ? 2 : 16)) || *tiny_row;
        isl_multi_val_free(size);
    }
    isl_fixed_box_free(box);
    isl_map_free(footprint);
    return column ? largest : nullptr;
}

isl_schedule_node *insert_at_leaves(isl_schedule_node *node, isl_multi_union_pw_aff *point) {
    struct Leaf {
        isl_multi_union_pw_aff *point;
    } leaf{point};
    return isl_schedule_node_map_descendant_bottom_up(
        node,
        [](isl_schedule_node *n, void *user) -> isl_schedule_node * {
            if (isl_schedule_node_get_type(n) != isl_schedule_node_leaf) return n;
            isl_union_set *reaching = isl_schedule_node_get_domain(n);
            bool empty = isl_union_set_is_empty(reaching) == isl_bool_true;
            if (empty) {
                isl_union_set_free(reaching);
                return n;
            }
            isl_multi_union_pw_aff *p =
                isl_multi_union_pw_aff_intersect_domain(isl_multi_union_pw_aff_copy(static_cast<Leaf *>(user)->point), reaching);
            n = isl_schedule_node_insert_partial_schedule(n, p);
            n = isl_schedule_node_band_set_permutable(n, 1);
            return isl_schedule_node_band_member_set_coincident(n, 0, 1);
        },
        &leaf);
}

// Marks "row_chunks_N" every band below `node` that has bands below it: the loops over the rows
// of the whole-row column sums, to run in N chunks.
isl_schedule_node *mark_row_loops(isl_schedule_node *node, int chunks) {
    std::string name = "row_chunks_" + std::to_string(chunks);
    return isl_schedule_node_map_descendant_bottom_up(
        node,
        [](isl_schedule_node *n, void *user) -> isl_schedule_node * {
            if (isl_schedule_node_get_type(n) != isl_schedule_node_band || !has_band_below(n)) return n;
            const char *mark = static_cast<std::string *>(user)->c_str();
            return isl_schedule_node_insert_mark(n, isl_id_alloc(isl_schedule_node_get_ctx(n), mark, nullptr));
        },
        &name);
}

// Column sums over rows short enough to walk whole (column_sums_whole_rows_bytes) of an input
// that the caches do not hold (column_sums_whole_rows_from_bytes): the parallel loop over the
// columns goes, its loop moves to every leaf (each row is walked whole, one contiguous stream),
// and the loop over the rows is marked "row_chunks_N": the emitter splits it into
// ScheduleOptions::row_chunks chunks of rows that run in parallel, each summing into its own
// accumulators, added in chunk order after them (emit_cpp.cpp, emit_row_chunks).
// Only where every reduction below `band` is such a sum: float values into double accumulators
// (the emitter's column sums), and there is one.
bool walk_whole_rows(const PolyModel &m, const ScheduleOptions &o, isl_schedule_node *band, const BufferInfo &walked, int64_t columns) {
    int64_t rows = element_count(walked.shape) / std::max<int64_t>(1, columns);
    int64_t bytes = element_count(walked.shape) * dtype_bytes(walked.dtype);
    if (!o.parallel || o.row_chunks < 2 || columns * dtype_bytes(walked.dtype) > o.column_sums_whole_rows_bytes ||
        bytes < o.column_sums_whole_rows_from_bytes || rows < 2 * o.row_chunks * 32) // two of the emitter's 32-row blocks per chunk
        return false;
    std::set<std::string> below;
    add_statement_names(band, below);
    int sums = 0, others = 0;
    for (const auto &st : m.statements) {
        if (st.role != StatementRole::ReduceUpdate || !below.count(st.name)) continue;
        bool sum = st.stage->reduce_kind == ReduceKind::Sum && st.stage->value.type() == Halide::Float(32) &&
                   m.buffer(st.stage->buffer).dtype == DType::Float64;
        ++(sum ? sums : others);
    }
    return sums > 0 && others == 0;
}

isl_schedule_node *sink_under_mark(isl_schedule_node *node, void *user) {
    auto &c = *static_cast<Ctx *>(user);
    isl_schedule_node *band = parallel_band_below(node);
    if (!band) return node;
    const int inner = static_cast<int>(isl_schedule_node_band_n_member(band)) - 1;
    // Reductions over rows of 2 to 4 elements (a two-class softmax over 233008 anchors, a box's
    // 4 coordinates) are column sums in disguise: one iteration per row paid a lane reduction
    // (32 lanes, a combining tree) for 2 terms, and vectorized along the row, nothing. Sunk the
    // same way, the vector loop runs across 64 rows, the row's elements one loop outside:
    // MindSpore's RetinaFace losses 4.2-8.0 -> 0.58-0.85 ms, a ReduceMax over rows of 2
    // 5.0 -> 0.12 ms (1 thread). Without a reduction (elementwise rows of 4), the strided
    // vector loop ran 1.3-2.5x slower than one iteration per row, and such bands stay.
    bool tiny_row = false;
    const BufferInfo *walked = column_buffer(*c.m, band, has_reduction_below(*c.m, band), &tiny_row);
    int64_t element_bytes = walked ? dtype_bytes(walked->dtype) : 0;
    bool apply = element_bytes > 0;
    int64_t trips = apply ? member_extent(band, inner) : 0;
    if (apply && inner == 0 && !tiny_row && walk_whole_rows(*c.m, *c.options, band, *walked, trips)) {
        isl_schedule_node_free(node);
        add_statement_names(band, c.m->column_block_statements);
        isl_multi_union_pw_aff *columns = isl_schedule_node_band_get_partial_schedule(band);
        isl_schedule_node *body = isl_schedule_node_delete(band);
        body = insert_at_leaves(body, columns);
        isl_multi_union_pw_aff_free(columns);
        body = isl_schedule_node_delete(isl_schedule_node_parent(body)); // the parallel mark
        return mark_row_loops(body, c.options->row_chunks);
    }
    // A block of a few vectors per iteration, wide enough that each row it walks down reads
    // column_block_row_bytes of the largest input; smaller when that would leave a core idle.
    int64_t block = static_cast<int64_t>(c.options->vector_width) * c.options->vector_unroll;
    if (apply) block = std::max(block, c.options->column_block_row_bytes / element_bytes);
    // The band's outer loops alone may keep every core busy (16000 x 39 x 80 summed over its
    // middle dimension): then up to two blocks' worth of columns are one block, not halved
    // into partial ones (80 columns as 32 + 32 + 16: 13.6 -> 8.0 ms).
    int64_t outer = 1;
    for (int k = 0; k < inner; ++k) outer *= member_extent(band, k);
    if (apply && outer >= kBusyOuterIterations && trips >= c.options->vector_width && trips < 2 * block) block = trips;
    while (block > c.options->vector_width && trips < 2 * block && block != trips) block /= 2;
    if (!apply || (trips < 2 * block && block != trips)) {
        isl_schedule_node_free(band);
        return node;
    }
    isl_schedule_node_free(node);
    add_statement_names(band, c.m->column_block_statements);
    isl_multi_union_pw_aff *partial = nullptr;
    isl_schedule_node *point = tile_and_take_point_band(band, block, &partial);
    point = insert_at_leaves(point, partial);
    isl_multi_union_pw_aff_free(partial);
    // Back to the mark above the tile loop.
    return isl_schedule_node_parent(isl_schedule_node_parent(point));
}

} // namespace

void sink_column_loops(PolyModel &m, const ScheduleOptions &options) {
    Ctx ctx{&m, &options};
    map_schedule_bottom_up(m, sink_under_mark, &ctx);
}

} // namespace akg
