// npy.cpp: see npy.h. The format is NumPy's "NEP 1" .npy layout:
//   "\x93NUMPY" major minor HEADER_LEN (uint16 LE for 1.0, uint32 LE for 2.0/3.0)
//   header (a Python dict literal, latin-1 for 1.0/2.0, UTF-8 for 3.0) padded, ending in '\n'
//   raw data
#include "npy.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace akg::npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;          // numpy's ARRAY_ALIGN
constexpr size_t kGrowthDigits = 21;   // numpy's GROWTH_AXIS_MAX_DIGITS

struct DTypeInfo {
    DType dtype;
    const char *descr;
    const char *name;
    size_t size;
};

constexpr DTypeInfo kInfos[] = {
    {DType::Float32, "<f4", "float32", 4}, {DType::Float16, "<f2", "float16", 2},
    {DType::Int32, "<i4", "int32", 4},     {DType::Bool, "|b1", "bool", 1},
    {DType::Int64, "<i8", "int64", 8},     {DType::UInt8, "|u1", "uint8", 1},
    {DType::Int8, "|i1", "int8", 1},       {DType::Float64, "<f8", "float64", 8},
};

const DTypeInfo &info(DType dtype) {
    for (const DTypeInfo &i : kInfos) {
        if (i.dtype == dtype) {
            return i;
        }
    }
    throw Error("npy: invalid dtype value " + std::to_string(static_cast<int>(dtype)));
}

std::string supported_list() {
    std::string s;
    for (const DTypeInfo &i : kInfos) {
        if (!s.empty()) {
            s += ", ";
        }
        s += std::string("'") + i.descr + "' (" + i.name + ")";
    }
    return s;
}

[[noreturn]] void fail(const std::string &name, const std::string &what) {
    throw Error("npy: " + name + ": " + what);
}

std::string errno_text(int err) { return std::strerror(err); }

// Maps a descr string to a dtype, or explains why it is not acceptable.
DType dtype_from_descr(const std::string &d, const std::string &name) {
    if (d.empty()) {
        fail(name, "empty 'descr'");
    }
    const char order = d[0];
    const std::string code = (order == '<' || order == '>' || order == '|' || order == '=')
                                 ? d.substr(1) : d;
    const DTypeInfo *found = nullptr;
    for (const DTypeInfo &i : kInfos) {
        if (code == i.descr + 1) {
            found = &i;
        }
    }
    if (found == nullptr) {
        fail(name, "unsupported dtype '" + d + "' (supported: " + supported_list() + ")");
    }
    if (order == '>') {
        fail(name, "big-endian dtype '" + d + "' is not supported: store it little-endian ('<" +
                       code + "')");
    }
    if (order == '=' || (order != '<' && order != '|')) {
        fail(name, "dtype '" + d + "' has no explicit byte order: expected '" +
                       std::string(found->descr) + "'");
    }
    if (order == '|' && found->size != 1) {
        fail(name, "dtype '" + d + "' has no byte order but is " + std::to_string(found->size) +
                       " bytes wide: expected '" + std::string(found->descr) + "'");
    }
    return found->dtype;
}

// ----- A strict parser of the header: a Python dict literal with three known keys. ----------

struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
};

class HeaderParser {
public:
    HeaderParser(const std::string &text, const std::string &name) : s_(text), name_(name) {}

    Header parse() {
        // Layout: '{' ... '}' then only spaces, then the single final '\n'.
        if (s_.empty() || s_.back() != '\n') {
            err("header does not end with a newline");
        }
        end_ = s_.size() - 1;
        for (size_t i = 0; i < end_; ++i) {
            const unsigned char c = static_cast<unsigned char>(s_[i]);
            if (c == '\n') {
                err("header has a newline before its end");
            }
            if (c < 0x20 && c != '\t') {
                err("header holds control character " + hex(c));
            }
            if (c >= 0x7f) {
                err("header holds non-ASCII byte " + hex(c));
            }
        }
        if (pos_ >= end_ || s_[pos_] != '{') {
            err("header does not start with '{'");
        }
        ++pos_;
        bool have_descr = false, have_fortran = false, have_shape = false;
        Header h;
        skip_ws();
        while (peek() != '}') {
            const std::string key = parse_string("a key");
            skip_ws();
            expect(':', "after key '" + key + "'");
            skip_ws();
            if (key == "descr") {
                dup(have_descr, key);
                if (peek() == '[') {
                    err("structured dtypes (a list 'descr') are not supported");
                }
                if (peek() != '\'' && peek() != '"') {
                    err("'descr' is not a string");
                }
                h.descr = parse_string("the 'descr' value");
            } else if (key == "fortran_order") {
                dup(have_fortran, key);
                h.fortran_order = parse_bool();
            } else if (key == "shape") {
                dup(have_shape, key);
                h.shape = parse_shape();
            } else {
                err("unexpected key '" + key + "' (expected exactly 'descr', 'fortran_order', 'shape')");
            }
            skip_ws();
            if (peek() == ',') {
                ++pos_;
                skip_ws();
            } else if (peek() != '}') {
                err("expected ',' or '}' after the value of '" + key + "'" + at());
            }
        }
        ++pos_; // '}'
        for (size_t i = pos_; i < end_; ++i) {
            if (s_[i] != ' ') {
                err("unexpected " + describe(s_[i]) + " after the header dict (padding must be spaces)");
            }
        }
        if (!have_descr) {
            err("header has no 'descr' key");
        }
        if (!have_fortran) {
            err("header has no 'fortran_order' key");
        }
        if (!have_shape) {
            err("header has no 'shape' key");
        }
        return h;
    }

private:
    const std::string &s_;
    const std::string &name_;
    size_t pos_ = 0;
    size_t end_ = 0;

