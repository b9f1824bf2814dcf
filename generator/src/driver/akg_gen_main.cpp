// akg-gen: the command line of the generator.
//
//   akg-gen generate PATTERN... -o DIR       kernels → DIR/kernels/<target>/<name>.cpp + DIR/akg_catalog.{cpp,h}
//   akg-gen targets                          the targets, their CPU features and compiler flags
//   akg-gen show PATTERN --dump-after=PASS   the IR / schedule tree / AST / C++ after a pass
//   akg-gen passes                           the pipeline's passes in order
//   akg-gen ops                              the supported ops, and the rejected ones with the reason
#include <chrono>
#include <cstdio>
#include <sstream>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "driver/catalog_files.h"
#include "driver/check_kernels.h"
#include "driver/compile_shared.h"
#include "driver/pipeline.h"
#include "driver/worker_pool.h"
#include "frontend/op_table.h"

namespace fs = std::filesystem;
using namespace akg;

namespace {

std::string relative_to(const std::string &path, const std::string &root) {
    if (root.empty()) return fs::path(path).filename().string();
    std::error_code ec;
    fs::path rel = fs::relative(fs::absolute(path), fs::absolute(root), ec);
    return ec || rel.empty() ? fs::path(path).filename().string() : rel.generic_string();
}

PipelineOptions make_options(const std::string &pattern, const std::string &source_root, const std::string &suffix,
                             bool fuse, const CompositeKernel &kernel, bool use_stem, const Target &target) {
    PipelineOptions o;
    o.schedule = ScheduleOptions::for_target(target);
    o.schedule.fuse = fuse;
    o.emit.kernel_name = use_stem ? fs::path(pattern).stem().string() : kernel.name;
    o.emit.symbol = variant_symbol(sanitize_identifier(o.emit.kernel_name) + suffix, target);
    o.emit.target_name = target.name;
    o.emit.pattern_file = relative_to(pattern, source_root);
    o.emit.generator_version = kGeneratorVersion;
    return o;
}

// --float16-intermediates: "" keeps the kernel's own choice (its JSON, float16 by default).
void apply_float16_mode(CompositeKernel &kernel, const std::string &mode) {
    if (!mode.empty()) kernel.float16_per_op = mode == "float16";
}

// The targets named in a comma-separated list; "all" names every target.
std::vector<const Target *> parse_targets(const std::string &list) {
    std::vector<const Target *> out;
    if (list == "all") {
        for (const auto &t : all_targets()) out.push_back(&t);
        return out;
    }
    std::stringstream ss(list);
    for (std::string name; std::getline(ss, name, ',');)
        if (!name.empty()) out.push_back(&target_named(name));
    if (out.empty()) throw UserError("no target named in '" + list + "'");
    return out;
}

const Target &target_or_host(const std::string &name) { return name.empty() ? host_target() : target_named(name); }

int list_targets() {
    std::cout << "target      arch     host  CPU features                                  compiler flags\n";
    for (const auto &t : all_targets()) {
        std::string features, flags;
        for (const auto &f : t.cpu_features) features += (features.empty() ? "" : ",") + f;
        for (const auto &f : t.compile_flags) flags += (flags.empty() ? "" : " ") + f;
        std::printf("%-11s %-8s %-5s %-45s %s\n", t.name.c_str(), t.arch == Arch::X86_64 ? "x86_64" : "aarch64",
                    &t == &host_target() ? "best" : "", features.empty() ? "(none)" : features.c_str(), flags.c_str());
    }
    return 0;
}

int generate(const std::vector<std::string> &patterns, const std::string &out_dir, const std::string &source_root,
             const std::string &suffix, const std::string &table, bool typed, bool fuse, bool check_only, bool quiet,
             const std::vector<const Target *> &targets, const std::string &float16_mode, PassTimes *times, int jobs) {
    std::vector<CatalogEntry> entries;
    std::vector<std::pair<std::string, std::string>> files; // path, content
    auto start = std::chrono::steady_clock::now();
    // One job per kernel, all its variants (they share the schedule cache), in parallel
    // worker processes; every kernel's files come back in the patterns' order.
    auto generate_kernel = [&](size_t i) {
        const std::string &pattern = patterns[i];
        auto t0 = std::chrono::steady_clock::now();
        CompositeKernel kernel = load_composite(pattern);
        apply_float16_mode(kernel, float16_mode);
        std::vector<std::string> contents;
        std::string name;
        for (const Target *t : targets) {
            PipelineOptions o = make_options(pattern, source_root, suffix, fuse, kernel, true, *t);
            o.times = times;
            // Messages name the file as given relative to the project.
            kernel.source = o.emit.pattern_file;
            contents.push_back(run_pipeline(kernel, o));
            name = o.emit.kernel_name;
        }
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!quiet) std::cerr << "[" << i + 1 << "/" << patterns.size() << "] " << name << " (" << static_cast<int>(ms) << " ms)\n";
        return contents;
    };
    // --time-passes sums over one process.
    int workers = times ? 1 : worker_count(jobs, patterns.size());
    std::vector<std::vector<std::string>> generated = run_in_workers(patterns.size(), workers, generate_kernel);
    for (size_t i = 0; i < patterns.size(); ++i) {
        CompositeKernel kernel = load_composite(patterns[i]);
        apply_float16_mode(kernel, float16_mode);
        std::string name;
        for (size_t k = 0; k < targets.size(); ++k) {
            PipelineOptions o = make_options(patterns[i], source_root, suffix, fuse, kernel, true, *targets[k]);
            kernel.source = o.emit.pattern_file;
            files.push_back({out_dir + "/kernels/" + targets[k]->name + "/" + o.emit.kernel_name + ".cpp", std::move(generated[i][k])});
            name = o.emit.kernel_name;
        }
        entries.push_back({name, sanitize_identifier(name) + suffix, std::move(kernel)});
    }
    files.push_back({out_dir + "/akg_catalog.cpp", emit_catalog_cpp(entries, table, typed, targets)});
    files.push_back({out_dir + "/targets.txt", emit_targets_list(targets)});
    if (typed) files.push_back({out_dir + "/akg_catalog.h", emit_catalog_header(entries)});
    // Only once every kernel generated without error is anything written, and then all or
    // nothing: every changed file goes to a temporary file first, then all are renamed.
    size_t changed = 0;
    int stale = 0;
    if (check_only) {
        for (const auto &[path, content] : files) {
            std::ifstream in(path, std::ios::binary);
            std::ostringstream old;
            if (in) old << in.rdbuf();
            if (!in || old.str() != content) {
                std::cerr << "stale: " << path << "\n";
                ++stale;
            }
        }
    } else {
        changed = write_files_if_changed(files);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (times) std::cerr << times->report();
    if (check_only) {
        if (stale) {
            std::cerr << stale << " generated file(s) are stale; regenerate with: meson compile -C build regenerate\n";
            return 1;
        }
        if (!quiet) std::cerr << "generated files are up to date (" << files.size() << " files)\n";
        return 0;
    }
    if (!quiet) std::cerr << "generated " << entries.size() << " kernel(s) into " << out_dir << ": " << changed << " file(s) changed, "
                          << files.size() - changed << " unchanged, " << s << " s\n";
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"akg-gen: composite JSON → Halide IR → isl schedule → C++ kernels"};
    app.require_subcommand(1);

