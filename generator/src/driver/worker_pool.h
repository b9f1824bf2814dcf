// Independent jobs in forked worker processes: `akg-gen generate` generates its kernels in
// parallel this way. Processes rather than threads: isl contexts, Halide's name counters and
// the generator's schedule cache are per process, and the scheduler forks its own children.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace akg {

// The number of workers for `requested` (0: one per online CPU), at most `jobs`.
int worker_count(int requested, size_t jobs);

// job(i) for every i in [0, jobs), in `workers` forked processes that take the next job as they
// finish one; each job's strings come back in job order. In-process and in order when
// workers <= 1. A job that throws stops the run: its message is rethrown here as a UserError
// (the first failed job's, by index), once every worker has ended.
std::vector<std::vector<std::string>> run_in_workers(size_t jobs, int workers,
                                                     const std::function<std::vector<std::string>(size_t)> &job);

} // namespace akg
