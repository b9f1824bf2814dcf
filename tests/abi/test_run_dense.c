/* test_run_dense.c: akg_run_dense, the internal helper behind the generated typed entry points.
 * C99; uses the internal contract (akg_kernel_def.h) and the real catalog. */
#include "akg_kernel_def.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_check.h"

#define CANARY 0xA5

static size_t dtype_bytes(akg_dtype dt) {
    switch (dt) {
    case AKG_DTYPE_FLOAT32: return 4;
    case AKG_DTYPE_FLOAT16: return 2;
    case AKG_DTYPE_INT32: return 4;
    case AKG_DTYPE_BOOL: return 1;
    case AKG_DTYPE_INT64: return 8;
    case AKG_DTYPE_UINT8: return 1;
    case AKG_DTYPE_INT8: return 1;
    case AKG_DTYPE_FLOAT64: return 8;
    }
    return 0;
}

static size_t def_bytes(const akg_tensor_def *def) {
    size_t n = dtype_bytes(def->dtype);
    int32_t d;
    for (d = 0; d < def->rank; ++d) {
        n *= (size_t)def->shape[d];
    }
    return n;
}

/* Writes the value one of dtype dt into every element (a benign input for any kernel). */
static void fill_ones(void *data, akg_dtype dt, size_t elems) {
    size_t i;
    unsigned char *p = (unsigned char *)data;
    for (i = 0; i < elems; ++i) {
        switch (dt) {
        case AKG_DTYPE_FLOAT32: { float v = 1.0f; memcpy(p + 4 * i, &v, 4); break; }
        case AKG_DTYPE_FLOAT16: { uint16_t v = 0x3C00u; memcpy(p + 2 * i, &v, 2); break; }
        case AKG_DTYPE_INT32: { int32_t v = 1; memcpy(p + 4 * i, &v, 4); break; }
        case AKG_DTYPE_BOOL: p[i] = 1; break;
        case AKG_DTYPE_INT64: { int64_t v = 1; memcpy(p + 8 * i, &v, 8); break; }
        case AKG_DTYPE_UINT8: p[i] = 1; break;
        case AKG_DTYPE_INT8: p[i] = 1; break;
        case AKG_DTYPE_FLOAT64: { double v = 1.0; memcpy(p + 8 * i, &v, 8); break; }
        }
    }
}

typedef struct buffers {
    size_t n, n_in;
    void **ptr;
    unsigned char **data, **saved;
    size_t *bytes;
    akg_dtype *dtype;
} buffers;

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "test_run_dense: out of memory\n");
        exit(2);
    }
    return p;
}

static void bufs_init(buffers *b, const akg_kernel *k) {
    size_t i;
    b->n_in = k->num_inputs;
    b->n = k->num_inputs + k->num_outputs;
    b->ptr = (void **)xcalloc(b->n, sizeof(void *));
    b->data = (unsigned char **)xcalloc(b->n, sizeof(unsigned char *));
    b->saved = (unsigned char **)xcalloc(b->n, sizeof(unsigned char *));
    b->bytes = (size_t *)xcalloc(b->n, sizeof(size_t));
    b->dtype = (akg_dtype *)xcalloc(b->n, sizeof(akg_dtype));
    for (i = 0; i < b->n; ++i) {
        const akg_tensor_def *def = i < b->n_in ? &k->inputs[i] : &k->outputs[i - b->n_in];
        b->bytes[i] = def_bytes(def);
        b->dtype[i] = def->dtype;
        b->data[i] = (unsigned char *)xcalloc(b->bytes[i], 1);
        b->saved[i] = (unsigned char *)xcalloc(b->bytes[i], 1);
        b->ptr[i] = b->data[i];
    }
}

