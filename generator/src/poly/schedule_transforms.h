#pragma once
#include "poly/poly_model.h"
#include "poly/schedule_annotation.h"

#include <functional>
#include <set>
#include <string>

namespace akg {

// Marks the outermost coincident loops of each top-level band mark::Parallel (split off from
// the rest of its band), so that the emitter runs it with OpenMP. Small or scalar kernels stay
// sequential when options.parallel is false.
void mark_parallel_loops(PolyModel &model, const ScheduleOptions &options);

// The number of values member `member` of band `node` takes (0 when not constant).
long member_extent(isl_schedule_node *node, int member);

// When `mark` (kept) is a mark::Parallel of N loops (no body plans yet) over a band of N
// members, all coincident, with bands below it: that band (a new reference); null otherwise.
// Column sums over the outer dimension of a 3-D tensor ([32, 128, 768] summed into
// [128, 768]) are parallel over two loops.
isl_schedule_node *parallel_band_below(isl_schedule_node *mark);
// Tiles the innermost member of `band` (taken) by `block` and the others by 1 (their tile loops
// are the band's loops as they were; all stay coincident), deletes the point band and returns
// the node in its place; the innermost member's point schedule goes to `*point` for the caller
// to insert lower down and free.
isl_schedule_node *tile_and_take_point_band(isl_schedule_node *band, int64_t block, isl_multi_union_pw_aff **point);

// Whether a band node lies below `node` (not counting `node` itself).
bool has_band_below(isl_schedule_node *node);
// Whether `node` (kept) is a band whose members are all coincident over a sequence of passes
// (a parallel loop over rows whose body runs pass after pass: pair-rows, group-rows).
bool coincident_band_over_passes(isl_schedule_node *node);
// Whether only the domain, filters and sequences lie above `node` (no band, no mark).
bool is_outermost_band(isl_schedule_node *node);
// Whether the update of a reduction runs below `node` (kept).
bool has_reduction_below(const PolyModel &m, isl_schedule_node *node);

// The row-major element offset of each element of buffer `b`: { b[x0, ..] -> [x0 * s0 + ..] }.
isl_map *row_major_offsets(isl_ctx *ctx, const BufferInfo &b);
// The part of `accesses` (kept) whose range is buffer `b`.
isl_union_map *accesses_to_buffer(isl_union_map *accesses, const BufferInfo &b);
// Whether the kernel only computes buffer `b` elementwise (no reduction accumulates in it) and
// never reads it back.
bool computed_and_never_read(const PolyModel &m, const BufferInfo &b);

// The statement whose instances `instances` are, all of them (one statement's whole domain),
// or nullptr.
const PolyStatement *whole_statement(const PolyModel &m, const isl::union_set &instances);
// A fixed box's offset (kept) as one C expression per buffer dimension, in the loop iterators
// c0..c{depth-1}.
std::vector<std::string> offset_to_c(isl_multi_aff *offset, int depth);
// Replaces the model's schedule by `fn` applied to every node, bottom-up
// (isl_schedule_node_map_descendant_bottom_up from the root).
void map_schedule_bottom_up(PolyModel &model, isl_schedule_node *(*fn)(isl_schedule_node *, void *), void *user);
// The bytes of one element of the model's largest buffer.
int64_t largest_element_bytes(const PolyModel &model);

// The names of the statements below `node`, added to `names`.
// Calls `fn` on every call in `e`.
void visit_calls(const Halide::Expr &e, const std::function<void(const Halide::Internal::Call *)> &fn);

void add_statement_names(isl_schedule_node *node, std::set<std::string> &names);

// Whether `node` (kept) lies in a tile of tile-transposes (below its mark::TransposeTile): the
// emitter runs it as it is, no other pass reshapes it.
bool below_transpose_tile(isl_schedule_node *node);

// One iteration of the band below a parallel mark: the band, the statement instances below it,
// the prefix schedule of its body (`depth` dimensions: the loops around and the band's own).
struct ParallelIteration {
    isl_schedule_node *band = nullptr;
    isl_union_set *subtree = nullptr;
    isl_union_map *prefix = nullptr;
    int depth = 0;
    explicit ParallelIteration(isl_schedule_node *mark); // kept
    ParallelIteration(const ParallelIteration &) = delete;
    ParallelIteration &operator=(const ParallelIteration &) = delete;
    ~ParallelIteration();
};

// The tiles in which every point 0..size-1 exists: the values of `prefix` (instance -> the
// loops around) whose instances take every one of those values of `point` (instance -> one
// point value); both taken. The AST's "isolate" option gives such whole tiles constant bounds.
isl_set *whole_tiles(isl_union_map *prefix, isl_union_map *point, int64_t size);

// Inserts `point` (kept), restricted to the instances reaching `at`, as a permutable coincident
// band at `at`; returns the new band (or `at` when nothing reaches it).
isl_schedule_node *insert_point_band(isl_schedule_node *at, isl_multi_union_pw_aff *point);
// Inserts `point` (taken) at the top of every child of `sequence`, the child of a tile band
// below a mark (pair-rows, group-rows: each pass runs for the tile's rows before the next
// pass); returns the mark. With `nested`, a child that is itself a sequence or set gets the
// band at the top of each of its children instead, and so on down. With `unrolled`, isl's AST
// unrolls the inserted bands (one copy of the pass per point, the point a constant in each).
isl_schedule_node *run_passes_for_the_tile(isl_schedule_node *sequence, isl_multi_union_pw_aff *point, bool nested = false, bool unrolled = false);

// The index K of the per-iteration plans of the mark::Parallel `node` (model.float16_stagings
// and model.row_prefetches, kept the same length): the mark is replaced by one whose
// body_plans is a new K, unless it already has one. `node` stays the (replaced) mark.
size_t body_plans_of_mark(PolyModel &model, isl_schedule_node *&node);

// isl's simple fixed box hull of the elements of buffer `b` that an iteration of a prefix
// schedule touches: `footprint` is { prefix -> b[x] }, `offset` its box's offset (in the
// prefix) and `extent` its size per dimension.
struct FootprintBox {
    isl_map *footprint = nullptr;
    isl_multi_aff *offset = nullptr;
    Shape extent;
    FootprintBox() = default;
    FootprintBox(const FootprintBox &) = delete;
    FootprintBox &operator=(const FootprintBox &) = delete;
    ~FootprintBox();
};
// The box of `footprint` (taken: { prefix -> b[x] }, b's elements only): false when isl finds
// no fixed box.
bool footprint_box(isl_union_map *footprint, const BufferInfo &b, FootprintBox &out);
// Whether every element of `box` (within the tensor) is one its footprint touches: what a copy
// of the whole box may read or write.
bool box_is_footprint(const FootprintBox &box, const BufferInfo &b);
// { prefix -> b[x] : offset(prefix) <= x < offset(prefix) + size, 0 <= x < shape } (without
// the last condition when !clamped). `offset` is kept.
isl_map *clamped_box(isl_multi_aff *offset, const Shape &size, const BufferInfo &b, bool clamped = true);
// Whether the box is one contiguous run of the tensor (ones, then one partial dimension, then
// whole dimensions) that never leaves the tensor at any of the `iterations` (taken).
bool contiguous_within_tensor(isl_multi_aff *offset, const Shape &size, const BufferInfo &b, isl_set *iterations);

// In a leaf band that is not fully parallel, moves the statements whose schedule is constant
// over the band (lower-dimensional ones) into a sequence before the others, and recomputes the
// parallelism of the remaining band from the dependences.
void split_bands_by_dimensionality(PolyModel &model);

// Strip-mines the innermost coincident loop of every leaf band by the vector width, isolates
// the full vector tiles from the partial one (isl's "isolate" AST option) and marks the point
// loop mark::Simd. Innermost loops that carry a reduction are marked mark::Reduction.
void vectorize_inner_loops(PolyModel &model, const ScheduleOptions &options);

// Keeps scratch buffers that live only within one iteration of a parallel loop (a row's mean,
// a softmax row's exponentials) in a small local array of that iteration: the footprint per
// iteration is isl's fixed box hull of the accesses composed with the prefix schedule.
void promote_to_local_buffers(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
