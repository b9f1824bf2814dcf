#pragma once
#include "poly/poly_model.h"

namespace akg {

// Per-channel reductions over NCHW (BatchNorm statistics and their gradients): the parallel
// loop runs over channels, and each channel's data is N separate rows of H*W elements, a whole
// image apart. Reading one 6 KB row at a time, the hardware prefetchers restart at every row:
// a 1-thread sum over [32, 256, 56, 56] float16 ran at 16 GB/s, against 34 GB/s when 32
// adjacent channels are read row after row (that is, N outer, channels inner).
//
// Under a parallel loop whose stride over the largest tensor lies between the strides of two
// loops below it (N: an image, the channel: H*W, H*W: 1), this pass tiles the parallel loop by
// a block of channels and inserts the point loop where its stride fits: below the loops of
// larger stride (N), above those of smaller stride (H*W), and at the leaves elsewhere
// (initializations, finalizations). Each parallel iteration then reads a block of adjacent
// rows per image. Legal because the point loop is coincident: every dependence keeps the
// channel, so the loop may move inwards.
void interleave_channel_blocks(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
