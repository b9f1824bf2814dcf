// akg::npy: round trips of every dtype and format version, numpy's exact header bytes (taken
// from numpy 1.24's np.save), and every rejection with an error that names the file.
#include "npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace npy = akg::npy;
using namespace std::string_literals;

namespace {

using Shape = std::vector<int64_t>;

// A deterministic pattern of bytes valid for the dtype (bools are 0/1).
npy::Array pattern(npy::DType dt, const Shape &shape, unsigned seed = 1) {
    npy::Array a = npy::make_array(dt, shape);
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < a.num_bytes(); ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        a.data.data()[i] = dt == npy::DType::Bool ? (x & 1) : static_cast<unsigned char>(x);
    }
    return a;
}

bool same(const npy::Array &a, const npy::Array &b) {
    return a.dtype == b.dtype && a.shape == b.shape && a.num_bytes() == b.num_bytes() &&
           (a.num_bytes() == 0 || std::memcmp(a.data.data(), b.data.data(), a.num_bytes()) == 0);
}

// A .npy file from its parts: version, the header text (padded with spaces and '\n' to a
// multiple of 64 like numpy unless `raw`), then the data bytes.
std::string craft(int major, int minor, const std::string &dict, const std::string &data, bool raw = false) {
    const size_t pre = major == 1 ? 10 : 12;
    std::string h = dict;
    if (!raw) {
        const size_t total = pre + h.size() + 1;
        h.append((64 - total % 64) % 64, ' ');
        h += '\n';
    }
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += static_cast<char>(minor);
    const size_t n = h.size();
    for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
        out += static_cast<char>((n >> (8 * i)) & 0xff);
    }
    return out + h + data;
}

std::string dict_for(const std::string &descr, const std::string &shape, const std::string &fortran = "False") {
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

// Expects parse() to throw an Error whose message holds `needle` and the file's name.
void expect_reject(const std::string &bytes, const std::string &needle) {
    const std::string name = "case.npy";
    try {
        npy::parse(bytes.data(), bytes.size(), name);
        ADD_FAILURE() << "accepted; expected an error containing '" << needle << "'";
    } catch (const npy::Error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg;
        EXPECT_NE(msg.find(name), std::string::npos) << "message does not name the file: " << msg;
    }
}

class TempDir {
public:
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "akg_npy_test.XXXXXX").string();
        if (mkdtemp(tmpl.data()) == nullptr) {
            std::abort();
        }
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    fs::path operator/(const std::string &n) const { return path_ / n; }
    const fs::path &path() const { return path_; }

private:
    fs::path path_;
};

std::string slurp(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void spit(const fs::path &p, const std::string &bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}

const std::vector<Shape> kShapes = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 1, 1}, {3, 1, 4, 1, 5}};

} // namespace

// ----- Names --------------------------------------------------------------------------------

TEST(Npy, DTypeTable) {
    const char *descrs[] = {"<f4", "<f2", "<i4", "|b1", "<i8", "|u1", "|i1", "<f8"};
    const size_t sizes[] = {4, 2, 4, 1, 8, 1, 1, 8};
    const char *names[] = {"float32", "float16", "int32", "bool", "int64", "uint8", "int8", "float64"};
    for (int i = 0; i < 8; ++i) {
        EXPECT_STREQ(npy::descr(npy::kAllDTypes[i]), descrs[i]);
        EXPECT_EQ(npy::itemsize(npy::kAllDTypes[i]), sizes[i]);
        EXPECT_STREQ(npy::name(npy::kAllDTypes[i]), names[i]);
    }
    EXPECT_EQ(npy::shape_string({}), "()");
    EXPECT_EQ(npy::shape_string({7}), "(7,)");
    EXPECT_EQ(npy::shape_string({2, 3}), "(2, 3)");
}

// ----- Writing exactly like numpy -----------------------------------------------------------

