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
#include <vector>

namespace akg {

namespace {

// Rows this short that a reduction adds up are sunk like columns (sink_under_mark).
constexpr int64_t kTinyRowElements = 4;
// Outer iterations of a parallel band that keep the cores busy without its innermost loop.
constexpr int64_t kBusyOuterIterations = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

// Inserts the point loop `point` (coincident) at every leaf below `node` that instances reach.
// `outside_tiny_rows` (tiny-row reductions, kTinyRowElements): where a leaf lies below a loop
// over a row's few elements, the point loop (the rows) joins that loop's band as its outer
// member instead of going below it, so that vectorize can make the rows the vector loop and
// unroll the row's elements inside it: a row's elements are stored together, not each at a
// stride, and its terms are still added in order. The rows are coincident, so putting them
// outside the elements' loop is legal whatever that loop carries.
isl_schedule_node *insert_at_leaves(isl_schedule_node *node, isl_multi_union_pw_aff *point, bool outside_tiny_rows = false) {
    struct Leaf {
        isl_multi_union_pw_aff *point;
        bool outside_tiny_rows;
    } leaf{point, outside_tiny_rows};
    return isl_schedule_node_map_descendant_bottom_up(
        node,
        [](isl_schedule_node *n, void *user) -> isl_schedule_node * {
            if (isl_schedule_node_get_type(n) != isl_schedule_node_leaf) return n;
            const Leaf &l = *static_cast<Leaf *>(user);
            isl_union_set *reaching = isl_schedule_node_get_domain(n);
            bool empty = isl_union_set_is_empty(reaching) == isl_bool_true;
            if (empty) {
                isl_union_set_free(reaching);
                return n;
            }
            isl_multi_union_pw_aff *p = isl_multi_union_pw_aff_intersect_domain(isl_multi_union_pw_aff_copy(l.point), reaching);
            isl_schedule_node *parent = isl_schedule_node_parent(isl_schedule_node_copy(n));
            bool row_elements = l.outside_tiny_rows && isl_schedule_node_get_type(parent) == isl_schedule_node_band &&
                                isl_schedule_node_band_n_member(parent) == 1 && member_extent(parent, 0) <= kTinyRowElements;
            if (!row_elements) {
                isl_schedule_node_free(parent);
                n = isl_schedule_node_insert_partial_schedule(n, p);
                n = isl_schedule_node_band_set_permutable(n, 1);
                return isl_schedule_node_band_member_set_coincident(n, 0, 1);
            }
            // The point loop joins the band of the row's elements as its outer member.
            isl_schedule_node_free(n);
            bool elements_coincident = isl_schedule_node_band_member_get_coincident(parent, 0) == isl_bool_true;
            isl_multi_union_pw_aff *both = isl_multi_union_pw_aff_flat_range_product(p, isl_schedule_node_band_get_partial_schedule(parent));
            n = isl_schedule_node_delete(parent);
            n = isl_schedule_node_insert_partial_schedule(n, both);
            n = isl_schedule_node_band_set_permutable(n, 1);
            n = isl_schedule_node_band_member_set_coincident(n, 0, 1);
            n = isl_schedule_node_band_member_set_coincident(n, 1, elements_coincident);
            return isl_schedule_node_child(n, 0);
        },
        &leaf);
}

// Marks mark::RowChunks{N} every band below `node` that has bands below it: the loops over
// the rows of the whole-row column sums, to run in N chunks.
isl_schedule_node *mark_row_loops(isl_schedule_node *node, int chunks) {
    mark::RowChunks row_chunks{chunks};
    return isl_schedule_node_map_descendant_bottom_up(
        node,
        [](isl_schedule_node *n, void *user) -> isl_schedule_node * {
            if (isl_schedule_node_get_type(n) != isl_schedule_node_band || !has_band_below(n)) return n;
            return insert_annotated_mark(n, *static_cast<mark::RowChunks *>(user));
        },
        &row_chunks);
}

// Whether every reduction below `band` is a sum of float values into double accumulators (the
// emitter's column sums, which it adds up in float partials per block of rows), and there is one.
bool only_float_column_sums(const PolyModel &m, isl_schedule_node *band) {
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

// Column sums over rows short enough to walk whole (column_sums_whole_rows_bytes) of an input
// that the caches do not hold (column_sums_whole_rows_from_bytes): the parallel loop over the
// columns goes, its loop moves to every leaf (each row is walked whole, one contiguous stream),
// and the loop over the rows is marked mark::RowChunks: the emitter splits it into
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
    return only_float_column_sums(m, band);
}

// The kernel tensors (not scratch) as large as `walked` that the statements below `band`
// access: the streams that a loop over the rows walks side by side.
int row_streams(const PolyModel &m, isl_schedule_node *band, const BufferInfo &walked) {
    isl_union_set *domain = isl_schedule_node_get_domain(band);
    isl_union_map *accesses = isl_union_map_intersect_domain(m.reads.unite(m.writes).release(), domain);
    int streams = 0;
    for (const auto &b : m.buffers) {
        if (b.kind == BufferKind::Scratch || element_count(b.shape) < element_count(walked.shape)) continue;
        isl_union_map *mine = accesses_to_buffer(accesses, b);
        streams += isl_union_map_is_empty(mine) != isl_bool_true;
        isl_union_map_free(mine);
    }
    isl_union_map_free(accesses);
    return streams;
}

// What lies below each filter of `body` (the child of a column sum's band; or `body` itself
// when it is no sequence or set): 0 for a leaf (statements per column: the accumulators'
// initialization, the outputs), 1 for a one-member band with no band below it (a loop over the
// rows). `*ok` is false when some child is anything else.
std::vector<int> row_loop_children(isl_schedule_node *body, bool *ok) {
    std::vector<int> kinds; // 0: leaf, 1: row loop
    *ok = true;
    auto classify = [&](isl_schedule_node *n) {
        enum isl_schedule_node_type t = isl_schedule_node_get_type(n);
        if (t == isl_schedule_node_leaf) kinds.push_back(0);
        else if (t == isl_schedule_node_band && isl_schedule_node_band_n_member(n) == 1 && !has_band_below(n)) kinds.push_back(1);
        else *ok = false;
    };
    enum isl_schedule_node_type t = isl_schedule_node_get_type(body);
    if (t == isl_schedule_node_sequence || t == isl_schedule_node_set) {
        for (int k = 0; k < isl_schedule_node_n_children(body) && *ok; ++k) {
            isl_schedule_node *child = isl_schedule_node_child(isl_schedule_node_child(isl_schedule_node_copy(body), k), 0);
            classify(child);
            isl_schedule_node_free(child);
        }
    } else {
        classify(body);
    }
    return kinds;
}

// `value` * floor(`m` / `value`) (isl's scaled tile loop) and `m` mod `value` (its shifted point
// loop), for a one-member schedule.
isl_multi_union_pw_aff *tile_of(isl_multi_union_pw_aff *m, int64_t value) {
    isl_ctx *ctx = isl_multi_union_pw_aff_get_ctx(m);
    m = isl_multi_union_pw_aff_scale_down_val(m, isl_val_int_from_si(ctx, value));
    m = isl_multi_union_pw_aff_floor(m);
    return isl_multi_union_pw_aff_scale_val(m, isl_val_int_from_si(ctx, value));
}
isl_multi_union_pw_aff *point_of(isl_multi_union_pw_aff *m, int64_t value) {
    isl_ctx *ctx = isl_multi_union_pw_aff_get_ctx(m);
    isl_multi_val *v = isl_multi_val_from_val_list(isl_multi_union_pw_aff_get_space(m), isl_val_list_from_val(isl_val_int_from_si(ctx, value)));
    return isl_multi_union_pw_aff_mod_multi_val(m, v);
}

// Sets isl's "isolate" AST option on `blocks` (taken and returned: the band over blocks of
// columns) for the blocks whose `block` columns all exist (`columns`, kept: the point schedule
// below it), so that their column loops get constant bounds in the AST: a bound like
// min(63, 30521 - c0 - c2) kept the emitter's float partials in memory (a [1216, 30522] sum
// ran 1.5x slower).
isl_schedule_node *isolate_whole_blocks(isl_schedule_node *blocks, isl_multi_union_pw_aff *columns, int64_t block) {
    isl_schedule_node *inside = isl_schedule_node_child(isl_schedule_node_copy(blocks), 0);
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(inside); // the loops around and the block
    isl_schedule_node_free(inside);
    const int outer = isl_schedule_node_get_schedule_depth(blocks);
    isl_union_map *point = isl_union_map_from_multi_union_pw_aff(isl_multi_union_pw_aff_copy(columns));
    point = isl_union_map_intersect_domain(point, isl_union_map_domain(isl_union_map_copy(prefix)));
    isl_set *whole = whole_tiles(prefix, point, block);
    isl_map *split = isl_map_move_dims(isl_map_from_range(whole), isl_dim_in, 0, isl_dim_out, 0, outer); // [loops around] -> [block]
    isl_set *option = isl_set_set_tuple_name(isl_map_wrap(split), "isolate");
    return isl_schedule_node_band_set_ast_build_options(blocks, isl_union_set_from_set(option));
}

// One loop over the rows below a super-block of columns (see tile_rows_of_column_sums), `row`
// (taken) its band: becomes tiles of rows > blocks of columns > the tile's rows (marked
// mark::ColumnRowTile for the emitter) > the block's columns. Returns the node in its place.
isl_schedule_node *tile_row_loop(isl_schedule_node *row, isl_multi_union_pw_aff *columns, int64_t block, int64_t tile_rows) {
    isl_multi_union_pw_aff *rows = isl_schedule_node_band_get_partial_schedule(row);
    isl_multi_union_pw_aff *row_tile = tile_of(isl_multi_union_pw_aff_copy(rows), tile_rows), *row_point = point_of(rows, tile_rows);
    isl_multi_union_pw_aff *column_block = tile_of(isl_multi_union_pw_aff_copy(columns), block);
    isl_multi_union_pw_aff *column_point = point_of(isl_multi_union_pw_aff_copy(columns), block);
    isl_schedule_node *node = isl_schedule_node_delete(row);
    node = insert_at_leaves(node, column_point);
    node = insert_point_band(node, row_point);
    node = isl_schedule_node_band_member_set_coincident(node, 0, 0); // the sums' loop
    node = insert_annotated_mark(node, mark::ColumnRowTile{});
    node = insert_point_band(node, column_block);
    node = insert_point_band(node, row_tile);
    node = isl_schedule_node_band_member_set_coincident(node, 0, 0);
    // Once every loop around the blocks is in place (the option names them).
    node = isl_schedule_node_parent(isolate_whole_blocks(isl_schedule_node_child(node, 0), column_point, block));
    isl_multi_union_pw_aff_free(row_tile);
    isl_multi_union_pw_aff_free(row_point);
    isl_multi_union_pw_aff_free(column_block);
    isl_multi_union_pw_aff_free(column_point);
    return node;
}

// Column sums of an input too large for the caches over rows of more than
// column_sums_whole_rows_bytes: blocks of `block` columns walked down all the rows visit each
// row's 4 KiB page once per block, a TLB miss and a new DRAM page every 256 bytes (a [16000,
// 1024] float32 sum: 14.5 GB/s at 1 thread, 28 at 2, where streams reach 22 and 44). Instead
// the parallel loop runs over super-blocks of column_sums_super_block_bytes, and within one,
// tiles of column_sums_tile_rows rows (2 KiB x 16 = 32 KiB: the L1 cache, 16 pages) are summed
// block of columns after block of columns: 24 GB/s and 44 GB/s (a hand-written model of the
// schedule). Each column still adds its rows in order, one float partial per tile of rows,
// whatever the thread count. Returns the parallel mark, or null (nothing taken) when `band`
// does not qualify.
isl_schedule_node *tile_rows_of_column_sums(PolyModel &m, const ScheduleOptions &o, isl_schedule_node *mark, isl_schedule_node *band,
                                            const BufferInfo &walked, int64_t columns, int64_t block) {
    const int64_t element_bytes = dtype_bytes(walked.dtype);
    // Super-blocks of at most column_sums_super_block_bytes, as many as a multiple of the
    // threads, of whole blocks: 1031 columns as 512 + 512 + 7 left one of two threads idle.
    const int64_t widest = o.column_sums_super_block_bytes / element_bytes;
    const int64_t tasks = ceil_div(ceil_div(columns, std::max<int64_t>(1, widest)), o.threads) * o.threads;
    const int64_t super = ceil_div(ceil_div(columns, tasks), block) * block;
    const int64_t rows = element_count(walked.shape) / std::max<int64_t>(1, columns);
    // Not for rows of fewer than two widest super-blocks: BERT's dgamma/dbeta over [4096, 768]
    // float32 ran as fast or 3% slower in super-blocks of 384 columns.
    if (!o.parallel || o.column_sums_tile_rows < 2 || super > widest || columns < 2 * widest || rows < 4 * o.column_sums_tile_rows ||
        element_count(walked.shape) * element_bytes < o.column_sums_whole_rows_from_bytes || !only_float_column_sums(m, band))
        return nullptr;
    isl_schedule_node *body = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
    bool ok = false;
    std::vector<int> kinds = row_loop_children(body, &ok);
    isl_schedule_node_free(body);
    if (!ok || std::find(kinds.begin(), kinds.end(), 1) == kinds.end()) return nullptr;
    isl_schedule_node_free(mark);
    add_statement_names(band, m.column_block_statements);
    isl_multi_union_pw_aff *point = nullptr;
    isl_schedule_node *node = tile_and_take_point_band(band, super, &point);
    auto rewrite = [&](isl_schedule_node *n, int kind) {
        return kind == 0 ? insert_at_leaves(n, point) : tile_row_loop(n, point, block, o.column_sums_tile_rows);
    };
    enum isl_schedule_node_type t = isl_schedule_node_get_type(node);
    if (t == isl_schedule_node_sequence || t == isl_schedule_node_set) {
        for (int k = 0; k < static_cast<int>(kinds.size()); ++k) {
            node = isl_schedule_node_child(isl_schedule_node_child(node, k), 0);
            node = rewrite(node, kinds[k]);
            node = isl_schedule_node_parent(isl_schedule_node_parent(node));
        }
    } else {
        node = rewrite(node, kinds[0]);
    }
    isl_multi_union_pw_aff_free(point);
    // Back to the mark above the tile loop.
    return isl_schedule_node_parent(isl_schedule_node_parent(node));
}

// Whether `node`'s schedule (the whole tree it belongs to) orders every dependence of the model
// source before target.
bool respects_dependences(const PolyModel &m, isl_schedule_node *node) {
    isl_schedule *schedule = isl_schedule_node_get_schedule(node);
    isl_union_map *map = isl_schedule_get_map(schedule);
    isl_schedule_free(schedule);
    isl_union_map *before = isl_union_map_lex_lt_union_map(isl_union_map_copy(map), map);
    isl_union_map *dependences = m.dep_flow.unite(m.dep_false).release();
    bool ok = isl_union_map_is_subset(dependences, before) == isl_bool_true;
    isl_union_map_free(dependences);
    isl_union_map_free(before);
    return ok;
}

// The loop over the columns (`columns`, kept) inserted right below the loop over the rows `row`
// (taken; returned in its place): one walk along the row for all its statements.
isl_schedule_node *columns_below_rows(isl_schedule_node *row, isl_multi_union_pw_aff *columns) {
    isl_schedule_node *inside = isl_schedule_node_child(row, 0);
    isl_multi_union_pw_aff *p = isl_multi_union_pw_aff_intersect_domain(isl_multi_union_pw_aff_copy(columns), isl_schedule_node_get_domain(inside));
    inside = isl_schedule_node_insert_partial_schedule(inside, p);
    inside = isl_schedule_node_band_set_permutable(inside, 1);
    inside = isl_schedule_node_band_member_set_coincident(inside, 0, 1);
    return isl_schedule_node_parent(inside);
}

// The loops over the rows below `node` (kept), for walk_wide_rows: sequences and sets hold
// them, filters, leaves (the sums' initializations and outputs) and constant one-member bands
// with no band below (isl's [0] for a statement on its own) lie beside them. -1 when something
// else is there.
int wide_row_loops(isl_schedule_node *node) {
    switch (isl_schedule_node_get_type(node)) {
    case isl_schedule_node_leaf: return 0;
    case isl_schedule_node_band:
        if (isl_schedule_node_band_n_member(node) != 1 || has_band_below(node)) return -1;
        return member_extent(node, 0) > 1 ? 1 : 0;
    case isl_schedule_node_sequence:
    case isl_schedule_node_set:
    case isl_schedule_node_filter: {
        int loops = 0;
        for (int k = 0; k < isl_schedule_node_n_children(node) && loops >= 0; ++k) {
            isl_schedule_node *child = isl_schedule_node_get_child(node, k);
            int below = wide_row_loops(child);
            isl_schedule_node_free(child);
            loops = below < 0 ? -1 : loops + below;
        }
        return loops;
    }
    default: return -1;
    }
}

// walk_wide_rows' schedule below the deleted band over the columns (`columns`: its schedule):
// each loop over the rows marked mark::RowChunks and, with `fuse`, the columns right below it
// (columns_below_rows); the columns at every other leaf. Returns the node in `node`'s place.
isl_schedule_node *rows_over_columns(isl_schedule_node *node, isl_multi_union_pw_aff *columns, bool fuse, int chunks) {
    switch (isl_schedule_node_get_type(node)) {
    case isl_schedule_node_band:
        if (member_extent(node, 0) > 1) {
            node = fuse ? columns_below_rows(node, columns) : insert_at_leaves(node, columns);
            return insert_annotated_mark(node, mark::RowChunks{chunks}); // in its place
        }
        return insert_at_leaves(node, columns);
    case isl_schedule_node_sequence:
    case isl_schedule_node_set:
    case isl_schedule_node_filter:
        for (int k = 0; k < isl_schedule_node_n_children(node); ++k)
            node = isl_schedule_node_parent(rows_over_columns(isl_schedule_node_child(node, k), columns, fuse, chunks));
        return node;
    default: return insert_at_leaves(node, columns);
    }
}

// Column sums over rows wider than column_sums_whole_rows_bytes of an input the caches do not
// hold, where the loop over the rows walks column_sums_row_streams tensors of the input's size
// or more (a softmax backward's bias gradient over [320, 21128] also reads the logits and the
// labels and writes two outputs): blocks of columns walked down the rows visit a new page of
// every tensor every 256 bytes (6 GB/s at 1 thread), and tiles of rows barely help (7 GB/s
// with 16 or 32 rows of 2-16 KiB; hand-written models). Instead each row is one contiguous
// walk, as for walk_whole_rows: the parallel loop over the columns goes, the loop over the
// columns moves below each loop over the rows (around all its statements when that keeps
// every dependence, at each leaf otherwise), and the loops over the rows are marked
// mark::RowChunks; the emitter runs the rows in chunks of ScheduleOptions::column_sum_block_rows
// in parallel, each adding its rows in float into sums of its own, added up in chunk order afterwards
// (emit_row_chunks): 24 GB/s in the hand-written model. Returns the node in the mark's place,
// or null (nothing taken) when `band` does not qualify.
isl_schedule_node *walk_wide_rows(PolyModel &m, const ScheduleOptions &o, isl_schedule_node *mark, isl_schedule_node *band, const BufferInfo &walked,
                                  int64_t columns) {
    const int64_t element_bytes = dtype_bytes(walked.dtype);
    const int64_t rows = element_count(walked.shape) / std::max<int64_t>(1, columns);
    if (!o.parallel || o.row_chunks < 2 || o.column_sums_row_streams <= 0 || columns * element_bytes <= o.column_sums_whole_rows_bytes ||
        element_count(walked.shape) * element_bytes < o.column_sums_whole_rows_from_bytes || rows < 2 * o.column_sum_block_rows ||
        !only_float_column_sums(m, band) || row_streams(m, band, walked) < o.column_sums_row_streams)
        return nullptr;
    isl_schedule_node *body = isl_schedule_node_get_child(band, 0);
    int loops = wide_row_loops(body);
    isl_schedule_node_free(body);
    if (loops < 1) return nullptr;
    isl_schedule_node_free(mark);
    isl_multi_union_pw_aff *columns_schedule = isl_schedule_node_band_get_partial_schedule(band);
    isl_schedule_node *plain = isl_schedule_node_delete(band);
    isl_schedule_node *node = rows_over_columns(isl_schedule_node_copy(plain), columns_schedule, true, o.row_chunks);
    if (respects_dependences(m, node)) {
        isl_schedule_node_free(plain);
    } else {
        isl_schedule_node_free(node);
        node = rows_over_columns(plain, columns_schedule, false, o.row_chunks);
    }
    isl_multi_union_pw_aff_free(columns_schedule);
    return isl_schedule_node_delete(isl_schedule_node_parent(node)); // the parallel mark
}

// The mark::Parallel `node` counting one loop fewer (deleted when none is left).
isl_schedule_node *without_one_parallel_loop(isl_schedule_node *node) {
    mark::Parallel parallel = mark_as<mark::Parallel>(node).value();
    parallel.loops -= 1;
    node = isl_schedule_node_delete(node);
    if (parallel.loops <= 0) return node;
    return insert_annotated_mark(node, parallel);
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
    if (apply && inner == 0 && !tiny_row) {
        if (isl_schedule_node *wide = walk_wide_rows(*c.m, *c.options, node, band, *walked, trips)) return wide;
        if (isl_schedule_node *tiled = tile_rows_of_column_sums(*c.m, *c.options, node, band, *walked, trips, block)) return tiled;
    }
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
    point = insert_at_leaves(point, partial, tiny_row);
    isl_multi_union_pw_aff_free(partial);
    // Back to the mark above the tile loop.
    isl_schedule_node *marked = isl_schedule_node_parent(isl_schedule_node_parent(point));
    // One block of all the columns: the tile loop has a single iteration, which isl's AST
    // leaves out, and the emitter would make the next loop parallel instead: the rows, whose
    // iterations add into the same accumulators (a race on a [17, 64] column max, difftest
    // seed 18). The mark counts one parallel loop fewer; none left, it goes.
    return block >= trips ? without_one_parallel_loop(marked) : marked;
}

} // namespace

void sink_column_loops(PolyModel &m, const ScheduleOptions &options) {
    Ctx ctx{&m, &options};
    map_schedule_bottom_up(m, sink_under_mark, &ctx);
}

} // namespace akg
