// akg-run end to end: the real executable ($AKG_RUN) on .npy files written with akg::npy.
//
// Checks the results of the linked kernels add_relu_f32 (against max(a + b, 0)) and
// adam_weight_decay_f32 (against a direct akg_run call: the output and the inputs updated in
// place must be written), --repeat and --threads, every user error (exit 1, a message, and not a
// single file created or changed anywhere in the scratch folder), a kernel error (exit 2), and
// --so with two shared objects built by tests/akg_run/meson.build ($AKG_RUN_SO_ONE: add_relu_f32
// alone; $AKG_RUN_SO_MULTI: add_relu_f32, all_dtypes, always_oom — see table_multi.cpp).
#include "npy.h"

#include <akg/akgkernels.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fs = std::filesystem;
namespace npy = akg::npy;

namespace {

using Shape = std::vector<int64_t>;
const Shape kReluShape = {32, 512, 28, 28};
const Shape kAdamShape = {768, 3072};

std::string env_path(const char *var) {
    const char *v = std::getenv(var);
    if (v == nullptr || *v == '\0') {
        ADD_FAILURE() << var << " is not set (run this test through meson test)";
        return "/nonexistent";
    }
    return v;
}

fs::path make_temp_dir(const char *stem) {
    std::string tmpl = (fs::temp_directory_path() / (std::string(stem) + ".XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) {
        std::abort();
    }
    return tmpl;
}

std::string slurp(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void spit(const fs::path &p, const std::string &bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}

struct Result {
    int rc = -1;
    std::string out, err;
};

// Every file and folder under `root` with its size (folders: -1), to prove nothing was written.
std::map<std::string, intmax_t> snapshot(const fs::path &root) {
    std::map<std::string, intmax_t> m;
    for (const auto &e : fs::recursive_directory_iterator(root)) {
        m[e.path().string()] = e.is_regular_file() ? static_cast<intmax_t>(e.file_size()) : -1;
    }
    return m;
}

std::vector<std::string> list_dir(const fs::path &dir) {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir)) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

uint32_t g_rng = 12345u;
uint32_t next_u32() {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}
float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next_u32() >> 8) * 0x1p-24f; }

npy::Array f32(const Shape &shape, float lo, float hi) {
    npy::Array a = npy::make_array(npy::DType::Float32, shape);
    for (size_t i = 0; i < a.num_elements(); ++i) {
        a.as<float>()[i] = uniform(lo, hi);
    }
    return a;
}

// float16 bits of positive values in [2^-5, 2^1).
npy::Array f16_positive(const Shape &shape) {
    npy::Array a = npy::make_array(npy::DType::Float16, shape);
    for (size_t i = 0; i < a.num_elements(); ++i) {
        const uint32_t r = next_u32();
        a.as<uint16_t>()[i] = static_cast<uint16_t>(((10 + r % 6) << 10) | ((r >> 8) & 0x3ff));
    }
    return a;
}

class AkgRun : public ::testing::Test {
protected:
    static fs::path work_;    // scratch folder: inputs and output folders (snapshotted)
    static fs::path capture_; // the runner's stdout/stderr files
    static std::string exe_, so_one_, so_multi_;
    static std::vector<npy::Array> adam_in_;

