// Times one generated kernel on its own (tools/corpus-survey.sh builds one binary per kernel,
// with -DAKG_KERNEL=<its descriptor symbol>): buffers from the descriptor, float inputs
// pseudo-random in [-2, 2], integer and bool inputs filled with small values, three warm-up runs,
// then the minimum of 30. Prints: name, milliseconds, megabytes moved (every tensor once),
// effective GB/s. Threads: OMP_NUM_THREADS.
#include "akg_kernel_def.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" const akg_kernel AKG_KERNEL;

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

} // namespace

int main() {
    const akg_kernel &k = AKG_KERNEL;
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
    for (int w = 0; w < 3; ++w)
        if (k.fn(buffers.data()) != AKG_STATUS_OK) {
            std::fprintf(stderr, "%s: the kernel failed\n", k.name);
            return 1;
        }
    double best = 1e30;
    for (int r = 0; r < 30; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        k.fn(buffers.data());
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::printf("%s %.4f %.3f %.2f\n", k.name, best, moved / 1e6, moved / (best * 1e6));
    return 0;
}
