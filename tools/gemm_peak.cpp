// Microbenchmark of kernellib/runtime/akg_gemm.h on one core (not built by meson):
//  1. the FMA peak of this core for the compiled vector width (independent-accumulator FMA loop);
//  1b. a broadcast tile's ceiling on this core, B's vectors in registers and loaded from L1;
//  2. akg_gemm_micro alone on panels that stay in L1 (kc = 256 by default, the same panels over
//     and over, C accumulated in place);
//  3. a plain BLIS driver (pack B kc x nc, pack A mc x kc, jr/ir loops around akg_gemm_micro) on
//     M x N x K = 2048 x 3072 x 768 and 2048 x 768 x 3072, packed A and, for comparison, A read in
//     place by akg_gemm_micro_rowmajor_a.
// GFLOP/s are the best of several runs; % is of the measured peak of (1).
//   g++ -std=c++17 -O3 -fno-math-errno -fopenmp -march=x86-64-v4 -mtune=generic -mprefer-vector-width=512 -I kernellib/runtime tools/gemm_peak.cpp -o gemm_peak
//   taskset -c 0 ./gemm_peak [mc kc nc [micro_kc]]
// (-march=x86-64-v3 for the AVX2 build; it then measures the 256-bit FMA peak.)
#include "akg_gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using akg_gemm_detail::V;
constexpr int MR = AKG_GEMM_MR, NR = AKG_GEMM_NR;

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class F> static double best_seconds(int runs, F &&f) {
    double best = 1e30;
    for (int i = 0; i < runs; ++i) {
        double t = now();
        f();
        best = std::min(best, now() - t);
    }
    return best;
}

static float *falloc(size_t n) { return static_cast<float *>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64)); }

// 1. Peak: 12 independent accumulator chains (more than FMA latency x FMA ports on current cores;
// with the two operands 14 registers, which AVX2's 16 hold).
__attribute__((noinline)) static float fma_loop(int64_t iters, float x, float y) {
    V::T acc[12];
    for (auto &a : acc) a = V::bcast(&y);
    V::T vx = V::bcast(&x), vy = V::bcast(&y);
    for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
        for (int j = 0; j < 12; ++j) acc[j] = V::fma(acc[j], vx, vy);
    }
    float out[12 * V::L] = {};
    for (int j = 0; j < 12; ++j) V::store(out + j * V::L, acc[j]);
    float s = 0;
    for (float v : out) s += v;
    return s;
}

static double peak_gflops() {
    const int64_t iters = 20'000'000;
    volatile float sink = 0;
    double t = best_seconds(5, [&] { sink = sink + fma_loop(iters, 0.999999f, 1e-3f); });
    return 2.0 * 12 * V::L * iters / t * 1e-9;
}

// 1b. What a broadcast tile can reach on this core, whatever the micro-kernel's code: MR2 x NV2
// accumulators fed by broadcasts of A from L1, with B's NV2 vectors (a) kept in registers, (b)
// loaded from L1 at every step as a micro-kernel loads them. The pointers move and wrap so that
// no load is loop-invariant.
constexpr int TILE_STEPS = 4; // the tile loop's unroll in k
template <int MR2, int NV2, bool LOADB> __attribute__((noinline)) static float tile_loop(int64_t iters, const float *a0, const float *b0) {
    using akg_gemm_detail::unroll;
    constexpr int L = V::L, KK = TILE_STEPS;
    V::T c[MR2][NV2], bv[NV2];
    unroll<MR2>([&](auto r) AKG_GEMM_LAMBDA_INLINE { unroll<NV2>([&](auto v) AKG_GEMM_LAMBDA_INLINE { c[r][v] = V::zero(); }); });
    unroll<NV2>([&](auto v) AKG_GEMM_LAMBDA_INLINE { bv[v] = V::load(b0 + v * L); });
    const float *a = a0, *b = b0;
    for (int64_t i = 0; i < iters; ++i) {
        unroll<KK>([&](auto kk) AKG_GEMM_LAMBDA_INLINE {
            if constexpr (LOADB) unroll<NV2>([&](auto v) AKG_GEMM_LAMBDA_INLINE { bv[v] = V::load(b + (kk * NV2 + v) * L); });
            unroll<MR2>([&](auto r) AKG_GEMM_LAMBDA_INLINE {
                V::T ar = V::bcast(a + kk * MR2 + r);
                unroll<NV2>([&](auto v) AKG_GEMM_LAMBDA_INLINE { c[r][v] = V::fma(ar, bv[v], c[r][v]); });
            });
        });
        a += KK * MR2, b += KK * NV2 * L;
        if ((i & 3) == 3) a = a0, b = b0;
    }
    float out[MR2 * NV2 * L];
    unroll<MR2>([&](auto r) AKG_GEMM_LAMBDA_INLINE { unroll<NV2>([&](auto v) AKG_GEMM_LAMBDA_INLINE { V::store(out + (r * NV2 + v) * L, c[r][v]); }); });
    float sum = 0;
    for (float x : out) sum += x;
    return sum;
}

