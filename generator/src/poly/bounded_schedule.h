// isl's scheduler under a time bound.
//
// isl's operation quota is not checked inside its simplex pivots, where the scheduler's ILPs
// spend their time, so a quota alone cannot stop a search that has blown up. The scheduler
// therefore runs in a forked child under a CPU-time limit (with a wall-clock backstop) and
// sends its schedule back as text; the caller falls back to a simpler schedule when the bound
// trips. CPU time rather than wall time keeps the outcome independent of the machine's load,
// so a regenerated catalog does not depend on what else was running.
#pragma once

#include <string>

#include <isl/schedule.h>

namespace akg {

enum class ScheduleOutcome {
    Done,      // isl found a schedule
    OverQuota, // isl stopped at its operation quota
    TimedOut,  // the CPU-time (or wall-clock) bound tripped
    Failed,    // isl returned no schedule for another reason
};

const char *outcome_name(ScheduleOutcome outcome);

// The CPU seconds one scheduler call may take: AKG_ISL_SCHEDULE_SECONDS when set (0: no bound,
// in-process), else `default_seconds`.
int schedule_seconds(int default_seconds);

// isl_schedule_constraints_compute_schedule(sc) in a child process, bounded by `cpu_seconds`
// of CPU time (no bound and in-process when 0). Takes `sc`; the schedule, null unless Done,
// belongs to `sc`'s context. Also applies `max_operations` (0: none) as isl's quota.
isl_schedule *compute_schedule_bounded(isl_schedule_constraints *sc, int cpu_seconds, unsigned long max_operations,
                                       ScheduleOutcome &outcome);

} // namespace akg