    static std::string hex(unsigned char c) {
        static const char d[] = "0123456789abcdef";
        return std::string("0x") + d[c >> 4] + d[c & 15];
    }
    static std::string describe(char c) {
        return std::string("'") + c + "'";
    }
    [[noreturn]] void err(const std::string &what) const { fail(name_, "malformed header: " + what); }
    std::string at() const {
        return pos_ < end_ ? " at " + describe(s_[pos_]) + " (offset " + std::to_string(pos_) + ")"
                           : " at the end of the header";
    }
    char peek() const {
        if (pos_ >= end_) {
            err("header dict is not closed");
        }
        return s_[pos_];
    }
    void skip_ws() {
        while (pos_ < end_ && (s_[pos_] == ' ' || s_[pos_] == '\t')) {
            ++pos_;
        }
    }
    void expect(char c, const std::string &where) {
        if (peek() != c) {
            err(std::string("expected '") + c + "' " + where + at());
        }
        ++pos_;
    }
    void dup(bool &seen, const std::string &key) {
        if (seen) {
            err("key '" + key + "' appears twice");
        }
        seen = true;
    }
    std::string parse_string(const std::string &what) {
        const char q = peek();
        if (q != '\'' && q != '"') {
            err("expected a quoted string for " + what + at());
        }
        ++pos_;
        std::string out;
        while (true) {
            if (pos_ >= end_) {
                err("unterminated string");
            }
            const char c = s_[pos_++];
            if (c == q) {
                break;
            }
            if (c == '\\') {
                err("escape sequences are not supported in header strings");
            }
            out += c;
        }
        return out;
    }
    bool parse_bool() {
        if (s_.compare(pos_, 4, "True") == 0 && !ident_char(pos_ + 4)) {
            pos_ += 4;
            return true;
        }
        if (s_.compare(pos_, 5, "False") == 0 && !ident_char(pos_ + 5)) {
            pos_ += 5;
            return false;
        }
        err("'fortran_order' is not True or False" + at());
    }
    bool ident_char(size_t i) const {
        if (i >= end_) {
            return false;
        }
        const char c = s_[i];
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    int64_t parse_dim() {
        const size_t start = pos_;
        if (peek() == '-') {
            err("negative dimension in 'shape'");
        }
        uint64_t v = 0;
        while (pos_ < end_ && s_[pos_] >= '0' && s_[pos_] <= '9') {
            const uint64_t digit = static_cast<uint64_t>(s_[pos_] - '0');
            if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
                err("dimension in 'shape' is too large");
            }
            v = v * 10 + digit;
            ++pos_;
        }
        if (pos_ == start) {
            err("expected a non-negative integer in 'shape'" + at());
        }
        if (pos_ - start > 1 && s_[start] == '0') {
            err("dimension in 'shape' has a leading zero");
        }
        if (ident_char(pos_) || (pos_ < end_ && s_[pos_] == '.')) {
            err("malformed integer in 'shape'" + at());
        }
        return static_cast<int64_t>(v);
    }
    std::vector<int64_t> parse_shape() {
        if (peek() != '(') {
            err("'shape' is not a tuple" + at());
        }
        ++pos_;
        std::vector<int64_t> shape;
        skip_ws();
        if (peek() == ')') {
            ++pos_;
            return shape;
        }
        bool trailing_comma = false;
        while (true) {
            shape.push_back(parse_dim());
            skip_ws();
            trailing_comma = false;
            if (peek() == ',') {
                ++pos_;
                trailing_comma = true;
                skip_ws();
            }
            if (peek() == ')') {
                ++pos_;
                break;
            }
            if (!trailing_comma) {
                err("expected ',' or ')' in 'shape'" + at());
            }
        }
        if (shape.size() == 1 && !trailing_comma) {
            err("'shape' is not a tuple (a one-element tuple needs a trailing comma: (n,))");
        }
        return shape;
    }
};

