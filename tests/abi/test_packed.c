/* test_packed.c: weights packed ahead of time (akg_kernel_packable_input, akg_pack_input,
 * akg_run_packed, akg_packed_input_free), from C99 against the real catalog.
 *
 * Every kernel with a packable input runs at its real shapes from its packed weights and must
 * give akg_run's values: the same products, maybe summed in another order (a plan that reads B
 * in place takes other panels of k), which the inputs make exact; every documented error is
 * checked, with the handle left NULL and no output written. Kernels without one refuse to pack.
 */
#include <akg/akgkernels.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_check.h"

typedef struct tensors {
    size_t n;
    akg_tensor *t;
    void **data;
    size_t *bytes;
} tensors;

static size_t dtype_bytes(akg_dtype dt) {
    switch (dt) {
    case AKG_DTYPE_FLOAT16: return 2;
    case AKG_DTYPE_BOOL:
    case AKG_DTYPE_UINT8:
    case AKG_DTYPE_INT8: return 1;
    case AKG_DTYPE_INT64:
    case AKG_DTYPE_FLOAT64: return 8;
    default: return 4;
    }
}

static float half_to_float(uint16_t h) {
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000u) ? -v : v;
}

/* Inputs in eighths of [-1, 1) (float16: +-1, 1.25, 1.5, 1.75), outputs zeroed: every product is
 * a multiple of 2^-6 (float16: 2^-4) and every sum of them to 2^18 terms is exact in float32,
 * whatever the order of the additions. */
static int make(tensors *ts, const akg_kernel *k, int outputs, uint32_t *state) {
    size_t i, e;
    ts->n = outputs ? akg_kernel_num_outputs(k) : akg_kernel_num_inputs(k);
    ts->t = (akg_tensor *)calloc(ts->n + 1, sizeof(akg_tensor));
    ts->data = (void **)calloc(ts->n + 1, sizeof(void *));
    ts->bytes = (size_t *)calloc(ts->n + 1, sizeof(size_t));
    if (!ts->t || !ts->data || !ts->bytes) return 0;
    for (i = 0; i < ts->n; ++i) {
        akg_tensor_info info;
        size_t elems = 1;
        int d;
        if ((outputs ? akg_kernel_output_info(k, i, &info) : akg_kernel_input_info(k, i, &info)) != AKG_STATUS_OK) return 0;
        for (d = 0; d < info.rank; ++d) elems *= (size_t)info.shape[d];
        ts->bytes[i] = elems * dtype_bytes(info.dtype);
        ts->data[i] = calloc(ts->bytes[i] + 1, 1);
        if (!ts->data[i]) return 0;
        for (e = 0; !outputs && e < elems; ++e) {
            *state = *state * 1664525u + 1013904223u;
            if (info.dtype == AKG_DTYPE_FLOAT32) {
                float v = (float)(*state >> 28) / 8.0f - 1.0f;
                memcpy((char *)ts->data[i] + 4 * e, &v, 4);
            } else if (info.dtype == AKG_DTYPE_FLOAT16) {
                uint16_t h = (uint16_t)(0x3c00u | ((*state >> 22) & 0x300u)) ^ (uint16_t)((*state & 1u) << 15);
                memcpy((char *)ts->data[i] + 2 * e, &h, 2);
            } else {
                ((unsigned char *)ts->data[i])[e * dtype_bytes(info.dtype)] = (unsigned char)(*state >> 31);
            }
        }
        ts->t[i].data = ts->data[i];
        ts->t[i].dtype = info.dtype;
        ts->t[i].rank = info.rank;
        ts->t[i].shape = info.shape;
        ts->t[i].strides = NULL;
    }
    return 1;
}

static void release(tensors *ts) {
    size_t i;
    for (i = 0; ts->data && i < ts->n; ++i) free(ts->data[i]);
    free(ts->t);
    free(ts->data);
    free(ts->bytes);
}

