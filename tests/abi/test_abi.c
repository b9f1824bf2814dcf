/* test_abi.c: the public C ABI of libakgkernels, exercised from C99 against the real catalog.
 *
 * For a few representative kernels (kernel 0, one with several inputs, one with several
 * outputs, one with an input updated in place) it builds correct tensors from the kernel's own
 * tensor info, then makes one mistake at a time and checks the documented status and that no
 * byte of any buffer changed (outputs hold a canary pattern). Correct calls must succeed.
 * It also checks versions, status strings, enumeration and lookup.
 *
 * `test_abi --all` does the same for every kernel of the catalog, adds the documented order of
 * the checks when several things are wrong at once, and prints the number of bad calls tried.
 */
#include <akg/akgkernels.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_check.h"

static long g_bad_calls = 0; /* akg_run calls that had to be rejected */

#define NUM_STATUSES 12 /* AKG_STATUS_OK .. AKG_STATUS_UNSUPPORTED_CPU */
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

/* ---------------------------------------------------------------------------------------- */
/* A fixture: correct tensors for one kernel, with snapshots to detect any write.            */
/* ---------------------------------------------------------------------------------------- */

typedef struct fixture {
    const akg_kernel *k;
    const char *name;
    size_t n_in, n_out, n; /* n = n_in + n_out; tensor i < n_in is input i, else output */
    akg_tensor *t;         /* n tensors: inputs then outputs */
    int64_t **shape;       /* owned copies of the shapes */
    size_t *elems, *bytes;
    int *written;          /* 1 for outputs and inputs updated in place */
    unsigned char **data;  /* owned buffers (at least 1 byte each) */
    unsigned char **saved; /* snapshots */
    int dirty;             /* buffers may differ from the reset state */
} fixture;

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "test_abi: out of memory\n");
        exit(2);
    }
    return p;
}

static int fixture_init(fixture *f, const akg_kernel *k) {
    size_t i;
    int d;
    memset(f, 0, sizeof(*f));
    f->k = k;
    f->name = akg_kernel_name(k);
    f->n_in = akg_kernel_num_inputs(k);
    f->n_out = akg_kernel_num_outputs(k);
    f->n = f->n_in + f->n_out;
    f->t = (akg_tensor *)xcalloc(f->n + 1, sizeof(akg_tensor));
    f->shape = (int64_t **)xcalloc(f->n, sizeof(int64_t *));
    f->elems = (size_t *)xcalloc(f->n, sizeof(size_t));
    f->bytes = (size_t *)xcalloc(f->n, sizeof(size_t));
    f->written = (int *)xcalloc(f->n, sizeof(int));
    f->data = (unsigned char **)xcalloc(f->n, sizeof(unsigned char *));
    f->saved = (unsigned char **)xcalloc(f->n, sizeof(unsigned char *));
    for (i = 0; i < f->n; ++i) {
        akg_tensor_info info;
        akg_status st = i < f->n_in ? akg_kernel_input_info(k, i, &info)
                                    : akg_kernel_output_info(k, i - f->n_in, &info);
        CHECK(st == AKG_STATUS_OK, "%s: tensor info %zu: status %d", f->name, i, (int)st);
        if (st != AKG_STATUS_OK || info.rank < 0 || (info.rank > 0 && info.shape == NULL) ||
            dtype_bytes(info.dtype) == 0) {
            CHECK(0, "%s: tensor %zu has an invalid signature", f->name, i);
            return 0;
        }
        f->shape[i] = (int64_t *)xcalloc((size_t)info.rank + 1, sizeof(int64_t));
        f->elems[i] = 1;
        for (d = 0; d < info.rank; ++d) {
            f->shape[i][d] = info.shape[d];
            f->elems[i] *= (size_t)info.shape[d];
        }
        f->bytes[i] = f->elems[i] * dtype_bytes(info.dtype);
        f->written[i] = i >= f->n_in || info.updated_in_place;
        f->data[i] = (unsigned char *)xcalloc(f->bytes[i], 1);
        f->saved[i] = (unsigned char *)xcalloc(f->bytes[i], 1);
        f->t[i].data = f->data[i];
        f->t[i].dtype = info.dtype;
        f->t[i].rank = info.rank;
        f->t[i].shape = f->shape[i];
        f->t[i].strides = NULL;
    }
    f->dirty = 1;
    return 1;
}

/* Inputs hold ones, outputs the canary. */
static void fixture_reset_data(fixture *f) {
    size_t i;
    f->dirty = 1; /* until snapshot() */
    for (i = 0; i < f->n; ++i) {
        if (i < f->n_in) {
            fill_ones(f->data[i], f->t[i].dtype, f->elems[i]);
        } else {
            memset(f->data[i], CANARY, f->bytes[i]);
        }
    }
}

static void fixture_free(fixture *f) {
    size_t i;
    for (i = 0; i < f->n; ++i) {
        free(f->shape[i]);
        free(f->data[i]);
        free(f->saved[i]);
    }
    free(f->t);
    free(f->shape);
    free(f->elems);
    free(f->bytes);
    free(f->written);
    free(f->data);
    free(f->saved);
}