    std::vector<std::string> patterns;
    std::string out_dir, source_root, suffix, table = "akg_catalog", target_list = "all", target_name;
    bool no_typed = false, unfused = false, check = false, quiet = false, time_passes = false;
    std::string float16_mode;
    const char *float16_help = "float16 (every op with a float16 result rounds it, as MindSpore does; the default) or float32 "
                               "(float16 chains stay in float32, rounded at casts and stores); overrides the kernel's own "
                               "\"float16_intermediates\"";
    auto float16_option = [&](CLI::App *cmd, std::string &into) {
        cmd->add_option("--float16-intermediates", into, float16_help)->check(CLI::IsMember({"float16", "float32"}));
    };
    auto *gen = app.add_subcommand("generate", "generate kernels and the dispatch table from composite JSON files");
    gen->add_option("patterns", patterns, "composite JSON files")->required()->check(CLI::ExistingFile);
    gen->add_option("-o,--out-dir", out_dir, "output folder (kernels/, akg_catalog.cpp, akg/akg_catalog.h)")->required();
    gen->add_option("--source-root", source_root, "project root: pattern paths in banners are relative to it");
    gen->add_option("--symbol-suffix", suffix, "suffix of every generated C symbol (to link several sets)");
    gen->add_option("--table-name", table, "the table is <name>_kernels[] / <name>_kernel_count")->capture_default_str();
    gen->add_flag("--no-typed-entry-points", no_typed, "do not emit akg_<kernel>() entry points and their header");
    gen->add_flag("--unfused", unfused, "one loop nest per op (the fusion ablation)");
    gen->add_option("--targets", target_list, "comma-separated targets to generate variants for, or 'all' (see 'akg-gen targets')")
        ->capture_default_str();
    gen->add_flag("--check", check, "write nothing; exit 1 if any output file differs (staleness check)");
    gen->add_flag("-q,--quiet", quiet, "no progress output");
    gen->add_flag("--time-passes", time_passes, "print the time spent in each pass, summed over the kernels (generates in one process)");
    int jobs = 0;
    gen->add_option("-j,--jobs", jobs, "worker processes that generate kernels in parallel (default 0: one per CPU)")->capture_default_str();
    float16_option(gen, float16_mode);

