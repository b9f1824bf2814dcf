// akg-run: runs one akg kernel on .npy files.
//
//   akg-run (--kernel NAME | --so FILE.so [--kernel NAME]) -i IN0.npy -i IN1.npy ... -o OUTDIR
//           [--repeat N] [--threads T]
//   akg-run --list [--so FILE.so]
//
// Inputs are given in the kernel's input order. Every output is written to
// OUTDIR/<output tensor name>.npy, and every input the kernel updates in place to
// OUTDIR/<input tensor name>.npy. Everything is checked before the kernel runs (argument count,
// each file's dtype and shape, OUTDIR writable); on any error nothing is written. Results are
// written to temporary files in OUTDIR and renamed into place once all are complete.
//
// Exit status: 0 success, 1 user error (arguments, files, mismatches, I/O), 2 the kernel
// returned an error status.
#include "npy.h"

#include <akg/akgkernels.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace npy = akg::npy;

constexpr int kExitUser = 1;
constexpr int kExitKernel = 2;

// An error of the user's (exit 1); the message is printed after "akg-run: ".
struct UserError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The C ABI, either the linked library's or one resolved in a dlopen()ed shared object.
struct Api {
    size_t (*kernel_count)(void);
    const akg_kernel *(*kernel_at)(size_t);
    const akg_kernel *(*kernel_lookup)(const char *);
    const char *(*kernel_name)(const akg_kernel *);
    size_t (*kernel_num_inputs)(const akg_kernel *);
    size_t (*kernel_num_outputs)(const akg_kernel *);
    akg_status (*kernel_input_info)(const akg_kernel *, size_t, akg_tensor_info *);
    akg_status (*kernel_output_info)(const akg_kernel *, size_t, akg_tensor_info *);
    akg_status (*run)(const akg_kernel *, const akg_tensor *, size_t, const akg_tensor *, size_t);
    const char *(*status_string)(akg_status);
    std::string origin; // "the linked library" or the .so path, for messages
};

Api linked_api() {
    Api a;
    a.kernel_count = &akg_kernel_count;
    a.kernel_at = &akg_kernel_at;
    a.kernel_lookup = &akg_kernel_lookup;
    a.kernel_name = &akg_kernel_name;
    a.kernel_num_inputs = &akg_kernel_num_inputs;
    a.kernel_num_outputs = &akg_kernel_num_outputs;
    a.kernel_input_info = &akg_kernel_input_info;
    a.kernel_output_info = &akg_kernel_output_info;
    a.run = &akg_run;
    a.status_string = &akg_status_string;
    a.origin = "the linked kernel library";
    return a;
}

template <typename Fn> void resolve(void *handle, const std::string &path, const char *sym, Fn &out) {
    dlerror();
    void *p = dlsym(handle, sym);
    const char *err = dlerror();
    if (err != nullptr || p == nullptr) {
        throw UserError("'" + path + "' does not export " + sym +
                        " (not a kernel library built against akgkernels.h?)");
    }
    out = reinterpret_cast<Fn>(p);
}

Api so_api(const std::string &path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        throw UserError("cannot open shared object '" + path + "': " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        throw UserError("shared object '" + path + "' is not a regular file");
    }
    // Without a slash dlopen() would search the library path instead of the current folder.
    const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
    void *h = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
        const char *e = dlerror();
        throw UserError("cannot load shared object '" + path + "': " + (e ? e : "unknown error"));
    }
    // Never dlclose()d: the kernels' OpenMP threads may still reference its code at exit.
    Api a;
    resolve(h, path, "akg_kernel_count", a.kernel_count);
    resolve(h, path, "akg_kernel_at", a.kernel_at);
    resolve(h, path, "akg_kernel_lookup", a.kernel_lookup);
    resolve(h, path, "akg_kernel_name", a.kernel_name);
    resolve(h, path, "akg_kernel_num_inputs", a.kernel_num_inputs);
    resolve(h, path, "akg_kernel_num_outputs", a.kernel_num_outputs);
    resolve(h, path, "akg_kernel_input_info", a.kernel_input_info);
    resolve(h, path, "akg_kernel_output_info", a.kernel_output_info);
    resolve(h, path, "akg_run", a.run);
    resolve(h, path, "akg_status_string", a.status_string);
    a.origin = "'" + path + "'";
    return a;
}