/* The largest difference of two runs' outputs, relative to 1 + |akg_run's value|. */
static double largest_difference(const tensors *a, const tensors *b) {
    double worst = 0.0;
    size_t i, e;
    for (i = 0; i < a->n; ++i) {
        const size_t width = dtype_bytes(a->t[i].dtype);
        for (e = 0; e < a->bytes[i] / width; ++e) {
            double x, y;
            if (a->t[i].dtype == AKG_DTYPE_FLOAT32) {
                float fx, fy;
                memcpy(&fx, (char *)a->data[i] + 4 * e, 4);
                memcpy(&fy, (char *)b->data[i] + 4 * e, 4);
                x = fx, y = fy;
            } else if (a->t[i].dtype == AKG_DTYPE_FLOAT16) {
                uint16_t hx, hy;
                memcpy(&hx, (char *)a->data[i] + 2 * e, 2);
                memcpy(&hy, (char *)b->data[i] + 2 * e, 2);
                x = half_to_float(hx), y = half_to_float(hy);
            } else {
                x = memcmp((char *)a->data[i] + width * e, (char *)b->data[i] + width * e, width) ? 1e30 : 0.0, y = 0.0;
            }
            if (x != y) {
                const double d = fabs(x - y) / (1.0 + fabs(x));
                if (!(d <= worst)) worst = d; /* NaN on one side only counts as the largest */
            }
        }
    }
    return worst;
}

static int outputs_zero(const tensors *outs) {
    size_t i, e;
    for (i = 0; i < outs->n; ++i)
        for (e = 0; e < outs->bytes[i]; ++e)
            if (((unsigned char *)outs->data[i])[e]) return 0;
    return 1;
}

static const akg_kernel *some_other_packable(const akg_kernel *k) {
    size_t i;
    for (i = 0; i < akg_kernel_count(); ++i)
        if (akg_kernel_at(i) != k && akg_kernel_packable_input(akg_kernel_at(i)) >= 0) return akg_kernel_at(i);
    return NULL;
}

static void test_errors(const akg_kernel *k, int64_t index, tensors *ins, tensors *outs) {
    akg_packed_input *p = (akg_packed_input *)&p; /* not NULL: every error must reset it */
    akg_tensor bad = ins->t[index];
    int64_t shape[8];
    const akg_kernel *other = some_other_packable(k);
    const char *name = akg_kernel_name(k);
    int d;

    CHECK(akg_pack_input(NULL, &ins->t[index], &p) == AKG_STATUS_NULL_POINTER && p == NULL, "%s: NULL kernel", name);
    p = (akg_packed_input *)&p;
    CHECK(akg_pack_input(k, NULL, &p) == AKG_STATUS_NULL_POINTER && p == NULL, "%s: NULL tensor", name);
    CHECK(akg_pack_input(k, &ins->t[index], NULL) == AKG_STATUS_NULL_POINTER, "%s: NULL handle", name);
    bad.dtype = bad.dtype == AKG_DTYPE_FLOAT32 ? AKG_DTYPE_FLOAT16 : AKG_DTYPE_FLOAT32;
    CHECK(akg_pack_input(k, &bad, &p) == AKG_STATUS_DTYPE_MISMATCH && p == NULL, "%s: wrong dtype", name);
    bad = ins->t[index];
    for (d = 0; d < bad.rank && d < 8; ++d) shape[d] = bad.shape[d];
    shape[0] += 1;
    bad.shape = shape;
    CHECK(akg_pack_input(k, &bad, &p) == AKG_STATUS_SHAPE_MISMATCH && p == NULL, "%s: wrong shape", name);
    bad = ins->t[index];
    bad.data = NULL;
    CHECK(akg_pack_input(k, &bad, &p) == AKG_STATUS_NULL_POINTER && p == NULL, "%s: NULL data", name);

    CHECK(akg_pack_input(k, &ins->t[index], &p) == AKG_STATUS_OK && p != NULL, "%s: pack", name);
    if (p == NULL) return;
    CHECK(akg_run_packed(NULL, p, ins->t, ins->n, outs->t, outs->n) == AKG_STATUS_NULL_POINTER, "%s: NULL kernel", name);
    CHECK(akg_run_packed(k, NULL, ins->t, ins->n, outs->t, outs->n) == AKG_STATUS_NULL_POINTER, "%s: NULL packed", name);
    CHECK(akg_run_packed(k, p, ins->t, ins->n - 1, outs->t, outs->n) == AKG_STATUS_TENSOR_COUNT, "%s: input count", name);
    if (other != NULL)
        CHECK(akg_run_packed(other, p, ins->t, ins->n, outs->t, outs->n) == AKG_STATUS_INVALID_ARGUMENT, "%s: run as another kernel", name);
    if (ins->n > 1) {
        /* Another input is still checked. */
        const size_t j = index == 0 ? 1 : 0;
        akg_tensor saved = ins->t[j];
        ins->t[j].rank = saved.rank + 1;
        CHECK(akg_run_packed(k, p, ins->t, ins->n, outs->t, outs->n) == AKG_STATUS_RANK_MISMATCH, "%s: other input's rank", name);
        ins->t[j] = saved;
    }
    if (outs->n > 0 && outs->bytes[0] > 0 && ins->bytes[0] > 0 && index != 0) {
        akg_tensor saved = outs->t[0];
        outs->t[0].data = ins->data[0];
        CHECK(akg_run_packed(k, p, ins->t, ins->n, outs->t, outs->n) == AKG_STATUS_ALIASING, "%s: output on an input", name);
        outs->t[0] = saved;
    }
    CHECK(outputs_zero(outs), "%s: an output was written on error", name);
    akg_packed_input_free(p);
    akg_packed_input_free(NULL);
}

