// akg_reduce.h: the combines of partial sums that generated reductions call (the generator's
// emit_lane_reduction, emit_row_chunks, emit_wide_row_chunks). Internal, not installed.
// Every function has internal linkage (static inline): each ISA variant of a kernel keeps its
// own copy. Each adds its partials in a fixed order, so results do not depend on the compiler
// or on the thread count.
#pragma once

#include <stdint.h>

// Adds `partials` to `lanes`, lane by lane: a lane reduction's float partials of a group of
// blocks into its double lanes.
template <int L, typename Lane, typename Partial> static inline void akg_add_lanes(Lane *lanes, const Partial *partials) {
#pragma omp simd
    for (int64_t lane = 0; lane < L; ++lane) lanes[lane] += partials[lane];
}

// Adds to each of the n elements of `accumulators` its sums of `chunks` chunks, in chunk order:
// chunk c's sums start at sums + c * chunk_stride.
template <typename Accumulator, typename Sum>
static inline void akg_add_chunk_sums(Accumulator *__restrict accumulators, const Sum *__restrict sums, int64_t n, int64_t chunks, int64_t chunk_stride) {
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
#pragma omp simd
        for (int64_t e = 0; e < n; ++e) accumulators[e] += sums[chunk * chunk_stride + e];
    }
}