static void snapshot(fixture *f) {
    size_t i;
    for (i = 0; i < f->n; ++i) {
        memcpy(f->saved[i], f->data[i], f->bytes[i]);
    }
    f->dirty = 0;
}

/* In --all mode, buffers over 1 MiB are compared in 4 KiB blocks every 32 KiB plus their last
 * 4 KiB (a kernel that ran would have written its outputs throughout); smaller ones entirely. */
static int g_sample_large = 0;

static int unchanged(const fixture *f) {
    size_t i;
    for (i = 0; i < f->n; ++i) {
        if (g_sample_large && f->bytes[i] > ((size_t)1 << 20)) {
            size_t at;
            for (at = 0; at < f->bytes[i]; at += (size_t)32 << 10) {
                if (memcmp(f->saved[i] + at, f->data[i] + at, 4096) != 0) {
                    return 0;
                }
            }
            if (memcmp(f->saved[i] + f->bytes[i] - 4096, f->data[i] + f->bytes[i] - 4096, 4096) !=
                0) {
                return 0;
            }
        } else if (memcmp(f->saved[i], f->data[i], f->bytes[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Calls akg_run with the given tensors and expects `want` with no byte of any buffer changed.
 * Buffers are reset (inputs ones, outputs canary) only when a previous call may have written
 * them, so that long runs of rejected calls cost one comparison each. */
static void expect_status(fixture *f, const akg_kernel *k, const akg_tensor *in, size_t n_in,
                          const akg_tensor *out, size_t n_out, akg_status want, const char *what) {
    akg_status got;
    if (f->dirty) {
        fixture_reset_data(f);
        snapshot(f);
    }
    if (want != AKG_STATUS_OK) {
        ++g_bad_calls;
    }
    got = akg_run(k, in, n_in, out, n_out);
    CHECK(got == want, "%s: %s: got status %d (%s), want %d (%s)", f->name, what, (int)got,
          akg_status_string(got), (int)want, akg_status_string(want));
    if (got == AKG_STATUS_OK) {
        f->dirty = 1;
    } else if (!unchanged(f)) {
        f->dirty = 1;
        CHECK(0, "%s: %s: a buffer was written on error", f->name, what);
    }
}

/* akg_run on a tensor array equal to the fixture's except tensor idx (overall index). */
static void expect_with(fixture *f, size_t idx, const akg_tensor *replacement, akg_status want,
                        const char *what) {
    akg_tensor *copy = (akg_tensor *)xcalloc(f->n, sizeof(akg_tensor));
    char label[256];
    memcpy(copy, f->t, f->n * sizeof(akg_tensor));
    copy[idx] = *replacement;
    snprintf(label, sizeof(label), "%s %s %zu", what, idx < f->n_in ? "input" : "output",
             idx < f->n_in ? idx : idx - f->n_in);
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, want, label);
    free(copy);
}

/* ---------------------------------------------------------------------------------------- */
/* The mistakes                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void test_array_level(fixture *f) {
    akg_tensor *more = (akg_tensor *)xcalloc(f->n + 2, sizeof(akg_tensor));
    memcpy(more, f->t, f->n * sizeof(akg_tensor));

    expect_status(f, NULL, f->t, f->n_in, f->t + f->n_in, f->n_out, AKG_STATUS_NULL_POINTER,
                  "NULL kernel");
    if (f->n_in > 0) {
        expect_status(f, f->k, NULL, f->n_in, f->t + f->n_in, f->n_out, AKG_STATUS_NULL_POINTER,
                      "NULL inputs array");
        expect_status(f, f->k, f->t, f->n_in - 1, f->t + f->n_in, f->n_out,
                      AKG_STATUS_TENSOR_COUNT, "one input too few");
    }
    if (f->n_out > 0) {
        expect_status(f, f->k, f->t, f->n_in, NULL, f->n_out, AKG_STATUS_NULL_POINTER,
                      "NULL outputs array");
        expect_status(f, f->k, f->t, f->n_in, f->t + f->n_in, f->n_out - 1,
                      AKG_STATUS_TENSOR_COUNT, "one output too few");
    }
    /* One tensor too many: the extra one is a copy of the last, so only the count is wrong. */
    more[f->n] = f->t[f->n - 1];
    expect_status(f, f->k, more, f->n_in + 1, more + f->n_in + 1, f->n_out,
                  AKG_STATUS_TENSOR_COUNT, "one input too many");
    expect_status(f, f->k, more, f->n_in, more + f->n_in, f->n_out + 1, AKG_STATUS_TENSOR_COUNT,
                  "one output too many");
    free(more);
}

static void test_tensor_level(fixture *f, size_t i) {
    const akg_tensor good = f->t[i];
    akg_tensor bad;
    int32_t rank = good.rank;
    int64_t *shape = (int64_t *)xcalloc((size_t)rank + 2, sizeof(int64_t));
    int64_t *strides = (int64_t *)xcalloc((size_t)rank + 1, sizeof(int64_t));
    int d;
    char what[128];

    if (f->elems[i] > 0) {
        bad = good;
        bad.data = NULL;
        expect_with(f, i, &bad, AKG_STATUS_NULL_POINTER, "NULL data");
    }
    if (rank > 0) {
        bad = good;
        bad.shape = NULL;
        expect_with(f, i, &bad, AKG_STATUS_NULL_POINTER, "NULL shape");
    }

    /* Rank one too big (the extra dim is 1, so the element count is unchanged). */
    memcpy(shape, good.shape, (size_t)rank * sizeof(int64_t));
    shape[rank] = 1;
    bad = good;
    bad.rank = rank + 1;
    bad.shape = shape;
    expect_with(f, i, &bad, AKG_STATUS_RANK_MISMATCH, "rank + 1");
    if (rank > 0) {
        bad.rank = rank - 1;
        expect_with(f, i, &bad, AKG_STATUS_RANK_MISMATCH, "rank - 1");
    }
    bad = good;
    bad.rank = -1;
    expect_with(f, i, &bad, AKG_STATUS_INVALID_ARGUMENT, "negative rank");

    /* Each dim wrong on its own. */
    for (d = 0; d < rank; ++d) {
        memcpy(shape, good.shape, (size_t)rank * sizeof(int64_t));
        shape[d] += 1;
        bad = good;
        bad.shape = shape;
        snprintf(what, sizeof(what), "dim %d + 1", d);
        expect_with(f, i, &bad, AKG_STATUS_SHAPE_MISMATCH, what);
        if (good.shape[d] > 1) {
            shape[d] = good.shape[d] - 1;
            snprintf(what, sizeof(what), "dim %d - 1", d);
            expect_with(f, i, &bad, AKG_STATUS_SHAPE_MISMATCH, what);
        }
        shape[d] = -1;
        snprintf(what, sizeof(what), "dim %d negative", d);
        expect_with(f, i, &bad, AKG_STATUS_INVALID_ARGUMENT, what);
    }

    /* dtype: another valid dtype, and a value outside the enum. */
    bad = good;
    bad.dtype = good.dtype == AKG_DTYPE_FLOAT32 ? AKG_DTYPE_INT32 : AKG_DTYPE_FLOAT32;
    expect_with(f, i, &bad, AKG_STATUS_DTYPE_MISMATCH, "other dtype");
    bad.dtype = good.dtype == AKG_DTYPE_FLOAT16 ? AKG_DTYPE_FLOAT64 : AKG_DTYPE_FLOAT16;
    expect_with(f, i, &bad, AKG_STATUS_DTYPE_MISMATCH, "other dtype (2)");
    bad.dtype = (akg_dtype)99;
    expect_with(f, i, &bad, AKG_STATUS_INVALID_ARGUMENT, "dtype out of enum");

    /* Strides: every dim of extent > 1 stepped wrong, and reversed (column-major) strides. */
    if (f->elems[i] > 0) {
        int64_t dense = 1;
        for (d = rank - 1; d >= 0; --d) {
            strides[d] = dense;
            dense *= good.shape[d];
        }
        for (d = 0; d < rank; ++d) {
            int64_t keep = strides[d];
            if (good.shape[d] <= 1) {
                continue;
            }
            bad = good;
            bad.strides = strides;
            strides[d] = keep * 2;
            snprintf(what, sizeof(what), "stride %d doubled", d);
            expect_with(f, i, &bad, AKG_STATUS_UNSUPPORTED_STRIDES, what);
            strides[d] = -keep;
            snprintf(what, sizeof(what), "stride %d negative", d);
            expect_with(f, i, &bad, AKG_STATUS_UNSUPPORTED_STRIDES, what);
            strides[d] = 0;
            snprintf(what, sizeof(what), "stride %d zero (broadcast)", d);
            expect_with(f, i, &bad, AKG_STATUS_UNSUPPORTED_STRIDES, what);
            strides[d] = keep;
        }
    }
    free(shape);
    free(strides);
}

/* Sets tensor i's data to point into tensor j's buffer (same start) and expects ALIASING. */
static void test_aliasing(fixture *f) {
    size_t i, j;
    for (i = 0; i < f->n; ++i) {
        if (!f->written[i] || f->bytes[i] == 0) {
            continue;
        }
        for (j = 0; j < f->n; ++j) {
            akg_tensor bad;
            char what[128];
            if (j == i || f->bytes[j] == 0) {
                continue;
            }
            /* Tensor i (written) on top of tensor j. Its range may run past j's allocation, but
             * the call must be rejected before anything is touched. */
            bad = f->t[i];
            bad.data = f->data[j];
            snprintf(what, sizeof(what), "aliases %s %zu,", j < f->n_in ? "input" : "output",
                     j < f->n_in ? j : j - f->n_in);
            expect_with(f, i, &bad, AKG_STATUS_ALIASING, what);
            /* And tensor j on top of written tensor i. */
            bad = f->t[j];
            bad.data = f->data[i];
            snprintf(what, sizeof(what), "is aliased by written %s %zu,",
                     i < f->n_in ? "input" : "output", i < f->n_in ? i : i - f->n_in);
            expect_with(f, j, &bad, AKG_STATUS_ALIASING, what);
        }
    }

    /* Partial overlap by a single byte: output 0 placed to end one byte into input 0's end. */
    if (f->n_in > 0 && f->n_out > 0 && f->bytes[0] > 0 && f->bytes[f->n_in] > 0) {
        size_t in_b = f->bytes[0], out_b = f->bytes[f->n_in];
        unsigned char *arena = (unsigned char *)xcalloc(in_b + out_b, 1);
        akg_tensor *copy = (akg_tensor *)xcalloc(f->n, sizeof(akg_tensor));
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        copy[0].data = arena;
        copy[f->n_in].data = arena + in_b - 1;
        fixture_reset_data(f);
        snapshot(f);
        memset(arena, 0x5A, in_b + out_b);
        ++g_bad_calls;
        {
            akg_status got = akg_run(f->k, copy, f->n_in, copy + f->n_in, f->n_out);
            size_t b;
            int clean = 1;
            for (b = 0; b < in_b + out_b; ++b) {
                clean &= arena[b] == 0x5A;
            }
            CHECK(got == AKG_STATUS_ALIASING, "%s: one-byte overlap output 0 / input 0: got %d",
                  f->name, (int)got);
            CHECK(clean && unchanged(f), "%s: one-byte overlap: a buffer was written", f->name);
        }
        /* The other way round: output 0 ends one byte into input 0. */
        copy[f->n_in].data = arena;
        copy[0].data = arena + out_b - 1;
        fixture_reset_data(f);
        snapshot(f);
        memset(arena, 0x5A, in_b + out_b);
        ++g_bad_calls;
        {
            akg_status got = akg_run(f->k, copy, f->n_in, copy + f->n_in, f->n_out);
            size_t b;
            int clean = 1;
            for (b = 0; b < in_b + out_b; ++b) {
                clean &= arena[b] == 0x5A;
            }
            CHECK(got == AKG_STATUS_ALIASING, "%s: one-byte overlap input 0 / output 0: got %d",
                  f->name, (int)got);
            CHECK(clean && unchanged(f), "%s: one-byte overlap (2): a buffer was written",
                  f->name);
        }
        /* Adjacent but not overlapping: accepted. Only where the output stays 64-byte aligned,
         * so that the kernel's own alignment assumptions (if any) are not what is tested. */
        if (in_b % 64 == 0) {
            unsigned char *raw = (unsigned char *)xcalloc(in_b + out_b + 64, 1);
            unsigned char *arena2 = raw + (64 - (size_t)((uintptr_t)raw % 64)) % 64;
            akg_status got;
            fill_ones(arena2, copy[0].dtype, f->elems[0]);
            copy[0].data = arena2;
            copy[f->n_in].data = arena2 + in_b;
            got = akg_run(f->k, copy, f->n_in, copy + f->n_in, f->n_out);
            CHECK(got == AKG_STATUS_OK, "%s: adjacent input 0 / output 0 rejected (%d)", f->name,
                  (int)got);
            free(raw);
        }
        if (out_b % 64 == 0) {
            unsigned char *raw = (unsigned char *)xcalloc(in_b + out_b + 64, 1);
            unsigned char *arena2 = raw + (64 - (size_t)((uintptr_t)raw % 64)) % 64;
            akg_status got;
            copy[f->n_in].data = arena2;
            copy[0].data = arena2 + out_b;
            fill_ones(arena2 + out_b, copy[0].dtype, f->elems[0]);
            got = akg_run(f->k, copy, f->n_in, copy + f->n_in, f->n_out);
            CHECK(got == AKG_STATUS_OK, "%s: adjacent output 0 / input 0 rejected (%d)", f->name,
                  (int)got);
            free(raw);
        }
        free(copy);
        free(arena);
        f->dirty = 1; /* the adjacency runs may have written other outputs */
    }
}

/* Read-only inputs may share storage. */
static void test_shared_readonly_inputs(fixture *f) {
    size_t i, j;
    for (i = 0; i < f->n_in; ++i) {
        for (j = 0; j < f->n_in; ++j) {
            akg_tensor bad;
            if (i == j || f->written[i] || f->written[j] || f->t[i].dtype != f->t[j].dtype ||
                f->bytes[j] > f->bytes[i] || f->bytes[j] == 0) {
                continue;
            }
            bad = f->t[j];
            bad.data = f->data[i];
            expect_with(f, j, &bad, AKG_STATUS_OK, "shares storage with a read-only input");
            return;
        }
    }
}

static void test_correct_calls(fixture *f) {
    size_t i;
    akg_tensor *copy = (akg_tensor *)xcalloc(f->n, sizeof(akg_tensor));
    int64_t **strides = (int64_t **)xcalloc(f->n, sizeof(int64_t *));
    int any_unit = 0;

    fixture_reset_data(f);
    snapshot(f);
    expect_status(f, f->k, f->t, f->n_in, f->t + f->n_in, f->n_out, AKG_STATUS_OK,
                  "correct call");
    /* Outputs were written (a canary left everywhere is very unlikely for a real kernel). */
    for (i = f->n_in; i < f->n; ++i) {
        size_t b;
        int all_canary = 1;
        for (b = 0; b < f->bytes[i]; ++b) {
            all_canary &= f->data[i][b] == CANARY;
        }
        CHECK(f->bytes[i] == 0 || !all_canary, "%s: output %zu not written by a correct call",
              f->name, i - f->n_in);
    }

    /* Explicit dense strides, then the same with junk strides on every dim of extent 1. */
    memcpy(copy, f->t, f->n * sizeof(akg_tensor));
    for (i = 0; i < f->n; ++i) {
        int d;
        int64_t dense = 1;
        strides[i] = (int64_t *)xcalloc((size_t)f->t[i].rank + 1, sizeof(int64_t));
        for (d = f->t[i].rank - 1; d >= 0; --d) {
            strides[i][d] = dense;
            dense *= f->t[i].shape[d];
        }
        copy[i].strides = strides[i];
    }
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_OK,
                  "explicit dense strides");
    for (i = 0; i < f->n; ++i) {
        int d;
        for (d = 0; d < f->t[i].rank; ++d) {
            if (f->t[i].shape[d] == 1) {
                strides[i][d] = 12345;
                any_unit = 1;
            }
        }
    }
    if (any_unit) {
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_OK,
                      "any stride on dims of extent 1");
    }
    for (i = 0; i < f->n; ++i) {
        free(strides[i]);
    }
    free(strides);
    free(copy);
}

static void test_info(const fixture *f) {
    akg_tensor_info info, before;
    memset(&info, 0x3C, sizeof(info));
    before = info;
    CHECK(akg_kernel_input_info(f->k, f->n_in, &info) == AKG_STATUS_INVALID_ARGUMENT,
          "%s: input_info index out of range", f->name);
    CHECK(akg_kernel_input_info(f->k, (size_t)-1, &info) == AKG_STATUS_INVALID_ARGUMENT,
          "%s: input_info index SIZE_MAX", f->name);
    CHECK(akg_kernel_output_info(f->k, f->n_out, &info) == AKG_STATUS_INVALID_ARGUMENT,
          "%s: output_info index out of range", f->name);
    CHECK(memcmp(&info, &before, sizeof(info)) == 0, "%s: info written on error", f->name);
    CHECK(akg_kernel_input_info(NULL, 0, &info) == AKG_STATUS_NULL_POINTER,
          "input_info NULL kernel");
    CHECK(akg_kernel_output_info(NULL, 0, &info) == AKG_STATUS_NULL_POINTER,
          "output_info NULL kernel");
    CHECK(memcmp(&info, &before, sizeof(info)) == 0, "%s: info written on error", f->name);
    if (f->n_in > 0) {
        CHECK(akg_kernel_input_info(f->k, 0, NULL) == AKG_STATUS_NULL_POINTER,
              "%s: input_info NULL out", f->name);
    }
    if (f->n_out > 0) {
        CHECK(akg_kernel_output_info(f->k, 0, NULL) == AKG_STATUS_NULL_POINTER,
              "%s: output_info NULL out", f->name);
    }
}

/* Several mistakes at once: the status is that of the first check in the documented order
 * (akgkernels.h, akg_run), and nothing is written. */
static void test_check_order(fixture *f) {
    akg_tensor *copy = (akg_tensor *)xcalloc(f->n + 1, sizeof(akg_tensor));
    size_t last_in = f->n_in > 0 ? f->n_in - 1 : 0;
    size_t out0 = f->n_in;
    int64_t one_dim[1] = {1};
    int64_t *shape;
    int64_t *strides;
    int32_t r;

    /* NULL kernel beats wrong counts; wrong counts beat NULL arrays. */
    expect_status(f, NULL, NULL, f->n_in + 1, NULL, 0, AKG_STATUS_NULL_POINTER,
                  "NULL kernel, wrong counts, NULL arrays");
    expect_status(f, f->k, NULL, f->n_in + 1, NULL, f->n_out, AKG_STATUS_TENSOR_COUNT,
                  "wrong input count and NULL arrays");
    expect_status(f, f->k, f->t, f->n_in, NULL, f->n_out + 3, AKG_STATUS_TENSOR_COUNT,
                  "wrong output count and NULL outputs");
    expect_status(f, f->k, f->t, (size_t)-1, f->t + f->n_in, (size_t)-1, AKG_STATUS_TENSOR_COUNT,
                  "counts SIZE_MAX");

    /* A huge rank is a rank mismatch, found before the (one-element) shape array is read. */
    memcpy(copy, f->t, f->n * sizeof(akg_tensor));
    copy[0].rank = INT32_MAX;
    copy[0].shape = one_dim;
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_RANK_MISMATCH,
                  "rank INT32_MAX");
    copy[0].rank = INT32_MIN;
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_INVALID_ARGUMENT,
                  "rank INT32_MIN");
    /* Rank mismatch beats a NULL shape and NULL data. */
    copy[0].rank = f->t[0].rank + 1;
    copy[0].shape = NULL;
    copy[0].data = NULL;
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_RANK_MISMATCH,
                  "rank mismatch with NULL shape and data");

    r = f->t[last_in].rank;
    shape = (int64_t *)xcalloc((size_t)r + 1, sizeof(int64_t));
    strides = (int64_t *)xcalloc((size_t)r + 1, sizeof(int64_t));
    if (r >= 2) {
        /* A negative dim anywhere beats a mismatching dim before it. */
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        memcpy(shape, f->t[last_in].shape, (size_t)r * sizeof(int64_t));
        shape[0] += 1;
        shape[r - 1] = -5;
        copy[last_in].shape = shape;
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out,
                      AKG_STATUS_INVALID_ARGUMENT, "mismatching dim 0 and negative last dim");
    }
    if (r >= 1) {
        /* Huge dims are a shape mismatch, never an overflow. */
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        memcpy(shape, f->t[last_in].shape, (size_t)r * sizeof(int64_t));
        shape[0] = INT64_MAX;
        copy[last_in].shape = shape;
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out,
                      AKG_STATUS_SHAPE_MISMATCH, "dim 0 INT64_MAX");
        /* Shape mismatch beats a wrong dtype, a NULL data pointer and bad strides. */
        copy[last_in].dtype = (akg_dtype)12345;
        copy[last_in].data = NULL;
        strides[0] = 7;
        copy[last_in].strides = strides;
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out,
                      AKG_STATUS_SHAPE_MISMATCH, "shape, dtype, data and strides all wrong");
    }
    /* A dtype outside the enum beats a NULL data pointer; a wrong dtype too. */
    memcpy(copy, f->t, f->n * sizeof(akg_tensor));
    copy[last_in].dtype = (akg_dtype)-1;
    copy[last_in].data = NULL;
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_INVALID_ARGUMENT,
                  "dtype -1 and NULL data");
    copy[last_in].dtype = f->t[last_in].dtype == AKG_DTYPE_INT8 ? AKG_DTYPE_UINT8 : AKG_DTYPE_INT8;
    expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_DTYPE_MISMATCH,
                  "other dtype and NULL data");
    /* NULL data beats bad strides (dense strides but one dim of extent > 1 stepped twice);
     * bad strides beat aliasing. */
    if (f->elems[last_in] > 1) {
        int d, bad_dim = -1;
        int64_t dense = 1;
        for (d = r - 1; d >= 0; --d) {
            strides[d] = dense;
            if (bad_dim < 0 && f->t[last_in].shape[d] > 1) {
                bad_dim = d;
            }
            dense *= f->t[last_in].shape[d];
        }
        strides[bad_dim] *= 2;
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        copy[last_in].data = NULL;
        copy[last_in].strides = strides;
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_NULL_POINTER,
                      "NULL data and bad strides");
        copy[last_in].data = f->data[last_in];
        if (f->n_out > 0 && f->bytes[out0] > 0) {
            copy[out0].data = f->data[last_in];
            expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out,
                          AKG_STATUS_UNSUPPORTED_STRIDES, "bad strides and aliasing");
        }
    }
    /* Inputs are checked before outputs: a NULL output with a wrong input dtype. */
    if (f->n_out > 0 && f->bytes[out0] > 0) {
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        copy[out0].data = NULL;
        copy[last_in].dtype =
            f->t[last_in].dtype == AKG_DTYPE_FLOAT32 ? AKG_DTYPE_INT32 : AKG_DTYPE_FLOAT32;
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_DTYPE_MISMATCH,
                      "NULL output data and wrong input dtype");
        /* Every tensor is checked before aliasing: an output on top of input 0, and the last
         * output with a wrong rank. */
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        copy[out0].data = f->data[0];
        copy[f->n - 1].rank = f->t[f->n - 1].rank + 1;
        copy[f->n - 1].shape = NULL;
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_RANK_MISMATCH,
                      "aliasing and a wrong rank on the last output");
        /* An output inside an input (not at its start, not at its end). */
        if (f->bytes[0] >= 3 * f->bytes[out0] && f->bytes[out0] > 0) {
            memcpy(copy, f->t, f->n * sizeof(akg_tensor));
            copy[out0].data = f->data[0] + f->bytes[out0];
            expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_ALIASING,
                          "output inside input 0");
        }
        /* An output that covers an input entirely. */
        if (f->bytes[out0] >= 3 * f->bytes[0] && f->bytes[0] > 0) {
            memcpy(copy, f->t, f->n * sizeof(akg_tensor));
            copy[0].data = f->data[out0] + f->bytes[0];
            expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_ALIASING,
                          "input 0 inside output 0");
        }
    }
    /* Two outputs on the same buffer. */
    if (f->n_out >= 2 && f->bytes[out0 + 1] > 0) {
        memcpy(copy, f->t, f->n * sizeof(akg_tensor));
        copy[out0 + 1].data = f->data[out0];
        expect_status(f, f->k, copy, f->n_in, copy + f->n_in, f->n_out, AKG_STATUS_ALIASING,
                      "outputs 0 and 1 on one buffer");
    }
    free(shape);
    free(strides);
    free(copy);
}

