// Times one generated kernel on its own (tools/core-bound.sh and tools/corpus-survey.sh build one
// binary per kernel): buffers from the kernel's descriptor, float inputs pseudo-random in [-2, 2],
// integer and bool inputs filled with small values, three warm-up runs, then the minimum of 30.
// Prints: name, milliseconds, megabytes moved (every tensor once), effective GB/s. Threads:
// OMP_NUM_THREADS. With AKG_TIME_PACKED=1, a kernel whose weights can be packed ahead of time
// (akg_prepack_def) runs from its weights packed once, before the timing, as akg_run_packed runs it.
//
// A kernel file holds only its function akg_kernel_fn_<kernel>__<suffix>; its descriptor (the
// tensors' shapes and dtypes) is in a dispatch table. Build with the kernel file and a table of that
// one kernel and that one target, compiled with the target's define, all with the target's flags
// (generated/targets.txt):
//   akg-gen kernel PATTERN -o k.cpp --target x86-64-v4
//   akg-gen catalog PATTERN -o cat --no-typed-entry-points --targets x86-64-v4
//   g++ -O3 -fno-math-errno -fopenmp -march=x86-64-v4 -mtune=generic -mprefer-vector-width=512 \
//     -DAKG_HAS_VARIANT_X86_64_V4 -I kernellib/runtime -I kernellib/include \
//     k.cpp cat/akg_catalog.cpp tools/time_kernel.cpp -o time_k
// The binary times akg_catalog_kernels[0]'s first variant (the only one such a table lists).
#include "akg_kernel_def.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

size_t element_bytes(int dtype) {
    switch (dtype) {
    case AKG_DTYPE_FLOAT16: return 2;
    case AKG_DTYPE_FLOAT32:
    case AKG_DTYPE_INT32: return 4;
    default: return 1;
    }
}

size_t bytes_of(const akg_tensor_def &t) {
    size_t n = 1;
    for (int i = 0; i < t.rank; ++i) n *= static_cast<size_t>(t.shape[i]);
    return n * element_bytes(t.dtype);
}

void fill(void *p, const akg_tensor_def &t) {
    const size_t b = bytes_of(t);
    uint32_t s = 12345;
    auto next = [&]() { return ((s = s * 1103515245u + 12345u) >> 8) & 0xffffu; };
    if (t.dtype == AKG_DTYPE_FLOAT32) {
        float *f = static_cast<float *>(p);
        for (size_t i = 0; i < b / 4; ++i) f[i] = static_cast<float>(next()) / 65536.0f * 4.0f - 2.0f;
    } else if (t.dtype == AKG_DTYPE_FLOAT16) {
        _Float16 *f = static_cast<_Float16 *>(p);
        for (size_t i = 0; i < b / 2; ++i) f[i] = static_cast<_Float16>(static_cast<float>(next()) / 65536.0f * 4.0f - 2.0f);
    } else if (t.dtype == AKG_DTYPE_INT32) {
        int32_t *v = static_cast<int32_t *>(p);
        for (size_t i = 0; i < b / 4; ++i) v[i] = static_cast<int32_t>(next() % 8);
    } else {
        unsigned char *v = static_cast<unsigned char *>(p);
        for (size_t i = 0; i < b; ++i) v[i] = static_cast<unsigned char>(next() & 1);
    }
}

// Whether this CPU has the features a variant needs (it would die of SIGILL otherwise).
bool cpu_runs(uint32_t features) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if ((features & AKG_CPU_X86_64_V2) && !__builtin_cpu_supports("x86-64-v2")) return false;
    if ((features & AKG_CPU_X86_64_V3) && !__builtin_cpu_supports("x86-64-v3")) return false;
    if ((features & AKG_CPU_X86_64_V4) && !__builtin_cpu_supports("x86-64-v4")) return false;
    return true;
#else
    return features == 0;
#endif
}

} // namespace

int main() {
    if (akg_catalog_kernel_count < 1) {
        std::fprintf(stderr, "time_kernel: the table has no kernel\n");
        return 1;
    }
    const akg_kernel &k = *akg_catalog_kernels[0];
    const akg_variant_def *v = k.variants;
    if (!v || !v->fn) {
        std::fprintf(stderr, "%s: the table lists no variant (compile it with the target's -DAKG_HAS_VARIANT_<SUFFIX>)\n", k.name);
        return 1;
    }
    if (!cpu_runs(v->cpu_features)) {
        std::fprintf(stderr, "%s: this CPU cannot run the %s variant\n", k.name, v->target);
        return 1;
    }
    const char *packed_env = std::getenv("AKG_TIME_PACKED");
    const bool packed = packed_env && std::strcmp(packed_env, "1") == 0;
    if (packed && (!v->prepack || v->prepack->input < 0)) {
        std::fprintf(stderr, "%s: no input of the %s variant can be packed ahead of time\n", k.name, v->target);
        return 1;
    }
    const akg_kernel_fn fn = packed ? v->prepack->fn_packed : v->fn;
    std::vector<void *> buffers;
    size_t moved = 0;
    auto allocate = [&](const akg_tensor_def &t, bool input) {
        const size_t b = bytes_of(t);
        void *p = std::aligned_alloc(64, (b + 63) / 64 * 64 + 64);
        if (!p) {
            std::fprintf(stderr, "%s: out of memory\n", k.name);
            std::exit(1);
        }
        if (input) fill(p, t);
        else std::memset(p, 0, b);
        buffers.push_back(p);
        moved += b;
    };
    for (size_t i = 0; i < k.num_inputs; ++i) allocate(k.inputs[i], true);
    for (size_t i = 0; i < k.num_outputs; ++i) allocate(k.outputs[i], false);
    if (packed) {
        const akg_prepack_def &pp = *v->prepack;
        void *to = std::aligned_alloc(64, (pp.packed_bytes + 63) / 64 * 64);
        if (!to) {
            std::fprintf(stderr, "%s: out of memory\n", k.name);
            return 1;
        }
        pp.pack(buffers[pp.input], to);
        buffers[pp.input] = to;
    }
    for (int w = 0; w < 3; ++w)
        if (fn(buffers.data()) != AKG_STATUS_OK) {
            std::fprintf(stderr, "%s: the kernel failed\n", k.name);
            return 1;
        }
    double best = 1e30;
    for (int r = 0; r < 30; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        fn(buffers.data());
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::printf("%s %.4f %.3f %.2f\n", k.name, best, moved / 1e6, moved / (best * 1e6));
    return 0;
}
