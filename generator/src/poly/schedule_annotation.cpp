#include "poly/schedule_annotation.h"

namespace akg {

namespace {

// The free_user callback of every id make_mark_id makes; annotation_of recognizes those ids by it.
void free_annotation(void *user) { delete static_cast<ScheduleAnnotation *>(user); }

struct Text {
    std::string operator()(const mark::Parallel &p) const {
        return "parallel(loops=" + std::to_string(p.loops) + (p.body_plans ? ", plans=" + std::to_string(*p.body_plans) : "") + ")";
    }
    std::string operator()(const mark::RowChunks &r) const { return "row_chunks(chunks=" + std::to_string(r.chunks) + ")"; }
    std::string operator()(const mark::Simd &) const { return "simd"; }
    std::string operator()(const mark::Reduction &) const { return "reduction"; }
    std::string operator()(const mark::TransposeTile &t) const { return t.staged ? "transpose_tile(staged)" : "transpose_tile"; }
    std::string operator()(const mark::ColumnRowTile &) const { return "column_row_tile"; }
    std::string operator()(const mark::MicroKernel &k) const {
        return "micro_kernel(" + std::to_string(k.mr) + "x" + std::to_string(k.nr) + ")";
    }
};

} // namespace

std::string annotation_text(const ScheduleAnnotation &annotation) { return std::visit(Text{}, annotation); }

isl_id *make_mark_id(isl_ctx *ctx, const ScheduleAnnotation &annotation) {
    auto *owned = new ScheduleAnnotation(annotation);
    isl_id *id = isl_id_alloc(ctx, annotation_text(annotation).c_str(), owned);
    if (!id) {
        delete owned;
        return nullptr;
    }
    return isl_id_set_free_user(id, &free_annotation);
}

const ScheduleAnnotation *annotation_of(isl_id *id) {
    if (!id || isl_id_get_free_user(id) != &free_annotation) return nullptr;
    return static_cast<const ScheduleAnnotation *>(isl_id_get_user(id));
}

isl_schedule_node *insert_annotated_mark(isl_schedule_node *node, const ScheduleAnnotation &annotation) {
    return isl_schedule_node_insert_mark(node, make_mark_id(isl_schedule_node_get_ctx(node), annotation));
}

std::optional<ScheduleAnnotation> mark_annotation(isl_schedule_node *node) {
    if (isl_schedule_node_get_type(node) != isl_schedule_node_mark) return std::nullopt;
    isl_id *id = isl_schedule_node_mark_get_id(node);
    const ScheduleAnnotation *annotation = annotation_of(id);
    std::optional<ScheduleAnnotation> copy;
    if (annotation) copy = *annotation;
    isl_id_free(id);
    return copy;
}

std::optional<ScheduleAnnotation> mark_annotation(isl_ast_node *node) {
    if (isl_ast_node_get_type(node) != isl_ast_node_mark) return std::nullopt;
    isl_id *id = isl_ast_node_mark_get_id(node);
    const ScheduleAnnotation *annotation = annotation_of(id);
    std::optional<ScheduleAnnotation> copy;
    if (annotation) copy = *annotation;
    isl_id_free(id);
    return copy;
}

} // namespace akg
