// Dependence analysis with isl's dataflow (compute_flow), relative to the program order:
// flow (read after write), and the false dependences (write after read, write after write)
// that the schedule must respect too because buffers are reused, not renamed.
#include "poly/poly_model.h"

namespace akg {

void compute_dependences(PolyModel &m) {
    isl::union_access_info raw(m.reads);
    raw = raw.set_must_source(m.writes).set_schedule_map(m.original_schedule);
    m.dep_flow = raw.compute_flow().must_dependence().unite(raw.compute_flow().may_dependence());

    isl::union_access_info war(m.writes);
    war = war.set_may_source(m.reads).set_schedule_map(m.original_schedule);
    isl::union_access_info waw(m.writes);
    waw = waw.set_must_source(m.writes).set_schedule_map(m.original_schedule);
    m.dep_false = war.compute_flow().may_dependence().unite(waw.compute_flow().must_dependence());
}

} // namespace akg
