/* akg_runtime.c: the runtime behind the public C ABI (akg/akgkernels.h).
 *
 * Catalog enumeration and lookup, tensor introspection, and akg_run, which validates every
 * argument before touching any data and then dispatches to the generated kernel function.
 *
 * Rules kept here: C99, no global mutable state but the CPU's features examined once
 * (thread-safe), never aborts, never prints, every size computation is guarded against overflow.
 */
#include "akg_kernel_def.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define AKG_STR_(x) #x
#define AKG_STR(x) AKG_STR_(x)

/* Buffers arrays up to this many tensors live on the stack; larger ones are allocated. */
#define AKG_STACK_BUFFERS 64

/* ---------------------------------------------------------------------------------------- */
/* Version and status                                                                         */
/* ---------------------------------------------------------------------------------------- */

uint32_t akg_version(void) {
    return (uint32_t)AKG_VERSION;
}

const char *akg_version_string(void) {
    return AKG_STR(AKG_VERSION_MAJOR) "." AKG_STR(AKG_VERSION_MINOR) "." AKG_STR(AKG_VERSION_PATCH);
}

const char *akg_status_string(akg_status status) {
    switch (status) {
    case AKG_STATUS_OK:
        return "ok";
    case AKG_STATUS_NULL_POINTER:
        return "a required pointer (kernel, tensor array, data or shape) is NULL";
    case AKG_STATUS_UNKNOWN_KERNEL:
        return "unknown kernel (no kernel of that name, or index out of range)";
    case AKG_STATUS_TENSOR_COUNT:
        return "wrong number of input or output tensors";
    case AKG_STATUS_RANK_MISMATCH:
        return "a tensor's rank differs from the kernel's signature";
    case AKG_STATUS_SHAPE_MISMATCH:
        return "a tensor's shape differs from the kernel's signature";
    case AKG_STATUS_DTYPE_MISMATCH:
        return "a tensor's dtype differs from the kernel's signature";
    case AKG_STATUS_UNSUPPORTED_STRIDES:
        return "unsupported strides (only dense row-major tensors are accepted)";
    case AKG_STATUS_ALIASING:
        return "an output overlaps an input or another output";
    case AKG_STATUS_OUT_OF_MEMORY:
        return "out of memory";
    case AKG_STATUS_INVALID_ARGUMENT:
        return "invalid argument";
    case AKG_STATUS_UNSUPPORTED_CPU:
        return "no variant of the kernel compiled into this library runs on this CPU";
    }
    return "unknown status";
}

/* ---------------------------------------------------------------------------------------- */
/* Catalog                                                                                    */
/* ---------------------------------------------------------------------------------------- */

size_t akg_kernel_count(void) {
    return akg_catalog_kernel_count;
}

const akg_kernel *akg_kernel_at(size_t index) {
    if (index >= akg_catalog_kernel_count) {
        return NULL;
    }
    return akg_catalog_kernels[index];
}

const akg_kernel *akg_kernel_lookup(const char *name) {
    size_t i;
    if (name == NULL) {
        return NULL;
    }
    for (i = 0; i < akg_catalog_kernel_count; ++i) {
        const akg_kernel *k = akg_catalog_kernels[i];
        if (k != NULL && k->name != NULL && strcmp(k->name, name) == 0) {
            return k;
        }
    }
    return NULL;
}

const char *akg_kernel_name(const akg_kernel *kernel) {
    return kernel == NULL ? NULL : kernel->name;
}

size_t akg_kernel_num_inputs(const akg_kernel *kernel) {
    return kernel == NULL ? 0 : kernel->num_inputs;
}

size_t akg_kernel_num_outputs(const akg_kernel *kernel) {
    return kernel == NULL ? 0 : kernel->num_outputs;
}

static void fill_info(const akg_tensor_def *def, int is_input, akg_tensor_info *info_out) {
    info_out->name = def->name;
    info_out->dtype = def->dtype;
    info_out->rank = def->rank;
    info_out->shape = def->shape;
    info_out->updated_in_place = (is_input && def->inplace_input != 0) ? 1 : 0;
}

