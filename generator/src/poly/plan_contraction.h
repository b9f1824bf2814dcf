#pragma once
#include "poly/poly_model.h"

namespace akg {

// Pass plan-contraction: for a model whose kernel part holds a contraction (a MatMul), finds
// its operands and epilogue and decides the GEMM's blocking (from the target by the analytical
// model of Low et al.), how it is shared out to threads, and whether A is packed
// (PolyModel::contraction), and takes `row_part` (a row epilogue the driver proposes) where the
// blocking keeps whole rows together. Throws UserError when the ops around the contraction are
// not ones the GEMM path runs.
void plan_contraction(PolyModel &model, const ScheduleOptions &options, const RowEpilogue *row_part = nullptr);

// The blocking of an m x n x k product on `target` (GemmBlocking).
GemmBlocking gemm_blocking(const Target &target, int64_t m, int64_t n, int64_t k);

// Whether a graph holds a contraction the GEMM path runs: one with elements and terms (an
// empty product, or a sum of no terms, runs as the reduction it also is).
bool graph_has_contraction(const TensorGraph &graph);

// The plan as text, for --dump-after=plan-contraction.
std::string contraction_plan_text(const PolyModel &model);

} // namespace akg
