// Shared pieces of the side-by-side benchmark suite (bench_catalog): one set of buffers per
// catalog kernel (allocated once, shared by every implementation of that kernel), compulsory
// byte counts, and the registration hooks of the optional peers.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "akg_kernel_def.h"

namespace akgbench {

size_t tensor_bytes(const akg_tensor_def &t);
int64_t tensor_elements(const akg_tensor_def &t);

struct KernelBuffers {
    std::vector<void *> pointers;  // inputs then outputs (the C ABI order), 64-byte aligned
    size_t read_bytes = 0;         // every input once
    size_t write_bytes = 0;        // every output once, every in-place input once more
    size_t inplace_bytes = 0;      // the in-place inputs (counted in both of the above)
    size_t compulsory_bytes() const { return read_bytes + write_bytes; }
};

// The buffers of a catalog kernel, created on first use and kept for the whole run (so the
// interleaved repetitions of every implementation see the same memory).
KernelBuffers &buffers_for(const akg_kernel *k);

// Sets the counters every benchmark of the suite reports (the report generator reads them).
void set_counters(benchmark::State &state, const akg_kernel *k, int threads);

// Registers "<kernel>/<impl>/1" and ".../2" (the thread count is state.range(0)), timed in real
// time, in ms. Besides Google Benchmark's mean, median, stddev and cv over the repetitions, each
// reports their minimum ("min"), which the report uses: on a shared VM interference only ever
// adds time, and with 5 repetitions one kernel's median moved by up to 30% from run to run
// (identical fused and unfused code 1.61 vs 2.08 ms in one suite, 1.70 vs 1.69 alone).
void register_timed(const std::string &kernel, const std::string &impl, std::function<void(benchmark::State &)> run);

// Registers a benchmark "<kernel>/<impl>/<threads>" that is skipped with `reason`.
void register_skip(const std::string &kernel, const std::string &impl, const std::string &reason);

// Optional peers; each returns the number of benchmarks it registered and prints what it skipped.
int register_onednn(const akg_kernel *const *kernels, size_t count);
int register_halide(const akg_kernel *const *kernels, size_t count, const std::string &source_root);
// GEMM peers (oneDNN matmul, OpenBLAS) of the catalog's MatMul kernels and the FMA peak probes
// (bench_gemm.cpp); they run from their own shape table, with or without the catalog kernels.
int register_gemm(const akg_kernel *const *kernels, size_t count);

} // namespace akgbench
