/* test_guard_threads.c: kernels never touch memory outside their buffers, write every element
 * of their outputs, and give the same bits from many threads at once as from one.
 *
 *   test_guard_threads guard   [--so LIB.so]...   guard pages around every buffer
 *   test_guard_threads threads [--so LIB.so]...   many threads at once, bitwise equal results
 *
 * Kernels: the catalog (libakgkernels, fixed real shapes), the odd-shape twins of
 * tests/patterns_small/ when linked in (AKG_WITH_SMALL: sizes such as 1, 3, 17, 37, never a
 * multiple of the vector width), and the kernels of every shared object made by
 * `akg-gen compile` given with --so, called through that object's own exported C ABI.
 *
 * guard: every buffer lies in its own mapping, first ending exactly where a PROT_NONE page
 * begins, then starting exactly where one ends (a read or write one element past either end
 * faults; the SIGSEGV handler names the kernel and fails the test; a forked child first checks
 * that the harness does fault). Each placement runs twice, with the outputs pre-filled with two
 * different byte patterns: the results must be equal bit for bit (an output element the kernel
 * did not write would keep the pattern; and runs are bitwise reproducible at the catalog's real
 * shapes). A few bad calls per kernel go through its own ABI (the .so's runtime too).
 *
 * threads: one single-threaded pass computes every kernel's outputs; then NTHREADS threads run
 * every kernel ROUNDS times each in a different order, on their own buffers, and every result
 * must equal the single-threaded one bit for bit (OpenMP thread count fixed by the caller).
 *
 * C99 + POSIX (mmap, pthreads, dlopen).
 */
#define _GNU_SOURCE
#include <akg/akgkernels.h>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef AKG_WITH_SMALL
extern const akg_kernel *const akg_test_small_kernels[];
extern const size_t akg_test_small_kernel_count;
#endif

typedef akg_status (*run_fn)(const akg_kernel *, const akg_tensor *, size_t, const akg_tensor *,
                             size_t);
typedef size_t (*count_fn)(const akg_kernel *);
typedef akg_status (*info_fn)(const akg_kernel *, size_t, akg_tensor_info *);
typedef const char *(*name_fn)(const akg_kernel *);

/* A kernel with the C ABI it is called through (the library's, or a shared object's). */
typedef struct entry {
    const akg_kernel *k;
    char label[160];
    run_fn run;
    count_fn num_inputs, num_outputs;
    info_fn input_info, output_info;
} entry;

#define MAX_ENTRIES 512
static entry g_entries[MAX_ENTRIES];
static size_t g_n_entries = 0;
static int g_failed = 0;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        ++g_failed;                                                                                \
        fprintf(stderr, "FAIL: ");                                                                 \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
    } while (0)

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

static void add_entry(const akg_kernel *k, const char *origin, run_fn run, count_fn ni,
                      count_fn no, info_fn ii, info_fn oi, name_fn name) {
    entry *e;
    if (k == NULL || g_n_entries >= MAX_ENTRIES) {
        FAIL("cannot add a kernel from %s", origin);
        return;
    }
    e = &g_entries[g_n_entries++];
    e->k = k;
    snprintf(e->label, sizeof(e->label), "%s:%s", origin, name(k) ? name(k) : "(null)");
    e->run = run;
    e->num_inputs = ni;
    e->num_outputs = no;
    e->input_info = ii;
    e->output_info = oi;
}

