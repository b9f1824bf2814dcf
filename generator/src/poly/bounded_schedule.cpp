#include "poly/bounded_schedule.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <isl/ctx.h>

namespace akg {

namespace {

// The child's report: one status byte, then the schedule's text when the status is 'S'.
constexpr char kSchedule = 'S', kQuota = 'Q', kFailed = 'F';

isl_schedule *compute_in_process(isl_schedule_constraints *sc, unsigned long max_operations, ScheduleOutcome &outcome) {
    isl_ctx *ctx = isl_schedule_constraints_get_ctx(sc);
    isl_ctx_reset_operations(ctx);
    isl_ctx_set_max_operations(ctx, max_operations);
    isl_schedule *s = isl_schedule_constraints_compute_schedule(sc);
    bool quota = !s && isl_ctx_last_error(ctx) == isl_error_quota;
    isl_ctx_set_max_operations(ctx, 0);
    isl_ctx_reset_operations(ctx);
    if (!s) isl_ctx_reset_error(ctx);
    outcome = s ? ScheduleOutcome::Done : quota ? ScheduleOutcome::OverQuota : ScheduleOutcome::Failed;
    return s;
}

bool write_all(int fd, const char *data, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

[[noreturn]] void run_child(int fd, isl_schedule_constraints *sc, int cpu_seconds, unsigned long max_operations) {
    // A CPU limit ends the child with SIGXCPU, whose default action also dumps core.
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    struct rlimit cpu = {static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds) + 1};
    setrlimit(RLIMIT_CPU, &cpu);
    ScheduleOutcome outcome;
    isl_schedule *s = compute_in_process(sc, max_operations, outcome);
    bool ok = true;
    if (s) {
        char *text = isl_schedule_to_str(s);
        ok = text && write_all(fd, &kSchedule, 1) && write_all(fd, text, std::strlen(text));
        free(text);
    } else {
        ok = write_all(fd, outcome == ScheduleOutcome::OverQuota ? &kQuota : &kFailed, 1);
    }
    // _exit: no atexit handlers, no flush of the parent's stdio buffers a second time.
    _exit(ok ? 0 : 1);
}

} // namespace

const char *outcome_name(ScheduleOutcome outcome) {
    switch (outcome) {
    case ScheduleOutcome::Done: return "done";
    case ScheduleOutcome::OverQuota: return "over isl's operation quota";
    case ScheduleOutcome::TimedOut: return "over its time bound";
    case ScheduleOutcome::Failed: return "failed";
    }
    return "?";
}

int schedule_seconds(int default_seconds) {
    if (const char *e = std::getenv("AKG_ISL_SCHEDULE_SECONDS")) return std::atoi(e);
    return default_seconds;
}

isl_schedule *compute_schedule_bounded(isl_schedule_constraints *sc, int cpu_seconds, unsigned long max_operations,
                                       ScheduleOutcome &outcome) {
    if (!sc) {
        outcome = ScheduleOutcome::Failed;
        return nullptr;
    }
    if (cpu_seconds <= 0) return compute_in_process(sc, max_operations, outcome);
    isl_ctx *ctx = isl_schedule_constraints_get_ctx(sc);
    int fds[2];
    if (pipe(fds) != 0) return compute_in_process(sc, max_operations, outcome);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return compute_in_process(sc, max_operations, outcome);
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(fds[1], sc, cpu_seconds, max_operations);
    }
    close(fds[1]);
    isl_schedule_constraints_free(sc);
    // The wall-clock backstop, for a child that gets little CPU on a loaded machine.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8 * cpu_seconds + 10);
    std::string report;
    bool timed_out = false;
    char buf[1 << 16];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) continue; // the deadline check above ends the wait
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        report.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (timed_out || (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))) {
        outcome = ScheduleOutcome::TimedOut;
        return nullptr;
    }
    if (!clean_exit || report.empty() || report[0] != kSchedule) {
        outcome = !report.empty() && report[0] == kQuota ? ScheduleOutcome::OverQuota : ScheduleOutcome::Failed;
        return nullptr;
    }
    isl_schedule *s = isl_schedule_read_from_str(ctx, report.c_str() + 1);
    outcome = s ? ScheduleOutcome::Done : ScheduleOutcome::Failed;
    return s;
}

} // namespace akg
