#pragma once
#include "poly/poly_model.h"

namespace akg {

// Pass tile-contraction: the schedule tree of a GEMM part (PolyModel::contraction), BLIS's
// loop nest built in isl. Two statements join the model's: PackB[b.., s, jr] packs the
// jr-th micro-panel of B (all of k) for slice s, PackA[b.., jt, pt, ir] the ir-th micro-panel
// of A (panel pt of k) for panel jt of columns. The tree, outermost first:
//   parallel mark, band (batch, row slice s, column panel jt)
//   sequence: PackB over jr | band (k panel pt, row block it)
//     sequence: PackA over ir | band (jr, ir) tiles of mr x nr | RowPart over ir
//       micro_kernel mark: init | update over (i, j, k) | epilogue statements
// RowPart[b.., ir] runs the row epilogue (ContractionPlan::row_epilogue) on micro-panel ir of
// rows once the tiles of its block are done.
// The products' tiles are the update's domain tiled by floor divisions; the schedule is
// checked against the model's dependences (flow and false) before it replaces the model's.
void tile_contraction(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