    static void SetUpTestSuite() {
        exe_ = env_path("AKG_RUN");
        so_one_ = env_path("AKG_RUN_SO_ONE");
        so_multi_ = env_path("AKG_RUN_SO_MULTI");
        work_ = make_temp_dir("akg_run_test");
        capture_ = make_temp_dir("akg_run_capture");

        npy::write(p("a.npy"), f32(kReluShape, -1.0f, 1.0f));
        npy::write(p("b.npy"), f32(kReluShape, -1.0f, 1.0f));
        npy::Array ai = npy::make_array(npy::DType::Int32, kReluShape);
        npy::write(p("a_i32.npy"), ai);
        npy::write(p("small.npy"), f32({2, 3}, 0.0f, 1.0f));
        spit(work_ / "garbage.txt", "this is not a .npy file\n");
        std::string fortran = npy::serialize(f32({2, 3}, 0.0f, 1.0f));
        const std::string from = "'fortran_order': False", to = "'fortran_order': True ";
        fortran.replace(fortran.find(from), from.size(), to);
        spit(work_ / "fortran.npy", fortran);

        // adam_weight_decay_f32: input_2 f16 (768, 3072), input_3 f32 (1, 1, 1), input_11 f32 (1,),
        // then input_1, input_10, input_6 f32 (768, 3072), all three updated in place.
        adam_in_.clear();
        adam_in_.push_back(f16_positive(kAdamShape));
        adam_in_.push_back(f32({1, 1, 1}, 0.001f, 0.01f));
        adam_in_.push_back(f32({1}, 0.01f, 0.1f));
        for (int i = 0; i < 3; ++i) {
            adam_in_.push_back(f32(kAdamShape, 0.01f, 1.0f));
        }
        for (size_t i = 0; i < adam_in_.size(); ++i) {
            npy::write(p("adam" + std::to_string(i) + ".npy"), adam_in_[i]);
        }

        // all_dtypes (in the multi .so).
        npy::Array x_f32 = npy::make_array(npy::DType::Float32, {2, 3});
        for (int i = 0; i < 6; ++i) x_f32.as<float>()[i] = 0.5f * static_cast<float>(i) - 1.0f;
        npy::Array x_f16 = npy::make_array(npy::DType::Float16, {3});
        x_f16.as<uint16_t>()[0] = 0x3c00; // 1.0
        x_f16.as<uint16_t>()[1] = 0xc000; // -2.0
        x_f16.as<uint16_t>()[2] = 0x7e00; // NaN
        npy::Array x_i32 = npy::make_array(npy::DType::Int32, {});
        x_i32.as<int32_t>()[0] = -7;
        npy::Array x_bool = npy::make_array(npy::DType::Bool, {2, 2});
        x_bool.data.data()[1] = 1;
        x_bool.data.data()[2] = 1;
        npy::Array x_i64 = npy::make_array(npy::DType::Int64, {1});
        x_i64.as<int64_t>()[0] = int64_t(1) << 40;
        npy::Array x_u8 = npy::make_array(npy::DType::UInt8, {4});
        for (int i = 0; i < 4; ++i) x_u8.data.data()[i] = static_cast<unsigned char>(i == 3 ? 255 : 10 * i);
        npy::Array x_i8 = npy::make_array(npy::DType::Int8, {2});
        x_i8.as<int8_t>()[0] = 5;
        x_i8.as<int8_t>()[1] = -128;
        npy::Array x_f64 = npy::make_array(npy::DType::Float64, {2});
        x_f64.as<double>()[0] = 0.1;
        x_f64.as<double>()[1] = -1e300;
        npy::write(p("x_f32.npy"), x_f32);
        npy::write(p("x_f16.npy"), x_f16);
        npy::write(p("x_i32.npy"), x_i32);
        npy::write(p("x_bool.npy"), x_bool);
        npy::write(p("x_i64.npy"), x_i64);
        npy::write(p("x_u8.npy"), x_u8);
        npy::write(p("x_i8.npy"), x_i8);
        npy::write(p("x_f64.npy"), x_f64);
        npy::write(p("one.npy"), f32({1}, 0.0f, 1.0f));
    }

    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(work_, ec);
        fs::remove_all(capture_, ec);
    }

    static std::string p(const std::string &name) { return (work_ / name).string(); }

    static Result run(const std::vector<std::string> &args) {
        static int n = 0;
        const std::string out = (capture_ / ("out" + std::to_string(n))).string();
        const std::string err = (capture_ / ("err" + std::to_string(n++))).string();
        std::vector<std::string> all = {exe_};
        all.insert(all.end(), args.begin(), args.end());
        std::vector<char *> argv;
        for (std::string &s : all) {
            argv.push_back(s.data());
        }
        argv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        pid_t pid = -1;
        Result r;
        const int e = posix_spawn(&pid, exe_.c_str(), &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        if (e != 0) {
            ADD_FAILURE() << "cannot start " << exe_ << ": " << std::strerror(e);
            return r;
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    static std::vector<std::string> relu_args(const std::string &outdir) {
        return {"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("b.npy"), "-o", outdir};
    }

    static std::vector<std::string> adam_args(const std::string &outdir) {
        std::vector<std::string> a = {"--kernel", "adam_weight_decay_f32"};
        for (size_t i = 0; i < 6; ++i) {
            a.push_back("-i");
            a.push_back(p("adam" + std::to_string(i) + ".npy"));
        }
        a.push_back("-o");
        a.push_back(outdir);
        return a;
    }

    static std::vector<std::string> all_dtypes_args(const std::string &outdir) {
        std::vector<std::string> a = {"--so", so_multi_, "--kernel", "all_dtypes"};
        for (const char *n : {"x_f32", "x_f16", "x_i32", "x_bool", "x_i64", "x_u8", "x_i8", "x_f64"}) {
            a.push_back("-i");
            a.push_back(p(std::string(n) + ".npy"));
        }
        a.push_back("-o");
        a.push_back(outdir);
        return a;
    }

    static void expect_relu_output(const fs::path &file) {
        const npy::Array a = npy::read(p("a.npy")), b = npy::read(p("b.npy"));
        const npy::Array o = npy::read(file.string());
        ASSERT_EQ(o.dtype, npy::DType::Float32);
        ASSERT_EQ(o.shape, kReluShape);
        size_t bad = 0;
        for (size_t i = 0; i < o.num_elements(); ++i) {
            const float want = std::max(a.as<float>()[i] + b.as<float>()[i], 0.0f);
            bad += o.as<float>()[i] != want;
        }
        EXPECT_EQ(bad, 0u) << "elements differing from max(a + b, 0) in " << file;
    }

    // A user error: exit status 1, a message holding every needle, nothing written.
    static void expect_user_error(const std::vector<std::string> &args,
                                  const std::vector<std::string> &needles) {
        const auto before = snapshot(work_);
        const Result r = run(args);
        EXPECT_EQ(r.rc, 1) << r.err;
        EXPECT_EQ(r.err.rfind("akg-run: ", 0) == 0 || r.err.find("--help") != std::string::npos, true) << r.err;
        for (const std::string &n : needles) {
            EXPECT_NE(r.err.find(n), std::string::npos) << "no '" << n << "' in: " << r.err;
        }
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(snapshot(work_), before) << "files were written";
    }
};

fs::path AkgRun::work_;
fs::path AkgRun::capture_;
std::string AkgRun::exe_, AkgRun::so_one_, AkgRun::so_multi_;
std::vector<npy::Array> AkgRun::adam_in_;

} // namespace

// ----- Results ------------------------------------------------------------------------------

TEST_F(AkgRun, AddReluWritesItsOutputIntoANewNestedFolder) {
    const fs::path out = work_ / "relu" / "nested" / "out";
    const Result r = run(relu_args(out.string()));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(list_dir(out), std::vector<std::string>{"output_0_2.npy"});
    expect_relu_output(out / "output_0_2.npy");
    // Written exactly as numpy writes it.
    const npy::Array o = npy::read((out / "output_0_2.npy").string());
    EXPECT_EQ(slurp(out / "output_0_2.npy"), npy::serialize(o));
}

TEST_F(AkgRun, RepeatPrintsTheMedianAndKeepsTheResult) {
    const fs::path out = work_ / "relu_repeat";
    std::vector<std::string> args = relu_args(out.string());
    args.insert(args.end(), {"--repeat", "3", "--threads", "1"});
    const Result r = run(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(std::regex_match(r.out, std::regex("median_ms: [0-9]+\\.[0-9]{6}\n"))) << r.out;
    EXPECT_EQ(list_dir(out), std::vector<std::string>{"output_0_2.npy"});
    expect_relu_output(out / "output_0_2.npy");
}

TEST_F(AkgRun, ReplacesExistingResultFiles) {
    const fs::path out = work_ / "relu_existing";
    fs::create_directories(out);
    spit(out / "output_0_2.npy", "stale");
    spit(out / "unrelated.txt", "kept");
    const Result r = run(relu_args(out.string()));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(list_dir(out), (std::vector<std::string>{"output_0_2.npy", "unrelated.txt"}));
    expect_relu_output(out / "output_0_2.npy");
    EXPECT_EQ(slurp(out / "unrelated.txt"), "kept");
}

TEST_F(AkgRun, AdamWritesItsOutputAndTheInputsUpdatedInPlace) {
    const fs::path out = work_ / "adam";
    const Result r = run(adam_args(out.string()));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(list_dir(out), (std::vector<std::string>{"input_1.npy", "input_10.npy", "input_6.npy",
                                                       "output_0_19.npy"}));

    // The same call made directly through the C ABI.
    const akg_kernel *k = akg_kernel_lookup("adam_weight_decay_f32");
    ASSERT_NE(k, nullptr);
    std::vector<npy::Array> in = adam_in_;
    npy::Array want_out = npy::make_array(npy::DType::Float32, kAdamShape);
    std::vector<akg_tensor> tin;
    const akg_dtype dts[] = {AKG_DTYPE_FLOAT16, AKG_DTYPE_FLOAT32, AKG_DTYPE_FLOAT32,
                             AKG_DTYPE_FLOAT32, AKG_DTYPE_FLOAT32, AKG_DTYPE_FLOAT32};
    for (size_t i = 0; i < in.size(); ++i) {
        tin.push_back({in[i].data.data(), dts[i], static_cast<int32_t>(in[i].shape.size()),
                       in[i].shape.data(), nullptr});
    }
    const akg_tensor tout = {want_out.data.data(), AKG_DTYPE_FLOAT32, 2, want_out.shape.data(), nullptr};
    ASSERT_EQ(akg_run(k, tin.data(), tin.size(), &tout, 1), AKG_STATUS_OK);

    const struct {
        const char *file;
        const npy::Array *want;
    } files[] = {{"input_1.npy", &in[3]}, {"input_10.npy", &in[4]}, {"input_6.npy", &in[5]},
                 {"output_0_19.npy", &want_out}};
    for (const auto &f : files) {
        const npy::Array got = npy::read((out / f.file).string());
        EXPECT_EQ(got.dtype, npy::DType::Float32) << f.file;
        ASSERT_EQ(got.shape, kAdamShape) << f.file;
        EXPECT_EQ(std::memcmp(got.data.data(), f.want->data.data(), got.num_bytes()), 0)
            << f.file << " differs from a direct akg_run";
    }
    // The kernel did update its in-place inputs.
    for (size_t i = 3; i < 6; ++i) {
        EXPECT_NE(std::memcmp(in[i].data.data(), adam_in_[i].data.data(), in[i].num_bytes()), 0)
            << "input " << i << " unchanged";
    }
}

TEST_F(AkgRun, RepeatRestoresInputsUpdatedInPlaceBeforeEachRun) {
    const fs::path once = work_ / "adam_once", thrice = work_ / "adam_thrice";
    ASSERT_EQ(run(adam_args(once.string())).rc, 0);
    std::vector<std::string> args = adam_args(thrice.string());
    args.insert(args.end(), {"--repeat", "3"});
    const Result r = run(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const std::string &f : list_dir(once)) {
        EXPECT_EQ(slurp(once / f), slurp(thrice / f)) << f;
    }
    EXPECT_EQ(list_dir(once), list_dir(thrice));
}

// ----- User errors: exit 1, a clear message, nothing written ---------------------------------

TEST_F(AkgRun, WrongDTypeIsReported) {
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a_i32.npy"), "-i", p("b.npy"), "-o", p("o1")},
                      {"input 0 (input_0)", "a_i32.npy", "dtype mismatch: expected float32 ('<f4'), got int32 ('<i4')"});
}

TEST_F(AkgRun, WrongShapeIsReported) {
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("small.npy"), "-o", p("o2")},
                      {"input 1 (input_1)", "small.npy", "shape mismatch: expected (32, 512, 28, 28), got (2, 3)"});
}