uint32_t read_le(const unsigned char *p, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        v |= static_cast<uint32_t>(p[i]) << (8 * i);
    }
    return v;
}

// Length of the fixed prefix (magic, version, HEADER_LEN) for a format major version.
size_t prefix_len(int major) { return kMagicLen + 2 + (major == 1 ? 2 : 4); }

// Checks magic and version of the first bytes; returns the major version.
int check_magic(const unsigned char *p, size_t avail, const std::string &name) {
    if (avail < kMagicLen + 2 || std::memcmp(p, kMagic, kMagicLen) != 0) {
        fail(name, "not a .npy file (bad magic string; expected \\x93NUMPY)");
    }
    const int major = p[kMagicLen];
    const int minor = p[kMagicLen + 1];
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        fail(name, "unsupported .npy format version " + std::to_string(major) + "." +
                       std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
    }
    if (avail < prefix_len(major)) {
        fail(name, "file too short: truncated .npy header");
    }
    return major;
}

struct Preamble {
    DType dtype;
    std::vector<int64_t> shape;
    size_t data_offset;
    size_t data_bytes;
};

// `p` holds at least the prefix and the header; `file_size` is the file's whole size.
Preamble parse_preamble(const unsigned char *p, size_t avail, uint64_t file_size,
                        const std::string &name) {
    const int major = check_magic(p, avail, name);
    const size_t pre = prefix_len(major);
    const uint64_t hlen = read_le(p + kMagicLen + 2, major == 1 ? 2 : 4);
    if (hlen > file_size - pre || hlen > avail - pre) {
        fail(name, "file too short: header length " + std::to_string(hlen) + " exceeds the file");
    }
    const std::string text(reinterpret_cast<const char *>(p + pre), static_cast<size_t>(hlen));
    const Header h = HeaderParser(text, name).parse();
    Preamble out;
    out.dtype = dtype_from_descr(h.descr, name);
    if (h.fortran_order) {
        fail(name, "fortran_order is True: only C-order (row-major) arrays are supported "
                   "(save np.ascontiguousarray(a))");
    }
    out.shape = h.shape;
    const size_t elems = checked_num_elements(out.shape, itemsize(out.dtype), name);
    out.data_offset = pre + static_cast<size_t>(hlen);
    out.data_bytes = elems * itemsize(out.dtype);
    const uint64_t have = file_size - out.data_offset;
    if (have < out.data_bytes) {
        fail(name, "truncated data: shape " + shape_string(out.shape) + " of " + info(out.dtype).name +
                       " needs " + std::to_string(out.data_bytes) + " bytes, the file holds " +
                       std::to_string(have));
    }
    if (have > out.data_bytes) {
        fail(name, std::to_string(have - out.data_bytes) + " unexpected bytes after the data (shape " +
                       shape_string(out.shape) + " of " + info(out.dtype).name + " needs " +
                       std::to_string(out.data_bytes) + ")");
    }
    return out;
}

void check_bools(const Array &a, const std::string &name) {
    if (a.dtype != DType::Bool) {
        return;
    }
    const unsigned char *d = a.data.data();
    for (size_t i = 0; i < a.data.size(); ++i) {
        if (d[i] > 1) {
            fail(name, "bool element " + std::to_string(i) + " holds byte " + std::to_string(d[i]) +
                           " (only 0 and 1 are valid)");
        }
    }
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    int get() const { return fd_; }
    int release() {
        const int f = fd_;
        fd_ = -1;
        return f;
    }

private:
    int fd_;
};

