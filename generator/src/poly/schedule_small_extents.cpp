#include "poly/schedule_small_extents.h"

#include <vector>

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace akg {

namespace {

// Every set of `domain` with each dimension cut to [0, extent).
isl::union_set cut(const isl::union_set &domain, int extent) {
    struct State {
        isl_union_set *out;
        int extent;
    } state{isl_union_set_empty(isl_union_set_get_space(domain.get())), extent};
    isl_union_set_foreach_set(
        domain.get(),
        [](isl_set *set, void *user) -> isl_stat {
            auto &s = *static_cast<State *>(user);
            isl_size n = isl_set_dim(set, isl_dim_set);
            for (isl_size d = 0; d < n; ++d) set = isl_set_upper_bound_si(set, isl_dim_set, d, s.extent - 1);
            s.out = isl_union_set_add_set(s.out, set);
            return isl_stat_ok;
        },
        &state);
    return isl::manage(state.out);
}

// The extension of one band member: each statement's piece (one affine expression) applied to
// that statement's part of `full`. Null when a statement's member has several pieces.
isl_union_pw_aff *extend_member(isl_union_pw_aff *small, const isl_union_set *full) {
    struct State {
        const isl_union_set *full;
        isl_union_pw_aff *out;
        bool ok = true;
    } state{full, nullptr};
    state.out = isl_union_pw_aff_empty(isl_union_pw_aff_get_space(small));
    isl_union_pw_aff_foreach_pw_aff(
        small,
        [](isl_pw_aff *pa, void *user) -> isl_stat {
            auto &s = *static_cast<State *>(user);
            isl_aff *only = nullptr;
            if (isl_pw_aff_n_piece(pa) == 1)
                isl_pw_aff_foreach_piece(
                    pa,
                    [](isl_set *set, isl_aff *aff, void *u) -> isl_stat {
                        isl_set_free(set);
                        *static_cast<isl_aff **>(u) = aff;
                        return isl_stat_ok;
                    },
                    &only);
            isl_space *space = isl_space_domain(isl_pw_aff_get_space(pa));
            isl_pw_aff_free(pa);
            if (!only) {
                isl_space_free(space);
                s.ok = false;
                return isl_stat_error;
            }
            isl_set *whole = isl_union_set_extract_set(const_cast<isl_union_set *>(s.full), space);
            s.out = isl_union_pw_aff_add_pw_aff(s.out, isl_pw_aff_intersect_domain(isl_pw_aff_from_aff(only), whole));
            return isl_stat_ok;
        },
        &state);
    isl_union_pw_aff_free(small);
    if (!state.ok) {
        isl_union_pw_aff_free(state.out);
        return nullptr;
    }
    return state.out;
}

// The schedule of `node`'s subtree on `full` (the whole domain of the statements that reach
// it), or null where it does not extend.
isl_schedule *extend(isl_schedule_node *node, const isl::union_set &small_domain, const isl::union_set &full) {
    switch (isl_schedule_node_get_type(node)) {
    case isl_schedule_node_leaf: return isl_schedule_from_domain(full.copy());
    case isl_schedule_node_domain: {
        isl_schedule_node *child = isl_schedule_node_get_child(node, 0);
        isl_schedule *s = extend(child, small_domain, full);
        isl_schedule_node_free(child);
        return s;
    }
    case isl_schedule_node_band: {
        isl_multi_union_pw_aff *small = isl_schedule_node_band_get_partial_schedule(node);
        isl_size n = isl_multi_union_pw_aff_size(small);
        for (isl_size i = 0; i < n && small; ++i) {
            isl_union_pw_aff *member = extend_member(isl_multi_union_pw_aff_get_union_pw_aff(small, i), full.get());
            small = member ? isl_multi_union_pw_aff_set_union_pw_aff(small, i, member) : isl_multi_union_pw_aff_free(small);
        }
        isl_schedule_node *child = isl_schedule_node_get_child(node, 0);
        isl_schedule *below = small ? extend(child, small_domain, full) : nullptr;
        isl_schedule_node_free(child);
        if (!below) {
            isl_multi_union_pw_aff_free(small);
            return nullptr;
        }
        isl_schedule *s = isl_schedule_insert_partial_schedule(below, small);
        isl_schedule_node *band = isl_schedule_node_child(isl_schedule_get_root(s), 0);
        isl_schedule_free(s);
        band = isl_schedule_node_band_set_permutable(band, isl_schedule_node_band_get_permutable(node) == isl_bool_true);
        for (isl_size i = 0; i < n; ++i)
            band = isl_schedule_node_band_member_set_coincident(band, i, isl_schedule_node_band_member_get_coincident(node, i) == isl_bool_true);
        s = isl_schedule_node_get_schedule(band);
        isl_schedule_node_free(band);
        return s;
    }
    case isl_schedule_node_sequence:
    case isl_schedule_node_set: {
        bool sequence = isl_schedule_node_get_type(node) == isl_schedule_node_sequence;
        isl_schedule *s = nullptr;
        for (isl_size k = 0; k < isl_schedule_node_n_children(node); ++k) {
            isl_schedule_node *filter_node = isl_schedule_node_get_child(node, k);
            isl::union_set filter = isl::manage(isl_schedule_node_filter_get_filter(filter_node));
            // Whole statements only: the filter's statements at their whole extents.
            isl::union_set statements = small_domain.intersect(filter);
            bool whole = statements.is_equal(small_domain.intersect(isl::manage(isl_union_set_universe(filter.copy()))));
            isl::union_set part = full.intersect(isl::manage(isl_union_set_universe(filter.copy())));
            isl_schedule_node *child = isl_schedule_node_get_child(filter_node, 0);
            isl_schedule *one = whole ? extend(child, small_domain, part) : nullptr;
            isl_schedule_node_free(child);
            isl_schedule_node_free(filter_node);
            if (!one) {
                isl_schedule_free(s);
                return nullptr;
            }
            s = !s ? one : sequence ? isl_schedule_sequence(s, one) : isl_schedule_set(s, one);
        }
        return s;
    }
    default: return nullptr;
    }
}

} // namespace

isl_schedule *schedule_on_small_extents(const isl::union_set &domain, const isl::union_map &deps, const isl::union_map &proximity,
                                        int extent, int cpu_seconds, unsigned long max_operations, ScheduleOutcome &outcome) {
    isl::union_set small_domain = cut(domain, extent);
    isl_schedule_constraints *sc = isl_schedule_constraints_on_domain(small_domain.copy());
    isl::union_map small_deps = deps.intersect_domain(small_domain).intersect_range(small_domain);
    sc = isl_schedule_constraints_set_validity(sc, small_deps.copy());
    sc = isl_schedule_constraints_set_coincidence(sc, small_deps.copy());
    sc = isl_schedule_constraints_set_proximity(sc, proximity.intersect_domain(small_domain).intersect_range(small_domain).release());
    isl_schedule *small = compute_schedule_bounded(sc, cpu_seconds, max_operations, outcome);
    if (!small) return nullptr;
    isl_schedule_node *root = isl_schedule_get_root(small);
    isl_schedule_free(small);
    isl_schedule *whole = extend(root, small_domain, domain);
    isl_schedule_node_free(root);
    if (!whole) return nullptr;
    // Legal on the whole domain: every dependence goes forward in the extended schedule.
    isl_union_map *time = isl_schedule_get_map(whole);
    isl_union_map *earlier = isl_union_map_lex_lt_union_map(isl_union_map_copy(time), time);
    bool legal = isl_union_map_is_subset(deps.get(), earlier) == isl_bool_true;
    isl_union_map_free(earlier);
    if (!legal) {
        isl_schedule_free(whole);
        return nullptr;
    }
    return whole;
}

} // namespace akg
