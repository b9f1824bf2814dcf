/* akgkernels.h: the stable C ABI of libakgkernels (C99).
 *
 * Every public name starts with akg_ / AKG_. Status values are explicit and only ever
 * appended. No call aborts, throws or writes anything when it returns an error.
 */
#ifndef AKG_AKGKERNELS_H
#define AKG_AKGKERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AKG_VERSION_MAJOR 0
#define AKG_VERSION_MINOR 2
#define AKG_VERSION_PATCH 0
/* Encoded as major*10000 + minor*100 + patch. */
#define AKG_VERSION (AKG_VERSION_MAJOR * 10000 + AKG_VERSION_MINOR * 100 + AKG_VERSION_PATCH)

typedef enum akg_status {
    AKG_STATUS_OK = 0,                /* success */
    AKG_STATUS_NULL_POINTER = 1,      /* a required pointer (kernel, tensor array, data, shape) is NULL */
    AKG_STATUS_UNKNOWN_KERNEL = 2,    /* no kernel of that name / index out of range */
    AKG_STATUS_TENSOR_COUNT = 3,      /* wrong number of input or output tensors */
    AKG_STATUS_RANK_MISMATCH = 4,     /* a tensor's rank differs from the kernel's signature */
    AKG_STATUS_SHAPE_MISMATCH = 5,    /* a tensor's shape differs from the kernel's signature */
    AKG_STATUS_DTYPE_MISMATCH = 6,    /* a tensor's dtype differs from the kernel's signature */
    AKG_STATUS_UNSUPPORTED_STRIDES = 7, /* strides other than dense row-major */
    AKG_STATUS_ALIASING = 8,          /* an output overlaps an input or another output */
    AKG_STATUS_OUT_OF_MEMORY = 9,     /* a scratch buffer could not be allocated */
    AKG_STATUS_INVALID_ARGUMENT = 10, /* any other bad argument (e.g. negative rank) */
    AKG_STATUS_UNSUPPORTED_CPU = 11   /* no variant of the kernel that this build compiled runs on this CPU */
} akg_status;

typedef enum akg_dtype {
    AKG_DTYPE_FLOAT32 = 0, /* IEEE binary32 */
    AKG_DTYPE_FLOAT16 = 1, /* IEEE binary16, passed as uint16_t bits */
    AKG_DTYPE_INT32 = 2,
    AKG_DTYPE_BOOL = 3,    /* one byte, 0 or 1 */
    AKG_DTYPE_INT64 = 4,
    AKG_DTYPE_UINT8 = 5,
    AKG_DTYPE_INT8 = 6,
    AKG_DTYPE_FLOAT64 = 7
} akg_dtype;

/* A tensor handed to akg_run. Strides are in elements; NULL means dense row-major. */
typedef struct akg_tensor {
    void *data;
    akg_dtype dtype;
    int32_t rank;
    const int64_t *shape;
    const int64_t *strides;
} akg_tensor;

/* What a kernel expects of one of its tensors. Pointers stay valid for the program's life. */
typedef struct akg_tensor_info {
    const char *name;      /* tensor_name in the composite JSON */
    akg_dtype dtype;
    int32_t rank;
    const int64_t *shape;
    int32_t updated_in_place; /* inputs only: 1 if the kernel writes this input (InplaceAssign/Assign) */
} akg_tensor_info;

typedef struct akg_kernel akg_kernel; /* opaque */

/* Version of the library actually linked (AKG_VERSION encoding) and as a string. */
uint32_t akg_version(void);
const char *akg_version_string(void);
/* A static, human-readable description of a status; never NULL. */
const char *akg_status_string(akg_status status);

/* The catalog: enumeration and lookup by name. */
size_t akg_kernel_count(void);
const akg_kernel *akg_kernel_at(size_t index);           /* NULL when out of range */
const akg_kernel *akg_kernel_lookup(const char *name);   /* NULL when unknown */

const char *akg_kernel_name(const akg_kernel *kernel);   /* NULL for a NULL kernel */
size_t akg_kernel_num_inputs(const akg_kernel *kernel);  /* 0 for a NULL kernel */
size_t akg_kernel_num_outputs(const akg_kernel *kernel);
/* Describe input/output `index` of a kernel: AKG_STATUS_NULL_POINTER for a NULL kernel or info_out,
 * AKG_STATUS_INVALID_ARGUMENT for an index >= the number of inputs/outputs (info_out untouched). */
akg_status akg_kernel_input_info(const akg_kernel *kernel, size_t index, akg_tensor_info *info_out);
akg_status akg_kernel_output_info(const akg_kernel *kernel, size_t index, akg_tensor_info *info_out);

