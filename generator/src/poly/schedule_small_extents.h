// isl's schedule of a kernel computed on a copy with small extents.
//
// The scheduler's ILPs grow with the constants of the domain (a [320, 21128] softmax gradient
// with a column sum: 9 s; the same graph at [32, 21128] 0.3 s), while the schedules it finds
// here are extent-free: coefficients 0 or 1 and no constant terms (compute_schedule's options).
// So when the full problem is over its bound, the same problem is scheduled on every dimension
// cut to its first few values, and the affine schedule found there is applied to the whole
// domain, kept only if it is legal for every dependence of the whole domain.
#pragma once

#include <isl/cpp.h>
#include <isl/schedule.h>

#include "poly/bounded_schedule.h"

namespace akg {

// The schedule of `domain` under validity and coincidence `deps` and `proximity`, computed on
// every dimension cut to [0, extent) (bounded as compute_schedule_bounded) and extended to the
// whole domain; null when isl fails there, when the schedule does not extend (a statement split
// by a filter, a band member in pieces, a node other than band/sequence/set/filter) or when it
// is not legal for `deps`. `outcome` is that of isl's call on the small copy.
isl_schedule *schedule_on_small_extents(const isl::union_set &domain, const isl::union_map &deps, const isl::union_map &proximity,
                                        int extent, int cpu_seconds, unsigned long max_operations, ScheduleOutcome &outcome);

} // namespace akg
