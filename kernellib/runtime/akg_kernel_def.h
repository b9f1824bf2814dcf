/* akg_kernel_def.h: the internal contract between generated kernels and the runtime.
 * Not installed; generated sources and kernellib/src include it. */
#ifndef AKG_KERNEL_DEF_H
#define AKG_KERNEL_DEF_H

#include "akg/akgkernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct akg_tensor_def {
    const char *name;
    akg_dtype dtype;
    int32_t rank;
    const int64_t *shape;
    int32_t inplace_input; /* inputs: 1 when the kernel writes this input buffer */
} akg_tensor_def;

/* buffers: inputs (input_desc order) then outputs (output_desc order), dense row-major.
 * Returns AKG_STATUS_OK or AKG_STATUS_OUT_OF_MEMORY (nothing written in that case). */
typedef int (*akg_kernel_fn)(void *const *buffers);

struct akg_kernel {
    const char *name;
    const char *pattern_file; /* relative to the project root, e.g. patterns/layernorm.json */
    size_t num_inputs;
    const akg_tensor_def *inputs;
    size_t num_outputs;
    const akg_tensor_def *outputs;
    akg_kernel_fn fn;
};

/* Runs a kernel on dense row-major buffers laid out like akg_kernel_fn's argument (inputs then
 * outputs); used by the generated typed entry points akg_<name>(...). Checks that `buffers` and
 * every buffer of a tensor with elements are non-NULL (AKG_STATUS_NULL_POINTER) and that no
 * written buffer (an output, or an input the kernel updates in place) overlaps another buffer
 * (AKG_STATUS_ALIASING), then calls kernel->fn. Shapes and dtypes come from the kernel's defs. */
akg_status akg_run_dense(const akg_kernel *kernel, void *const *buffers);

/* The catalog table, defined in generated/akg_catalog.cpp. */
extern const akg_kernel *const akg_catalog_kernels[];
extern const size_t akg_catalog_kernel_count;

#ifdef __cplusplus
}
#endif

#endif /* AKG_KERNEL_DEF_H */