bool to_npy(akg_dtype d, npy::DType &out) {
    switch (d) {
    case AKG_DTYPE_FLOAT32: out = npy::DType::Float32; return true;
    case AKG_DTYPE_FLOAT16: out = npy::DType::Float16; return true;
    case AKG_DTYPE_INT32: out = npy::DType::Int32; return true;
    case AKG_DTYPE_BOOL: out = npy::DType::Bool; return true;
    case AKG_DTYPE_INT64: out = npy::DType::Int64; return true;
    case AKG_DTYPE_UINT8: out = npy::DType::UInt8; return true;
    case AKG_DTYPE_INT8: out = npy::DType::Int8; return true;
    case AKG_DTYPE_FLOAT64: out = npy::DType::Float64; return true;
    }
    return false;
}

akg_dtype to_akg(npy::DType d) {
    switch (d) {
    case npy::DType::Float32: return AKG_DTYPE_FLOAT32;
    case npy::DType::Float16: return AKG_DTYPE_FLOAT16;
    case npy::DType::Int32: return AKG_DTYPE_INT32;
    case npy::DType::Bool: return AKG_DTYPE_BOOL;
    case npy::DType::Int64: return AKG_DTYPE_INT64;
    case npy::DType::UInt8: return AKG_DTYPE_UINT8;
    case npy::DType::Int8: return AKG_DTYPE_INT8;
    case npy::DType::Float64: return AKG_DTYPE_FLOAT64;
    }
    return AKG_DTYPE_FLOAT32;
}

// One tensor of a kernel's signature, checked and converted.
struct Sig {
    std::string name;
    npy::DType dtype;
    std::vector<int64_t> shape;
    bool updated_in_place;
};

struct Kernel {
    const akg_kernel *handle;
    std::string name;
    std::vector<Sig> inputs, outputs;
};

Sig make_sig(const akg_tensor_info &ti, const std::string &kname, const char *kind, size_t i) {
    const std::string what = "kernel " + kname + " " + kind + " " + std::to_string(i);
    Sig s;
    s.name = ti.name ? ti.name : "";
    if (!to_npy(ti.dtype, s.dtype)) {
        throw UserError(what + " has an unknown dtype value " + std::to_string(ti.dtype));
    }
    if (ti.rank < 0 || (ti.rank > 0 && ti.shape == nullptr)) {
        throw UserError(what + " has an invalid rank/shape");
    }
    s.shape.assign(ti.shape, ti.shape + ti.rank);
    s.updated_in_place = ti.updated_in_place != 0;
    return s;
}

Kernel describe(const Api &api, const akg_kernel *k) {
    Kernel out;
    out.handle = k;
    const char *n = api.kernel_name(k);
    out.name = n ? n : "?";
    const size_t ni = api.kernel_num_inputs(k), no = api.kernel_num_outputs(k);
    for (size_t i = 0; i < ni; ++i) {
        akg_tensor_info ti;
        if (api.kernel_input_info(k, i, &ti) != AKG_STATUS_OK) {
            throw UserError("kernel " + out.name + ": cannot describe input " + std::to_string(i));
        }
        out.inputs.push_back(make_sig(ti, out.name, "input", i));
    }
    for (size_t i = 0; i < no; ++i) {
        akg_tensor_info ti;
        if (api.kernel_output_info(k, i, &ti) != AKG_STATUS_OK) {
            throw UserError("kernel " + out.name + ": cannot describe output " + std::to_string(i));
        }
        out.outputs.push_back(make_sig(ti, out.name, "output", i));
    }
    return out;
}

std::string sig_line(const Sig &s) {
    return s.name + " " + npy::name(s.dtype) + " " + npy::shape_string(s.shape) +
           (s.updated_in_place ? " (updated in place)" : "");
}

std::string signature(const Kernel &k) {
    std::ostringstream o;
    o << k.name << "\n";
    for (size_t i = 0; i < k.inputs.size(); ++i) {
        o << "  input " << i << ": " << sig_line(k.inputs[i]) << "\n";
    }
    for (size_t i = 0; i < k.outputs.size(); ++i) {
        o << "  output " << i << ": " << sig_line(k.outputs[i]) << "\n";
    }
    return o.str();
}

std::string sig_no_newline(const Kernel &k) {
    std::string s = signature(k);
    s.pop_back();
    return s;
}

std::vector<std::string> kernel_names(const Api &api) {
    std::vector<std::string> names;
    const size_t n = api.kernel_count();
    for (size_t i = 0; i < n; ++i) {
        const char *nm = api.kernel_name(api.kernel_at(i));
        names.push_back(nm ? nm : "?");
    }
    return names;
}

