// run_in_workers (driver/worker_pool.h): results in job order from forked workers, a failed
// job's message rethrown, and the in-process path.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unistd.h>

#include "driver/worker_pool.h"
#include "frontend/composite_kernel.h"

using namespace akg;

namespace {

std::vector<std::string> strings_of(size_t i) {
    // Large enough that a worker's message fills several pipe buffers.
    return {std::to_string(i), std::string(100000 + i, static_cast<char>('a' + i % 26)), std::to_string(getpid())};
}

} // namespace

TEST(WorkerPool, ResultsComeBackInJobOrderFromSeveralProcesses) {
    auto results = run_in_workers(23, 3, strings_of);
    ASSERT_EQ(results.size(), 23u);
    std::set<std::string> pids;
    for (size_t i = 0; i < results.size(); ++i) {
        ASSERT_EQ(results[i].size(), 3u);
        EXPECT_EQ(results[i][0], std::to_string(i));
        EXPECT_EQ(results[i][1], strings_of(i)[1]);
        pids.insert(results[i][2]);
    }
    EXPECT_EQ(pids.count(std::to_string(getpid())), 0u); // none ran in this process
}

TEST(WorkerPool, OneWorkerRunsInProcess) {
    auto results = run_in_workers(4, 1, strings_of);
    for (const auto &r : results) EXPECT_EQ(r[2], std::to_string(getpid()));
}

TEST(WorkerPool, AFailedJobsMessageIsRethrown) {
    auto job = [](size_t i) -> std::vector<std::string> {
        if (i == 5) throw UserError("pattern 5 is bad");
        return {std::to_string(i)};
    };
    try {
        run_in_workers(9, 2, job);
        FAIL() << "no error";
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "pattern 5 is bad");
    }
}

TEST(WorkerPool, WorkerCountIsBoundedByTheJobs) {
    EXPECT_EQ(worker_count(8, 3), 3);
    EXPECT_EQ(worker_count(2, 10), 2);
    EXPECT_GE(worker_count(0, 100), 1);
    EXPECT_EQ(worker_count(0, 0), 1);
}