    std::string show_pattern, dump_after = "schedule";
    bool show_unfused = false;
    auto *show = app.add_subcommand("show", "print a kernel's IR, schedule tree, AST or C++ after a pass");
    show->add_option("pattern", show_pattern, "composite JSON file")->required()->check(CLI::ExistingFile);
    show->add_option("--dump-after", dump_after, "pass name, or 'all' (see 'akg-gen passes')")->capture_default_str();
    show->add_flag("--unfused", show_unfused, "schedule without fusion");
    show->add_option("--target", target_name, "the target to schedule for (default: the best this machine runs)");
    float16_option(show, float16_mode);

    auto *targets_cmd = app.add_subcommand("targets", "list the targets, the CPU features each needs and their compiler flags");

    auto *passes = app.add_subcommand("passes", "list the pipeline's passes in order");

    auto *ops_cmd = app.add_subcommand("ops", "list the ops the generator compiles, and those it rejects with the reason");

    std::string kernel_pattern, kernel_out;
    auto *one = app.add_subcommand("kernel", "generate one kernel's C++ file (used by the build, one target per pattern)");
    one->add_option("pattern", kernel_pattern, "composite JSON file")->required()->check(CLI::ExistingFile);
    one->add_option("-o,--output", kernel_out, "the .cpp file to write")->required();
    one->add_option("--source-root", source_root, "project root: pattern paths in banners are relative to it");
    one->add_option("--symbol-suffix", suffix, "suffix of every generated C symbol");
    one->add_flag("--unfused", unfused, "one loop nest per op (the fusion ablation)");
    bool no_row_epilogues = false;
    one->add_flag("--no-row-epilogues", no_row_epilogues, "run the row part after a GEMM (softmax, LayerNorm) apart (the ablation)");
    one->add_option("--target", target_name, "the target of this variant (default: the best this machine runs)");
    float16_option(one, float16_mode);

