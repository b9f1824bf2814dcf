#include "poly/group_short_rows.h"

#include "poly/schedule_transforms.h"

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace akg {

using Halide::Internal::Call;
using Halide::Internal::Cast;

const Call *summed_input_read(const PolyModel &m, const Stage &sum) {
    if (sum.reduce_kind != ReduceKind::Sum || sum.value.type() != Halide::Float(32)) return nullptr;
    Halide::Expr term = sum.value;
    const Cast *widened = term.as<Cast>();
    if (widened && widened->value.type() == Halide::Float(16)) term = widened->value;
    const Call *read = term.as<Call>();
    if (!read || read->name.rfind("buf$", 0) != 0) return nullptr;
    const BufferInfo &b = m.buffer(read->name.substr(4));
    bool plain = b.kind == BufferKind::KernelInput && ((widened && b.dtype == DType::Float16) || (!widened && b.dtype == DType::Float32));
    return plain ? read : nullptr;
}

namespace {

// Whether one iteration of `band` reads exactly one row of the sum `st` adds up: a contiguous
// run of as many elements as the sum has terms. (Not a block of columns that sink-columns made
// the iteration, whose sum runs down the rows.)
bool one_row_per_iteration(const PolyModel &m, isl_schedule_node *band, const PolyStatement &st, const BufferInfo &input) {
    isl_schedule_node *inside = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(inside);
    isl_schedule_node_free(inside);
    isl_union_set *instances = isl_union_set_from_set(isl_set_universe(st.space(isl_union_map_get_ctx(prefix))));
    instances = isl_union_set_intersect(instances, isl_schedule_node_get_domain(band));
    isl_union_map *reads = isl_union_map_intersect_domain(accesses_to_buffer(m.reads.get(), input), instances);
    FootprintBox box;
    bool row = footprint_box(isl_union_map_apply_range(isl_union_map_reverse(prefix), reads), input, box) &&
               element_count(box.extent) == element_count(st.stage->reduce_extents) &&
               contiguous_within_tensor(box.offset, box.extent, input, isl_map_domain(isl_map_copy(box.footprint)));
    return row;
}

// The one sum below `band` that qualifies (see group_short_rows.h), or null.
const PolyStatement *short_row_sum(const PolyModel &m, isl_schedule_node *band) {
    isl_union_set *domain = isl_schedule_node_get_domain(band);
    const PolyStatement *found = nullptr;
    int reductions = 0;
    for (const auto &st : m.statements) {
        if (st.role != StatementRole::ReduceUpdate) continue;
        isl_union_set *mine = isl_union_set_from_set(isl_set_universe(st.space(isl_union_set_get_ctx(domain))));
        mine = isl_union_set_intersect(mine, isl_union_set_copy(domain));
        bool below = isl_union_set_is_empty(mine) != isl_bool_true;
        isl_union_set_free(mine);
        if (!below) continue;
        ++reductions;
        const Call *read = summed_input_read(m, *st.stage);
        if (read && element_count(st.stage->reduce_extents) < kShortRowElements &&
            one_row_per_iteration(m, band, st, m.buffer(read->name.substr(4))))
            found = &st;
    }
    isl_union_set_free(domain);
    return reductions == 1 ? found : nullptr;
}

} // namespace

const PolyStatement *groups_short_rows(const PolyModel &m, isl_schedule_node *band) {
    if (!coincident_band_over_passes(band)) return nullptr;
    int n = isl_schedule_node_band_n_member(band);
    // Enough groups that every thread still gets several (two threads assumed).
    return member_extent(band, n - 1) >= 2 * kRowsPerGroup ? short_row_sum(m, band) : nullptr;
}

namespace {

isl_schedule_node *group_under_mark(isl_schedule_node *node, void *user) {
    PolyModel &m = *static_cast<PolyModel *>(user);
    if (!mark_as<mark::Parallel>(node)) return node;
    isl_schedule_node *band = isl_schedule_node_child(isl_schedule_node_copy(node), 0);
    const PolyStatement *sum = groups_short_rows(m, band);
    if (!sum) {
        isl_schedule_node_free(band);
        return node;
    }
    m.grouped_row_sums.insert(sum->name);
    isl_schedule_node_free(node);
    // Only the innermost member's point loop moves into the passes.
    isl_multi_union_pw_aff *point = nullptr;
    isl_schedule_node *sequence = tile_and_take_point_band(band, kRowsPerGroup, &point);
    return run_passes_for_the_tile(sequence, point);
}

} // namespace

void group_short_rows(PolyModel &m) {
    map_schedule_bottom_up(m, group_under_mark, &m);
}

} // namespace akg