TEST(Npy, HeadersAreByteForByteNumpys) {
    // np.save output of numpy 1.24 for these arrays: prefix, dict, growth spaces, padding, '\n'.
    struct Case {
        npy::DType dt;
        Shape shape;
        const char *dict;
    } cases[] = {
        {npy::DType::Float32, {2, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
        {npy::DType::Float64, {}, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
        {npy::DType::Bool, {5}, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"},
        {npy::DType::Float16, {32, 512, 28, 28}, "{'descr': '<f2', 'fortran_order': False, 'shape': (32, 512, 28, 28), }"},
        {npy::DType::Int8, {0}, "{'descr': '|i1', 'fortran_order': False, 'shape': (0,), }"},
        {npy::DType::UInt8, {1, 1, 1}, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1), }"},
        {npy::DType::Int64, {7, 0, 3}, "{'descr': '<i8', 'fortran_order': False, 'shape': (7, 0, 3), }"},
        {npy::DType::Int32, {4}, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }"},
    };
    for (const Case &c : cases) {
        // numpy: 21 - len(str(shape[0])) growth spaces when the shape is not empty, then spaces up to
        // 127 bytes and '\n': all of these headers are 128 bytes long (HEADER_LEN 118 = 'v').
        std::string expect = std::string("\x93NUMPY\x01\x00v\x00", 10) + c.dict;
        expect.append(127 - expect.size(), ' ');
        expect += '\n';
        EXPECT_EQ(npy::header(c.dt, c.shape), expect) << c.dict;
        EXPECT_EQ(npy::header(c.dt, c.shape, 1), expect) << c.dict;
    }
    // numpy.lib.format.write_array(..., version=(2, 0)) and (3, 0): HEADER_LEN 116 = 't'.
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    for (int v : {2, 3}) {
        std::string expect = std::string("\x93NUMPY", 6) + static_cast<char>(v) + std::string("\0t\0\0\0", 5) + dict;
        expect.append(127 - expect.size(), ' ');
        expect += '\n';
        EXPECT_EQ(npy::header(npy::DType::Float32, {2, 3}, v), expect);
    }
}

TEST(Npy, HeaderLengthIsAlwaysAMultipleOf64) {
    Shape shape;
    for (int rank = 0; rank < 40; ++rank) {
        for (int v : {0, 1, 2, 3}) {
            const std::string h = npy::header(npy::DType::Float32, shape, v);
            EXPECT_EQ(h.size() % 64, 0u) << "rank " << rank;
            EXPECT_EQ(h.back(), '\n');
        }
        shape.push_back(rank % 3 == 0 ? 12 : 1);
    }
}

TEST(Npy, HugeHeaderSwitchesToVersion2) {
    const Shape shape(30000, 1); // "1, " per dim: more than 65535 header bytes
    const std::string h = npy::header(npy::DType::UInt8, shape);
    EXPECT_EQ(h[6], 2);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_THROW(npy::header(npy::DType::UInt8, shape, 1), npy::Error);
    const npy::Array a = pattern(npy::DType::UInt8, shape);
    const std::string bytes = npy::serialize(a);
    EXPECT_TRUE(same(npy::parse(bytes.data(), bytes.size(), "big"), a));
}

TEST(Npy, BadWriteArguments) {
    EXPECT_THROW(npy::header(npy::DType::Float32, {2}, 4), npy::Error);
    EXPECT_THROW(npy::header(npy::DType::Float32, {-1}, 0), npy::Error);
    EXPECT_THROW(npy::make_array(npy::DType::Float32, {-2, 3}), npy::Error);
    EXPECT_THROW(npy::make_array(npy::DType::Float64, {INT64_MAX / 4, 8}), npy::Error);
    npy::Array a = npy::make_array(npy::DType::Float32, {2, 2});
    a.shape = {3, 3}; // data no longer matches
    EXPECT_THROW(npy::serialize(a), npy::Error);
}

// ----- Round trips --------------------------------------------------------------------------

TEST(Npy, RoundTripEveryDTypeShapeAndVersionInMemory) {
    unsigned seed = 0;
    for (npy::DType dt : npy::kAllDTypes) {
        for (const Shape &shape : kShapes) {
            const npy::Array a = pattern(dt, shape, ++seed);
            for (int v : {0, 1, 2, 3}) {
                const std::string bytes = npy::serialize(a, v);
                EXPECT_EQ(bytes[6], v == 0 ? 1 : v);
                const npy::Array b = npy::parse(bytes.data(), bytes.size(), "mem");
                EXPECT_TRUE(same(a, b)) << npy::name(dt) << " " << npy::shape_string(shape) << " v" << v;
            }
        }
    }
}

TEST(Npy, RoundTripEveryDTypeThroughFiles) {
    TempDir dir;
    unsigned seed = 100;
    for (npy::DType dt : npy::kAllDTypes) {
        for (const Shape &shape : kShapes) {
            const npy::Array a = pattern(dt, shape, ++seed);
            for (int v : {1, 2, 3}) {
                const fs::path p = dir / (std::string(npy::name(dt)) + "_v" + std::to_string(v) + ".npy");
                npy::write(p.string(), a, v);
                EXPECT_EQ(slurp(p), npy::serialize(a, v));
                EXPECT_TRUE(same(npy::read(p.string()), a)) << p;
                const fs::path q = dir / "direct.npy";
                npy::write_direct(q.string(), a, v);
                EXPECT_TRUE(same(npy::read(q.string()), a)) << q;
            }
        }
    }
    // write() leaves no temporary file behind; the folder holds exactly the files written.
    size_t files = 0;
    for (const auto &e : fs::directory_iterator(dir.path())) {
        EXPECT_EQ(e.path().filename().string()[0] != '.', true) << e.path();
        ++files;
    }
    EXPECT_EQ(files, 8u * 3u + 1u);
}

TEST(Npy, ValuesSurviveTypedAccess) {
    npy::Array a = npy::make_array(npy::DType::Float32, {3});
    a.as<float>()[0] = 1.5f;
    a.as<float>()[1] = -0.0f;
    a.as<float>()[2] = 3e38f;
    const std::string bytes = npy::serialize(a);
    // Little-endian data right after the 128-byte header: 1.5f = 0x3fc00000.
    ASSERT_EQ(bytes.size(), 128u + 12u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[128]), 0x00);
    EXPECT_EQ(static_cast<unsigned char>(bytes[131]), 0x3f);
    const npy::Array b = npy::parse(bytes.data(), bytes.size(), "mem");
    EXPECT_EQ(b.as<float>()[0], 1.5f);
    EXPECT_TRUE(std::signbit(b.as<float>()[1]));
    EXPECT_EQ(b.as<float>()[2], 3e38f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data.data()) % 64, 0u);
}

// ----- Headers other writers produce --------------------------------------------------------

TEST(Npy, AcceptsEquivalentHeaders) {
    const std::string data4(24, '\0');
    const char *dicts[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",             // no trailing comma
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}",     // double quotes
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",             // other key order
        "{ 'descr' : '<f4' ,\t'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }", // spacing
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,3)}",
    };
    for (const char *d : dicts) {
        for (int v : {1, 2, 3}) {
            const std::string bytes = craft(v, 0, d, data4);
            const npy::Array a = npy::parse(bytes.data(), bytes.size(), "x.npy");
            EXPECT_EQ(a.dtype, npy::DType::Float32) << d;
            EXPECT_EQ(a.shape, (Shape{2, 3})) << d;
        }
    }
    // Old numpy aligned to 16 bytes; any padding of spaces is fine when reading.
    const std::string d16 = "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }";
    for (size_t pad = 0; pad < 20; ++pad) {
        const std::string bytes = craft(1, 0, d16 + std::string(pad, ' ') + "\n", std::string("\x07\0\0\0", 4), true);
        const npy::Array a = npy::parse(bytes.data(), bytes.size(), "x.npy");
        EXPECT_EQ(a.as<int32_t>()[0], 7);
    }
    // One-byte types with '<' instead of '|'.
    for (const char *d : {"<b1", "<u1", "<i1"}) {
        const std::string bytes = craft(1, 0, dict_for(d, "(2,)"), std::string(2, '\1'));
        EXPECT_NO_THROW(npy::parse(bytes.data(), bytes.size(), "x.npy")) << d;
    }
}

