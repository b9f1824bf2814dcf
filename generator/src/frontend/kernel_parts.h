// A kernel with MatMul/BatchMatMul ops is run as parts: one per contraction (the op, the cheap
// layout and cast ops that only feed it, and the elementwise ops after it over its output's
// shape, its epilogue, with the transposes and reshapes of their values) and the other ops
// between them, in an order that respects every
// dependence. Scatters, scans and pooling windows are parts of their own too, emitted as a
// direct loop nest (emit_direct.cpp). Each part is a composite kernel of its own; the tensors that cross parts are
// kernel inputs, kernel outputs, or intermediates the kernel allocates.
#pragma once

#include <string>
#include <vector>

#include "frontend/composite_kernel.h"

namespace akg {

struct KernelPart {
    CompositeKernel kernel;  // the part's ops; its inputs and outputs are the tensors it reads and gives
    bool contraction = false; // scheduled by the GEMM path
    bool direct = false;      // one scatter, scan or pooling op, emitted by emit_direct_cpp
    // A fused part right after a contraction part that works row by row on the product's rows
    // (a softmax, a LayerNorm): its ops are elementwise or reduce the last axis only, every
    // tensor it touches is the product's rows or broadcast over them, and what it reads of the
    // contraction part is the product or its elementwise epilogue. The GEMM may run it on each
    // panel of rows as soon as they are done (RowEpilogue in poly_model.h).
    bool row_part = false;
};

struct KernelParts {
    std::vector<KernelPart> parts;            // in execution order
    std::vector<TensorDesc> intermediates;    // tensors passed between parts, not kernel outputs
};

bool has_contraction(const CompositeKernel &kernel);
// TensorScatterAdd, UnsortedSegmentSum, CumSum, CumProd and windowed (not global) Pool2D,
// whose operands are all tensors.
bool is_direct_op(const OpDesc &op);
// A contraction or a direct op: the kernel runs as parts.
bool needs_parts(const CompositeKernel &kernel);

// The parts of a validated kernel for which needs_parts holds.
KernelParts split_kernel_parts(const CompositeKernel &kernel);

} // namespace akg