static void test_kernel(const akg_kernel *k, const char *why) {
    fixture f;
    size_t i;
    printf("kernel %s (%s): %zu inputs, %zu outputs\n", akg_kernel_name(k), why,
           akg_kernel_num_inputs(k), akg_kernel_num_outputs(k));
    fflush(stdout);
    if (!fixture_init(&f, k)) {
        fixture_free(&f);
        return;
    }
    test_info(&f);
    test_array_level(&f);
    for (i = 0; i < f.n; ++i) {
        test_tensor_level(&f, i);
    }
    test_aliasing(&f);
    test_check_order(&f);
    test_shared_readonly_inputs(&f);
    test_correct_calls(&f);
    fixture_free(&f);
}

/* ---------------------------------------------------------------------------------------- */
/* Global API                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void test_version_and_status(void) {
    char expect[64];
    const char *s[NUM_STATUSES];
    int i, j;
    CHECK(akg_version() == (uint32_t)AKG_VERSION, "akg_version %u != AKG_VERSION %d",
          (unsigned)akg_version(), AKG_VERSION);
    snprintf(expect, sizeof(expect), "%d.%d.%d", AKG_VERSION_MAJOR, AKG_VERSION_MINOR,
             AKG_VERSION_PATCH);
    CHECK(akg_version_string() != NULL && strcmp(akg_version_string(), expect) == 0,
          "akg_version_string '%s' != '%s'",
          akg_version_string() ? akg_version_string() : "(null)", expect);
    CHECK(AKG_STATUS_UNSUPPORTED_CPU == NUM_STATUSES - 1, "status list changed: update test");
    for (i = 0; i < NUM_STATUSES; ++i) {
        s[i] = akg_status_string((akg_status)i);
        CHECK(s[i] != NULL && s[i][0] != '\0', "akg_status_string(%d) is NULL or empty", i);
    }
    for (i = 0; i < NUM_STATUSES; ++i) {
        for (j = i + 1; j < NUM_STATUSES; ++j) {
            CHECK(s[i] && s[j] && strcmp(s[i], s[j]) != 0,
                  "akg_status_string(%d) == akg_status_string(%d)", i, j);
        }
    }
    CHECK(akg_status_string((akg_status)NUM_STATUSES) != NULL, "unknown status string NULL");
    CHECK(akg_status_string((akg_status)-1) != NULL, "status -1 string NULL");
    CHECK(akg_status_string((akg_status)1000) != NULL, "status 1000 string NULL");
}

/* The variant queries: every kernel lists its compiled targets and runs one of them here; NULL
 * and out-of-range arguments answer NULL / 0. */
