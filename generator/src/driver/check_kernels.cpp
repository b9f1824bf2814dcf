#include "driver/check_kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "driver/pipeline.h"
#include "driver/worker_pool.h"
#include "driver/scale_shapes.h"
#include "kernel_check.h"

namespace fs = std::filesystem;

namespace akg {

namespace {

enum class Outcome { Pass, Fail, Unsupported, Skipped };

struct Item {
    std::string path;
    std::string name;
    std::string symbol;
    nlohmann::json json;
    std::string source;
    CompositeKernel kernel;
    Outcome outcome = Outcome::Pass;
    std::string detail;
    std::string scaled; // how the shapes were scaled, empty when the kernel runs at its real shapes
    bool generated = false;
    double generate_seconds = 0;
    size_t ill_conditioned = 0, elements = 0;
};

std::vector<std::string> collect(const std::vector<std::string> &paths, bool &any_exists) {
    std::vector<std::string> files;
    any_exists = false;
    for (const auto &p : paths) {
        if (!fs::exists(p)) continue;
        any_exists = true;
        if (fs::is_directory(p)) {
            for (const auto &e : fs::recursive_directory_iterator(p)) {
                auto ext = e.path().extension().string();
                if (e.is_regular_file() && (ext == ".json" || ext == ".info")) files.push_back(e.path().string());
            }
        } else files.push_back(p);
    }
    std::sort(files.begin(), files.end());
    return files;
}

// "file: op #3 (MatMul): op MatMul is not supported yet" → "op MatMul is not supported yet"
std::string reason_of(const std::string &message) {
    size_t op = message.find("): ");
    if (op != std::string::npos) return message.substr(op + 3);
    size_t colon = message.find(": ");
    return colon == std::string::npos ? message : message.substr(colon + 2);
}

int64_t elements_of(const CompositeKernel &k) {
    int64_t n = 0;
    for (const auto &t : k.inputs) n += element_count(t.shape);
    for (const auto &t : k.outputs) n += element_count(t.shape);
    return n;
}

const char *label(Outcome o) {
    switch (o) {
    case Outcome::Pass: return "PASS";
    case Outcome::Fail: return "FAIL";
    case Outcome::Unsupported: return "UNSUPPORTED";
    case Outcome::Skipped: return "SKIPPED";
    }
    return "?";
}

} // namespace

int check_kernels(const CheckOptions &options, const Toolchain &toolchain, const Target &target) {
    auto start = std::chrono::steady_clock::now();
    bool any_exists = false;
    std::vector<std::string> files = collect(options.paths, any_exists);
    if (!any_exists) {
        std::cout << "akg-gen check: none of the given paths exists";
        for (const auto &p : options.paths) std::cout << " '" << p << "'";
        std::cout << (options.skip_missing ? "; skipped\n" : "\n");
        return options.skip_missing ? 77 : 1;
    }
    std::string work = options.work_dir.empty() ? (fs::temp_directory_path() / ("akg-check-" + std::to_string(getpid()))).string()
                                                : options.work_dir;
    fs::create_directories(work);

    // 1. Generate every kernel: read, validate and scale here, run the pipeline in worker
    // processes (one per CPU; one process with --time-passes, whose times are per process).
    std::vector<Item> items(files.size());
    PassTimes times;
    auto seconds_since = [](std::chrono::steady_clock::time_point t0) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    std::vector<size_t> to_generate;
    for (size_t i = 0; i < files.size(); ++i) {
        Item &it = items[i];
        auto t0 = std::chrono::steady_clock::now();
        it.path = files[i];
        it.name = fs::path(files[i]).stem().string();
        it.symbol = "k" + std::to_string(i);
        try {
            std::ifstream in(it.path);
            std::ostringstream text;
            text << in.rdbuf();
            std::string json_text = text.str();
            it.kernel = parse_composite(json_text, it.path);
            validate_composite(it.kernel);
            int64_t n = elements_of(it.kernel);
            if (n > options.max_elements) {
                auto scaled = scale_kernel_shapes(json_text, it.path, options.scaled_elements);
                if (!scaled || elements_of(parse_composite(scaled->text, it.path)) > options.max_elements) {
                    it.outcome = Outcome::Skipped;
                    it.detail = std::to_string(n) + " elements exceed the limit of " + std::to_string(options.max_elements) +
                                " (--max-elements) and no dimension could be scaled down";
                    it.generate_seconds = seconds_since(t0);
                    continue;
                }
                json_text = scaled->text;
                it.kernel = parse_composite(json_text, it.path);
                it.scaled = "scaled from " + std::to_string(n) + " to " + std::to_string(elements_of(it.kernel)) +
                            " elements (" + scaled->description + ")";
            }
            it.json = nlohmann::json::parse(json_text);
            if (!options.float16_intermediates.empty()) {
                it.kernel.float16_per_op = options.float16_intermediates == "float16";
                it.json["float16_intermediates"] = options.float16_intermediates; // the reference follows
            }
            to_generate.push_back(i);
        } catch (const UserError &e) {
            it.outcome = Outcome::Unsupported;
            it.detail = reason_of(e.what());
        } catch (const std::exception &e) {
            it.outcome = Outcome::Fail;
            it.detail = std::string("generator error: ") + e.what();
        }
        it.generate_seconds = seconds_since(t0);
    }
    // A job's strings: the outcome ("generated", "unsupported", "fail"), the source or the
    // reason, and the seconds the pipeline took.
    auto generate = [&](size_t job) -> std::vector<std::string> {
        Item &it = items[to_generate[job]];
        auto t0 = std::chrono::steady_clock::now();
        std::string outcome = "generated", text;
        try {
            PipelineOptions o;
            if (options.time_passes) o.times = &times;
            o.schedule = ScheduleOptions::for_target(target);
            o.emit.kernel_name = it.kernel.name;
            o.emit.symbol = variant_symbol(it.symbol, target);
            o.emit.target_name = target.name;
            o.emit.pattern_file = it.name;
            o.emit.generator_version = kGeneratorVersion;
            o.schedule.fuse = !options.unfused;
            o.row_epilogues = !options.no_row_epilogues;
            if (options.all_parallel) o.schedule.serial_accesses = 0;
            text = run_pipeline(it.kernel, o);
        } catch (const UserError &e) {
            outcome = "unsupported";
            text = reason_of(e.what());
        } catch (const std::exception &e) {
            outcome = "fail";
            text = std::string("generator error: ") + e.what();
        }
        return {outcome, text, std::to_string(seconds_since(t0))};
    };
    int generating_workers = options.time_passes ? 1 : worker_count(0, to_generate.size());
    std::vector<std::vector<std::string>> generated = run_in_workers(to_generate.size(), generating_workers, generate);
    for (size_t job = 0; job < to_generate.size(); ++job) {
        Item &it = items[to_generate[job]];
        const auto &r = generated[job];
        it.generate_seconds += std::stod(r[2]);
        if (r[0] == "generated") {
            it.source = r[1];
            it.generated = true;
        } else {
            it.outcome = r[0] == "unsupported" ? Outcome::Unsupported : Outcome::Fail;
            it.detail = r[1];
        }
    }

    auto generated_at = std::chrono::steady_clock::now();
    auto print_generation_summary = [&] {
        const Item *slowest = nullptr;
        double generating = 0;
        for (const auto &it : items) {
            generating += it.generate_seconds;
            if (!slowest || it.generate_seconds > slowest->generate_seconds) slowest = &it;
        }
        if (slowest) {
            char line[512];
            std::snprintf(line, sizeof line, "generation: %.2f s in all, %.1f kernels/s, the slowest %.2f s (%s)\n", generating,
                          generating > 0 ? items.size() / generating : 0.0, slowest->generate_seconds, slowest->path.c_str());
            std::cout << line;
        }
        if (options.time_passes) std::cout << times.report();
    };
    if (options.generate_only) {
        std::map<Outcome, int> counts;
        for (const auto &it : items) {
            ++counts[it.outcome];
            if (it.outcome == Outcome::Fail) std::cout << "FAIL " << it.path << ": " << it.detail << "\n";
        }
        std::cout << "akg-gen check --generate-only: " << items.size() << " kernels: " << counts[Outcome::Pass] << " generated, "
                  << counts[Outcome::Fail] << " failed, " << counts[Outcome::Unsupported] << " unsupported, " << counts[Outcome::Skipped]
                  << " skipped\n";
        print_generation_summary();
        if (options.work_dir.empty()) fs::remove_all(work);
        return counts[Outcome::Fail] > 0 ? 1 : 0;
    }
    // 2. Compile in batches (one shared object each); a batch that fails is retried kernel by kernel.
    std::map<size_t, void *> handle_of; // item index → dlopen handle
    std::vector<size_t> pending;
    for (size_t i = 0; i < items.size(); ++i)
        if (items[i].generated) pending.push_back(i);
    auto build = [&](const std::vector<size_t> &group, const std::string &tag) -> void * {
        std::vector<std::pair<std::string, std::string>> sources;
        std::vector<CatalogEntry> entries;
        for (size_t i : group) {
            sources.push_back({items[i].symbol + ".cpp", items[i].source});
            entries.push_back({items[i].kernel.name, items[i].symbol, items[i].kernel});
        }
        sources.push_back({"akg_catalog.cpp", emit_catalog_cpp(entries, "akg_catalog", false, {&target})});
        std::string dir = work + "/" + tag, so = work + "/" + tag + ".so";
        compile_shared_object(sources, dir, so, toolchain, target);
        void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) throw UserError(std::string("dlopen failed: ") + dlerror());
        return h;
    };
    size_t batch_size = static_cast<size_t>(std::max(1, options.batch));
    for (size_t b = 0; b < pending.size(); b += batch_size) {
        std::vector<size_t> group(pending.begin() + b, pending.begin() + std::min(pending.size(), b + batch_size));
        try {
            void *h = build(group, "batch" + std::to_string(b / batch_size));
            for (size_t i : group) handle_of[i] = h;
        } catch (const UserError &) {
            for (size_t i : group) {
                try {
                    handle_of[i] = build({i}, "single" + std::to_string(i));
                } catch (const UserError &e) {
                    items[i].outcome = Outcome::Fail;
                    items[i].detail = std::string("compile error: ") + e.what();
                }
            }
        }
        std::cerr << "compiled " << std::min(pending.size(), b + batch_size) << "/" << pending.size() << " kernels\n";
    }