std::string join(const std::vector<std::string> &v, const char *sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        s += (i ? sep : "") + v[i];
    }
    return s;
}

const akg_kernel *select_kernel(const Api &api, const std::string &name, bool from_so) {
    const size_t count = api.kernel_count();
    if (from_so) {
        if (count == 0) {
            throw UserError(api.origin + " holds no kernel");
        }
        if (name.empty()) {
            if (count == 1) {
                return api.kernel_at(0);
            }
            throw UserError(api.origin + " holds " + std::to_string(count) +
                            " kernels; choose one with --kernel: " + join(kernel_names(api), ", "));
        }
        const akg_kernel *k = api.kernel_lookup(name.c_str());
        if (k == nullptr) {
            throw UserError("no kernel '" + name + "' in " + api.origin + " (it holds: " +
                            join(kernel_names(api), ", ") + ")");
        }
        return k;
    }
    const akg_kernel *k = api.kernel_lookup(name.c_str());
    if (k == nullptr) {
        throw UserError("unknown kernel '" + name + "' (" + std::to_string(count) +
                        " kernels are linked; akg-run --list shows them)");
    }
    return k;
}

// ----- Output folder and files -----------------------------------------------------------------

bool valid_file_stem(const std::string &n) {
    return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos &&
           n.find('\0') == std::string::npos;
}

// Creates OUTDIR (and missing parents); remembers what it created so that a failed run can
// remove it again. Temporary files are created at once, which proves the folder writable.
class OutputPlan {
public:
    ~OutputPlan() { rollback(); }

    void make_dir(const std::string &outdir) {
        if (outdir.empty()) {
            throw UserError("output folder (-o) is empty");
        }
        std::string prefix;
        size_t pos = 0;
        while (pos <= outdir.size()) {
            size_t next = outdir.find('/', pos);
            if (next == std::string::npos) {
                next = outdir.size();
            }
            prefix = outdir.substr(0, next);
            pos = next + 1;
            if (prefix.empty() || prefix.back() == '/' || prefix == "." || prefix == "..") {
                continue;
            }
            struct stat st;
            if (::stat(prefix.c_str(), &st) == 0) {
                if (!S_ISDIR(st.st_mode)) {
                    throw UserError("cannot use output folder '" + outdir + "': '" + prefix +
                                    "' exists and is not a folder");
                }
                continue;
            }
            if (errno != ENOENT) {
                throw UserError("cannot use output folder '" + outdir + "': '" + prefix + "': " +
                                std::strerror(errno));
            }
            if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
                throw UserError("cannot create output folder '" + outdir + "': '" + prefix +
                                "': " + std::strerror(errno));
            }
            created_dirs_.push_back(prefix);
        }
        dir_ = outdir;
    }

    // Reserves OUTDIR/<stem>.npy: creates its temporary file now. Returns its index.
    size_t add(const std::string &stem) {
        const std::string final_path = dir_ + "/" + stem + ".npy";
        std::string tmp;
        for (int attempt = 0;; ++attempt) {
            tmp = dir_ + "/." + stem + ".npy.akg-run-" + std::to_string(::getpid()) + "-" +
                  std::to_string(attempt) + ".tmp";
            const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd >= 0) {
                ::close(fd);
                break;
            }
            if (errno != EEXIST || attempt > 100) {
                throw UserError("cannot write to output folder '" + dir_ + "': " + std::strerror(errno));
            }
        }
        struct stat st;
        if (::stat(final_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            ::unlink(tmp.c_str());
            throw UserError("cannot write '" + final_path + "': it is a folder");
        }
        files_.push_back({tmp, final_path});
        return files_.size() - 1;
    }

    void write(size_t index, const npy::Array &a) {
        try {
            npy::write_direct(files_[index].tmp, a);
        } catch (const npy::Error &e) {
            throw UserError(std::string("writing '") + files_[index].final_path + "' failed: " + e.what());
        }
    }

    // Renames every temporary file into place.
    void commit() {
        for (size_t i = 0; i < files_.size(); ++i) {
            if (::rename(files_[i].tmp.c_str(), files_[i].final_path.c_str()) != 0) {
                const int e = errno;
                // Files renamed so far stay; the rest are removed by rollback().
                files_.erase(files_.begin(), files_.begin() + static_cast<std::ptrdiff_t>(i));
                created_dirs_.clear();
                throw UserError("cannot rename into '" + files_.front().final_path + "': " +
                                std::strerror(e));
            }
        }
        files_.clear();
        created_dirs_.clear();
    }