    std::vector<std::string> table_patterns;
    auto *cat = app.add_subcommand("catalog", "generate the dispatch table (akg_catalog.cpp, akg/akg_catalog.h) of a set of kernels");
    cat->add_option("patterns", table_patterns, "composite JSON files")->required()->check(CLI::ExistingFile);
    cat->add_option("-o,--out-dir", out_dir, "output folder")->required();
    cat->add_option("--symbol-suffix", suffix, "suffix of every generated C symbol");
    cat->add_option("--table-name", table, "the table is <name>_kernels[] / <name>_kernel_count")->capture_default_str();
    cat->add_flag("--no-typed-entry-points", no_typed, "do not emit akg_<kernel>() entry points and their header");
    cat->add_option("--source-root", source_root, "project root: pattern paths in descriptors are relative to it");
    cat->add_option("--targets", target_list, "comma-separated targets whose variants the table lists, or 'all'")->capture_default_str();

    std::string compile_json, compile_out, keep_dir;
    auto *compile = app.add_subcommand("compile", "generate and compile one kernel into a shared object exporting the C ABI");
    compile->add_option("kernel", compile_json, "composite JSON file")->required()->check(CLI::ExistingFile);
    compile->add_option("-o,--output", compile_out, "the .so to write")->required();
    compile->add_option("--keep-sources", keep_dir, "keep the generated sources and objects in this folder");
    compile->add_option("--target", target_name, "the target to generate and compile for (default: the best this machine runs)");
    float16_option(compile, float16_mode);

    CheckOptions check_options;
    auto *check_cmd = app.add_subcommand("check", "generate, compile and run kernels on random inputs against the reference evaluator");
    check_cmd->add_option("paths", check_options.paths, "composite JSON files or folders (searched recursively)")->required();
    check_cmd->add_option("--seeds", check_options.seeds, "random seeds (each kernel runs once per seed)")->capture_default_str();
    check_cmd->add_option("--batch", check_options.batch, "kernels per compiled shared object")->capture_default_str();
    check_cmd->add_option("--max-elements", check_options.max_elements,
                          "kernels with more input+output elements run at scaled-down shapes (skipped when they cannot be scaled)")
        ->capture_default_str();
    check_cmd->add_option("--scaled-elements", check_options.scaled_elements, "element count that scaled-down kernels aim for")
        ->capture_default_str();
    check_cmd->add_flag("--unsupported-is-failure", check_options.unsupported_is_failure, "exit non-zero on unsupported kernels too");
    check_cmd->add_flag("--skip-missing", check_options.skip_missing, "exit 77 (skipped) when no path exists");
    check_cmd->add_flag("--unfused", check_options.unfused, "check the fusion ablation's kernels (one loop nest per op)");
    check_cmd->add_flag("--no-row-epilogues", check_options.no_row_epilogues, "check the kernels with row parts after a GEMM run apart");
    check_cmd->add_flag("--all-parallel", check_options.all_parallel,
                        "run every loop nest in a parallel region, however little its work (small graphs then test the parallel code)");
    check_cmd->add_option("--work-dir", check_options.work_dir, "keep the generated sources and libraries in this folder");
    check_cmd->add_option("--target", target_name, "the target to generate and compile for (default: the best this machine runs)");
    float16_option(check_cmd, check_options.float16_intermediates);
    check_cmd->add_flag("--time-passes", check_options.time_passes, "print the time spent in each pass, summed over the kernels");
    check_cmd->add_flag("--generate-only", check_options.generate_only, "generate the kernels and report the time it took; compile and run nothing");
    check_cmd->add_flag("--special-values", check_options.special_values,
                        "put NaN, +Inf and -Inf into about 2% of every float input (and its first and last elements)");
    check_cmd->add_flag("--threads-agree", check_options.threads_agree,
                        "also run each passing kernel on 1 thread: its outputs must be bitwise those of the run on OMP_NUM_THREADS threads");

