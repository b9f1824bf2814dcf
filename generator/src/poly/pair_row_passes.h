#pragma once
#include "poly/poly_model.h"

namespace akg {

// Row kernels over short rows (LayerNorm's 768) are bound by the latency of each row's
// reductions: the sum's lanes are combined, the next pass waits for the mean, its lanes are
// combined, the last pass waits for the variance. One row at a time, an out-of-order core has
// little else to run meanwhile.
//
// Under a parallel loop over rows whose body is a sequence of passes with a reduction among
// them, and whose rows are short (16 KiB or less of the largest tensor), this pass tiles the
// row loop by two and moves the point loop into every pass: pass 1 of both rows, then pass 2 of
// both rows, ... The two rows' chains are independent and lie next to each other in the code.
// Legal because the row loop is coincident: no dependence crosses rows, so each pass may run
// for both rows before the next pass starts.
void pair_row_passes(PolyModel &model);

} // namespace akg
