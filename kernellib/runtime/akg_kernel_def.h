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

/* CPU features a kernel variant needs (akg_variant_def.cpu_features). The x86-64 psABI
 * levels, each including the ones below it; the generator's target description
 * (generator/src/target/target.cpp) names them per target. */
#define AKG_CPU_X86_64_V2 (1u << 0) /* SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CX16 */
#define AKG_CPU_X86_64_V3 (1u << 1) /* AVX, AVX2, FMA, F16C, BMI1, BMI2, LZCNT, MOVBE, OS saves ymm */
#define AKG_CPU_X86_64_V4 (1u << 2) /* AVX-512 F, BW, CD, DQ, VL, OS saves zmm and masks */

/* Packs the packable input (dense, the kernel's dtype) into `packed` (packed_bytes, 64-byte
 * aligned). */
typedef void (*akg_pack_fn)(const void *input, void *packed);

/* A variant's weights packed ahead of time (akg_pack_input): `input` is the index of the
 * input `pack` packs, or -1 (fn_packed and pack NULL) for a kernel without one. fn_packed takes
 * the same buffers as the variant's fn but that input's, which is the packed one. */
typedef struct akg_prepack_def {
    int32_t input;
    uint64_t packed_bytes;
    akg_kernel_fn fn_packed;
    akg_pack_fn pack;
} akg_prepack_def;

/* One compiled variant of a kernel: its function, compiled for `target`, runs on CPUs that have
 * every flag of `cpu_features`. A later key (shape ranges of dynamic shapes) goes beside these. */
typedef struct akg_variant_def {
    const char *target;    /* the generator's target name, e.g. "x86-64-v4" */
    uint32_t cpu_features; /* AKG_CPU_* */
    akg_kernel_fn fn;
    const akg_prepack_def *prepack; /* NULL or input -1: nothing to pack */
} akg_variant_def;

struct akg_kernel {
    const char *name;
    const char *pattern_file; /* relative to the project root, e.g. patterns/layernorm.json */
    size_t num_inputs;
    const akg_tensor_def *inputs;
    size_t num_outputs;
    const akg_tensor_def *outputs;
    /* The variants this build compiled, best first, ended by an entry whose fn is NULL. */
    const akg_variant_def *variants;
};

/* The variant akg_run runs for `kernel` on this CPU (under AKG_MAX_ISA), or NULL when none of
 * the compiled variants can run here. */
const akg_variant_def *akg_kernel_select_variant(const akg_kernel *kernel);

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