// ----- Rejections ---------------------------------------------------------------------------

TEST(Npy, RejectsBadMagicAndVersion) {
    const std::string good = npy::serialize(pattern(npy::DType::Float32, {2}));
    expect_reject("", "bad magic");
    expect_reject("\x93NUM", "bad magic");
    std::string bad = good;
    bad[1] = 'n';
    expect_reject(bad, "bad magic");
    expect_reject("PK\x03\x04 this is a zip", "bad magic");
    bad = good;
    bad[6] = 4;
    expect_reject(bad, "version 4.0");
    bad = good;
    bad[7] = 1;
    expect_reject(bad, "version 1.1");
    bad = good;
    bad[6] = 0;
    expect_reject(bad, "version 0.0");
    expect_reject(good.substr(0, 9), "truncated .npy header");
    expect_reject(std::string("\x93NUMPY\x02\x00\x10\x00", 10), "truncated .npy header");
}

TEST(Npy, RejectsTruncatedOrOverlongData) {
    const std::string good = npy::serialize(pattern(npy::DType::Float64, {2, 3}));
    expect_reject(good.substr(0, good.size() - 1), "truncated data");
    expect_reject(good.substr(0, 128), "truncated data");
    expect_reject(good.substr(0, 100), "header length 118 exceeds the file");
    expect_reject(good + "x", "1 unexpected bytes after the data");
    // HEADER_LEN pointing past the end (v1 and v2).
    std::string bad = good;
    bad[8] = '\xff';
    bad[9] = '\xff';
    expect_reject(bad, "exceeds the file");
    expect_reject(craft(2, 0, dict_for("<f4", "(1,)"), "").substr(0, 60), "exceeds the file");
    // Scalars hold exactly one element.
    expect_reject(craft(1, 0, dict_for("<i4", "()"), ""), "truncated data");
    expect_reject(craft(1, 0, dict_for("<i4", "()"), std::string(8, '\0')), "unexpected bytes");
}