template <int MR2, int NV2> static void tile_ceiling(double peak) {
    const int64_t iters = 40'000'000 / (MR2 * NV2);
    float *a = falloc(4 * TILE_STEPS * MR2), *b = falloc(4 * TILE_STEPS * NV2 * V::L);
    for (int i = 0; i < 4 * TILE_STEPS * MR2; ++i) a[i] = 1e-3f * (i % 7);
    for (int i = 0; i < 4 * TILE_STEPS * NV2 * V::L; ++i) b[i] = 1e-3f * (i % 5);
    volatile float sink = 0;
    for (int loadb = 0; loadb < 2; ++loadb) {
        double t = best_seconds(5, [&] { sink = sink + (loadb ? tile_loop<MR2, NV2, true>(iters, a, b) : tile_loop<MR2, NV2, false>(iters, a, b)); });
        double gf = 2.0 * MR2 * NV2 * V::L * TILE_STEPS * iters / t * 1e-9;
        std::printf("broadcast tile %d x %d, B %s: %.1f GFLOP/s %.1f%% of peak\n", MR2, NV2 * V::L, loadb ? "loaded from L1 " : "in registers   ", gf,
                    100 * gf / peak);
    }
    std::free(a), std::free(b);
}

// 2. The micro-kernel on L1-resident panels.
__attribute__((noinline)) static void micro_repeat(int64_t reps, int64_t kc, const float *ap, const float *bp, float *c) {
    for (int64_t i = 0; i < reps; ++i) akg_gemm_micro(kc, ap, bp, c, NR, c, NR);
}

// 3. BLIS driver, row-major C = A B (A: M x K, B: K x N).
struct Blocking {
    int64_t mc, kc, nc;
};

static void pack_b(const float *b, int64_t ldb, int64_t kc, int64_t nc, float *bp) {
    for (int64_t j = 0; j < nc; j += NR) {
        int64_t nr = std::min<int64_t>(NR, nc - j);
        for (int64_t k = 0; k < kc; ++k, bp += NR) {
            std::memcpy(bp, b + k * ldb + j, nr * sizeof(float));
            if (nr < NR) std::memset(bp + nr, 0, (NR - nr) * sizeof(float));
        }
    }
}

static void pack_a(const float *a, int64_t lda, int64_t mc, int64_t kc, float *ap) {
    for (int64_t i = 0; i < mc; i += MR) {
        int64_t mr = std::min<int64_t>(MR, mc - i);
        for (int64_t k = 0; k < kc; ++k, ap += MR) {
            for (int64_t r = 0; r < mr; ++r) ap[r] = a[(i + r) * lda + k];
            for (int64_t r = mr; r < MR; ++r) ap[r] = 0.0f;
        }
    }
}

static void gemm(int64_t M, int64_t N, int64_t K, const float *a, const float *b, float *c, Blocking bl, bool packed_a,
                 float *ap, float *bp) {
    alignas(64) float tile[MR * NR];
    for (int64_t jc = 0; jc < N; jc += bl.nc) {
        int64_t nc = std::min(bl.nc, N - jc);
        for (int64_t pc = 0; pc < K; pc += bl.kc) {
            int64_t kc = std::min(bl.kc, K - pc);
            pack_b(b + pc * N + jc, N, kc, nc, bp);
            for (int64_t ic = 0; ic < M; ic += bl.mc) {
                int64_t mc = std::min(bl.mc, M - ic);
                if (packed_a) pack_a(a + ic * K + pc, K, mc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    int64_t nr = std::min<int64_t>(NR, nc - jr);
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        int64_t mr = std::min<int64_t>(MR, mc - ir);
                        float *ct = c + (ic + ir) * N + jc + jr;
                        const float *cin = pc == 0 ? nullptr : ct;
                        const float *bpan = bp + jr * kc;
                        if (mr == MR && nr == NR) {
                            if (packed_a)
                                akg_gemm_micro(kc, ap + ir * kc, bpan, cin, N, ct, N);
                            else
                                akg_gemm_micro_rowmajor_a(kc, a + (ic + ir) * K + pc, K, bpan, cin, N, ct, N);
                        } else { // edge tile: through a full tile, A packed (rows past M are zeros)
                            if (!packed_a) pack_a(a + (ic + ir) * K + pc, K, mr, kc, ap);
                            for (int64_t r = 0; r < mr; ++r)
                                for (int64_t j = 0; j < nr; ++j) tile[r * NR + j] = cin ? ct[r * N + j] : 0.0f;
                            akg_gemm_micro(kc, packed_a ? ap + ir * kc : ap, bpan, tile, NR, tile, NR);
                            for (int64_t r = 0; r < mr; ++r)
                                for (int64_t j = 0; j < nr; ++j) ct[r * N + j] = tile[r * NR + j];
                        }
                    }
                }
            }
        }
    }
}