static void test_variants(void) {
    size_t i, v;
    const char *isa = akg_cpu_isa();
    CHECK(isa != NULL && isa[0] != '\0', "akg_cpu_isa() is NULL or empty");
    CHECK(akg_kernel_variant(NULL) == NULL, "akg_kernel_variant(NULL) != NULL");
    CHECK(akg_kernel_num_variants(NULL) == 0, "akg_kernel_num_variants(NULL) != 0");
    CHECK(akg_kernel_variant_at(NULL, 0) == NULL, "akg_kernel_variant_at(NULL, 0) != NULL");
    for (i = 0; i < akg_kernel_count(); ++i) {
        const akg_kernel *k = akg_kernel_at(i);
        size_t n = akg_kernel_num_variants(k);
        const char *chosen = akg_kernel_variant(k);
        int listed = 0;
        CHECK(n > 0, "%s: no variant", akg_kernel_name(k));
        CHECK(akg_kernel_variant_at(k, n) == NULL, "%s: variant past the last is not NULL", akg_kernel_name(k));
        for (v = 0; v < n; ++v) {
            const char *target = akg_kernel_variant_at(k, v);
            CHECK(target != NULL && target[0] != '\0', "%s: variant %zu has no target", akg_kernel_name(k), v);
            listed |= chosen != NULL && target != NULL && strcmp(chosen, target) == 0;
        }
        CHECK(chosen != NULL && listed, "%s: the chosen variant '%s' is not one of its variants", akg_kernel_name(k),
              chosen ? chosen : "(null)");
    }
}