static void collect(int argc, char **argv) {
    size_t i;
    int a;
    for (i = 0; i < akg_kernel_count(); ++i) {
        add_entry(akg_kernel_at(i), "catalog", akg_run, akg_kernel_num_inputs,
                  akg_kernel_num_outputs, akg_kernel_input_info, akg_kernel_output_info,
                  akg_kernel_name);
    }
#ifdef AKG_WITH_SMALL
    for (i = 0; i < akg_test_small_kernel_count; ++i) {
        add_entry(akg_test_small_kernels[i], "small", akg_run, akg_kernel_num_inputs,
                  akg_kernel_num_outputs, akg_kernel_input_info, akg_kernel_output_info,
                  akg_kernel_name);
    }
#endif
    for (a = 2; a + 1 < argc; ++a) {
        void *h;
        size_t (*so_count)(void);
        const akg_kernel *(*so_at)(size_t);
        if (strcmp(argv[a], "--so") != 0) {
            continue;
        }
        ++a;
        h = dlopen(argv[a], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            FAIL("dlopen %s: %s", argv[a], dlerror());
            continue;
        }
        so_count = (size_t(*)(void))dlsym(h, "akg_kernel_count");
        so_at = (const akg_kernel *(*)(size_t))dlsym(h, "akg_kernel_at");
        if (so_count == NULL || so_at == NULL || dlsym(h, "akg_run") == NULL) {
            FAIL("%s does not export the C ABI", argv[a]);
            continue;
        }
        if (so_count() == 0) {
            FAIL("%s holds no kernel", argv[a]);
        }
        for (i = 0; i < so_count(); ++i) {
            const char *base = strrchr(argv[a], '/');
            add_entry(so_at(i), base ? base + 1 : argv[a], (run_fn)dlsym(h, "akg_run"),
                      (count_fn)dlsym(h, "akg_kernel_num_inputs"),
                      (count_fn)dlsym(h, "akg_kernel_num_outputs"),
                      (info_fn)dlsym(h, "akg_kernel_input_info"),
                      (info_fn)dlsym(h, "akg_kernel_output_info"),
                      (name_fn)dlsym(h, "akg_kernel_name"));
        }
        /* the handle stays open for the life of the process */
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Tensors of one call                                                                        */
/* ---------------------------------------------------------------------------------------- */

enum placement { PLACE_HEAP = 0, PLACE_GUARD_AFTER = 1, PLACE_GUARD_BEFORE = 2 };

typedef struct call {
    size_t n_in, n_out, n;
    akg_tensor *t; /* inputs then outputs */
    int64_t **shape;
    size_t *bytes, *elems;
    unsigned char **data;
    void **map;
    size_t *map_len;
} call;

static size_t g_page = 4096;

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static uint32_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* Deterministic inputs: floats in ±[0.5, 2) (any kernel is fine with them: positive where a Log
 * or a division needs it would be better, but nothing here compares values with a reference,
 * only bits with bits), small integers, bools 0/1. */
static void fill_input(unsigned char *p, akg_dtype dt, size_t elems, uint64_t seed) {
    size_t i;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (i = 0; i < elems; ++i) {
        uint32_t r = lcg(&s);
        switch (dt) {
        case AKG_DTYPE_FLOAT32: {
            uint32_t u = ((r & 1u) << 31) | ((126u + ((r >> 1) & 1u)) << 23) | (r >> 9);
            memcpy(p + 4 * i, &u, 4);
            break;
        }
        case AKG_DTYPE_FLOAT16: {
            uint16_t h = (uint16_t)(((r & 1u) << 15) | ((14u + ((r >> 1) & 1u)) << 10) |
                                    ((r >> 8) & 0x3ffu));
            memcpy(p + 2 * i, &h, 2);
            break;
        }
        case AKG_DTYPE_FLOAT64: {
            double v = 0.5 + (double)(r >> 8) / (double)(1u << 24);
            memcpy(p + 8 * i, &v, 8);
            break;
        }
        case AKG_DTYPE_INT32: {
            int32_t v = (int32_t)(r % 9u) + 1;
            memcpy(p + 4 * i, &v, 4);
            break;
        }
        case AKG_DTYPE_INT64: {
            int64_t v = (int64_t)(r % 9u) + 1;
            memcpy(p + 8 * i, &v, 8);
            break;
        }
        case AKG_DTYPE_BOOL: p[i] = (unsigned char)(r & 1u); break;
        case AKG_DTYPE_UINT8:
        case AKG_DTYPE_INT8: p[i] = (unsigned char)(r % 9u + 1); break;
        }
    }
}

static int call_init(call *c, const entry *e, enum placement where) {
    size_t i;
    memset(c, 0, sizeof(*c));
    c->n_in = e->num_inputs(e->k);
    c->n_out = e->num_outputs(e->k);
    c->n = c->n_in + c->n_out;
    c->t = (akg_tensor *)xcalloc(c->n, sizeof(akg_tensor));
    c->shape = (int64_t **)xcalloc(c->n, sizeof(int64_t *));
    c->bytes = (size_t *)xcalloc(c->n, sizeof(size_t));
    c->elems = (size_t *)xcalloc(c->n, sizeof(size_t));
    c->data = (unsigned char **)xcalloc(c->n, sizeof(unsigned char *));
    c->map = (void **)xcalloc(c->n, sizeof(void *));
    c->map_len = (size_t *)xcalloc(c->n, sizeof(size_t));
    for (i = 0; i < c->n; ++i) {
        akg_tensor_info info;
        int d;
        akg_status st = i < c->n_in ? e->input_info(e->k, i, &info)
                                    : e->output_info(e->k, i - c->n_in, &info);
        if (st != AKG_STATUS_OK || dtype_bytes(info.dtype) == 0) {
            FAIL("%s: tensor info %zu", e->label, i);
            return 0;
        }
        c->shape[i] = (int64_t *)xcalloc((size_t)info.rank + 1, sizeof(int64_t));
        c->elems[i] = 1;
        for (d = 0; d < info.rank; ++d) {
            c->shape[i][d] = info.shape[d];
            c->elems[i] *= (size_t)info.shape[d];
        }
        c->bytes[i] = c->elems[i] * dtype_bytes(info.dtype);
        if (where == PLACE_HEAP) {
            c->data[i] = (unsigned char *)xcalloc(c->bytes[i], 1);
        } else {
            /* [guard page][data pages][guard page]; the data touches one of the guards. */
            size_t data_len = (c->bytes[i] + g_page - 1) / g_page * g_page;
            unsigned char *base;
            if (data_len == 0) {
                data_len = g_page;
            }
            c->map_len[i] = data_len + 2 * g_page;
            c->map[i] = mmap(NULL, c->map_len[i], PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (c->map[i] == MAP_FAILED) {
                c->map[i] = NULL;
                FAIL("%s: mmap of %zu bytes failed", e->label, c->map_len[i]);
                return 0;
            }
            base = (unsigned char *)c->map[i];
            if (mprotect(base + g_page, data_len, PROT_READ | PROT_WRITE) != 0) {
                FAIL("%s: mprotect failed", e->label);
                return 0;
            }
            c->data[i] = where == PLACE_GUARD_BEFORE ? base + g_page
                                                     : base + g_page + data_len - c->bytes[i];
        }
        c->t[i].data = c->data[i];
        c->t[i].dtype = info.dtype;
        c->t[i].rank = info.rank;
        c->t[i].shape = c->shape[i];
        c->t[i].strides = NULL;
    }
    return 1;
}

static void call_fill(call *c, uint64_t seed, unsigned char out_pattern) {
    size_t i;
    for (i = 0; i < c->n; ++i) {
        if (i < c->n_in) {
            fill_input(c->data[i], c->t[i].dtype, c->elems[i], seed + i);
        } else {
            memset(c->data[i], out_pattern, c->bytes[i]);
        }
    }
}

static void call_free(call *c) {
    size_t i;
    for (i = 0; i < c->n; ++i) {
        if (c->map != NULL && c->map[i] != NULL) {
            munmap(c->map[i], c->map_len[i]);
        } else if (c->data != NULL && c->map != NULL) {
            free(c->data[i]);
        }
        if (c->shape != NULL) {
            free(c->shape[i]);
        }
    }
    free(c->t);
    free(c->shape);
    free(c->bytes);
    free(c->elems);
    free(c->data);
    free(c->map);
    free(c->map_len);
    memset(c, 0, sizeof(*c));
}

/* Concatenation of every written buffer (outputs and inputs updated in place). */
static unsigned char *call_results(const call *c, const entry *e, size_t *len) {
    size_t i, total = 0, at = 0;
    unsigned char *r;
    for (i = 0; i < c->n; ++i) {
        total += c->bytes[i];
    }
    r = (unsigned char *)xcalloc(total, 1);
    for (i = 0; i < c->n; ++i) {
        akg_tensor_info info;
        int written = i >= c->n_in ||
                      (e->input_info(e->k, i, &info) == AKG_STATUS_OK && info.updated_in_place);
        if (written) {
            memcpy(r + at, c->data[i], c->bytes[i]);
            at += c->bytes[i];
        }
    }
    *len = at;
    return r;
}

/* ---------------------------------------------------------------------------------------- */
/* guard                                                                                      */
/* ---------------------------------------------------------------------------------------- */

static volatile const char *g_current = "";
static long g_bad_calls = 0;

static void on_segv(int sig) {
    const char *msg = "FAIL: memory fault (an access outside a buffer) in kernel ";
    const char *cur = (const char *)g_current;
    ssize_t ignored;
    (void)sig;
    ignored = write(2, msg, strlen(msg));
    ignored = write(2, cur, strlen(cur));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(1);
}

/* The harness itself: a child that reads one element past the end of a buffer placed against
 * the guard after it (or before its start, against the guard before it) must die of SIGSEGV. */
static int guard_self_check(void) {
    int where;
    for (where = PLACE_GUARD_AFTER; where <= PLACE_GUARD_BEFORE; ++where) {
        size_t page = g_page, bytes = 37 * sizeof(float);
        unsigned char *base = (unsigned char *)mmap(NULL, 3 * page, PROT_NONE,
                                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        volatile const float *data;
        pid_t pid;
        int status = 0;
        if (base == (unsigned char *)MAP_FAILED || mprotect(base + page, page, PROT_READ | PROT_WRITE) != 0) {
            FAIL("guard self-check: mmap");
            return 0;
        }
        data = (volatile const float *)(where == PLACE_GUARD_BEFORE ? base + page
                                                                    : base + 2 * page - bytes);
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            float v = where == PLACE_GUARD_BEFORE ? data[-1] : data[37];
            (void)v;
            _exit(0);
        }
        waitpid(pid, &status, 0);
        munmap(base, 3 * page);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)) {
            FAIL("guard self-check: reading one element %s a buffer did not fault",
                 where == PLACE_GUARD_BEFORE ? "before" : "after");
            return 0;
        }
    }
    return 1;
}

static int run_guard(void) {
    size_t k;
    long runs = 0;
    struct sigaction sa;
    if (!guard_self_check()) {
        return 1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    for (k = 0; k < g_n_entries; ++k) {
        const entry *e = &g_entries[k];
        int where;
        for (where = PLACE_GUARD_AFTER; where <= PLACE_GUARD_BEFORE; ++where) {
            static char label[256];
            call c;
            unsigned char *first = NULL, *second = NULL;
            size_t len1 = 0, len2 = 0;
            int pass;
            snprintf(label, sizeof(label), "%s, buffers %s a PROT_NONE page", e->label,
                     where == PLACE_GUARD_AFTER ? "ending at" : "starting after");
            g_current = label;
            if (!call_init(&c, e, (enum placement)where)) {
                call_free(&c);
                continue;
            }
            /* A few bad calls through this kernel's own C ABI (the .so's runtime too), with
             * every buffer against a guard: refused, nothing written. */
            if (where == PLACE_GUARD_AFTER && c.n_in > 0 && c.n_out > 0 && c.bytes[c.n_in] > 0) {
                akg_tensor saved_in0 = c.t[0], saved_out0 = c.t[c.n_in];
                unsigned char *before = (unsigned char *)xcalloc(c.bytes[c.n_in], 1);
                akg_status st[4];
                call_fill(&c, 1000 + k, 0xA5);
                memcpy(before, c.data[c.n_in], c.bytes[c.n_in]);
                st[0] = e->run(e->k, c.t, c.n_in - 1, c.t + c.n_in, c.n_out);
                c.t[c.n_in].data = c.t[0].data; /* output 0 on input 0 */
                st[1] = e->run(e->k, c.t, c.n_in, c.t + c.n_in, c.n_out);
                c.t[c.n_in] = saved_out0;
                c.t[0].dtype = c.t[0].dtype == AKG_DTYPE_FLOAT32 ? AKG_DTYPE_FLOAT16 : AKG_DTYPE_FLOAT32;
                st[2] = e->run(e->k, c.t, c.n_in, c.t + c.n_in, c.n_out);
                c.t[0] = saved_in0;
                c.t[c.n_in].data = NULL;
                st[3] = e->run(e->k, c.t, c.n_in, c.t + c.n_in, c.n_out);
                c.t[c.n_in] = saved_out0;
                g_bad_calls += 4;
                if (st[0] != AKG_STATUS_TENSOR_COUNT || st[1] != AKG_STATUS_ALIASING ||
                    st[2] != AKG_STATUS_DTYPE_MISMATCH || st[3] != AKG_STATUS_NULL_POINTER ||
                    memcmp(before, c.data[c.n_in], c.bytes[c.n_in]) != 0) {
                    FAIL("%s: bad calls: statuses %d %d %d %d (want 3 8 6 1), or output written",
                         label, (int)st[0], (int)st[1], (int)st[2], (int)st[3]);
                }
                free(before);
            }
            for (pass = 0; pass < 2; ++pass) {
                akg_status st;
                call_fill(&c, 1000 + k, pass == 0 ? 0xA5 : 0x5A);
                st = e->run(e->k, c.t, c.n_in, c.t + c.n_in, c.n_out);
                ++runs;
                if (st != AKG_STATUS_OK) {
                    FAIL("%s: status %d", label, (int)st);
                    break;
                }
                if (pass == 0) {
                    first = call_results(&c, e, &len1);
                } else {
                    second = call_results(&c, e, &len2);
                }
            }
            if (first && second && (len1 != len2 || memcmp(first, second, len1) != 0)) {
                FAIL("%s: two runs on the same inputs differ (an output element left unwritten, "
                     "or results not bitwise reproducible)",
                     label);
            }
            free(first);
            free(second);
            call_free(&c);
        }
    }
    g_current = "";
    printf("guard: %zu kernels, %ld runs with every buffer against a PROT_NONE page, no fault; "
           "%ld bad calls refused with nothing written\n",
           g_n_entries, runs, g_bad_calls);
    return g_failed == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* threads                                                                                    */
/* ---------------------------------------------------------------------------------------- */

#define NTHREADS 8
#define ROUNDS 3

static unsigned char **g_expected;
static size_t *g_expected_len;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static long g_thread_runs = 0;
static long g_mismatches = 0;

static void *thread_main(void *arg) {
    size_t t = (size_t)(uintptr_t)arg;
    size_t r, j;
    long runs = 0, bad = 0;
    for (r = 0; r < ROUNDS; ++r) {
        for (j = 0; j < g_n_entries; ++j) {
            /* each thread walks the kernels in its own order, on buffers of its own */
            size_t k = (j * (2 * t + 1) + t + r) % g_n_entries;
            const entry *e = &g_entries[k];
            unsigned char *got;
            size_t len;
            akg_status st;
            call c;
            if (!call_init(&c, e, PLACE_HEAP)) {
                call_free(&c);
                ++bad;
                continue;
            }
            call_fill(&c, 2000 + k, (unsigned char)(0x11 * (t + 1)));
            st = e->run(e->k, c.t, c.n_in, c.t + c.n_in, c.n_out);
            ++runs;
            got = call_results(&c, e, &len);
            if (st != AKG_STATUS_OK || len != g_expected_len[k] ||
                memcmp(got, g_expected[k], len) != 0) {
                ++bad;
                fprintf(stderr, "FAIL: %s: thread %zu round %zu: status %d, results differ from "
                                "the single-threaded call\n",
                        e->label, t, r, (int)st);
            }
            free(got);
            call_free(&c);
        }
    }
    pthread_mutex_lock(&g_lock);
    g_thread_runs += runs;
    g_mismatches += bad;
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* Bytes of all the tensors of one call of a kernel. */
static size_t entry_bytes(const entry *e) {
    size_t i, total = 0, n_in = e->num_inputs(e->k), n = n_in + e->num_outputs(e->k);
    for (i = 0; i < n; ++i) {
        akg_tensor_info info;
        size_t b;
        int d;
        if ((i < n_in ? e->input_info(e->k, i, &info) : e->output_info(e->k, i - n_in, &info)) !=
            AKG_STATUS_OK) {
            continue;
        }
        b = dtype_bytes(info.dtype);
        for (d = 0; d < info.rank; ++d) {
            b *= (size_t)info.shape[d];
        }
        total += b;
    }
    return total;
}

/* Kernels whose buffers exceed this many MiB are left out of the threads test (time and memory):
 * AKG_THREADS_MAX_MIB, default 16 (emulated runs take less). */
static size_t threads_max_bytes(void) {
    const char *e = getenv("AKG_THREADS_MAX_MIB");
    long mib = e ? strtol(e, NULL, 10) : 16;
    return (size_t)(mib > 0 ? mib : 16) << 20;
}

static int run_threads(void) {
    size_t k, kept = 0, dropped = 0;
    pthread_t th[NTHREADS];
    size_t t;
    for (k = 0; k < g_n_entries; ++k) {
        if (entry_bytes(&g_entries[k]) <= threads_max_bytes()) {
            g_entries[kept++] = g_entries[k];
        } else {
            ++dropped;
        }
    }
    g_n_entries = kept;
    printf("threads: %zu kernels with more than %zu MiB of buffers left out\n", dropped,
           threads_max_bytes() >> 20);
    g_expected = (unsigned char **)xcalloc(g_n_entries, sizeof(unsigned char *));
    g_expected_len = (size_t *)xcalloc(g_n_entries, sizeof(size_t));
    for (k = 0; k < g_n_entries; ++k) {
        const entry *e = &g_entries[k];
        call c;
        akg_status st;
        if (!call_init(&c, e, PLACE_HEAP)) {
            call_free(&c);
            continue;
        }
        call_fill(&c, 2000 + k, 0xA5);
        st = e->run(e->k, c.t, c.n_in, c.t + c.n_in, c.n_out);
        if (st != AKG_STATUS_OK) {
            FAIL("%s: status %d", e->label, (int)st);
        }
        g_expected[k] = call_results(&c, e, &g_expected_len[k]);
        call_free(&c);
    }
    for (t = 0; t < NTHREADS; ++t) {
        if (pthread_create(&th[t], NULL, thread_main, (void *)(uintptr_t)t) != 0) {
            FAIL("pthread_create");
            return 1;
        }
    }
    for (t = 0; t < NTHREADS; ++t) {
        pthread_join(th[t], NULL);
    }
    for (k = 0; k < g_n_entries; ++k) {
        free(g_expected[k]);
    }
    free(g_expected);
    free(g_expected_len);
    printf("threads: %zu kernels, %d threads x %d rounds = %ld concurrent calls, %ld differing "
           "from the single-threaded results\n",
           g_n_entries, NTHREADS, ROUNDS, g_thread_runs, g_mismatches);
    return g_failed == 0 && g_mismatches == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0) {
        g_page = (size_t)page;
    }
    if (argc < 2 || (strcmp(argv[1], "guard") != 0 && strcmp(argv[1], "threads") != 0)) {
        fprintf(stderr, "usage: %s guard|threads [--so LIB.so]...\n", argv[0]);
        return 2;
    }
    collect(argc, argv);
    if (g_failed) {
        return 1;
    }
    return strcmp(argv[1], "guard") == 0 ? run_guard() : run_threads();
}
