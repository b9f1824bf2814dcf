// One benchmark per catalog kernel: the fused kernel and the same pattern generated unfused
// (one loop nest per op), at 1 and 2 threads, reporting compulsory bytes per second (every
// input read once, every output and in-place input written once).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

#include "akg_kernel_def.h"

extern "C" {
extern const akg_kernel *const akg_unfused_kernels[];
extern const size_t akg_unfused_kernel_count;
}

namespace {

size_t bytes_of(const akg_tensor_def &t) {
    size_t n = t.dtype == AKG_DTYPE_FLOAT16 ? 2 : (t.dtype == AKG_DTYPE_BOOL || t.dtype == AKG_DTYPE_UINT8 || t.dtype == AKG_DTYPE_INT8) ? 1 : 4;
    for (int d = 0; d < t.rank; ++d) n *= static_cast<size_t>(t.shape[d]);
    return n;
}

struct Buffers {
    std::vector<std::vector<unsigned char>> storage;
    std::vector<void *> pointers;
    size_t compulsory_bytes = 0;
};

Buffers make_buffers(const akg_kernel *k) {
    Buffers b;
    auto add = [&](const akg_tensor_def &t, bool counted_twice) {
        size_t n = bytes_of(t);
        b.storage.emplace_back(std::max<size_t>(n, 1));
        // Small positive values keep every op finite (log, sqrt, division).
        auto &s = b.storage.back();
        if (t.dtype == AKG_DTYPE_FLOAT32)
            for (size_t i = 0; i < n / 4; ++i) reinterpret_cast<float *>(s.data())[i] = 0.5f + 0.001f * static_cast<float>(i % 97);
        else if (t.dtype == AKG_DTYPE_FLOAT16)
            for (size_t i = 0; i < n / 2; ++i) reinterpret_cast<_Float16 *>(s.data())[i] = static_cast<_Float16>(0.5f + 0.001f * static_cast<float>(i % 97));
        else std::memset(s.data(), 1, n);
        b.compulsory_bytes += counted_twice ? 2 * n : n;
    };
    for (size_t i = 0; i < k->num_inputs; ++i) add(k->inputs[i], k->inputs[i].inplace_input != 0);
    for (size_t i = 0; i < k->num_outputs; ++i) add(k->outputs[i], false);
    for (auto &s : b.storage) b.pointers.push_back(s.data());
    return b;
}

void run(benchmark::State &state, const akg_kernel *k) {
    omp_set_num_threads(static_cast<int>(state.range(0)));
    Buffers b = make_buffers(k);
    for (auto _ : state) {
        int status = k->fn(b.pointers.data());
        benchmark::DoNotOptimize(status);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(b.compulsory_bytes));
    state.counters["MB"] = static_cast<double>(b.compulsory_bytes) / 1e6;
}

const akg_kernel *find_unfused(const std::string &name) {
    for (size_t i = 0; i < akg_unfused_kernel_count; ++i)
        if (name == akg_unfused_kernels[i]->name) return akg_unfused_kernels[i];
    return nullptr;
}

int register_all() {
    for (size_t i = 0; i < akg_catalog_kernel_count; ++i) {
        const akg_kernel *k = akg_catalog_kernels[i];
        benchmark::RegisterBenchmark((std::string(k->name) + "/fused").c_str(), run, k)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
        if (const akg_kernel *u = find_unfused(k->name))
            benchmark::RegisterBenchmark((std::string(k->name) + "/unfused").c_str(), run, u)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
    }
    return 0;
}
const int registered = register_all();

} // namespace

BENCHMARK_MAIN();