TEST_F(AkgRun, EveryMismatchIsReportedAtOnce) {
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a_i32.npy"), "-i", p("small.npy"), "-o", p("o3")},
                      {"input 0 (input_0)", "dtype mismatch", "input 1 (input_1)", "shape mismatch",
                       "kernel signature: add_relu_f32"});
}

TEST_F(AkgRun, WrongInputCountIsReported) {
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-o", p("o4")},
                      {"add_relu_f32 takes 2 input(s), got 1", "input 1: input_1 float32 (32, 512, 28, 28)"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("b.npy"), "-i", p("b.npy"),
                       "-o", p("o4")},
                      {"takes 2 input(s), got 3"});
    expect_user_error({"--kernel", "add_relu_f32", "-o", p("o4")}, {"got 0"});
}

TEST_F(AkgRun, UnreadableInputsAreReported) {
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("missing.npy"), "-o", p("o5")},
                      {"input 1 (input_1)", "missing.npy", "No such file"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("garbage.txt"), "-i", p("b.npy"), "-o", p("o5")},
                      {"input 0 (input_0)", "garbage.txt", "bad magic"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("fortran.npy"), "-i", p("b.npy"), "-o", p("o5")},
                      {"fortran.npy", "fortran_order is True"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", work_.string(), "-i", p("b.npy"), "-o", p("o5")},
                      {"is a directory"});
}