static void test_catalog(void) {
    size_t count = akg_kernel_count();
    size_t i;
    CHECK(count > 0, "empty catalog");
    for (i = 0; i < count; ++i) {
        const akg_kernel *k = akg_kernel_at(i);
        const char *name = akg_kernel_name(k);
        size_t t;
        CHECK(k != NULL, "akg_kernel_at(%zu) NULL", i);
        CHECK(name != NULL && name[0] != '\0', "kernel %zu has no name", i);
        if (k == NULL || name == NULL) {
            continue;
        }
        CHECK(akg_kernel_lookup(name) == k, "lookup('%s') does not find kernel %zu", name, i);
        CHECK(akg_kernel_num_outputs(k) > 0, "%s: no outputs", name);
        for (t = 0; t < akg_kernel_num_inputs(k) + akg_kernel_num_outputs(k); ++t) {
            akg_tensor_info info;
            size_t n_in = akg_kernel_num_inputs(k);
            akg_status st = t < n_in ? akg_kernel_input_info(k, t, &info)
                                     : akg_kernel_output_info(k, t - n_in, &info);
            CHECK(st == AKG_STATUS_OK, "%s: info of tensor %zu: %d", name, t, (int)st);
            if (st != AKG_STATUS_OK) {
                continue;
            }
            CHECK(info.rank >= 0 && (info.rank == 0 || info.shape != NULL),
                  "%s: tensor %zu has a bad shape", name, t);
            CHECK(dtype_bytes(info.dtype) != 0, "%s: tensor %zu has a bad dtype", name, t);
            CHECK(info.updated_in_place == 0 || info.updated_in_place == 1,
                  "%s: tensor %zu updated_in_place %d", name, t, (int)info.updated_in_place);
            CHECK(t < n_in || info.updated_in_place == 0, "%s: output %zu updated in place",
                  name, t - n_in);
        }
    }
    CHECK(akg_kernel_at(count) == NULL, "akg_kernel_at(count) not NULL");
    CHECK(akg_kernel_at((size_t)-1) == NULL, "akg_kernel_at(SIZE_MAX) not NULL");
    CHECK(akg_kernel_lookup("no_such_kernel_in_the_akg_catalog") == NULL, "unknown name found");
    CHECK(akg_kernel_lookup("") == NULL, "empty name found");
    CHECK(akg_kernel_lookup(NULL) == NULL, "NULL name found");
    CHECK(akg_kernel_name(NULL) == NULL, "akg_kernel_name(NULL)");
    CHECK(akg_kernel_num_inputs(NULL) == 0, "akg_kernel_num_inputs(NULL)");
    CHECK(akg_kernel_num_outputs(NULL) == 0, "akg_kernel_num_outputs(NULL)");
    if (count > 0 && akg_kernel_name(akg_kernel_at(0)) != NULL) {
        /* A prefix and an extension of a real name are not that kernel. */
        const char *name = akg_kernel_name(akg_kernel_at(0));
        size_t len = strlen(name);
        char *buf = (char *)xcalloc(len + 2, 1);
        memcpy(buf, name, len);
        buf[len] = 'x';
        CHECK(akg_kernel_lookup(buf) != akg_kernel_at(0), "lookup matched a longer name");
        if (len > 1) {
            buf[len - 1] = '\0';
            CHECK(akg_kernel_lookup(buf) != akg_kernel_at(0), "lookup matched a prefix");
        }
        free(buf);
    }
}