    auto compiled_at = std::chrono::steady_clock::now();
    // 3. Run and compare, as many kernels at a time as jobs: the reference evaluator is serial
    // and takes most of the time, the kernels are short. Results are printed in order.
    // The kernel's results at the OpenMP default thread count and at 1 thread, bit for bit (the
    // kernel's libgomp is reached through its shared object; the setting is per calling thread).
    auto threads_agree = [&](Item &it, void *h, const akg_kernel *k, reference::RunFn run) {
        auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "omp_set_num_threads"));
        auto max_threads = reinterpret_cast<int (*)()>(dlsym(h, "omp_get_max_threads"));
        if (!set_threads || !max_threads) return;
        const int threads = max_threads();
        auto many = reference::kernel_result_bytes(k, it.json, options.seeds.front(), run);
        set_threads(1);
        auto one = reference::kernel_result_bytes(k, it.json, options.seeds.front(), run);
        set_threads(threads);
        if (!many || !one || *many != *one) {
            it.outcome = Outcome::Fail;
            it.detail = "results differ between " + std::to_string(threads) + " threads and 1";
        } else it.detail += "; the same bits at 1 and " + std::to_string(threads) + " threads";
    };
    auto run_and_compare = [&](Item &it, void *h) {
        auto run = reinterpret_cast<reference::RunFn>(dlsym(h, "akg_run"));
        auto table = reinterpret_cast<const akg_kernel *const *>(dlsym(h, "akg_catalog_kernels"));
        auto count = reinterpret_cast<const size_t *>(dlsym(h, "akg_catalog_kernel_count"));
        const akg_kernel *k = nullptr;
        std::string desc = "akg_kernel_desc_" + it.symbol;
        for (size_t j = 0; table && count && j < *count; ++j)
            if (table[j] == dlsym(h, desc.c_str())) k = table[j];
        if (!run || !k) {
            it.outcome = Outcome::Fail;
            it.detail = "kernel not found in its shared object";
            return;
        }
        try {
            for (uint64_t seed : options.seeds) {
                reference::CheckOptions check_options;
                check_options.special_values = options.special_values;
                auto r = reference::check_kernel(k, it.json, seed, run, check_options);
                it.ill_conditioned += r.ill_conditioned;
                it.elements += r.elements;
                if (!r.ok) {
                    it.outcome = Outcome::Fail;
                    std::string first = r.message.substr(0, r.message.find('\n'));
                    it.detail = "seed " + std::to_string(seed) + ": " + first;
                    break;
                }
                it.detail = "worst abs error " + std::to_string(r.worst_abs_error);
            }
            if (it.outcome == Outcome::Pass && options.threads_agree) threads_agree(it, h, k, run);
            if (it.outcome == Outcome::Pass && it.ill_conditioned > 0)
                it.detail += "; " + std::to_string(it.ill_conditioned) + " of " + std::to_string(it.elements) +
                             " elements ill-conditioned (matched the per-op result)";
        } catch (const std::exception &e) {
            it.outcome = Outcome::Unsupported;
            it.detail = std::string("reference: ") + e.what();
        }
    };
    std::mutex done_mutex;
    std::condition_variable done_changed;
    std::vector<char> done(items.size(), 0);
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < std::max(1, toolchain.jobs); ++w)
        workers.emplace_back([&] {
            for (size_t i = next++; i < items.size(); i = next++) {
                if (items[i].outcome == Outcome::Pass && handle_of.count(i)) run_and_compare(items[i], handle_of.at(i));
                std::lock_guard<std::mutex> lock(done_mutex);
                done[i] = 1;
                done_changed.notify_all();
            }
        });
    std::map<Outcome, int> counts;
    std::map<std::string, int> reasons;
    size_t ill_conditioned = 0, ill_kernels = 0;
    int scaled_count = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        {
            std::unique_lock<std::mutex> lock(done_mutex);
            done_changed.wait(lock, [&] { return done[i] != 0; });
        }
        Item &it = items[i];
        ++counts[it.outcome];
        if (it.outcome == Outcome::Unsupported) ++reasons[it.detail];
        if (!it.scaled.empty()) ++scaled_count;
        ill_conditioned += it.ill_conditioned;
        ill_kernels += it.ill_conditioned > 0;
        std::string detail = it.detail;
        if (!it.scaled.empty()) detail += (detail.empty() ? "" : "; ") + it.scaled;
        std::cout << "[" << i + 1 << "/" << items.size() << "] " << label(it.outcome) << " " << it.path
                  << (detail.empty() ? "" : ": " + detail) << std::endl;
    }
    for (auto &w : workers) w.join();
    auto now = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return static_cast<int>(std::chrono::duration<double>(b - a).count()); };
    double seconds = std::chrono::duration<double>(now - start).count();
    if (!reasons.empty()) {
        std::cout << "unsupported, by reason:\n";
        for (const auto &[r, n] : reasons) std::cout << "  " << n << " x " << r << "\n";
    }
    std::cout << "akg-gen check: " << items.size() << " kernels in " << static_cast<int>(seconds) << " s: " << counts[Outcome::Pass]
              << " passed, " << counts[Outcome::Fail] << " failed, " << counts[Outcome::Unsupported] << " unsupported, "
              << counts[Outcome::Skipped] << " skipped (" << scaled_count << " run at scaled shapes); generating "
              << secs(start, generated_at) << " s, compiling " << secs(generated_at, compiled_at) << " s, running "
              << secs(compiled_at, now) << " s\n";
    print_generation_summary();
    std::cout << "ill-conditioned elements: " << ill_conditioned << " in " << ill_kernels
              << " kernel(s) (the per-op float32/float16 result and the exact one disagree there; compared with the per-op one)\n";

    if (options.work_dir.empty()) fs::remove_all(work);
    bool failed = counts[Outcome::Fail] > 0 || (options.unsupported_is_failure && counts[Outcome::Unsupported] > 0);
    return failed ? 1 : 0;
}

} // namespace akg
