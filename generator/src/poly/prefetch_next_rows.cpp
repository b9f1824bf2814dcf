#include "poly/prefetch_next_rows.h"

#include "poly/schedule_transforms.h"

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace akg {

namespace {


// The run of input `b` one iteration of the band reads, and its offset at the next iteration.
bool plan_prefetch(PolyModel &m, int64_t min_bytes, const BufferInfo &b, isl_union_set *subtree, isl_union_map *prefix, int depth, RowPrefetch &out) {
    if (b.kind != BufferKind::KernelInput || b.shape.empty()) return false;
    isl_union_map *writes = accesses_to_buffer(m.writes.get(), b);
    bool read_only = isl_union_map_is_empty(writes) == isl_bool_true;
    isl_union_map_free(writes);
    if (!read_only) return false;
    isl_union_map *mine = isl_union_map_intersect_domain(accesses_to_buffer(m.reads.get(), b), isl_union_set_copy(subtree));
    if (isl_union_map_is_empty(mine) == isl_bool_true) {
        isl_union_map_free(mine);
        return false;
    }
    FootprintBox box;
    bool ok = footprint_box(isl_union_map_apply_range(isl_union_map_reverse(isl_union_map_copy(prefix)), mine), b, box) &&
              element_count(box.extent) * dtype_bytes(b.dtype) >= min_bytes &&
              contiguous_within_tensor(box.offset, box.extent, b, isl_map_domain(isl_map_copy(box.footprint)));
    if (ok) {
        // The iteration reads the whole run: nothing is prefetched that is not read.
        ok = box_is_footprint(box, b);
    }
    if (!ok) return false;
    // The offset at the next iteration of the band's loop (the last prefix dimension).
    isl_multi_aff *next_iteration = isl_multi_aff_identity(isl_space_map_from_set(isl_space_domain(isl_multi_aff_get_space(box.offset))));
    isl_aff *last = isl_aff_add_constant_si(isl_multi_aff_get_at(next_iteration, depth - 1), 1);
    next_iteration = isl_multi_aff_set_at(next_iteration, depth - 1, last);
    isl_multi_aff *next = isl_multi_aff_pullback_multi_aff(isl_multi_aff_copy(box.offset), next_iteration);
    // A run every iteration shares (a bias row) stays cached: nothing to prefetch.
    ok = isl_multi_aff_plain_is_equal(next, box.offset) != isl_bool_true;
    if (ok) {
        out.buffer = b.name;
        out.box = box.extent;
        out.next_offset_c = offset_to_c(next, depth);
    }
    isl_multi_aff_free(next);
    return ok;
}

struct Context {
    PolyModel *model;
    int64_t min_bytes; // ScheduleOptions::prefetch_rows_from_bytes
};

isl_schedule_node *prefetch_under_mark(isl_schedule_node *node, void *user) {
    const Context &c = *static_cast<const Context *>(user);
    PolyModel &m = *c.model;
    std::optional<mark::Parallel> parallel = mark_as<mark::Parallel>(node);
    if (!parallel || parallel->loops != 1) return node; // one loop in parallel
    ParallelIteration iteration(node);
    if (isl_schedule_node_band_n_member(iteration.band) != 1) return node;
    std::vector<RowPrefetch> prefetches;
    for (const auto &b : m.buffers) {
        RowPrefetch p;
        if (plan_prefetch(m, c.min_bytes, b, iteration.subtree, iteration.prefix, iteration.depth, p)) prefetches.push_back(p);
    }
    if (prefetches.empty()) return node;
    m.row_prefetches.at(body_plans_of_mark(m, node)) = std::move(prefetches);
    return node;
}

} // namespace

void prefetch_next_rows(PolyModel &m, const ScheduleOptions &options) {
    Context c{&m, options.prefetch_rows_from_bytes};
    map_schedule_bottom_up(m, prefetch_under_mark, &c);
}

} // namespace akg