/* Kernel variants and the CPU.
 * The library holds each kernel compiled for several instruction sets (on x86-64: the psABI
 * levels x86-64-v4 = AVX-512, x86-64-v3 = AVX2+FMA+F16C, x86-64-v2 = SSE4.2; on Arm: aarch64).
 * akg_run runs the best variant the CPU supports; the CPU is examined once, at the first call
 * that needs it (thread-safe). The environment variable AKG_MAX_ISA, read at that moment, caps
 * the choice for testing and debugging: AKG_MAX_ISA=x86-64-v3 never runs AVX-512 code
 * (values: x86-64-v2, x86-64-v3, x86-64-v4, aarch64; anything else is ignored). */

/* The instruction-set level the library uses on this CPU, after AKG_MAX_ISA: "x86-64-v4",
 * "x86-64-v3", "x86-64-v2", "x86-64" (below v2), "aarch64"; never NULL. */
const char *akg_cpu_isa(void);
/* The target of the variant akg_run runs for `kernel` here (e.g. "x86-64-v3"), or NULL for a
 * NULL kernel or when no compiled variant runs on this CPU (akg_run then returns
 * AKG_STATUS_UNSUPPORTED_CPU). */
const char *akg_kernel_variant(const akg_kernel *kernel);
/* The targets this build compiled `kernel` for, best first: index 0 .. count-1, NULL past them. */
size_t akg_kernel_num_variants(const akg_kernel *kernel);
const char *akg_kernel_variant_at(const akg_kernel *kernel, size_t index);

/* Runs a kernel. Inputs are in the order of the kernel's input_desc, outputs in the order of its
 * output_desc. Everything is validated first; on error nothing is written. Checks, in order:
 * kernel NULL (NULL_POINTER); tensor counts (TENSOR_COUNT); inputs/outputs array NULL with a
 * count > 0 (NULL_POINTER); then per tensor, inputs first: rank < 0 (INVALID_ARGUMENT), rank
 * (RANK_MISMATCH), shape NULL with rank > 0 (NULL_POINTER), a dim < 0 (INVALID_ARGUMENT), dims
 * (SHAPE_MISMATCH), dtype not an akg_dtype value (INVALID_ARGUMENT), dtype (DTYPE_MISMATCH), data
 * NULL unless the tensor has no elements (NULL_POINTER), strides neither NULL nor dense row-major
 * (UNSUPPORTED_STRIDES; the stride of a dim of extent 1, and all strides of a tensor without
 * elements, may be anything); finally, a written buffer (an output, or an input updated in place)
 * sharing a byte with any other tensor (ALIASING); read-only inputs may overlap each other.
 * Inputs that the kernel updates in place (akg_tensor_info.updated_in_place) receive their new
 * contents. A kernel that cannot get scratch memory returns AKG_STATUS_OUT_OF_MEMORY; one with no
 * variant for this CPU, AKG_STATUS_UNSUPPORTED_CPU (checked before the tensors).
 * Thread-safe: concurrent calls on distinct output buffers are fine. */
akg_status akg_run(const akg_kernel *kernel, const akg_tensor *inputs, size_t num_inputs,
                   const akg_tensor *outputs, size_t num_outputs);

/* Weights packed once (inference with constant weights; MindSpore's MatMul hint pack_b).
 * A GEMM kernel whose B operand (the weights) is one of its inputs, read by the MatMul alone,
 * can take that input packed ahead of time into the layout its micro-kernel reads: each run
 * then skips the packing, or reads the packed panels where it would otherwise read B in place
 * (small M). The packed form belongs to the variant that made it (its micro-tile), the one
 * akg_run picks on this CPU. Results equal akg_run's up to the order of float additions. */
typedef struct akg_packed_input akg_packed_input; /* opaque */

/* The index of the input that akg_pack_input packs for the variant akg_run picks here, or -1:
 * a NULL kernel, no variant for this CPU, or a kernel without such an input. */
int64_t akg_kernel_packable_input(const akg_kernel *kernel);
/* Packs `tensor`, the kernel's packable input (checked like akg_run checks it), for the variant
 * that runs here, into a new handle (*packed_out; NULL on error) that akg_packed_input_free
 * releases. NULL_POINTER (kernel, tensor, packed_out, data), UNSUPPORTED_CPU, INVALID_ARGUMENT
 * (no packable input), the checks of akg_run on the tensor, OUT_OF_MEMORY. The tensor is only
 * read during the call. Thread-safe. */
akg_status akg_pack_input(const akg_kernel *kernel, const akg_tensor *tensor, akg_packed_input **packed_out);
/* Releases a handle of akg_pack_input; NULL is ignored. */
void akg_packed_input_free(akg_packed_input *packed);
/* akg_run with the packable input taken from `packed`: inputs[akg_kernel_packable_input(kernel)]
 * is not read at all (a zeroed akg_tensor will do). INVALID_ARGUMENT when `packed` was made for
 * another kernel or another variant; otherwise the errors of akg_run. Concurrent runs may share
 * one handle. */
akg_status akg_run_packed(const akg_kernel *kernel, const akg_packed_input *packed, const akg_tensor *inputs, size_t num_inputs,
                          const akg_tensor *outputs, size_t num_outputs);

#ifdef __cplusplus
}
#endif

#endif /* AKG_AKGKERNELS_H */