TEST(Npy, RejectsFortranOrder) {
    expect_reject(craft(1, 0, dict_for("<f4", "(2, 3)", "True"), std::string(24, '\0')), "fortran_order is True");
    expect_reject(craft(1, 0, dict_for("<f4", "(2, 3)", "0"), std::string(24, '\0')), "not True or False");
    expect_reject(craft(1, 0, dict_for("<f4", "(2, 3)", "'False'"), std::string(24, '\0')), "not True or False");
    expect_reject(craft(1, 0, dict_for("<f4", "(2, 3)", "Falsey"), std::string(24, '\0')), "not True or False");
}

TEST(Npy, RejectsBigEndianAndByteOrderFreeMultiByteTypes) {
    expect_reject(craft(1, 0, dict_for(">f4", "(2,)"), std::string(8, '\0')), "big-endian");
    expect_reject(craft(1, 0, dict_for(">i8", "(2,)"), std::string(16, '\0')), "big-endian");
    expect_reject(craft(1, 0, dict_for(">u1", "(2,)"), std::string(2, '\0')), "big-endian");
    expect_reject(craft(1, 0, dict_for("=f4", "(2,)"), std::string(8, '\0')), "no explicit byte order");
    expect_reject(craft(1, 0, dict_for("f4", "(2,)"), std::string(8, '\0')), "no explicit byte order");
    expect_reject(craft(1, 0, dict_for("|f4", "(2,)"), std::string(8, '\0')), "no byte order but is 4 bytes");
}