static int has_inplace_input(const akg_kernel *k) {
    size_t i;
    for (i = 0; i < akg_kernel_num_inputs(k); ++i) {
        akg_tensor_info info;
        if (akg_kernel_input_info(k, i, &info) == AKG_STATUS_OK && info.updated_in_place) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    size_t count, i;
    int all = argc > 1 && strcmp(argv[1], "--all") == 0;
    g_sample_large = all;
    const akg_kernel *chosen[4];
    const char *why[4];
    size_t n_chosen = 0;

    test_version_and_status();
    test_catalog();
    test_variants();

    count = akg_kernel_count();
    if (count > 0) {
        chosen[n_chosen] = akg_kernel_at(0);
        why[n_chosen++] = "kernel 0";
    }
    /* First kernel with several inputs, with several outputs, with an input updated in place. */
    {
        int found[3] = {0, 0, 0};
        const char *reason[3] = {"several inputs", "several outputs", "input updated in place"};
        for (i = 0; i < count; ++i) {
            const akg_kernel *k = akg_kernel_at(i);
            int c;
            int is[3];
            is[0] = akg_kernel_num_inputs(k) >= 2;
            is[1] = akg_kernel_num_outputs(k) >= 2;
            is[2] = has_inplace_input(k);
            for (c = 0; c < 3; ++c) {
                size_t m;
                int dup = 0;
                if (found[c] || !is[c]) {
                    continue;
                }
                found[c] = 1;
                for (m = 0; m < n_chosen; ++m) {
                    dup |= chosen[m] == k;
                }
                if (!dup) {
                    chosen[n_chosen] = k;
                    why[n_chosen++] = reason[c];
                }
            }
        }
        for (i = 0; i < 3; ++i) {
            if (!found[i]) {
                printf("note: no kernel with %s in the catalog\n", reason[i]);
            }
        }
    }
    if (all) {
        for (i = 0; i < count; ++i) {
            test_kernel(akg_kernel_at(i), "every kernel");
        }
        /* Unknown kernels: nothing found, and akg_run on what lookup returned is refused. */
        {
            const char *unknown[] = {"no_such_kernel", "LAYERNORM_FWD_F32", " layernorm_fwd_f32",
                                     "layernorm_fwd_f32 ", "layernorm_fwd_f32\n", "*", "%s"};
            size_t u;
            for (u = 0; u < sizeof(unknown) / sizeof(unknown[0]); ++u) {
                const akg_kernel *k = akg_kernel_lookup(unknown[u]);
                CHECK(k == NULL, "lookup('%s') found a kernel", unknown[u]);
                ++g_bad_calls;
                CHECK(akg_run(k, NULL, 0, NULL, 0) == AKG_STATUS_NULL_POINTER,
                      "akg_run on unknown kernel '%s'", unknown[u]);
            }
            ++g_bad_calls;
            CHECK(akg_run(akg_kernel_at(count), NULL, 0, NULL, 0) == AKG_STATUS_NULL_POINTER,
                  "akg_run on akg_kernel_at(count)");
        }
    } else {
        for (i = 0; i < n_chosen; ++i) {
            test_kernel(chosen[i], why[i]);
        }
    }

    printf("%ld bad calls tried (each: documented status, no byte written)\n", g_bad_calls);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