TEST_F(AkgRun, UnknownKernelIsReported) {
    expect_user_error({"--kernel", "no_such_kernel", "-i", p("a.npy"), "-o", p("o6")},
                      {"unknown kernel 'no_such_kernel'"});
}

TEST_F(AkgRun, UnwritableOutputFolderIsReportedBeforeRunning) {
    // A path under a regular file, and a regular file itself.
    expect_user_error(relu_args(p("a.npy") + "/out"), {"cannot use output folder", "is not a folder"});
    expect_user_error(relu_args(p("garbage.txt")), {"is not a folder"});
    expect_user_error(relu_args(""), {"-o OUTDIR"});
}

TEST_F(AkgRun, AnExistingOutputFolderIsLeftAsItWasOnError) {
    const fs::path out = work_ / "kept";
    fs::create_directories(out);
    spit(out / "output_0_2.npy", "previous result");
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("small.npy"), "-o", out.string()},
                      {"shape mismatch"});
    EXPECT_EQ(slurp(out / "output_0_2.npy"), "previous result");
}

TEST_F(AkgRun, BadArgumentsAreReported) {
    expect_user_error({"-i", p("a.npy"), "-o", p("o7")}, {"--kernel NAME or --so"});
    expect_user_error({"--frobnicate"}, {"frobnicate"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("b.npy"), "-o", p("o7"),
                       "--repeat", "0"},
                      {"--repeat"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("b.npy"), "-o", p("o7"),
                       "--threads", "0"},
                      {"--threads"});
    expect_user_error({"--kernel", "add_relu_f32", "-i", p("a.npy"), "-i", p("b.npy"), "-o", p("o7"),
                       "--repeat", "many"},
                      {"--repeat"});
}