TEST(Npy, RejectsUnknownDTypes) {
    for (const char *d : {"<u2", "<u4", "<u8", "<i2", "<c8", "<c16", "|O", "<U5", "|S3", "|V8", "<M8[ns]", "<f16", ""}) {
        expect_reject(craft(1, 0, dict_for(d, "(1,)"), std::string(1, '\0')),
                      std::string(d).empty() ? "empty 'descr'" : "unsupported dtype");
    }
    expect_reject(craft(1, 0, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", ""),
                  "structured dtypes");
    expect_reject(craft(1, 0, "{'descr': 5, 'fortran_order': False, 'shape': (1,), }", ""),
                  "'descr' is not a string");
}

TEST(Npy, RejectsMalformedDicts) {
    const std::string d4(4, '\0');
    struct Case {
        const char *dict;
        const char *needle;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
        {"{'descr': '<f4', 'shape': (1,)}", "no 'fortran_order' key"},
        {"{'fortran_order': False, 'shape': (1,)}", "no 'descr' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "appears twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "needs a trailing comma"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "'shape' is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 1}", "'shape' is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.0,)}", "malformed integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1L,)}", "malformed integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (01,)}", "leading zero"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}", "non-negative integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "not closed"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", "expected ',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", "expected ':'"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': (1,)}", "quoted string"},
        {"{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}", "expected ':'"},
        {"{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (1,)}", "escape sequences"},
        {"['descr', '<f4']", "does not start with '{'"},
        {" {'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "does not start with '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "after the header dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}}", "after the header dict"},
        {"{'descr': '<f4', 'fortran_order': False,\n 'shape': (1,)}", "newline before its end"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), '\xc3\xa9': 1}", "non-ASCII"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\r", "control character"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.dict);
        expect_reject(craft(1, 0, c.dict, d4), c.needle);
        expect_reject(craft(3, 0, c.dict, d4), c.needle);
    }
    // The header must end with '\n', and padding must be spaces.
    expect_reject(craft(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}  ", d4, true),
                  "does not end with a newline");
    expect_reject(craft(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\0\0\n"s, d4, true),
                  "control character");
    expect_reject(craft(1, 0, "", d4, true), "does not end with a newline");
    expect_reject(craft(1, 0, "\n", d4, true), "does not start with '{'");
}

TEST(Npy, RejectsBoolBytesOtherThanZeroAndOne) {
    std::string data("\0\1\2", 3);
    expect_reject(craft(1, 0, dict_for("|b1", "(3,)"), data), "bool element 2 holds byte 2");
}

TEST(Npy, FileErrorsNameTheFile) {
    TempDir dir;
    const auto expect_file_error = [](const fs::path &p, const std::string &needle) {
        try {
            npy::read(p.string());
            ADD_FAILURE() << "read " << p << " succeeded";
        } catch (const npy::Error &e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
            EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        }
    };
    expect_file_error(dir / "missing.npy", "No such file");
    expect_file_error(dir.path(), "is a directory");
    spit(dir / "empty.npy", "");
    expect_file_error(dir / "empty.npy", "bad magic");
    spit(dir / "text.npy", "hello, world\n");
    expect_file_error(dir / "text.npy", "bad magic");
    const std::string good = npy::serialize(pattern(npy::DType::Int32, {10}));
    spit(dir / "trunc.npy", good.substr(0, good.size() - 3));
    expect_file_error(dir / "trunc.npy", "truncated data");
    spit(dir / "long.npy", good + "abc");
    expect_file_error(dir / "long.npy", "3 unexpected bytes");
    spit(dir / "hdr.npy", good.substr(0, 50));
    expect_file_error(dir / "hdr.npy", "exceeds the file");
    spit(dir / "fortran.npy", craft(2, 0, dict_for("<i4", "(10,)", "True"), std::string(40, '\0')));
    expect_file_error(dir / "fortran.npy", "fortran_order is True");
    spit(dir / "big.npy", craft(1, 0, dict_for(">i4", "(10,)"), std::string(40, '\0')));
    expect_file_error(dir / "big.npy", "big-endian");

    // Writing into a folder that does not exist, or over a folder.
    const npy::Array a = pattern(npy::DType::Int8, {3});
    EXPECT_THROW(npy::write((dir / "no" / "such" / "x.npy").string(), a), npy::Error);
    EXPECT_THROW(npy::write_direct((dir / "no" / "x.npy").string(), a), npy::Error);
    fs::create_directory(dir / "sub.npy");
    EXPECT_THROW(npy::write((dir / "sub.npy").string(), a), npy::Error);
    // ... which leaves no temporary file behind.
    for (const auto &e : fs::directory_iterator(dir.path())) {
        EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
    }
}

TEST(Npy, WriteReplacesAnExistingFile) {
    TempDir dir;
    const fs::path p = dir / "x.npy";
    spit(p, "old contents");
    const npy::Array a = pattern(npy::DType::Float16, {4, 4});
    npy::write(p.string(), a);
    EXPECT_TRUE(same(npy::read(p.string()), a));
}
