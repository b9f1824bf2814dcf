// The descriptor of the generated add_relu_f32 for the test shared objects, laid out as
// generated/akg_catalog.cpp lays it out, with the one variant the build's kernel flags compile
// (AKG_TEST_ADD_RELU_FN and AKG_TEST_ADD_RELU_TARGET come from meson.build).
#include "akg_kernel_def.h"

extern "C" int AKG_TEST_ADD_RELU_FN(void *const *buffers);

namespace {
const int64_t shape[] = {32, 512, 28, 28};
const akg_tensor_def inputs[] = {
    {"input_0", AKG_DTYPE_FLOAT32, 4, shape, 0},
    {"input_1", AKG_DTYPE_FLOAT32, 4, shape, 0},
};
const akg_tensor_def outputs[] = {
    {"output_0_2", AKG_DTYPE_FLOAT32, 4, shape, 0},
};
const akg_variant_def variants[] = {
    {AKG_TEST_ADD_RELU_TARGET, 0, AKG_TEST_ADD_RELU_FN, nullptr},
    {nullptr, 0, nullptr, nullptr},
};
} // namespace

extern "C" const akg_kernel akg_kernel_desc_add_relu_f32 = {
    "add_relu_f32", "patterns/add_relu_f32.json", 2, inputs, 1, outputs, variants};