TEST_F(AkgRun, HelpAndList) {
    Result r = run({"--help"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("--kernel"), std::string::npos);
    r = run({"--list"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("add_relu_f32\n  input 0: input_0 float32 (32, 512, 28, 28)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  input 3: input_1 float32 (768, 3072) (updated in place)\n"), std::string::npos);
    r = run({"--list", "--so", so_multi_});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("all_dtypes\n  input 0: x_f32 float32 (2, 3)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  input 2: x_i32 int32 ()\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("always_oom\n"), std::string::npos) << r.out;
}

// ----- A kernel error: exit 2, nothing written ------------------------------------------------

TEST_F(AkgRun, KernelErrorStatusExitsWith2AndWritesNothing) {
    const auto before = snapshot(work_);
    const Result r = run({"--so", so_multi_, "--kernel", "always_oom", "-i", p("one.npy"), "-o",
                          p("oom/out")});
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("kernel always_oom failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("status 9"), std::string::npos) << r.err;
    EXPECT_EQ(snapshot(work_), before) << "files were written";
}

// ----- --so -----------------------------------------------------------------------------------

TEST_F(AkgRun, SharedObjectWithOneKernelNeedsNoKernelName) {
    const fs::path out = work_ / "so_one";
    const Result r = run({"--so", so_one_, "-i", p("a.npy"), "-i", p("b.npy"), "-o", out.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(list_dir(out), std::vector<std::string>{"output_0_2.npy"});
    expect_relu_output(out / "output_0_2.npy");

    const fs::path named = work_ / "so_one_named";
    const Result r2 = run({"--so", so_one_, "--kernel", "add_relu_f32", "-i", p("a.npy"), "-i",
                           p("b.npy"), "-o", named.string()});
    ASSERT_EQ(r2.rc, 0) << r2.err;
    EXPECT_EQ(slurp(named / "output_0_2.npy"), slurp(out / "output_0_2.npy"));

    // A kernel of the linked library is not in the .so.
    expect_user_error({"--so", so_one_, "--kernel", "bias_gelu_f32", "-i", p("a.npy"), "-o", p("o8")},
                      {"no kernel 'bias_gelu_f32' in", "it holds: add_relu_f32"});
}

TEST_F(AkgRun, SharedObjectWithSeveralKernelsNeedsAName) {
    expect_user_error({"--so", so_multi_, "-i", p("a.npy"), "-i", p("b.npy"), "-o", p("o9")},
                      {"holds 3 kernels; choose one with --kernel: add_relu_f32, all_dtypes, always_oom"});
    const fs::path out = work_ / "so_multi_relu";
    const Result r = run({"--so", so_multi_, "--kernel", "add_relu_f32", "-i", p("a.npy"), "-i",
                          p("b.npy"), "-o", out.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_relu_output(out / "output_0_2.npy");
}

TEST_F(AkgRun, EveryDTypeScalarsAndEmptyTensorsThroughASharedObject) {
    const fs::path out = work_ / "all_dtypes";
    std::vector<std::string> args = all_dtypes_args(out.string());
    args.insert(args.end(), {"--repeat", "4"}); // x_u8 must come out incremented once
    const Result r = run(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(list_dir(out), (std::vector<std::string>{"x_u8.npy", "y_bool.npy", "y_empty.npy", "y_f16.npy",
                                                       "y_f32.npy", "y_f64.npy", "y_i64.npy", "y_i8.npy"}));
    const auto rd = [&](const char *n) { return npy::read((out / n).string()); };

    const npy::Array y_f64 = rd("y_f64.npy");
    ASSERT_EQ(y_f64.dtype, npy::DType::Float64);
    ASSERT_EQ(y_f64.shape, (Shape{2, 3}));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y_f64.as<double>()[i], static_cast<double>(i) - 2.0);

    const npy::Array y_f16 = rd("y_f16.npy");
    ASSERT_EQ(y_f16.dtype, npy::DType::Float16);
    EXPECT_EQ(y_f16.as<uint16_t>()[0], 0x3c00);
    EXPECT_EQ(y_f16.as<uint16_t>()[1], 0xc000);
    EXPECT_EQ(y_f16.as<uint16_t>()[2], 0x7e00);

    const npy::Array y_i64 = rd("y_i64.npy");
    ASSERT_EQ(y_i64.dtype, npy::DType::Int64);
    EXPECT_EQ(y_i64.shape, Shape{});
    EXPECT_EQ(y_i64.as<int64_t>()[0], (int64_t(1) << 40) - 7);

    const npy::Array y_bool = rd("y_bool.npy");
    ASSERT_EQ(y_bool.dtype, npy::DType::Bool);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(y_bool.data.data()), 4), std::string("\1\0\0\1", 4));

    const npy::Array y_i8 = rd("y_i8.npy");
    ASSERT_EQ(y_i8.dtype, npy::DType::Int8);
    EXPECT_EQ(y_i8.as<int8_t>()[0], -5);
    EXPECT_EQ(y_i8.as<int8_t>()[1], -128); // -(-128) wraps

    const npy::Array y_f32 = rd("y_f32.npy");
    ASSERT_EQ(y_f32.dtype, npy::DType::Float32);
    EXPECT_EQ(y_f32.as<float>()[0], 0.1f);
    EXPECT_EQ(y_f32.as<float>()[1], -INFINITY);

    const npy::Array y_empty = rd("y_empty.npy");
    EXPECT_EQ(y_empty.shape, (Shape{0, 3}));
    EXPECT_EQ(y_empty.num_bytes(), 0u);

    const npy::Array x_u8 = rd("x_u8.npy");
    ASSERT_EQ(x_u8.dtype, npy::DType::UInt8);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(x_u8.data.data()), 4), std::string("\1\13\25\0", 4));

    // A dtype mismatch on a scalar.
    std::vector<std::string> bad = all_dtypes_args(p("o10"));
    bad[4 + 2 * 2 + 1] = p("x_i64.npy"); // third input (x_i32, int32 ()) given x_i64's int64 (1,)
    expect_user_error(bad, {"input 2 (x_i32)", "dtype mismatch: expected int32 ('<i4'), got int64 ('<i8')",
                            "shape mismatch: expected (), got (1,)"});
}

TEST_F(AkgRun, BadSharedObjectsAreReported) {
    expect_user_error({"--so", p("missing.so"), "-i", p("a.npy"), "-o", p("o11")},
                      {"cannot open shared object", "missing.so"});
    expect_user_error({"--so", p("garbage.txt"), "-i", p("a.npy"), "-o", p("o11")},
                      {"cannot load shared object", "garbage.txt"});
    // A real shared object without the ABI: the C library this test runs with.
    for (const char *libc : {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                             "/lib64/libc.so.6"}) {
        if (fs::exists(libc)) {
            expect_user_error({"--so", libc, "-i", p("a.npy"), "-o", p("o11")},
                              {"does not export akg_kernel_count"});
            break;
        }
    }
}

namespace {

npy::DType npy_dtype(akg_dtype t) {
    switch (t) {
    case AKG_DTYPE_FLOAT16: return npy::DType::Float16;
    case AKG_DTYPE_INT32: return npy::DType::Int32;
    case AKG_DTYPE_BOOL: return npy::DType::Bool;
    case AKG_DTYPE_INT64: return npy::DType::Int64;
    case AKG_DTYPE_UINT8: return npy::DType::UInt8;
    case AKG_DTYPE_INT8: return npy::DType::Int8;
    case AKG_DTYPE_FLOAT64: return npy::DType::Float64;
    default: return npy::DType::Float32;
    }
}

// Random contents valid for every dtype: small positive float16/float32 values (finite through
// logs and divisions), 0/1 bools, small integers.
npy::Array random_array(akg_dtype t, const Shape &shape) {
    npy::Array a = npy::make_array(npy_dtype(t), shape);
    for (size_t i = 0; i < a.num_elements(); ++i) {
        const uint32_t r = next_u32();
        switch (t) {
        case AKG_DTYPE_FLOAT32: a.as<float>()[i] = uniform(0.25f, 2.0f); break;
        case AKG_DTYPE_FLOAT16: a.as<uint16_t>()[i] = static_cast<uint16_t>(((13 + r % 3) << 10) | ((r >> 8) & 0x3ff)); break;
        case AKG_DTYPE_BOOL: a.data.data()[i] = static_cast<unsigned char>(r & 1); break;
        case AKG_DTYPE_INT32: a.as<int32_t>()[i] = static_cast<int32_t>(r % 7); break;
        default: std::memset(a.data.data() + i * npy::itemsize(a.dtype), 0, npy::itemsize(a.dtype)); break;
        }
    }
    return a;
}


// akg-run on random inputs for kernel `k` (selected by `selector`: --kernel NAME, or --so FILE)
// writes exactly what `run_fn` (akg_run of the library that holds `k`) computes on the same
// inputs: every output, and every input updated in place.
using RunFn = akg_status (*)(const akg_kernel *, const akg_tensor *, size_t, const akg_tensor *, size_t);
using InfoFn = akg_status (*)(const akg_kernel *, size_t, akg_tensor_info *);
struct KernelApi {
    RunFn run;
    InfoFn input_info, output_info;
    size_t (*num_inputs)(const akg_kernel *), (*num_outputs)(const akg_kernel *);
};
const KernelApi kLinkedApi = {akg_run, akg_kernel_input_info, akg_kernel_output_info, akg_kernel_num_inputs, akg_kernel_num_outputs};

void AkgRunMatchesDirectCall(const akg_kernel *k, const KernelApi &api, const std::vector<std::string> &selector,
                             Result (*run)(const std::vector<std::string> &)) {
    const fs::path dir = make_temp_dir("akg_run_kernel");
    std::vector<npy::Array> in;
    std::vector<akg_tensor_info> in_info(api.num_inputs(k)), out_info(api.num_outputs(k));
    std::vector<std::string> args = selector;
    args.push_back("-o");
    args.push_back((dir / "out").string());
    for (size_t i = 0; i < in_info.size(); ++i) {
        ASSERT_EQ(api.input_info(k, i, &in_info[i]), AKG_STATUS_OK);
        in.push_back(random_array(in_info[i].dtype, Shape(in_info[i].shape, in_info[i].shape + in_info[i].rank)));
        const std::string file = (dir / ("in" + std::to_string(i) + ".npy")).string();
        npy::write(file, in.back());
        args.push_back("-i");
        args.push_back(file);
    }
    const Result r = run(args);
    ASSERT_EQ(r.rc, 0) << r.err;

    std::vector<npy::Array> expected_in = in, expected_out;
    std::vector<akg_tensor> tin, tout;
    for (size_t i = 0; i < in.size(); ++i)
        tin.push_back({expected_in[i].data.data(), in_info[i].dtype, in_info[i].rank, expected_in[i].shape.data(), nullptr});
    for (size_t o = 0; o < out_info.size(); ++o) {
        ASSERT_EQ(api.output_info(k, o, &out_info[o]), AKG_STATUS_OK);
        expected_out.push_back(npy::make_array(npy_dtype(out_info[o].dtype), Shape(out_info[o].shape, out_info[o].shape + out_info[o].rank)));
    }
    for (size_t o = 0; o < out_info.size(); ++o)
        tout.push_back({expected_out[o].data.data(), out_info[o].dtype, out_info[o].rank, expected_out[o].shape.data(), nullptr});
    ASSERT_EQ(api.run(k, tin.data(), tin.size(), tout.data(), tout.size()), AKG_STATUS_OK);

    auto expect_file = [&](const std::string &tensor, const npy::Array &want) {
        const npy::Array got = npy::read((dir / "out" / (tensor + ".npy")).string());
        EXPECT_EQ(got.dtype, want.dtype) << tensor;
        ASSERT_EQ(got.shape, want.shape) << tensor;
        EXPECT_EQ(std::memcmp(got.data.data(), want.data.data(), got.num_bytes()), 0) << tensor << " differs from akg_run";
    };
    std::set<std::string> files;
    for (size_t o = 0; o < out_info.size(); ++o) {
        expect_file(out_info[o].name, expected_out[o]);
        files.insert(std::string(out_info[o].name) + ".npy");
    }
    for (size_t i = 0; i < in_info.size(); ++i)
        if (in_info[i].updated_in_place) {
            expect_file(in_info[i].name, expected_in[i]);
            files.insert(std::string(in_info[i].name) + ".npy");
        }
    EXPECT_EQ(list_dir(dir / "out"), std::vector<std::string>(files.begin(), files.end()));
    fs::remove_all(dir);
}

} // namespace

// Every kernel of the linked catalog, by name.
TEST_F(AkgRun, EveryCatalogKernelRunsByNameFromNpyFiles) {
    for (size_t n = 0; n < akg_kernel_count(); ++n) {
        const akg_kernel *k = akg_kernel_at(n);
        SCOPED_TRACE(akg_kernel_name(k));
        AkgRunMatchesDirectCall(k, kLinkedApi, {"--kernel", akg_kernel_name(k)}, &AkgRun::run);
    }
}

// MindSpore kernels of the corpus (../shared/akg-corpus; skipped when absent), compiled with
// `akg-gen compile` ($AKG_GEN) and run with `akg-run --so`: a spread of dtypes, scalars,
// in-place updates, kernels without inputs, AddN, Tile, Select with immediates.
TEST_F(AkgRun, CorpusKernelsCompiledOnDemandRunFromNpyFiles) {
    const fs::path corpus = fs::path(AKG_SOURCE_ROOT) / ".." / "shared" / "akg-corpus";
    if (!fs::exists(corpus)) GTEST_SKIP() << corpus << " is absent";
    std::vector<fs::path> files;
    for (const auto &e : fs::recursive_directory_iterator(corpus))
        if (e.is_regular_file() && (e.path().extension() == ".json" || e.path().extension() == ".info")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    const char *gen = std::getenv("AKG_GEN");
    if (gen == nullptr || *gen == '\0') GTEST_SKIP() << "built without the generator";
    const std::string akg_gen = gen;
    int compiled = 0;
    for (size_t f = 0; f < files.size(); f += 61) { // 17 kernels spread over the corpus
        SCOPED_TRACE(files[f].string());
        const fs::path so = make_temp_dir("akg_run_so") / "kernel.so";
        const std::string cmd = akg_gen + " compile '" + files[f].string() + "' -o '" + so.string() + "' >/dev/null 2>&1";
        if (std::system(cmd.c_str()) != 0) continue; // unsupported (MatMul, Conv2D): akg-gen says so
        ++compiled;
        void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(h, nullptr) << dlerror();
        KernelApi api = {reinterpret_cast<RunFn>(dlsym(h, "akg_run")), reinterpret_cast<InfoFn>(dlsym(h, "akg_kernel_input_info")),
                         reinterpret_cast<InfoFn>(dlsym(h, "akg_kernel_output_info")),
                         reinterpret_cast<size_t (*)(const akg_kernel *)>(dlsym(h, "akg_kernel_num_inputs")),
                         reinterpret_cast<size_t (*)(const akg_kernel *)>(dlsym(h, "akg_kernel_num_outputs"))};
        auto at = reinterpret_cast<const akg_kernel *(*)(size_t)>(dlsym(h, "akg_kernel_at"));
        ASSERT_TRUE(api.run && api.input_info && at);
        AkgRunMatchesDirectCall(at(0), api, {"--so", so.string()}, &AkgRun::run);
        dlclose(h);
        fs::remove_all(so.parent_path());
    }
    EXPECT_GE(compiled, 12);
}
