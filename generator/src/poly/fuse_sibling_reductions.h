#pragma once
#include "poly/poly_model.h"

namespace akg {

// Sibling reductions over the same domain (BatchNorm's sum and sum of squares of one tensor)
// share no dependence, so isl's scheduler gives each its own loop nest in a sequence, and the
// data is read once per reduction. This pass merges two such children of a sequence into one
// child whose loops run both updates: the emitter then keeps one accumulator per reduction in
// the same loop (emit_accumulation), and each element is loaded and converted once.
//
// Two children merge when each is a filter on all instances of one update statement followed
// by a chain of bands, the two domains and band schedules are equal up to the statement's name,
// and no dependence links the later update with the earlier one or with any child in between
// (so that moving the later update up to the earlier one's place keeps every dependence).
void fuse_sibling_reductions(PolyModel &model);

} // namespace akg