    CLI11_PARSE(app, argc, argv);
    try {
        if (*targets_cmd) return list_targets();
        PassTimes times;
        if (*gen)
            return generate(patterns, out_dir, source_root, suffix, table, !no_typed, !unfused, check, quiet, parse_targets(target_list),
                            float16_mode, time_passes ? &times : nullptr, jobs);
        if (*one) {
            CompositeKernel kernel = load_composite(kernel_pattern);
            apply_float16_mode(kernel, float16_mode);
            PipelineOptions o = make_options(kernel_pattern, source_root, suffix, !unfused, kernel, true, target_or_host(target_name));
            o.row_epilogues = !no_row_epilogues;
            kernel.source = o.emit.pattern_file;
            // A build output: its time stamp must move even when its content does not, or
            // ninja would run this step again on every build.
            if (!write_if_changed(kernel_out, run_pipeline(kernel, o)))
                fs::last_write_time(kernel_out, fs::file_time_type::clock::now());
            return 0;
        }
        if (*cat) {
            std::vector<CatalogEntry> entries;
            for (const auto &p : table_patterns) {
                CompositeKernel kernel = load_composite(p);
                validate_composite(kernel);
                kernel.source = relative_to(p, source_root);
                std::string name = fs::path(p).stem().string();
                entries.push_back({name, sanitize_identifier(name) + suffix, std::move(kernel)});
            }
            for (const auto &[path, content] : std::vector<std::pair<std::string, std::string>>{
                     {out_dir + "/akg_catalog.cpp", emit_catalog_cpp(entries, table, !no_typed, parse_targets(target_list))},
                     {out_dir + "/akg_catalog.h", no_typed ? "" : emit_catalog_header(entries)}})
                if (!write_if_changed(path, content)) fs::last_write_time(path, fs::file_time_type::clock::now());
            return 0;
        }
        if (*compile) {
            CompositeKernel kernel = load_composite(compile_json);
            apply_float16_mode(kernel, float16_mode);
            const Target &target = target_or_host(target_name);
            PipelineOptions o = make_options(compile_json, "", "", true, kernel, false, target);
            std::vector<CatalogEntry> entries{{o.emit.kernel_name, sanitize_identifier(o.emit.kernel_name), kernel}};
            std::vector<std::pair<std::string, std::string>> sources{
                {o.emit.symbol + ".cpp", run_pipeline(kernel, o)},
                {"akg_catalog.cpp", emit_catalog_cpp(entries, "akg_catalog", false, {&target})}};
            std::string work = keep_dir.empty() ? (fs::temp_directory_path() / ("akg-compile-" + std::to_string(getpid()))).string() : keep_dir;
            try {
                compile_shared_object(sources, work, compile_out, Toolchain::from_environment(), target);
            } catch (...) {
                if (keep_dir.empty()) fs::remove_all(work);
                throw;
            }
            if (keep_dir.empty()) fs::remove_all(work);
            std::cerr << "compiled " << o.emit.kernel_name << " into " << compile_out << "\n";
            return 0;
        }
        if (*check_cmd) return check_kernels(check_options, Toolchain::from_environment(), target_or_host(target_name));
        if (*ops_cmd) {
            std::cout << op_list_text();
            return 0;
        }
        if (*passes) {
            for (const auto &p : pipeline_pass_names()) std::cout << p << "\n";
            return 0;
        }
        if (*show) {
            const auto &names = pipeline_pass_names();
            if (dump_after != "all" && std::find(names.begin(), names.end(), dump_after) == names.end()) {
                std::cerr << "akg-gen: unknown pass '" << dump_after << "'; the passes are:";
                for (const auto &p : names) std::cerr << " " << p;
                std::cerr << "\n";
                return 2;
            }
            CompositeKernel kernel = load_composite(show_pattern);
            apply_float16_mode(kernel, float16_mode);
            PipelineOptions o = make_options(show_pattern, "", "", !show_unfused, kernel, true, target_or_host(target_name));
            o.dump_after = dump_after;
            o.dump = &std::cout;
            run_pipeline(kernel, o);
            return 0;
        }
    } catch (const UserError &e) {
        std::cerr << "akg-gen: error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "akg-gen: internal error: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