// Reads exactly n bytes at the current offset; false with errno set (0 on early EOF).
bool read_all(int fd, void *buf, size_t n) {
    auto *p = static_cast<unsigned char *>(buf);
    while (n > 0) {
        const ssize_t r = ::read(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        if (r == 0) {
            errno = 0;
            return false;
        }
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

bool write_all(int fd, const void *buf, size_t n) {
    const auto *p = static_cast<const unsigned char *>(buf);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

} // namespace

const DType kAllDTypes[8] = {DType::Float32, DType::Float16, DType::Int32, DType::Bool,
                             DType::Int64,   DType::UInt8,   DType::Int8,  DType::Float64};

size_t itemsize(DType dtype) { return info(dtype).size; }
const char *descr(DType dtype) { return info(dtype).descr; }
const char *name(DType dtype) { return info(dtype).name; }

std::string shape_string(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) {
            s += ", ";
        }
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) {
        s += ",";
    }
    return s + ")";
}

// ----- Buffer --------------------------------------------------------------------------------

void Buffer::Free::operator()(unsigned char *p) const { std::free(p); }

Buffer::Buffer(size_t size) : size_(size) {
    if (size == 0) {
        return;
    }
    if (size > std::numeric_limits<size_t>::max() - kAlign) {
        throw Error("npy: buffer of " + std::to_string(size) + " bytes is too large");
    }
    const size_t rounded = (size + kAlign - 1) / kAlign * kAlign;
    void *p = std::aligned_alloc(kAlign, rounded);
    if (p == nullptr) {
        throw Error("npy: out of memory allocating " + std::to_string(size) + " bytes");
    }
    std::memset(p, 0, rounded);
    ptr_.reset(static_cast<unsigned char *>(p));
}

Buffer::Buffer(const Buffer &other) : Buffer(other.size_) {
    if (size_ > 0) {
        std::memcpy(ptr_.get(), other.ptr_.get(), size_);
    }
}

Buffer &Buffer::operator=(const Buffer &other) {
    if (this != &other) {
        Buffer copy(other);
        *this = std::move(copy);
    }
    return *this;
}

// ----- Arrays --------------------------------------------------------------------------------

size_t checked_num_elements(const std::vector<int64_t> &shape, size_t item, const std::string &what) {
    size_t elems = 1;
    bool zero = false;
    const size_t limit = static_cast<size_t>(std::numeric_limits<int64_t>::max()) / (item == 0 ? 1 : item);
    for (int64_t d : shape) {
        if (d < 0) {
            throw Error("npy: " + what + ": negative dimension in shape " + shape_string(shape));
        }
        if (d == 0) {
            zero = true;
            continue;
        }
        if (elems > limit / static_cast<uint64_t>(d)) {
            throw Error("npy: " + what + ": shape " + shape_string(shape) + " is too large");
        }
        elems *= static_cast<size_t>(d);
    }
    return zero ? 0 : elems;
}

size_t Array::num_elements() const { return checked_num_elements(shape, itemsize(dtype), "array"); }

Array make_array(DType dtype, std::vector<int64_t> shape) {
    Array a;
    a.dtype = dtype;
    const size_t elems = checked_num_elements(shape, itemsize(dtype), "make_array");
    a.shape = std::move(shape);
    a.data = Buffer(elems * itemsize(dtype));
    return a;
}

// ----- Reading -------------------------------------------------------------------------------

Array parse(const void *bytes, size_t size, const std::string &name) {
    const auto *p = static_cast<const unsigned char *>(bytes);
    if (p == nullptr && size > 0) {
        fail(name, "no data");
    }
    const Preamble pre = parse_preamble(p, size, size, name);
    Array a;
    a.dtype = pre.dtype;
    a.shape = pre.shape;
    a.data = Buffer(pre.data_bytes);
    if (pre.data_bytes > 0) {
        std::memcpy(a.data.data(), p + pre.data_offset, pre.data_bytes);
    }
    check_bools(a, name);
    return a;
}

Array read(const std::string &path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        fail(path, "cannot open: " + errno_text(errno));
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
        fail(path, "cannot stat: " + errno_text(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        fail(path, "is a directory, not a .npy file");
    }
    if (!S_ISREG(st.st_mode)) {
        fail(path, "not a regular file");
    }
    const uint64_t file_size = static_cast<uint64_t>(st.st_size);

    // The fixed prefix first, then the header it announces.
    unsigned char prefix[12];
    const size_t first = file_size < sizeof prefix ? static_cast<size_t>(file_size) : sizeof prefix;
    if (!read_all(fd.get(), prefix, first)) {
        fail(path, errno ? "read error: " + errno_text(errno) : std::string("file shrank while reading"));
    }
    const int major = check_magic(prefix, first, path);
    const size_t pre = prefix_len(major);
    const uint64_t hlen = read_le(prefix + kMagicLen + 2, major == 1 ? 2 : 4);
    if (hlen > file_size - pre) {
        fail(path, "file too short: header length " + std::to_string(hlen) + " exceeds the file");
    }
    std::string head(reinterpret_cast<const char *>(prefix), first);
    head.resize(pre + static_cast<size_t>(hlen));
    if (head.size() > first &&
        !read_all(fd.get(), &head[first], head.size() - first)) {
        fail(path, errno ? "read error: " + errno_text(errno) : std::string("file shrank while reading"));
    }
    const Preamble p = parse_preamble(reinterpret_cast<const unsigned char *>(head.data()), head.size(),
                                      file_size, path);
    Array a;
    a.dtype = p.dtype;
    a.shape = p.shape;
    a.data = Buffer(p.data_bytes);
    if (p.data_bytes > 0 && !read_all(fd.get(), a.data.data(), p.data_bytes)) {
        fail(path, errno ? "read error: " + errno_text(errno) : std::string("file shrank while reading"));
    }
    check_bools(a, path);
    return a;
}

// ----- Writing -------------------------------------------------------------------------------

std::string header(DType dtype, const std::vector<int64_t> &shape, int version) {
    if (version < 0 || version > 3) {
        throw Error("npy: cannot write format version " + std::to_string(version) + " (use 1, 2 or 3)");
    }
    checked_num_elements(shape, itemsize(dtype), "header");
    std::string dict = std::string("{'descr': '") + descr(dtype) + "', 'fortran_order': False, 'shape': " +
                       shape_string(shape) + ", }";
    if (!shape.empty()) {
        // numpy leaves room for the first axis to grow to GROWTH_AXIS_MAX_DIGITS digits.
        const size_t digits = std::to_string(shape[0]).size();
        if (digits < kGrowthDigits) {
            dict.append(kGrowthDigits - digits, ' ');
        }
    }
    int major = version == 0 ? 1 : version;
    for (;;) {
        const size_t pre = prefix_len(major);
        const size_t hlen = dict.size() + 1; // + '\n'
        const size_t pad = kAlign - (pre + hlen) % kAlign;
        const size_t total = hlen + pad;
        if (major == 1 && total > 0xffff) {
            if (version == 0) {
                major = 2;
                continue;
            }
            throw Error("npy: header of " + std::to_string(total) +
                        " bytes is too long for format version 1.0");
        }
        std::string out(kMagic, kMagicLen);
        out += static_cast<char>(major);
        out += '\0';
        const size_t nlen = major == 1 ? 2 : 4;
        for (size_t i = 0; i < nlen; ++i) {
            out += static_cast<char>((total >> (8 * i)) & 0xff);
        }
        out += dict;
        out.append(pad, ' ');
        out += '\n';
        return out;
    }
}

std::string serialize(const Array &array, int version) {
    const size_t expect = checked_num_elements(array.shape, itemsize(array.dtype), "serialize") *
                          itemsize(array.dtype);
    if (expect != array.data.size()) {
        throw Error("npy: array data holds " + std::to_string(array.data.size()) + " bytes, shape " +
                    shape_string(array.shape) + " of " + name(array.dtype) + " needs " +
                    std::to_string(expect));
    }
    std::string out = header(array.dtype, array.shape, version);
    out.append(reinterpret_cast<const char *>(array.data.data()), array.data.size());
    return out;
}

void write_direct(const std::string &path, const Array &array, int version) {
    const size_t expect = checked_num_elements(array.shape, itemsize(array.dtype), path) *
                          itemsize(array.dtype);
    if (expect != array.data.size()) {
        fail(path, "array data holds " + std::to_string(array.data.size()) + " bytes, shape " +
                       shape_string(array.shape) + " of " + name(array.dtype) + " needs " +
                       std::to_string(expect));
    }
    const std::string head = header(array.dtype, array.shape, version);
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0) {
        fail(path, "cannot create: " + errno_text(errno));
    }
    if (!write_all(fd.get(), head.data(), head.size()) ||
        (array.data.size() > 0 && !write_all(fd.get(), array.data.data(), array.data.size()))) {
        const int e = errno;
        ::unlink(path.c_str());
        fail(path, "write error: " + errno_text(e));
    }
    if (::close(fd.release()) != 0) {
        const int e = errno;
        ::unlink(path.c_str());
        fail(path, "write error on close: " + errno_text(e));
    }
}

void write(const std::string &path, const Array &array, int version) {
    static std::atomic<unsigned> counter{0};
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp;
    for (int attempt = 0;; ++attempt) {
        tmp = dir + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            ::close(fd);
            break;
        }
        if (errno != EEXIST || attempt > 100) {
            fail(path, "cannot create a temporary file beside it: " + errno_text(errno));
        }
    }
    try {
        write_direct(tmp, array, version);
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(path, "cannot rename the temporary file into place: " + errno_text(e));
    }
}

} // namespace akg::npy
