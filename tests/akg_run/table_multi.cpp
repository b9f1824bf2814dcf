// A shared object with three kernels: the generated add_relu_f32 and two hand-written ones.
//  - all_dtypes: one tensor of every dtype, a scalar, an empty tensor and an input updated in place;
//      y_f64[i] = 2 * x_f32[i]          y_f16 = x_f16 (bits copied)      y_i64 = x_i32 + x_i64[0]
//      y_bool[i] = !x_bool[i]            y_i8[i] = -x_i8[i]              y_f32[i] = (float)x_f64[i]
//      x_u8[i] += 1 (in place)           y_empty: shape (0, 3), nothing to write
//  - always_oom: returns AKG_STATUS_OUT_OF_MEMORY, so that akg-run exits with status 2.
#include "akg_kernel_def.h"

#include <cstdint>

namespace {

const int64_t s23[] = {2, 3};
const int64_t s3[] = {3};
const int64_t s22[] = {2, 2};
const int64_t s1[] = {1};
const int64_t s4[] = {4};
const int64_t s2[] = {2};
const int64_t s03[] = {0, 3};

const akg_tensor_def all_inputs[] = {
    {"x_f32", AKG_DTYPE_FLOAT32, 2, s23, 0}, {"x_f16", AKG_DTYPE_FLOAT16, 1, s3, 0},
    {"x_i32", AKG_DTYPE_INT32, 0, nullptr, 0}, {"x_bool", AKG_DTYPE_BOOL, 2, s22, 0},
    {"x_i64", AKG_DTYPE_INT64, 1, s1, 0},     {"x_u8", AKG_DTYPE_UINT8, 1, s4, 1},
    {"x_i8", AKG_DTYPE_INT8, 1, s2, 0},       {"x_f64", AKG_DTYPE_FLOAT64, 1, s2, 0},
};
const akg_tensor_def all_outputs[] = {
    {"y_f64", AKG_DTYPE_FLOAT64, 2, s23, 0}, {"y_f16", AKG_DTYPE_FLOAT16, 1, s3, 0},
    {"y_i64", AKG_DTYPE_INT64, 0, nullptr, 0}, {"y_bool", AKG_DTYPE_BOOL, 2, s22, 0},
    {"y_i8", AKG_DTYPE_INT8, 1, s2, 0},       {"y_f32", AKG_DTYPE_FLOAT32, 1, s2, 0},
    {"y_empty", AKG_DTYPE_FLOAT32, 2, s03, 0},
};

int all_dtypes_fn(void *const *b) {
    const float *x_f32 = static_cast<const float *>(b[0]);
    const uint16_t *x_f16 = static_cast<const uint16_t *>(b[1]);
    const int32_t *x_i32 = static_cast<const int32_t *>(b[2]);
    const uint8_t *x_bool = static_cast<const uint8_t *>(b[3]);
    const int64_t *x_i64 = static_cast<const int64_t *>(b[4]);
    uint8_t *x_u8 = static_cast<uint8_t *>(b[5]);
    const int8_t *x_i8 = static_cast<const int8_t *>(b[6]);
    const double *x_f64 = static_cast<const double *>(b[7]);
    double *y_f64 = static_cast<double *>(b[8]);
    uint16_t *y_f16 = static_cast<uint16_t *>(b[9]);
    int64_t *y_i64 = static_cast<int64_t *>(b[10]);
    uint8_t *y_bool = static_cast<uint8_t *>(b[11]);
    int8_t *y_i8 = static_cast<int8_t *>(b[12]);
    float *y_f32 = static_cast<float *>(b[13]);
    for (int i = 0; i < 6; ++i) y_f64[i] = 2.0 * x_f32[i];
    for (int i = 0; i < 3; ++i) y_f16[i] = x_f16[i];
    *y_i64 = static_cast<int64_t>(*x_i32) + x_i64[0];
    for (int i = 0; i < 4; ++i) y_bool[i] = x_bool[i] ? 0 : 1;
    for (int i = 0; i < 4; ++i) x_u8[i] = static_cast<uint8_t>(x_u8[i] + 1);
    for (int i = 0; i < 2; ++i) y_i8[i] = static_cast<int8_t>(-x_i8[i]);
    for (int i = 0; i < 2; ++i) y_f32[i] = static_cast<float>(x_f64[i]);
    return AKG_STATUS_OK;
}

const akg_tensor_def oom_io[] = {{"x", AKG_DTYPE_FLOAT32, 1, s1, 0}};
const akg_tensor_def oom_out[] = {{"y", AKG_DTYPE_FLOAT32, 1, s1, 0}};

int always_oom_fn(void *const *) { return AKG_STATUS_OUT_OF_MEMORY; }

const akg_variant_def all_dtypes_variants[] = {{"any", 0, all_dtypes_fn, nullptr}, {nullptr, 0, nullptr, nullptr}};
const akg_variant_def always_oom_variants[] = {{"any", 0, always_oom_fn, nullptr}, {nullptr, 0, nullptr, nullptr}};

} // namespace

extern "C" {
extern const akg_kernel akg_kernel_desc_add_relu_f32;
extern const akg_kernel akg_kernel_desc_all_dtypes = {
    "all_dtypes", "tests/akg_run/table_multi.cpp", 8, all_inputs, 7, all_outputs, all_dtypes_variants};
extern const akg_kernel akg_kernel_desc_always_oom = {
    "always_oom", "tests/akg_run/table_multi.cpp", 1, oom_io, 1, oom_out, always_oom_variants};

extern const akg_kernel *const akg_catalog_kernels[] = {
    &akg_kernel_desc_add_relu_f32,
    &akg_kernel_desc_all_dtypes,
    &akg_kernel_desc_always_oom,
};
extern const size_t akg_catalog_kernel_count = 3;
}
