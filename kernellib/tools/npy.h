// npy.h: a small, strict reader and writer of NumPy's .npy format (format versions 1.0, 2.0, 3.0).
//
// Only what the akg kernels exchange is supported: C-order (row-major) arrays of the fixed-size
// dtypes below, little-endian ('<') or byte-order-free ('|', one-byte types), any rank including
// 0 (scalars, shape "()"). Everything else is rejected with an akg::npy::Error whose message
// names the file and says what is wrong; nothing is silently converted.
//
// Reading accepts what numpy writes and what a Python dict literal allows: the three keys
// 'descr', 'fortran_order', 'shape' exactly once each, in any order, single or double quotes,
// optional trailing commas, whitespace between tokens; the header must end with '\n' and may be
// padded with spaces before it. The data must be exactly as long as dtype and shape say (no
// truncation, no trailing bytes). Bool data must hold only 0 and 1.
//
// Writing produces byte for byte what numpy (>= 1.17) writes: the dict with sorted keys, numpy's
// spare space after it, space padding and '\n' so that magic + length + header is a multiple of
// 64 bytes. Version 1.0 is used unless the header does not fit a 16-bit length (then 2.0), or
// the version asked for.
#ifndef AKG_TOOLS_NPY_H
#define AKG_TOOLS_NPY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace akg::npy {

enum class DType { Float32, Float16, Int32, Bool, Int64, UInt8, Int8, Float64 };

// Every supported dtype, in the order above.
extern const DType kAllDTypes[8];

size_t itemsize(DType dtype);
// numpy's descr string as written: "<f4", "<f2", "<i4", "|b1", "<i8", "|u1", "|i1", "<f8".
const char *descr(DType dtype);
// A readable name: "float32", "float16", "int32", "bool", "int64", "uint8", "int8", "float64".
const char *name(DType dtype);
// "(2, 3)", "(5,)", "()": a shape written as Python writes a tuple.
std::string shape_string(const std::vector<int64_t> &shape);

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A byte buffer aligned to 64 bytes, zero-filled on creation.
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(size_t size);
    Buffer(const Buffer &other);
    Buffer &operator=(const Buffer &other);
    Buffer(Buffer &&other) noexcept = default;
    Buffer &operator=(Buffer &&other) noexcept = default;

    unsigned char *data() { return ptr_.get(); }
    const unsigned char *data() const { return ptr_.get(); }
    size_t size() const { return size_; }

private:
    struct Free {
        void operator()(unsigned char *p) const;
    };
    std::unique_ptr<unsigned char, Free> ptr_;
    size_t size_ = 0;
};

struct Array {
    DType dtype = DType::Float32;
    std::vector<int64_t> shape; // empty: a scalar (one element)
    Buffer data;                // num_elements() * itemsize(dtype) bytes, C order, little-endian

    size_t num_elements() const;
    size_t num_bytes() const { return data.size(); }

    template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
    template <typename T> const T *as() const { return reinterpret_cast<const T *>(data.data()); }
};

// A zero-filled array. Throws Error for a negative dim or a size that overflows.
Array make_array(DType dtype, std::vector<int64_t> shape);

// Number of elements of a shape; throws Error (mentioning `what`) on a negative dim or overflow
// of size_t once multiplied by `item`.
size_t checked_num_elements(const std::vector<int64_t> &shape, size_t item, const std::string &what);

// Reads a .npy file. `path` appears in every error message.
Array read(const std::string &path);
// Parses a whole .npy file held in memory; `name` stands for the file in error messages.
Array parse(const void *bytes, size_t size, const std::string &name);

// The complete preamble numpy writes before the data (magic, version, length, header dict,
// padding, '\n'). version: 0 = choose like numpy (1.0, or 2.0 when needed), else 1, 2 or 3.
std::string header(DType dtype, const std::vector<int64_t> &shape, int version = 0);
// The whole file's bytes.
std::string serialize(const Array &array, int version = 0);

// Writes `array` to `path` as is (the file is created or truncated). On error the partial file
// is removed and Error is thrown.
void write_direct(const std::string &path, const Array &array, int version = 0);
// Writes to a temporary file beside `path`, then renames it over `path`, so that `path` is either
// untouched or complete.
void write(const std::string &path, const Array &array, int version = 0);

} // namespace akg::npy

#endif // AKG_TOOLS_NPY_H