static void run_gemm(int64_t M, int64_t N, int64_t K, Blocking bl, double peak) {
    float *a = falloc(M * K), *b = falloc(K * N), *c = falloc(M * N);
    float *ap = falloc((bl.mc + MR) * bl.kc), *bp = falloc(bl.kc * (bl.nc + NR));
    uint32_t s = 12345;
    auto rnd = [&] { s = s * 1664525u + 1013904223u; return (int)(s >> 9) / float(1 << 23) - 0.5f; };
    for (int64_t i = 0; i < M * K; ++i) a[i] = rnd();
    for (int64_t i = 0; i < K * N; ++i) b[i] = rnd();
    double ta = best_seconds(5, [&] {
        for (int64_t pc = 0; pc < K; pc += bl.kc)
            for (int64_t ic = 0; ic < M; ic += bl.mc)
                pack_a(a + ic * K + pc, K, std::min(bl.mc, M - ic), std::min(bl.kc, K - pc), ap);
    });
    double tb = best_seconds(5, [&] {
        for (int64_t jc = 0; jc < N; jc += bl.nc)
            for (int64_t pc = 0; pc < K; pc += bl.kc) pack_b(b + pc * N + jc, N, std::min(bl.kc, K - pc), std::min(bl.nc, N - jc), bp);
    });
    std::printf("packing all of A: %.2f ms, all of B: %.2f ms\n", ta * 1e3, tb * 1e3);
    for (int packed = 1; packed >= 0; --packed) {
        double t = best_seconds(5, [&] { gemm(M, N, K, a, b, c, bl, packed, ap, bp); });
        double maxerr = 0; // spot check against a double-precision dot product
        for (int64_t i = 0; i < M; i += 97)
            for (int64_t j = 0; j < N; j += 89) {
                double ref = 0;
                for (int64_t k = 0; k < K; ++k) ref += (double)a[i * K + k] * b[k * N + j];
                maxerr = std::max(maxerr, std::fabs(ref - c[i * N + j]));
            }
        double gf = 2.0 * M * N * K / t * 1e-9;
        std::printf("gemm %4lldx%4lldx%4lld mc=%lld kc=%lld nc=%lld %s: %7.2f ms %7.1f GFLOP/s %5.1f%% of peak  (max err %.1e)\n",
                    (long long)M, (long long)N, (long long)K, (long long)bl.mc, (long long)bl.kc, (long long)bl.nc,
                    packed ? "packed A  " : "row-major A", t * 1e3, gf, 100 * gf / peak, maxerr);
    }
    std::free(a), std::free(b), std::free(c), std::free(ap), std::free(bp);
}

int main(int argc, char **argv) {
    Blocking bl{MR * 24, 384, 3072};
    int64_t micro_kc = 256;
    if (argc >= 4) bl = {std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3])};
    if (argc >= 5) micro_kc = std::atoll(argv[4]);
    std::printf("tile %d x %d, %d-float vectors\n", MR, NR, V::L);
    double peak = peak_gflops();
    std::printf("FMA peak: %.1f GFLOP/s\n", peak);
    // A tile with few broadcasts per multiply-add (1b): 6 x 4 vectors where 32 registers allow.
    if constexpr (V::L == 16) tile_ceiling<6, 4>(peak);
    else tile_ceiling<MR, NR / V::L>(peak);

    float *ap = falloc(MR * micro_kc), *bp = falloc(NR * micro_kc), *c = falloc(MR * NR);
    for (int64_t i = 0; i < MR * micro_kc; ++i) ap[i] = 1e-3f * (i % 7);
    for (int64_t i = 0; i < NR * micro_kc; ++i) bp[i] = 1e-3f * (i % 5);
    std::memset(c, 0, MR * NR * sizeof(float));
    int64_t reps = std::max<int64_t>(1, 2'000'000'000 / (2 * MR * NR * micro_kc));
    double t = best_seconds(5, [&] { micro_repeat(reps, micro_kc, ap, bp, c); });
    double gf = 2.0 * MR * NR * micro_kc * reps / t * 1e-9;
    std::printf("micro kc=%lld in L1: %.1f GFLOP/s %.1f%% of peak\n", (long long)micro_kc, gf, 100 * gf / peak);
    std::free(ap), std::free(bp), std::free(c);

    run_gemm(2048, 3072, 768, bl, peak);
    run_gemm(2048, 768, 3072, bl, peak);
}