/* Inputs hold ones, outputs the canary; then a snapshot. */
static void bufs_reset(buffers *b) {
    size_t i;
    for (i = 0; i < b->n; ++i) {
        if (i < b->n_in) {
            fill_ones(b->data[i], b->dtype[i], b->bytes[i] / dtype_bytes(b->dtype[i]));
        } else {
            memset(b->data[i], CANARY, b->bytes[i]);
        }
        memcpy(b->saved[i], b->data[i], b->bytes[i]);
        b->ptr[i] = b->data[i];
    }
}

static int bufs_unchanged(const buffers *b) {
    size_t i;
    for (i = 0; i < b->n; ++i) {
        if (memcmp(b->saved[i], b->data[i], b->bytes[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

static void bufs_free(buffers *b) {
    size_t i;
    for (i = 0; i < b->n; ++i) {
        free(b->data[i]);
        free(b->saved[i]);
    }
    free(b->ptr);
    free(b->data);
    free(b->saved);
    free(b->bytes);
    free(b->dtype);
}

static void expect(const akg_kernel *k, buffers *b, void *const *ptrs, akg_status want,
                   const char *what) {
    akg_status got = akg_run_dense(k, ptrs);
    CHECK(got == want, "%s: %s: got %d, want %d", k ? k->name : "(null)", what, (int)got,
          (int)want);
    if (want != AKG_STATUS_OK) {
        CHECK(bufs_unchanged(b), "%s: %s: a buffer was written on error", k ? k->name : "",
              what);
    }
}

static void test_kernel(const akg_kernel *k) {
    buffers b;
    size_t i, j;
    printf("kernel %s\n", k->name);
    bufs_init(&b, k);

    bufs_reset(&b);
    expect(NULL, &b, b.ptr, AKG_STATUS_NULL_POINTER, "NULL kernel");
    if (b.n > 0) {
        bufs_reset(&b);
        expect(k, &b, NULL, AKG_STATUS_NULL_POINTER, "NULL buffers");
    }
    for (i = 0; i < b.n; ++i) {
        if (b.bytes[i] == 0) {
            continue;
        }
        bufs_reset(&b);
        b.ptr[i] = NULL;
        expect(k, &b, b.ptr, AKG_STATUS_NULL_POINTER, "one NULL buffer");
    }
    /* Every written buffer on top of every other buffer. */
    for (i = 0; i < b.n; ++i) {
        int written = i >= b.n_in || k->inputs[i].inplace_input != 0;
        if (!written || b.bytes[i] == 0) {
            continue;
        }
        for (j = 0; j < b.n; ++j) {
            if (j == i || b.bytes[j] == 0) {
                continue;
            }
            bufs_reset(&b);
            b.ptr[i] = b.data[j];
            expect(k, &b, b.ptr, AKG_STATUS_ALIASING, "written buffer aliases another");
            bufs_reset(&b);
            b.ptr[j] = b.data[i];
            expect(k, &b, b.ptr, AKG_STATUS_ALIASING, "buffer aliases a written one");
        }
    }
    bufs_reset(&b);
    expect(k, &b, b.ptr, AKG_STATUS_OK, "correct call");
    for (i = b.n_in; i < b.n; ++i) {
        size_t x;
        int all_canary = 1;
        for (x = 0; x < b.bytes[i]; ++x) {
            all_canary &= b.data[i][x] == CANARY;
        }
        CHECK(b.bytes[i] == 0 || !all_canary, "%s: output %zu not written", k->name, i - b.n_in);
    }
    bufs_free(&b);
}

int main(void) {
    size_t i;
    int several_out = 0;
    CHECK(akg_catalog_kernel_count > 0, "empty catalog");
    if (akg_catalog_kernel_count > 0) {
        test_kernel(akg_catalog_kernels[0]);
    }
    for (i = 1; i < akg_catalog_kernel_count && !several_out; ++i) {
        if (akg_catalog_kernels[i]->num_outputs >= 2) {
            test_kernel(akg_catalog_kernels[i]);
            several_out = 1;
        }
    }
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