int main(void) {
    size_t i;
    size_t packable = 0;
    uint32_t state = 2026u;
    CHECK(akg_kernel_packable_input(NULL) == -1, "NULL kernel has no packable input");
    for (i = 0; i < akg_kernel_count(); ++i) {
        const akg_kernel *k = akg_kernel_at(i);
        const char *name = akg_kernel_name(k);
        const int64_t index = akg_kernel_packable_input(k);
        tensors ins, outs, expect;
        akg_packed_input *p = NULL;
        akg_status st;
        memset(&ins, 0, sizeof ins);
        memset(&outs, 0, sizeof outs);
        memset(&expect, 0, sizeof expect);
        if (!make(&ins, k, 0, &state) || !make(&outs, k, 1, &state) || !make(&expect, k, 1, &state)) {
            CHECK(0, "%s: out of memory for its tensors", name);
            release(&ins), release(&outs), release(&expect);
            continue;
        }
        if (index < 0) {
            p = (akg_packed_input *)&p;
            if (ins.n > 0) CHECK(akg_pack_input(k, &ins.t[0], &p) == AKG_STATUS_INVALID_ARGUMENT && p == NULL, "%s: packed what it cannot", name);
            release(&ins), release(&outs), release(&expect);
            continue;
        }
        ++packable;
        CHECK((size_t)index < ins.n, "%s: packable input %lld of %zu", name, (long long)index, ins.n);
        test_errors(k, index, &ins, &outs);
        CHECK(akg_run(k, ins.t, ins.n, expect.t, expect.n) == AKG_STATUS_OK, "%s: akg_run", name);
        st = akg_pack_input(k, &ins.t[index], &p);
        CHECK(st == AKG_STATUS_OK, "%s: pack: %s", name, akg_status_string(st));
        if (st == AKG_STATUS_OK) {
            double worst;
            /* The packed input's tensor is not read: none at all. */
            memset(&ins.t[index], 0, sizeof(akg_tensor));
            st = akg_run_packed(k, p, ins.t, ins.n, outs.t, outs.n);
            CHECK(st == AKG_STATUS_OK, "%s: run packed: %s", name, akg_status_string(st));
            worst = largest_difference(&expect, &outs);
            CHECK(worst <= 1e-5, "%s: packed run differs from akg_run by %g (relative to 1 + |x|)", name, worst);
            akg_packed_input_free(p);
        }
        release(&ins), release(&outs), release(&expect);
    }
    CHECK(packable > 0, "no catalog kernel takes packed weights");
    printf("%zu kernels take packed weights; %d checks passed, %d failed\n", packable, g_passed, g_failed);
    return g_failed ? 1 : 0;
}
