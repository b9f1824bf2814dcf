#pragma once
#include "poly/poly_model.h"

namespace akg {

// Row kernels over short rows (LayerNorm's 768) are bound by the latency of each row's
// reductions: the sum's lanes are combined, the next pass waits for the mean, its lanes are
// combined, the last pass waits for the variance. One row at a time, an out-of-order core has
// little else to run meanwhile.
//
// Under a parallel band over rows (in a serial kernel, such as a GEMM's row part run on a slice
// of rows, its outermost band; every member coincident, the innermost one the rows) whose
// body is a sequence of passes where one needs the result of a reduction, and whose rows are
// short (16 KiB or less of the largest tensor), reading one row input or rows of at most 256
// elements, this pass tiles the innermost member by two and moves the point loop into every
// pass, down through nested sequences and sets: pass 1 of both rows, then pass 2 of both rows,
// ... The two rows' chains are independent and lie next to each other in the code; for float16
// rows and rows of at most 256 elements isl's AST unrolls the point loop. Legal because the
// member is coincident: no dependence crosses rows, so each pass may run for both rows before
// the next pass starts.
void pair_row_passes(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
