#pragma once
#include "poly/poly_model.h"

namespace akg {

// Chooses the kernel outputs to write with non-temporal stores. When the kernel's input and
// output tensors together exceed the last-level cache (ScheduleOptions::
// stream_outputs_above_bytes), what it writes is evicted before anyone reads it, and an ordinary
// store first reads the cache line it writes (read for ownership): a third more memory traffic
// for a kernel with two inputs per output, half for one. Non-temporal stores write whole lines
// around the cache instead. Streamed are the float32 and float16 outputs that
//  - the kernel computes elementwise (no reduction accumulates in them) and never reads back,
//  - take 1 MiB or more (per-channel statistics cost nothing to read for ownership),
//  - have rows of whole cache lines, or rows of 4 KiB or more made of whole half lines (32
//    bytes), whose blocks stream the half lines they share with their neighbours (see
//    akg_stream_f32_n).
// For each, the emitter stores the block a vector loop computes to a small aligned array and
// streams it out right after the loop (akg_stream_f32_n, akg_stream_f32_to_f16_n), where the
// store is unconditional, unit-stride in the vector loop and covers whole lines; elsewhere it
// keeps ordinary stores. Streamed outputs are marked BufferInfo::streamed; stage-float16 leaves
// them to the emitter.
// A float16 output with shorter rows that are not whole lines (BatchNorm + ReLU over planes of
// 28x28 halves, 1568 bytes) is marked BufferInfo::streamed_when_staged instead: where
// stage-float16 stages it per parallel iteration as one run of kMinStreamedRunBytes or more,
// the copy-out streams the run (akg_stream_f32_to_f16_n: the partial lines at its two ends with
// ordinary stores). Streaming each 64-element block of such rows instead ran 1.4x slower than
// ordinary stores; streaming whole planes of 1568 bytes, 1.2x faster (1 thread).
// Kernels above ScheduleOptions::stream_read_back_above_bytes also stream float32 outputs read
// back only where they were just written (the emitter reads them from the block) and inputs
// updated in place that the kernel never reads. Outputs that tile-transposes copies tile by
// tile into whole output rows (one contiguous run per tile) are streamed by
// akg_transpose_streamed.
// line-runs (whole_line_runs.h) then gives each parallel iteration enough such runs to make
// whole lines (eight planes of 392 bytes), and leaves its inputs to the vector loops: with the
// inputs staged for the whole block too, that measured no faster than ordinary stores; with
// them converted per vector loop, 1.3x faster (conv bias + residual + ReLU, 1 thread).
void stream_large_outputs(PolyModel &model, const ScheduleOptions &options);

// The same choice for a GEMM part (after plan-contraction): the float32 outputs its tiles store
// at the product's own elements (the product, elementwise epilogues; not a permuted store, not a
// row part's block) are streamed on the same conditions of size and rows, where a tile row is
// whole lines (the micro-tile's width: not SSE's 8 floats or NEON's 12). The epilogue stores
// each tile row through akg_stream_f32_n; the micro-kernel streams a tile it stores directly
// when the output's lines align with it. Ordinary stores there wait after the k loop on
// reading each output line for ownership.
void stream_contraction_outputs(PolyModel &model, const ScheduleOptions &options);

// The bytes of all the kernel's input and output tensors: what one run moves at least (compared
// with ScheduleOptions::stream_outputs_above_bytes).
int64_t kernel_footprint_bytes(const PolyModel &model);

// Rows at least this long are streamed even when every other one starts in the middle of a
// cache line (rows of 21128 floats), but not rows that start elsewhere in a line: the lines they
// share between blocks get ordinary stores, and a stream of non-temporal stores with one
// ordinary line in four ran 1.5x slower than ordinary stores throughout (a corpus log-softmax
// part over rows of 30522 floats, 8 bytes apart from a line boundary: 1.26 vs 0.85 ms at 1
// thread, 2026-12-03).
constexpr int64_t kLongStreamedRowBytes = 4096;
// Staged runs at least this long are streamed by their copy-out (streamed_when_staged): planes
// of 196 halves (392 bytes, two partial lines in seven) ran 2x slower streamed one by one.
constexpr int64_t kMinStreamedRunBytes = 1024;

} // namespace akg
