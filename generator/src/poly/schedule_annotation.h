#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <variant>

#include <isl/ast.h>
#include <isl/ctx.h>
#include <isl/id.h>
#include <isl/schedule_node.h>

namespace akg {

// What a mark in the schedule tree tells the passes after it and the emitter: one type per
// decision, carried by the mark's isl_id (its user pointer), so that no reader parses a name.
// isl hands the same isl_id from the schedule tree to the mark nodes of the AST it builds.
namespace mark {

// The first `loops` loops of the band below run in parallel (OpenMP collapse). `body_plans`
// indexes PolyModel::float16_stagings and PolyModel::row_prefetches once stage-float16 or
// prefetch-rows gave an iteration of the band something to do (body_plans_of_mark).
struct Parallel {
    int loops = 1;
    std::optional<size_t> body_plans;
};

// sink-columns' loop over the rows of whole-row column sums: the emitter runs its rows in
// `chunks` chunks in parallel, each summing into accumulators of its own.
struct RowChunks {
    int chunks = 1;
};

// The loop below is a vector loop (strip-mined by vectorize, or a staged transpose tile's rows).
struct Simd {};

// The innermost loop below carries a reduction: vectorize left it as it is.
struct Reduction {};

// The two point loops of a tile of tile-transposes; `staged` when the tile's source is first
// transposed into a local array (TransposeTile::staged in PolyModel::transpose_tiles).
struct TransposeTile {
    bool staged = false;
};

// The rows of one tile of sink-columns' column sums (ColumnBlocking::single in the emitter).
struct ColumnRowTile {};

// One mr x nr tile of a contraction's products (and the epilogue of its last panel of k): the
// emitter runs the point loops below as one call of the register-blocked micro-kernel
// (kernellib's akg_gemm_micro) on packed panels (PolyModel::contraction).
struct MicroKernel {
    int mr = 0, nr = 0;
};

} // namespace mark

using ScheduleAnnotation =
    std::variant<mark::Parallel, mark::RowChunks, mark::Simd, mark::Reduction, mark::TransposeTile, mark::ColumnRowTile, mark::MicroKernel>;

// The readable rendering of `annotation`, the name its mark prints with in dumps:
// "parallel(loops=2, plans=1)", "row_chunks(chunks=16)", "simd", "transpose_tile(staged)".
std::string annotation_text(const ScheduleAnnotation &annotation);

// A new isl_id named annotation_text(annotation) that owns a copy of `annotation` (freed with
// the id). Give it to isl_schedule_node_insert_mark.
isl_id *make_mark_id(isl_ctx *ctx, const ScheduleAnnotation &annotation);

// The annotation `id` (kept) carries, or nullptr for an id make_mark_id did not make. Valid as
// long as `id` is.
const ScheduleAnnotation *annotation_of(isl_id *id);

// Inserts a mark carrying `annotation` above `node` (taken); returns the mark.
isl_schedule_node *insert_annotated_mark(isl_schedule_node *node, const ScheduleAnnotation &annotation);

// A copy of the annotation of mark `node` (kept), or nothing when `node` is not a mark or its
// id carries none.
std::optional<ScheduleAnnotation> mark_annotation(isl_schedule_node *node);
std::optional<ScheduleAnnotation> mark_annotation(isl_ast_node *node);

// The annotation of mark `node` (kept) when it is of kind `Kind`.
template <typename Kind, typename Node> std::optional<Kind> mark_as(Node *node) {
    std::optional<ScheduleAnnotation> annotation = mark_annotation(node);
    if (annotation)
        if (const Kind *kind = std::get_if<Kind>(&*annotation)) return *kind;
    return std::nullopt;
}

} // namespace akg
