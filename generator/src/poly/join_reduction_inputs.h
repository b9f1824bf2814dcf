#pragma once
#include "poly/poly_model.h"

namespace akg {

// An elementwise output and a reduction that read the same input tensor element for element
// (ReLU's gradient, written out, and the BatchNorm gradient sums over the same expression; a
// gradient unscaled and the sum of its squares) share no dependence, so isl's scheduler gives
// each its own loop nest and the input is read twice. This pass moves such an elementwise
// statement into the reduction's loops: its instance E[i] joins the leaf of the update U[phi(i)]
// that reads the same input element, and every band above that leaf schedules E[i] where it
// schedules U[phi(i)]. The emitter then stores the elementwise result from the reduction's
// innermost loop (emit_lane_reduction's side statements), and the input is read once.
//
// The statement moves when
//  - its child of a sequence or set is a filter on all of its instances, and it is an Assign,
//  - no dependence leads to or from any of its instances (it reads kernel inputs only and
//    nobody reads what it writes), so any place in the schedule is legal,
//  - a kernel input read by both gives a bijection phi from its instances onto all instances
//    of one reduction update in a sibling subtree, reached from that child through bands,
//    filters, sequences and sets only.
//
// A value that materialize saved for the passes after a reduction (saved_for_later_passes: a
// float16 residual sum, or a LayerNorm's float16 input converted once) joins the reduction that
// reads it: phi maps each instance to the update reading the element it writes, nothing leads
// into it, and the statements that depend on it either need the reduction's result or run
// after the reduction's loops. The emitter stores it before the update (feeding side). A
// statement that only copies such a value out then joins the same reduction, stored after the
// update. These join however short the row: a store where the later passes would recompute;
// so does an independent statement that reads an input element for element like such a side
// (the dropout mask output next to the residual sum). The walk repeats until nothing more joins.
//
// A last walk then puts an independent statement that reads a kernel input element for element
// like a statement W, whose values a reduction reads element for element, into W's leaf (a
// statement of its own there, not a side): softmax backward's shifted logits, written out next
// to the gradient its column sum adds up, no longer take a second pass over the input.
void join_reduction_inputs(PolyModel &model);

} // namespace akg
