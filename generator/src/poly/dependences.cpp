// Dependence analysis with isl's dataflow (compute_flow), relative to the program order:
// flow (read after write), and the false dependences (write after read, write after write)
// that the schedule must respect too because buffers are reused, not renamed.
#include "poly/poly_model.h"

namespace akg {

void compute_dependences(PolyModel &m) {
    isl::union_access_info raw(m.reads);
    raw = raw.set_must_source(m.writes).set_schedule_map(m.original_schedule);
    isl::union_flow flow = raw.compute_flow();
    m.dep_flow = flow.must_dependence().unite(flow.may_dependence());

    isl::union_access_info war(m.writes);
    war = war.set_may_source(m.reads).set_schedule_map(m.original_schedule);
    isl::union_access_info waw(m.writes);
    waw = waw.set_must_source(m.writes).set_schedule_map(m.original_schedule);
    m.dep_false = war.compute_flow().may_dependence().unite(waw.compute_flow().must_dependence());

    // Statements over the same iteration space (a bias add and the GeLU of its result, both
    // reading x) should share their loops so that their common inputs are read once. Read-after-
    // read relations would do that but also pull broadcast reads (the bias) into the outer loop;
    // identity relations between equal domains say "same iteration" and nothing about order.
    m.dep_input = isl::union_map(m.ctx, "{ }");
    // A chain through consecutive statements of equal shape is enough; all pairs make isl's
    // scheduler slow (minutes on a LayerNorm with many outputs).
    const PolyStatement *previous = nullptr;
    for (const PolyStatement &y : m.statements) {
        if (y.reduce_dims || y.out_dims == 0) continue;
        if (previous && previous->stage->shape == y.stage->shape) {
            std::string vars;
            for (int d = 0; d < y.out_dims; ++d) vars += (d ? ", " : "") + index_var(d);
            m.dep_input = m.dep_input.unite(isl::union_map(m.ctx, "{ " + previous->name + "[" + vars + "] -> " + y.name + "[" + vars + "] }"));
        }
        previous = &y;
    }
    m.dep_input = m.dep_input.intersect_domain(m.domain).intersect_range(m.domain);
}

} // namespace akg
