// The catalog table of a shared object holding the single generated kernel add_relu_f32, laid out
// like generated/akg_catalog.cpp: akg-run --so must find and run it without --kernel.
#include "akg_kernel_def.h"

extern "C" {
extern const akg_kernel akg_kernel_desc_add_relu_f32;

extern const akg_kernel *const akg_catalog_kernels[] = {
    &akg_kernel_desc_add_relu_f32,
};
extern const size_t akg_catalog_kernel_count = 1;
}