private:
    struct File {
        std::string tmp, final_path;
    };
    std::string dir_;
    std::vector<std::string> created_dirs_;
    std::vector<File> files_;

    void rollback() {
        for (const File &f : files_) {
            ::unlink(f.tmp.c_str());
        }
        files_.clear();
        for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) {
            ::rmdir(it->c_str());
        }
        created_dirs_.clear();
    }
};

// ----- The run ---------------------------------------------------------------------------------

struct Options {
    std::string kernel, so, outdir;
    std::vector<std::string> inputs;
    int repeat = 1;
    bool repeat_given = false;
    int threads = 0;
    bool list = false;
};

int do_list(const Api &api) {
    const size_t n = api.kernel_count();
    for (size_t i = 0; i < n; ++i) {
        std::cout << signature(describe(api, api.kernel_at(i)));
    }
    return 0;
}

int do_run(const Options &opt) {
    const bool from_so = !opt.so.empty();
    const Api api = from_so ? so_api(opt.so) : linked_api();
    if (opt.list) {
        return do_list(api);
    }
    const Kernel k = describe(api, select_kernel(api, opt.kernel, from_so));

    // Input count.
    if (opt.inputs.size() != k.inputs.size()) {
        throw UserError("kernel " + k.name + " takes " + std::to_string(k.inputs.size()) +
                        " input(s), got " + std::to_string(opt.inputs.size()) + " (-i): " +
                        sig_no_newline(k));
    }
    // Output file names must be usable and distinct.
    std::vector<std::string> stems;
    for (const Sig &s : k.inputs) {
        if (s.updated_in_place) {
            stems.push_back(s.name);
        }
    }
    for (const Sig &s : k.outputs) {
        stems.push_back(s.name);
    }
    for (size_t i = 0; i < stems.size(); ++i) {
        if (!valid_file_stem(stems[i])) {
            throw UserError("kernel " + k.name + ": tensor name '" + stems[i] + "' cannot be a file name");
        }
        for (size_t j = 0; j < i; ++j) {
            if (stems[i] == stems[j]) {
                throw UserError("kernel " + k.name + ": two written tensors are both named '" +
                                stems[i] + "'");
            }
        }
    }

    // Read and check every input; report every problem, not just the first.
    std::vector<npy::Array> in(k.inputs.size());
    std::vector<std::string> problems;
    for (size_t i = 0; i < k.inputs.size(); ++i) {
        const Sig &s = k.inputs[i];
        const std::string what = "input " + std::to_string(i) + " (" + s.name + ") from '" + opt.inputs[i] + "'";
        try {
            in[i] = npy::read(opt.inputs[i]);
        } catch (const npy::Error &e) {
            problems.push_back(std::string("input ") + std::to_string(i) + " (" + s.name + "): " + e.what());
            continue;
        }
        if (in[i].dtype != s.dtype) {
            problems.push_back(what + ": dtype mismatch: expected " + npy::name(s.dtype) + " ('" +
                               npy::descr(s.dtype) + "'), got " + npy::name(in[i].dtype) + " ('" +
                               npy::descr(in[i].dtype) + "')");
        }
        if (in[i].shape != s.shape) {
            problems.push_back(what + ": shape mismatch: expected " + npy::shape_string(s.shape) +
                               ", got " + npy::shape_string(in[i].shape));
        }
    }
    if (!problems.empty()) {
        throw UserError(join(problems, "\nakg-run: ") + "\nakg-run: kernel signature: " +
                        sig_no_newline(k));
    }

    // Output buffers, and the folder with one reserved temporary file per result.
    std::vector<npy::Array> out;
    for (const Sig &s : k.outputs) {
        out.push_back(npy::make_array(s.dtype, s.shape));
    }
    OutputPlan plan;
    plan.make_dir(opt.outdir);
    std::vector<size_t> slot_in(k.inputs.size()), slot_out(k.outputs.size());
    for (size_t i = 0; i < k.inputs.size(); ++i) {
        if (k.inputs[i].updated_in_place) {
            slot_in[i] = plan.add(k.inputs[i].name);
        }
    }
    for (size_t i = 0; i < k.outputs.size(); ++i) {
        slot_out[i] = plan.add(k.outputs[i].name);
    }

    // Inputs updated in place are restored before every run after the first.
    std::vector<npy::Buffer> saved(k.inputs.size());
    if (opt.repeat > 1) {
        for (size_t i = 0; i < k.inputs.size(); ++i) {
            if (k.inputs[i].updated_in_place) {
                saved[i] = in[i].data;
            }
        }
    }
    std::vector<akg_tensor> tin(in.size()), tout(out.size());
    for (size_t i = 0; i < in.size(); ++i) {
        tin[i] = akg_tensor{in[i].data.data(), to_akg(in[i].dtype), static_cast<int32_t>(in[i].shape.size()),
                            in[i].shape.data(), nullptr};
    }
    for (size_t i = 0; i < out.size(); ++i) {
        tout[i] = akg_tensor{out[i].data.data(), to_akg(out[i].dtype),
                             static_cast<int32_t>(out[i].shape.size()), out[i].shape.data(), nullptr};
    }
    if (opt.threads > 0) {
        omp_set_num_threads(opt.threads);
    }
    std::vector<double> ms;
    for (int r = 0; r < opt.repeat; ++r) {
        if (r > 0) {
            for (size_t i = 0; i < in.size(); ++i) {
                if (k.inputs[i].updated_in_place && saved[i].size() > 0) {
                    std::memcpy(in[i].data.data(), saved[i].data(), saved[i].size());
                }
            }
        }
        const auto t0 = std::chrono::steady_clock::now();
        const akg_status st = api.run(k.handle, tin.data(), tin.size(), tout.data(), tout.size());
        const auto t1 = std::chrono::steady_clock::now();
        if (st != AKG_STATUS_OK) {
            const char *msg = api.status_string(st);
            std::cerr << "akg-run: kernel " << k.name << " failed: " << (msg ? msg : "?") << " (status "
                      << static_cast<int>(st) << ")\n";
            return kExitKernel; // plan's destructor removes the temporary files
        }
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }

    for (size_t i = 0; i < in.size(); ++i) {
        if (k.inputs[i].updated_in_place) {
            plan.write(slot_in[i], in[i]);
        }
    }
    for (size_t i = 0; i < out.size(); ++i) {
        plan.write(slot_out[i], out[i]);
    }
    plan.commit();

    if (opt.repeat_given) {
        std::sort(ms.begin(), ms.end());
        const size_t n = ms.size();
        const double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        char line[64];
        std::snprintf(line, sizeof line, "median_ms: %.6f", median);
        std::cout << line << std::endl;
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    Options opt;
    CLI::App app{"akg-run: run one akg kernel on .npy inputs and write its results as .npy files.\n"
                 "Outputs go to OUTDIR/<output name>.npy, inputs the kernel updates in place to\n"
                 "OUTDIR/<input name>.npy. With --repeat, prints 'median_ms: <ms>' on stdout.\n"
                 "Exit status: 0 ok, 1 user error, 2 the kernel returned an error status."};
    app.add_option("-k,--kernel", opt.kernel, "Kernel name (of the linked library, or inside --so)");
    app.add_option("--so", opt.so, "Shared object exporting the akgkernels C ABI to load the kernel from");
    app.add_option("-i,--input", opt.inputs, "Input .npy file, once per kernel input, in input order")
        ->allow_extra_args(false);
    app.add_option("-o,--outdir", opt.outdir, "Output folder (created if missing)");
    CLI::Option *rep = app.add_option("--repeat", opt.repeat, "Run N times; print the median time in ms")
                           ->check(CLI::Range(1, 1000000000));
    app.add_option("--threads", opt.threads, "OpenMP threads (omp_set_num_threads)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_flag("--list", opt.list, "List the kernels (of the library, or of --so) with their signatures");
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);
        return kExitUser;
    }
    opt.repeat_given = rep->count() > 0;
    try {
        if (!opt.list) {
            if (opt.kernel.empty() && opt.so.empty()) {
                throw UserError("give --kernel NAME or --so FILE.so (see --help)");
            }
            if (opt.outdir.empty()) {
                throw UserError("give the output folder with -o OUTDIR (see --help)");
            }
        }
        return do_run(opt);
    } catch (const UserError &e) {
        std::cerr << "akg-run: " << e.what() << "\n";
    } catch (const npy::Error &e) {
        std::cerr << "akg-run: " << e.what() << "\n";
    } catch (const std::bad_alloc &) {
        std::cerr << "akg-run: out of memory\n";
    } catch (const std::exception &e) {
        std::cerr << "akg-run: " << e.what() << "\n";
    }
    return kExitUser;
}
