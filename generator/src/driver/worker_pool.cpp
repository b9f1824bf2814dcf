#include "driver/worker_pool.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <new>

#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/composite_kernel.h"

namespace akg {

namespace {

// A worker's message per job: index, status (0: done, 1: failed), string count, then each
// string as its length and bytes; a failed job sends its error message as its one string.
void put(std::string &out, uint64_t v) { out.append(reinterpret_cast<const char *>(&v), sizeof v); }

bool write_all(int fd, const std::string &data) {
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

[[noreturn]] void work(int fd, std::atomic<size_t> *next, size_t jobs, const std::function<std::vector<std::string>(size_t)> &job) {
    for (size_t i = next->fetch_add(1); i < jobs; i = next->fetch_add(1)) {
        std::string msg;
        put(msg, i);
        int status = 0;
        std::vector<std::string> result;
        try {
            result = job(i);
        } catch (const std::exception &e) {
            status = 1;
            result = {e.what()};
        }
        put(msg, static_cast<uint64_t>(status));
        put(msg, result.size());
        for (const auto &s : result) {
            put(msg, s.size());
            msg += s;
        }
        if (!write_all(fd, msg) || status) {
            next->store(jobs); // the others stop after their current job
            _exit(status ? 1 : 2);
        }
    }
    _exit(0);
}

// Splits the bytes read so far from one worker into whole messages.
struct Reader {
    int fd = -1;
    std::string buffer;
    bool open = true;

    template <typename F> void take(F &&on_message) {
        for (;;) {
            size_t at = 0;
            auto get = [&](uint64_t &v) {
                if (buffer.size() - at < sizeof v) return false;
                std::memcpy(&v, buffer.data() + at, sizeof v);
                at += sizeof v;
                return true;
            };
            uint64_t index, status, count;
            if (!get(index) || !get(status) || !get(count)) return;
            std::vector<std::string> strings;
            for (uint64_t k = 0; k < count; ++k) {
                uint64_t len;
                if (!get(len) || buffer.size() - at < len) return;
                strings.emplace_back(buffer, at, len);
                at += len;
            }
            buffer.erase(0, at);
            on_message(index, status, std::move(strings));
        }
    }
};

} // namespace

int worker_count(int requested, size_t jobs) {
    long cpus = requested > 0 ? requested : sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    return static_cast<int>(std::min<long>(cpus, static_cast<long>(std::max<size_t>(jobs, 1))));
}

std::vector<std::vector<std::string>> run_in_workers(size_t jobs, int workers,
                                                     const std::function<std::vector<std::string>(size_t)> &job) {
    std::vector<std::vector<std::string>> results(jobs);
    if (workers <= 1 || jobs <= 1) {
        for (size_t i = 0; i < jobs; ++i) results[i] = job(i);
        return results;
    }
    // The next job's index, shared by the workers.
    void *shared = mmap(nullptr, sizeof(std::atomic<size_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) throw UserError(std::string("cannot map the workers' job counter: ") + std::strerror(errno));
    auto *next = new (shared) std::atomic<size_t>(0);
    std::vector<Reader> readers;
    std::vector<pid_t> pids;
    for (int w = 0; w < workers; ++w) {
        int fds[2];
        if (pipe(fds) != 0) break;
        std::fflush(nullptr);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            for (const auto &r : readers) close(r.fd);
            work(fds[1], next, jobs, job);
        }
        close(fds[1]);
        if (pid < 0) {
            close(fds[0]);
            break;
        }
        pids.push_back(pid);
        readers.push_back(Reader{fds[0], {}, true});
    }
    std::map<size_t, std::string> failures;
    std::vector<bool> done(jobs, false);
    for (;;) {
        std::vector<pollfd> polled;
        std::vector<Reader *> of;
        for (auto &r : readers)
            if (r.open) {
                polled.push_back({r.fd, POLLIN, 0});
                of.push_back(&r);
            }
        if (polled.empty()) break;
        if (poll(polled.data(), polled.size(), -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (size_t k = 0; k < polled.size(); ++k) {
            if (!(polled[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char chunk[1 << 16];
            ssize_t n = read(of[k]->fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                of[k]->open = false;
                close(of[k]->fd);
                continue;
            }
            of[k]->buffer.append(chunk, static_cast<size_t>(n));
            of[k]->take([&](uint64_t index, uint64_t status, std::vector<std::string> strings) {
                if (index >= jobs) return;
                if (status) failures[index] = strings.empty() ? "job failed" : strings[0];
                else results[index] = std::move(strings);
                done[index] = true;
            });
        }
    }
    for (pid_t pid : pids) {
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    }
    munmap(shared, sizeof(std::atomic<size_t>));
    if (!failures.empty()) throw UserError(failures.begin()->second);
    // A worker that died without a message (a signal, no memory): its jobs run here, where a
    // crash is reported as it happens.
    for (size_t i = 0; i < jobs; ++i)
        if (!done[i]) results[i] = job(i);
    return results;
}

} // namespace akg
