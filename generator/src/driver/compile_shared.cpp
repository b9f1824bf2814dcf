#include "driver/compile_shared.h"
#include "driver/catalog_files.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace akg {

namespace {

std::string quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

// Runs a shell command with its output in `log`; returns the exit status.
int run(const std::string &command, const std::string &log) {
    int status = std::system((command + " >" + quote(log) + " 2>&1").c_str());
    if (status == -1) return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string tail(const std::string &text, size_t max_chars = 4000) {
    return text.size() <= max_chars ? text : "...\n" + text.substr(text.size() - max_chars);
}

void require_tool(const std::string &tool) {
    std::string first = tool.substr(0, tool.find(' '));
    if (std::system(("command -v " + quote(first) + " >/dev/null 2>&1").c_str()) != 0)
        throw UserError("the compiler '" + first + "' was not found (set CXX / CC to another one)");
}

} // namespace

Toolchain Toolchain::from_environment() {
    Toolchain t;
#ifdef AKG_KERNELLIB_DIR
    t.kernellib_dir = AKG_KERNELLIB_DIR;
#endif
#ifdef AKG_KERNEL_CXXFLAGS
    t.kernel_flags = AKG_KERNEL_CXXFLAGS;
#else
    t.kernel_flags = "-O3 -fno-math-errno -fopenmp";
#endif
#ifdef AKG_KERNEL_CXX // a sanitized build: its runtime needs kernels from the same compiler
    t.cxx = AKG_KERNEL_CXX;
    t.cc = AKG_KERNEL_CC;
#endif
    if (const char *e = std::getenv("AKG_KERNELLIB_DIR")) t.kernellib_dir = e;
    if (const char *e = std::getenv("AKG_KERNEL_CXXFLAGS")) t.kernel_flags = e;
    if (const char *e = std::getenv("CXX")) t.cxx = e;
    if (const char *e = std::getenv("CC")) t.cc = e;
    unsigned hw = std::thread::hardware_concurrency();
    t.jobs = hw ? static_cast<int>(hw) : 2;
    return t;
}

void compile_shared_object(const std::vector<std::pair<std::string, std::string>> &sources, const std::string &work_dir,
                           const std::string &output, const Toolchain &t, const Target &target) {
    fs::path parent = fs::path(output).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw UserError(output + ": cannot write (" + parent.string() + " is not a directory)");
    require_tool(t.cxx);
    require_tool(t.cc);
    if (t.kernellib_dir.empty() || !fs::exists(t.kernellib_dir + "/runtime/akg_kernel_def.h"))
        throw UserError("the kernel runtime was not found at '" + t.kernellib_dir + "' (set AKG_KERNELLIB_DIR)");
    fs::create_directories(work_dir);
    std::string includes = " -I" + quote(t.kernellib_dir + "/include") + " -I" + quote(t.kernellib_dir + "/runtime") +
                           " -I" + quote(work_dir);
    // The C++ sources are compiled as one unity translation unit per job, each including its
    // share of the files: a kernel's own code compiles in a few tens of milliseconds, the
    // headers (immintrin.h at -march=native) in half a second, so a batch of 24 kernels compiles
    // in about 2 s instead of 20. Generated kernels prefix every file-scope name with their
    // symbol and define no macros, so they share a translation unit without clashes; the
    // compiler's messages still name the included file and line.
    std::vector<std::pair<std::string, size_t>> cpp_files; // (name, bytes)
    size_t total_bytes = 0;
    for (const auto &[name, content] : sources) {
        write_if_changed(work_dir + "/" + name, content);
        if (name.size() < 4 || name.substr(name.size() - 4) != ".cpp") continue;
        if (name.find_first_of("\"\\\n/") != std::string::npos)
            throw UserError("'" + name + "': a generated source's name must be a plain file name");
        cpp_files.push_back({name, content.size()});
        total_bytes += content.size();
    }
    size_t units = std::min(cpp_files.size(), static_cast<size_t>(std::max(1, t.jobs)));
    std::vector<std::string> unity_text(units);
    size_t bytes_before = 0, unit = 0;
    for (const auto &[name, bytes] : cpp_files) {
        // Contiguous shares of about equal size: the next unit starts once this one has its share.
        while (unit + 1 < units && bytes_before * units >= total_bytes * (unit + 1)) ++unit;
        unity_text[unit] += "#include \"" + name + "\"\n";
        bytes_before += bytes;
    }
    // The kernels and the catalog's table of this one variant: the object runs on this target.
    std::string target_flags = " -D" + variant_macro(target);
    for (const auto &f : target.compile_flags) target_flags += " " + f;
    std::vector<std::string> objects, commands, logs;
    for (size_t u = 0; u < units; ++u) {
        std::string path = work_dir + "/akg_unity_" + std::to_string(u) + ".cpp";
        write_if_changed(path, "// Compiles these generated files as one translation unit (akg-gen).\n" + unity_text[u]);
        std::string object = path + ".o";
        objects.push_back(object);
        commands.push_back(t.cxx + " -std=c++17 -fPIC " + t.kernel_flags + target_flags + " -w" + includes + " -c " + quote(path) + " -o " +
                           quote(object));
        logs.push_back(object + ".log");
    }
    std::string runtime_object = work_dir + "/akg_runtime.o";
    objects.push_back(runtime_object);
    commands.push_back(t.cc + " -std=c99 -O2 -fPIC" + includes + " -c " + quote(t.kernellib_dir + "/src/akg_runtime.c") + " -o " +
                       quote(runtime_object));
    logs.push_back(runtime_object + ".log");

    // Compile the units and the runtime in parallel, as many processes as jobs.
    std::atomic<size_t> next{0};
    std::vector<int> status(commands.size(), 0);
    std::vector<std::thread> workers;
    for (int w = 0; w < std::max(1, t.jobs); ++w)
        workers.emplace_back([&] {
            for (size_t k = next++; k < commands.size(); k = next++) status[k] = run(commands[k], logs[k]);
        });
    for (auto &w : workers) w.join();
    for (size_t k = 0; k < commands.size(); ++k)
        if (status[k] != 0) throw UserError("compiling failed: " + commands[k] + "\n" + tail(read_file(logs[k])));

    // The linker writes a temporary file next to the output (unique per process and call, and
    // removed on SIGINT/SIGTERM/SIGHUP), renamed over the output only when complete: a failed
    // or interrupted compile never leaves a half-written library, and the old one stays.
    std::string tmp = make_temp_name(output);
    std::string link = t.cxx + " -shared -fPIC -fopenmp -o " + quote(tmp);
    for (const auto &o : objects) link += " " + quote(o);
    std::string log = work_dir + "/link.log";
    if (run(link, log) != 0) {
        fs::remove(tmp, ec);
        release_temp_name(tmp);
        throw UserError("linking failed: " + link + "\n" + tail(read_file(log)));
    }
    fs::rename(tmp, output, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        release_temp_name(tmp);
        throw UserError(output + ": cannot write (" + ec.message() + ")");
    }
    release_temp_name(tmp);
}

} // namespace akg
