// Scheduling with isl's Pluto-style scheduler.
//
// The options decide fusion (see STACK-NOTES): with isl's defaults, the last statement of a
// softmax is not fused and column loops are merged through parametric shifts. Scheduling each
// component as a whole, without maximizing band depth or serializing SCCs, and preferring
// outer coincidence gives one parallel row loop that contains the reductions and the
// elementwise tail in sequence.
#include "poly/poly_model.h"

#include <isl/options.h>
#include <isl/schedule.h>

namespace akg {

void compute_schedule(PolyModel &m, const ScheduleOptions &options) {
    isl_ctx *ctx = m.ctx.get();
    isl::union_map deps = m.dep_flow.unite(m.dep_false);
    if (!options.fuse) {
        // The ablation: program order, one loop nest per statement. Within a statement, the
        // output dimensions carry no dependence (coincident); reduced dimensions do.
        isl_schedule *seq = nullptr;
        for (const auto &st : m.statements) {
            int n = st.out_dims + st.reduce_dims;
            isl_space *space = isl_space_set_tuple_name(isl_space_set_alloc(ctx, 0, n), isl_dim_set, st.name.c_str());
            isl::set own = isl::manage(isl_union_set_extract_set(m.domain.copy(), space));
            isl_schedule *one = isl_schedule_from_domain(isl_union_set_from_set(own.copy()));
            if (n > 0) {
                isl_map *identity = isl_map_identity(isl_space_map_from_set(isl_set_get_space(own.get())));
                identity = isl_map_intersect_domain(identity, own.copy());
                isl_multi_union_pw_aff *id = isl_multi_union_pw_aff_from_union_map(isl_union_map_from_map(identity));
                // The identity map's range has no tuple name; schedule spaces must be unnamed.
                id = isl_multi_union_pw_aff_reset_tuple_id(id, isl_dim_out);
                isl_schedule_node *node = isl_schedule_get_root(one);
                isl_schedule_free(one);
                node = isl_schedule_node_child(node, 0);
                node = isl_schedule_node_insert_partial_schedule(node, id);
                for (int d = 0; d < n; ++d)
                    node = isl_schedule_node_band_member_set_coincident(node, d, d < st.out_dims);
                one = isl_schedule_node_get_schedule(node);
                isl_schedule_node_free(node);
            }
            seq = seq ? isl_schedule_sequence(seq, one) : one;
        }
        m.schedule = isl::manage(seq ? seq : isl_schedule_from_domain(m.domain.copy()));
        return;
    }
    isl_options_set_schedule_whole_component(ctx, 1);
    isl_options_set_schedule_maximize_band_depth(ctx, 0);
    isl_options_set_schedule_serialize_sccs(ctx, 0);
    isl_options_set_schedule_outer_coincidence(ctx, 1);
    // No constant shifts: they would merge the column loops of different statements into
    // one loop with guards (767 + r0, 1534 + i1) instead of a sequence of clean loops.
    isl_options_set_schedule_max_constant_term(ctx, 0);
    // Loop permutations and fusions need coefficients of 0 and 1 only; bounding them keeps the
    // scheduler's ILPs small (unbounded, a reshape between [233008,1] and [8,29126] kept it busy
    // for minutes with coefficients in the tens of thousands).
    isl_options_set_schedule_max_coefficient(ctx, 1);
    // Proximity adds the fusion hints (dep_input) to the dependences.
    isl::union_map proximity = deps.unite(m.dep_input);
    isl_schedule_constraints *sc = isl_schedule_constraints_on_domain(m.domain.copy());
    sc = isl_schedule_constraints_set_validity(sc, deps.copy());
    sc = isl_schedule_constraints_set_coincidence(sc, deps.copy());
    sc = isl_schedule_constraints_set_proximity(sc, proximity.copy());
    m.schedule = isl::manage(isl_schedule_constraints_compute_schedule(sc));
    if (m.schedule.is_null()) throw InternalError("isl's scheduler failed");
}

} // namespace akg