akg_status akg_kernel_input_info(const akg_kernel *kernel, size_t index, akg_tensor_info *info_out) {
    if (kernel == NULL || info_out == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    if (index >= kernel->num_inputs) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    fill_info(&kernel->inputs[index], 1, info_out);
    return AKG_STATUS_OK;
}

akg_status akg_kernel_output_info(const akg_kernel *kernel, size_t index, akg_tensor_info *info_out) {
    if (kernel == NULL || info_out == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    if (index >= kernel->num_outputs) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    fill_info(&kernel->outputs[index], 0, info_out);
    return AKG_STATUS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Sizes and overlap                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Bytes per element of a dtype; 0 for a value outside the enum. */
static size_t dtype_size(akg_dtype dtype) {
    switch (dtype) {
    case AKG_DTYPE_FLOAT32:
        return 4;
    case AKG_DTYPE_FLOAT16:
        return 2;
    case AKG_DTYPE_INT32:
        return 4;
    case AKG_DTYPE_BOOL:
        return 1;
    case AKG_DTYPE_INT64:
        return 8;
    case AKG_DTYPE_UINT8:
        return 1;
    case AKG_DTYPE_INT8:
        return 1;
    case AKG_DTYPE_FLOAT64:
        return 8;
    }
    return 0;
}

/* The largest byte size accepted for one tensor: it must fit a size_t, a pointer difference
 * and leave room so that (address + size) never wraps in the overlap test below. */
#define AKG_MAX_BYTES ((uint64_t)(PTRDIFF_MAX))

/* Element count and byte size of a tensor of the given shape; 0 on overflow (or invalid shape),
 * 1 on success. A zero dim gives a zero-size tensor; the overflow guard still looks at every
 * dim so that a huge shape is rejected whatever its other dims are. */
static int tensor_bytes(int32_t rank, const int64_t *shape, akg_dtype dtype, uint64_t *elems_out,
                        uint64_t *bytes_out) {
    uint64_t elems = 1;
    int has_zero = 0;
    int32_t d;
    size_t esize = dtype_size(dtype);
    if (esize == 0 || rank < 0) {
        return 0;
    }
    for (d = 0; d < rank; ++d) {
        uint64_t dim;
        if (shape[d] < 0) {
            return 0;
        }
        dim = (uint64_t)shape[d];
        if (dim == 0) {
            has_zero = 1;
            continue;
        }
        if (elems > AKG_MAX_BYTES / dim) {
            return 0;
        }
        elems *= dim;
    }
    if (elems > AKG_MAX_BYTES / esize) {
        return 0;
    }
    if (has_zero) {
        elems = 0;
    }
    *elems_out = elems;
    *bytes_out = elems * (uint64_t)esize;
    return 1;
}

/* Whether [a, a+an) and [b, b+bn) share a byte. Empty ranges share nothing. */
static int ranges_overlap(const void *a, uint64_t an, const void *b, uint64_t bn) {
    uintptr_t pa = (uintptr_t)a;
    uintptr_t pb = (uintptr_t)b;
    if (an == 0 || bn == 0 || a == NULL || b == NULL) {
        return 0;
    }
    /* Compute with uint64_t-safe differences rather than end addresses, so nothing wraps. */
    if (pa <= pb) {
        return (uint64_t)(pb - pa) < an;
    }
    return (uint64_t)(pa - pb) < bn;
}

/* Aliasing rule shared by akg_run and akg_run_dense.
 * A written buffer (every output, and every input the kernel updates in place) must not
 * overlap any other buffer; read-only inputs may overlap each other freely. */
static akg_status check_aliasing(const akg_kernel *kernel, void *const *ptrs, const uint64_t *bytes) {
    size_t n = kernel->num_inputs + kernel->num_outputs;
    size_t i, j;
    for (i = 0; i < n; ++i) {
        int i_written = i >= kernel->num_inputs || kernel->inputs[i].inplace_input != 0;
        if (!i_written) {
            continue;
        }
        for (j = 0; j < n; ++j) {
            if (j == i) {
                continue;
            }
            if (ranges_overlap(ptrs[i], bytes[i], ptrs[j], bytes[j])) {
                return AKG_STATUS_ALIASING;
            }
        }
    }
    return AKG_STATUS_OK;
}

static akg_status map_kernel_result(int rc) {
    if (rc == 0) {
        return AKG_STATUS_OK;
    }
    if (rc == (int)AKG_STATUS_OUT_OF_MEMORY) {
        return AKG_STATUS_OUT_OF_MEMORY;
    }
    return AKG_STATUS_INVALID_ARGUMENT;
}

/* Scratch for the per-call arrays: on the stack for ordinary kernels, on the heap beyond. */
typedef struct call_scratch {
    void *ptr_stack[AKG_STACK_BUFFERS];
    uint64_t bytes_stack[AKG_STACK_BUFFERS];
    void **ptrs;
    uint64_t *bytes;
    void *heap;
} call_scratch;

static int scratch_init(call_scratch *s, size_t n) {
    s->heap = NULL;
    if (n <= AKG_STACK_BUFFERS) {
        s->ptrs = s->ptr_stack;
        s->bytes = s->bytes_stack;
        return 1;
    }
    if (n > SIZE_MAX / (sizeof(void *) + sizeof(uint64_t))) {
        return 0;
    }
    s->heap = malloc(n * (sizeof(void *) + sizeof(uint64_t)));
    if (s->heap == NULL) {
        return 0;
    }
    /* uint64_t first: the block is suitably aligned for it, and void* after it is too. */
    s->bytes = (uint64_t *)s->heap;
    s->ptrs = (void **)(void *)(s->bytes + n);
    return 1;
}

static void scratch_free(call_scratch *s) {
    free(s->heap);
    s->heap = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* akg_run                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Validates one caller tensor against its definition; on success stores its byte size. */
static akg_status check_tensor(const akg_tensor *t, const akg_tensor_def *def, uint64_t *bytes_out) {
    uint64_t elems = 0;
    uint64_t bytes = 0;
    int32_t d;

    if (t->rank < 0) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    if (t->rank != def->rank) {
        return AKG_STATUS_RANK_MISMATCH;
    }
    if (t->rank > 0 && t->shape == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    for (d = 0; d < t->rank; ++d) {
        if (t->shape[d] < 0) {
            return AKG_STATUS_INVALID_ARGUMENT;
        }
    }
    for (d = 0; d < t->rank; ++d) {
        if (t->shape[d] != def->shape[d]) {
            return AKG_STATUS_SHAPE_MISMATCH;
        }
    }
    if (dtype_size(t->dtype) == 0) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    if (t->dtype != def->dtype) {
        return AKG_STATUS_DTYPE_MISMATCH;
    }
    if (!tensor_bytes(t->rank, t->shape, t->dtype, &elems, &bytes)) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    if (t->data == NULL && elems != 0) {
        return AKG_STATUS_NULL_POINTER;
    }
    /* Strides: NULL, or dense row-major. A dim of extent 1 is never stepped along, so its
     * stride may be anything; a tensor without elements has no layout to check. The dense
     * strides are products of trailing dims, bounded by elems, so they cannot overflow. */
    if (t->strides != NULL && elems != 0) {
        int64_t dense = 1;
        for (d = t->rank - 1; d >= 0; --d) {
            if (t->shape[d] != 1 && t->strides[d] != dense) {
                return AKG_STATUS_UNSUPPORTED_STRIDES;
            }
            dense *= t->shape[d];
        }
    }
    *bytes_out = bytes;
    return AKG_STATUS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* CPU features and the choice of a kernel's variant                                          */
/* ---------------------------------------------------------------------------------------- */

/* Set in the cached word once the CPU has been examined; never a feature bit. */
#define AKG_CPU_DETECTED (1u << 31)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* The register state the OS saves on a context switch (XCR0): AVX and AVX-512 code must not run
 * where the OS does not save ymm / zmm and mask registers, whatever cpuid says. */
static uint64_t os_saved_state(void) {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static uint32_t detect_cpu_features(void) {
    unsigned a, b, c, d;
    unsigned c1, b7 = 0, ext_c = 0;
    uint32_t f = 0;
    uint64_t xcr0 = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) {
        return 0;
    }
    c1 = c;
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        b7 = b;
    }
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) {
        ext_c = c;
    }
    if (c1 & (1u << 27)) { /* OSXSAVE: xgetbv is available */
        xcr0 = os_saved_state();
    }
    /* SSE3, SSSE3, CX16, SSE4.1, SSE4.2, POPCNT */
    if ((c1 & 1u) && (c1 & (1u << 9)) && (c1 & (1u << 13)) && (c1 & (1u << 19)) && (c1 & (1u << 20)) && (c1 & (1u << 23))) {
        f |= AKG_CPU_X86_64_V2;
    }
    /* AVX, FMA, F16C, MOVBE; AVX2, BMI1, BMI2; LZCNT; ymm saved */
    if ((f & AKG_CPU_X86_64_V2) && (c1 & (1u << 28)) && (c1 & (1u << 12)) && (c1 & (1u << 29)) && (c1 & (1u << 22)) &&
        (b7 & (1u << 5)) && (b7 & (1u << 3)) && (b7 & (1u << 8)) && (ext_c & (1u << 5)) && (xcr0 & 0x6) == 0x6) {
        f |= AKG_CPU_X86_64_V3;
    }
    /* AVX-512 F, DQ, CD, BW, VL; masks and zmm saved */
    if ((f & AKG_CPU_X86_64_V3) && (b7 & (1u << 16)) && (b7 & (1u << 17)) && (b7 & (1u << 28)) && (b7 & (1u << 30)) &&
        (b7 & (1u << 31)) && (xcr0 & 0xe6) == 0xe6) {
        f |= AKG_CPU_X86_64_V4;
    }
    return f;
}
#else
/* Other architectures: their one variant needs no feature beyond the architecture's baseline. */
static uint32_t detect_cpu_features(void) {
    return 0;
}
#endif

/* AKG_MAX_ISA: the features a cap leaves (all of them for no cap or an unknown name). */
static uint32_t isa_cap(void) {
    const char *cap = getenv("AKG_MAX_ISA");
    if (cap == NULL) {
        return ~0u;
    }
    if (strcmp(cap, "x86-64-v4") == 0) {
        return AKG_CPU_X86_64_V2 | AKG_CPU_X86_64_V3 | AKG_CPU_X86_64_V4;
    }
    if (strcmp(cap, "x86-64-v3") == 0) {
        return AKG_CPU_X86_64_V2 | AKG_CPU_X86_64_V3;
    }
    if (strcmp(cap, "x86-64-v2") == 0) {
        return AKG_CPU_X86_64_V2;
    }
    if (strcmp(cap, "x86-64") == 0) {
        return 0;
    }
    return ~0u;
}

/* The CPU's features under AKG_MAX_ISA, examined once. The only state the runtime keeps: every
 * thread that finds it unset computes the same value, and the store is atomic. */
static uint32_t cpu_features(void) {
#if defined(__GNUC__) || defined(__clang__)
    static uint32_t cached;
    uint32_t f = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!(f & AKG_CPU_DETECTED)) {
        f = (detect_cpu_features() & isa_cap()) | AKG_CPU_DETECTED;
        __atomic_store_n(&cached, f, __ATOMIC_RELEASE);
    }
    return f & ~AKG_CPU_DETECTED;
#else
    return detect_cpu_features() & isa_cap();
#endif
}

const char *akg_cpu_isa(void) {
#if defined(__x86_64__)
    uint32_t f = cpu_features();
    if (f & AKG_CPU_X86_64_V4) {
        return "x86-64-v4";
    }
    if (f & AKG_CPU_X86_64_V3) {
        return "x86-64-v3";
    }
    if (f & AKG_CPU_X86_64_V2) {
        return "x86-64-v2";
    }
    return "x86-64";
#elif defined(__aarch64__)
    return "aarch64";
#else
    return "unknown";
#endif
}

const akg_variant_def *akg_kernel_select_variant(const akg_kernel *kernel) {
    const akg_variant_def *v;
    uint32_t f;
    if (kernel == NULL || kernel->variants == NULL) {
        return NULL;
    }
    f = cpu_features();
    for (v = kernel->variants; v->fn != NULL; ++v) {
        if ((v->cpu_features & f) == v->cpu_features) {
            return v;
        }
    }
    return NULL;
}

const char *akg_kernel_variant(const akg_kernel *kernel) {
    const akg_variant_def *v = akg_kernel_select_variant(kernel);
    return v == NULL ? NULL : v->target;
}

size_t akg_kernel_num_variants(const akg_kernel *kernel) {
    size_t n = 0;
    if (kernel == NULL || kernel->variants == NULL) {
        return 0;
    }
    while (kernel->variants[n].fn != NULL) {
        ++n;
    }
    return n;
}

const char *akg_kernel_variant_at(const akg_kernel *kernel, size_t index) {
    return index < akg_kernel_num_variants(kernel) ? kernel->variants[index].target : NULL;
}

/* akg_run and akg_run_packed: input `packed_index` (or none, when it is num_inputs) is not the
 * caller's tensor but the packed buffer `packed` of `packed_bytes`, run by `fn`. */
static akg_status run_checked(const akg_kernel *kernel, akg_kernel_fn fn, const akg_tensor *inputs, size_t num_inputs,
                              const akg_tensor *outputs, size_t num_outputs, size_t packed_index, void *packed,
                              uint64_t packed_bytes) {
    call_scratch scratch;
    size_t i;
    size_t n;
    akg_status st;

    if (num_inputs != kernel->num_inputs || num_outputs != kernel->num_outputs) {
        return AKG_STATUS_TENSOR_COUNT;
    }
    if ((num_inputs > 0 && inputs == NULL) || (num_outputs > 0 && outputs == NULL)) {
        return AKG_STATUS_NULL_POINTER;
    }
    if (num_outputs > SIZE_MAX - num_inputs) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    n = num_inputs + num_outputs;
    if (!scratch_init(&scratch, n)) {
        return AKG_STATUS_OUT_OF_MEMORY;
    }

    st = AKG_STATUS_OK;
    for (i = 0; i < num_inputs && st == AKG_STATUS_OK; ++i) {
        if (i == packed_index) {
            scratch.ptrs[i] = packed;
            scratch.bytes[i] = packed_bytes;
            continue;
        }
        st = check_tensor(&inputs[i], &kernel->inputs[i], &scratch.bytes[i]);
        scratch.ptrs[i] = inputs[i].data;
    }
    for (i = 0; i < num_outputs && st == AKG_STATUS_OK; ++i) {
        st = check_tensor(&outputs[i], &kernel->outputs[i], &scratch.bytes[num_inputs + i]);
        scratch.ptrs[num_inputs + i] = outputs[i].data;
    }
    if (st == AKG_STATUS_OK) {
        st = check_aliasing(kernel, scratch.ptrs, scratch.bytes);
    }
    if (st == AKG_STATUS_OK) {
        st = map_kernel_result(fn((void *const *)scratch.ptrs));
    }
    scratch_free(&scratch);
    return st;
}

akg_status akg_run(const akg_kernel *kernel, const akg_tensor *inputs, size_t num_inputs,
                   const akg_tensor *outputs, size_t num_outputs) {
    const akg_variant_def *variant;

    if (kernel == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    variant = akg_kernel_select_variant(kernel);
    if (variant == NULL) {
        return AKG_STATUS_UNSUPPORTED_CPU;
    }
    return run_checked(kernel, variant->fn, inputs, num_inputs, outputs, num_outputs, num_inputs, NULL, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Packed weights                                                                             */
/* ---------------------------------------------------------------------------------------- */

struct akg_packed_input {
    const akg_kernel *kernel;
    const akg_variant_def *variant; /* the one that packed it */
    void *data;                     /* packed_bytes, 64-byte aligned, inside `block` */
    void *block;
};

/* The prepack entry of the variant that runs `kernel` here, or NULL. */
static const akg_prepack_def *prepack_of(const akg_variant_def *variant) {
    if (variant == NULL || variant->prepack == NULL || variant->prepack->input < 0 || variant->prepack->pack == NULL ||
        variant->prepack->fn_packed == NULL) {
        return NULL;
    }
    return variant->prepack;
}

int64_t akg_kernel_packable_input(const akg_kernel *kernel) {
    const akg_prepack_def *p;

    if (kernel == NULL) {
        return -1;
    }
    p = prepack_of(akg_kernel_select_variant(kernel));
    return p != NULL && (size_t)p->input < kernel->num_inputs ? (int64_t)p->input : -1;
}

akg_status akg_pack_input(const akg_kernel *kernel, const akg_tensor *tensor, akg_packed_input **packed_out) {
    const akg_variant_def *variant;
    const akg_prepack_def *p;
    akg_packed_input *h;
    uint64_t bytes = 0;
    akg_status st;

    if (packed_out != NULL) {
        *packed_out = NULL;
    }
    if (kernel == NULL || tensor == NULL || packed_out == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    variant = akg_kernel_select_variant(kernel);
    if (variant == NULL) {
        return AKG_STATUS_UNSUPPORTED_CPU;
    }
    p = prepack_of(variant);
    if (p == NULL || (size_t)p->input >= kernel->num_inputs) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    st = check_tensor(tensor, &kernel->inputs[p->input], &bytes);
    if (st != AKG_STATUS_OK) {
        return st;
    }
    if (tensor->data == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    if (p->packed_bytes > SIZE_MAX - 64) {
        return AKG_STATUS_OUT_OF_MEMORY;
    }
    h = (akg_packed_input *)malloc(sizeof *h);
    if (h == NULL) {
        return AKG_STATUS_OUT_OF_MEMORY;
    }
    /* C99 has no aligned allocation: the block is over-allocated and its aligned part used. */
    h->block = malloc((size_t)p->packed_bytes + 64);
    if (h->block == NULL) {
        free(h);
        return AKG_STATUS_OUT_OF_MEMORY;
    }
    h->data = (void *)(((uintptr_t)h->block + 63) / 64 * 64);
    h->kernel = kernel;
    h->variant = variant;
    p->pack(tensor->data, h->data);
    *packed_out = h;
    return AKG_STATUS_OK;
}

void akg_packed_input_free(akg_packed_input *packed) {
    if (packed != NULL) {
        free(packed->block);
        free(packed);
    }
}

akg_status akg_run_packed(const akg_kernel *kernel, const akg_packed_input *packed, const akg_tensor *inputs, size_t num_inputs,
                          const akg_tensor *outputs, size_t num_outputs) {
    const akg_variant_def *variant;
    const akg_prepack_def *p;

    if (kernel == NULL || packed == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    variant = akg_kernel_select_variant(kernel);
    if (variant == NULL) {
        return AKG_STATUS_UNSUPPORTED_CPU;
    }
    p = prepack_of(variant);
    if (packed->kernel != kernel || packed->variant != variant || p == NULL) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    return run_checked(kernel, p->fn_packed, inputs, num_inputs, outputs, num_outputs, (size_t)p->input, packed->data, p->packed_bytes);
}

/* ---------------------------------------------------------------------------------------- */
/* akg_run_dense (internal, used by the generated typed entry points)                         */
/* ---------------------------------------------------------------------------------------- */

akg_status akg_run_dense(const akg_kernel *kernel, void *const *buffers) {
    call_scratch scratch;
    const akg_variant_def *variant;
    size_t i;
    size_t n;
    akg_status st = AKG_STATUS_OK;

    if (kernel == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    variant = akg_kernel_select_variant(kernel);
    if (variant == NULL) {
        return AKG_STATUS_UNSUPPORTED_CPU;
    }
    if (kernel->num_outputs > SIZE_MAX - kernel->num_inputs) {
        return AKG_STATUS_INVALID_ARGUMENT;
    }
    n = kernel->num_inputs + kernel->num_outputs;
    if (n > 0 && buffers == NULL) {
        return AKG_STATUS_NULL_POINTER;
    }
    if (!scratch_init(&scratch, n)) {
        return AKG_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < n && st == AKG_STATUS_OK; ++i) {
        const akg_tensor_def *def =
            i < kernel->num_inputs ? &kernel->inputs[i] : &kernel->outputs[i - kernel->num_inputs];
        uint64_t elems = 0;
        if (def->rank > 0 && def->shape == NULL) {
            st = AKG_STATUS_INVALID_ARGUMENT;
        } else if (!tensor_bytes(def->rank, def->shape, def->dtype, &elems, &scratch.bytes[i])) {
            st = AKG_STATUS_INVALID_ARGUMENT;
        } else if (buffers[i] == NULL && elems != 0) {
            st = AKG_STATUS_NULL_POINTER;
        }
        scratch.ptrs[i] = buffers[i];
    }
    if (st == AKG_STATUS_OK) {
        st = check_aliasing(kernel, scratch.ptrs, scratch.bytes);
    }
    if (st == AKG_STATUS_OK) {
        st = map_kernel_result(variant->fn(buffers));
    }
    scratch_free(&scratch);
    return st;
}
