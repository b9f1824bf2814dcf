// akg_gemm.h: the register-blocked float32 GEMM micro-kernel that generated matrix products call.
// The generator does the rest of the BLIS structure (blocking by mc, kc, nc; packing A into
// micro-panels of AKG_GEMM_MR rows and B into micro-panels of AKG_GEMM_NR columns; the jr/ir
// loops and the edge tiles); this file computes one full MR x NR tile of C. Internal, not
// installed. Header-only, C++17; every function has internal linkage, so each ISA variant of a
// kernel keeps its own copy.
//
// One kernel body serves every ISA, over a per-ISA vector shim (V below). The tile is as large as
// the vector registers allow: MR x NR/L accumulators, the NR/L vectors of one row of B and one
// broadcast of A, so that each loaded B vector feeds MR multiply-adds.
//
// Rounding: each element of C is one chain of multiply-adds over the kc values of k in order,
// from 0 (fused where the ISA has FMA: x86-64-v3, x86-64-v4, aarch64; a product then a sum on
// x86-64-v2), then cin is added once: cin is read after the k loop, so its cache misses overlap
// the loop. NaN and infinities propagate as in that chain. The result depends on kc (the blocking
// of K), not on MR, NR or the ISA's vector width.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "akg_kernel_support.h"
#include <utility>

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define AKG_GEMM_INLINE static inline __attribute__((always_inline))
#define AKG_GEMM_LAMBDA_INLINE __attribute__((always_inline))
#else
#define AKG_GEMM_INLINE static inline
#define AKG_GEMM_LAMBDA_INLINE
#endif

// A run of floats the micro-kernel prefetches into L2 while it computes, one cache line every
// step of its unrolled k loop (none by default): its share of the next column's micro-panel of B.
// Sixteen bytes, passed in registers: a call that stores its arguments waits where the store
// buffer is full of the previous tile's output stores.
struct akg_gemm_ahead {
    const float *from = nullptr, *to = nullptr;
};

// One address in each line the caller's epilogue will read or store (a residual, an output),
// which the micro-kernel requests over the last steps of its k loop.
struct akg_gemm_lines {
    const void *const *begin = nullptr, *const *end = nullptr;
};

namespace akg_gemm_detail {

// The vector shim: T holds L floats; load/store are unaligned; bcast reads one float into every
// lane; fma(a, b, c) = a * b + c. G > 1 (NEON) means A is read G rows at a time into one register
// and lane J of it multiplies (fmla by element), which saves MR - MR/G registers. KU: the k loop's
// unroll. PF: how many bytes ahead the k loop prefetches packed B; PFROWS: how many rows ahead
// it prefetches B read in place (0: not at all); PFA: whether it prefetches the next tile's rows
// of an A read in place.
#if defined(__AVX512F__)
// 28 accumulators + 2 of B + 1 broadcast of A = 31 of the 32 zmm registers. KU = 3: a body of
// three steps with its prefetches keeps the two FMA pipes busier than four steps do (AMD Zen 5).
#define AKG_GEMM_MR 14
#define AKG_GEMM_NR 32
struct V {
    using T = __m512;
    static constexpr int L = 16, G = 1, KU = 3, PF = 1024, PFROWS = 16;
    static constexpr bool PFA = true;
    AKG_GEMM_INLINE T zero() { return _mm512_setzero_ps(); }
    AKG_GEMM_INLINE T load(const float *p) { return _mm512_loadu_ps(p); }
    AKG_GEMM_INLINE void store(float *p, T x) { _mm512_storeu_ps(p, x); }
    AKG_GEMM_INLINE void stream(float *p, T x) { _mm512_stream_ps(p, x); }
    AKG_GEMM_INLINE T bcast(const float *p) { return _mm512_set1_ps(*p); }
    AKG_GEMM_INLINE T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
    AKG_GEMM_INLINE T add(T a, T b) { return _mm512_add_ps(a, b); }
    AKG_GEMM_INLINE void fence() {}
};
#elif defined(__AVX2__) && defined(__FMA__)
// 12 accumulators + 2 of B + 1 broadcast = 15 of the 16 ymm registers.
#define AKG_GEMM_MR 6
#define AKG_GEMM_NR 16
struct V {
    using T = __m256;
    static constexpr int L = 8, G = 1, KU = 4, PF = 1024, PFROWS = 16;
    static constexpr bool PFA = true;
    AKG_GEMM_INLINE T zero() { return _mm256_setzero_ps(); }
    AKG_GEMM_INLINE T load(const float *p) { return _mm256_loadu_ps(p); }
    AKG_GEMM_INLINE void store(float *p, T x) { _mm256_storeu_ps(p, x); }
    AKG_GEMM_INLINE void stream(float *p, T x) { _mm256_stream_ps(p, x); }
    AKG_GEMM_INLINE T bcast(const float *p) { return _mm256_broadcast_ss(p); }
    AKG_GEMM_INLINE T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
    AKG_GEMM_INLINE T add(T a, T b) { return _mm256_add_ps(a, b); }
    AKG_GEMM_INLINE void fence() {}
};
#elif defined(__SSE2__)
// No FMA: 12 accumulators + 2 of B + 1 broadcast + 1 product = the 16 xmm registers. Not unrolled
// in k (KU = 1): unrolled, GCC hoists the later steps' broadcasts and spills accumulators.
#define AKG_GEMM_MR 6
#define AKG_GEMM_NR 8
struct V {
    using T = __m128;
    static constexpr int L = 4, G = 1, KU = 1, PF = 0, PFROWS = 16;
    static constexpr bool PFA = true;
    AKG_GEMM_INLINE T zero() { return _mm_setzero_ps(); }
    AKG_GEMM_INLINE T load(const float *p) { return _mm_loadu_ps(p); }
    AKG_GEMM_INLINE void store(float *p, T x) { _mm_storeu_ps(p, x); }
    AKG_GEMM_INLINE void stream(float *p, T x) { _mm_stream_ps(p, x); }
    AKG_GEMM_INLINE T bcast(const float *p) { return _mm_set1_ps(*p); }
    AKG_GEMM_INLINE T fma(T a, T b, T c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
    AKG_GEMM_INLINE T add(T a, T b) { return _mm_add_ps(a, b); }
    AKG_GEMM_INLINE void fence() {}
};
#elif defined(__aarch64__) && defined(__ARM_NEON)
// 24 accumulators + 3 of B + 2 of A (8 rows, used by lane) = 29 of the 32 NEON registers; 8 x 12
// needs 5 loads per 24 fmla where 6 x 16 needs 6 (its 6 rows of A do not fill whole registers).
#define AKG_GEMM_MR 8
#define AKG_GEMM_NR 12
struct V {
    using T = float32x4_t;
    static constexpr int L = 4, G = 4, KU = 4, PF = 0, PFROWS = 0;
    static constexpr bool PFA = false;
    AKG_GEMM_INLINE T zero() { return vdupq_n_f32(0.0f); }
    AKG_GEMM_INLINE T load(const float *p) { return vld1q_f32(p); }
    AKG_GEMM_INLINE void store(float *p, T x) { vst1q_f32(p, x); }
    AKG_GEMM_INLINE void stream(float *p, T x) { vst1q_f32(p, x); } // the generator streams no NEON tile
    AKG_GEMM_INLINE T bcast(const float *p) { return vld1q_dup_f32(p); }
    AKG_GEMM_INLINE T fma(T a, T b, T c) { return vfmaq_f32(c, a, b); }
    AKG_GEMM_INLINE T add(T a, T b) { return vaddq_f32(a, b); }
    template <int J> AKG_GEMM_INLINE T fma_lane(T a, T b, T c) { return vfmaq_laneq_f32(c, a, b, J); } // a * b[J] + c
    // GCC schedules the next steps' loads of A and B before this step's fmla, which runs out of
    // registers and spills accumulators; the out-of-order core does that reordering anyway.
    AKG_GEMM_INLINE void fence() { __asm__ volatile("" ::: "memory"); }
};
#else
// Portable fallback (no vector ISA known here): scalars, 16 accumulators.
#define AKG_GEMM_MR 4
#define AKG_GEMM_NR 4
struct V {
    using T = float;
    static constexpr int L = 1, G = 1, KU = 1, PF = 0, PFROWS = 0;
    static constexpr bool PFA = false;
    AKG_GEMM_INLINE T zero() { return 0.0f; }
    AKG_GEMM_INLINE T load(const float *p) { return *p; }
    AKG_GEMM_INLINE void store(float *p, T x) { *p = x; }
    AKG_GEMM_INLINE void stream(float *p, T x) { *p = x; }
    AKG_GEMM_INLINE T bcast(const float *p) { return *p; }
    AKG_GEMM_INLINE T fma(T a, T b, T c) { return a * b + c; }
    AKG_GEMM_INLINE T add(T a, T b) { return a + b; }
    AKG_GEMM_INLINE void fence() {}
};
#endif

// Calls f(std::integral_constant<int, i>) for i = 0 .. N-1: a full unroll whatever the compiler's
// heuristics, with constant indices, so the accumulator array lives in registers.
template <class F, int... I> AKG_GEMM_INLINE void unroll_seq(F &&f, std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>()), ...);
}
template <int N, class F> AKG_GEMM_INLINE void unroll(F &&f) { unroll_seq(f, std::make_integer_sequence<int, N>()); }

// Prefetches the N floats at p (every cache line of them, whatever p's alignment); W: for writing.
template <int N, int W> AKG_GEMM_INLINE void prefetch_row(const float *p) {
    unroll<(N + 15) / 16>([&](auto i) AKG_GEMM_LAMBDA_INLINE { __builtin_prefetch(p + i * 16, W, 3); });
    __builtin_prefetch(p + N - 1, W, 3);
}

// One MR x (NV * L) tile. PACKED: A element (r, k) at a[k * AS + r] (AS: the rows of the packed
// micro-panel, MR or more for an edge tile); otherwise at a[r * lda + k]. BPACKED: B element
// (k, c) at b[k * NV * L + c]; otherwise at b[k * ldb + c] (B read in place, row-major).
// BSTREAMED: B is read in place from memory, not from the caches (prefetched PFROWS rows ahead).
// CSTREAM: cout is stored with non-temporal stores when its rows are whole cache lines (cout and
// its row stride aligned to 64 bytes), and then not prefetched.
template <class W, int MR, int NV, bool PACKED, int AS = MR, bool BPACKED = true, bool BSTREAMED = false, bool CSTREAM = false>
AKG_GEMM_INLINE void micro(int64_t kc, const float *__restrict a, int64_t lda, const float *__restrict b, int64_t ldb,
                           const float *cin, int64_t ldcin, float *cout, int64_t ldcout, akg_gemm_ahead ahead = {},
                           akg_gemm_lines lines = {}) {
    using T = typename W::T;
    constexpr int L = W::L, NR = NV * L;
    constexpr int64_t ASTEP = PACKED ? AS : 1; // A's step in k
    const int64_t bstep = BPACKED ? NR : ldb;  // B's step in k
    T c[MR][NV];
    unroll<MR>([&](auto r) AKG_GEMM_LAMBDA_INLINE {
        unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE { c[r][v] = W::zero(); });
    });
    // C's lines are fetched during the k loop; loading them first would stall its start on them.
    // A loop, not unrolled: unrolled, GCC keeps the row addresses for the stores after the k loop,
    // in vector registers that the loop then lacks.
    const bool stream_c = CSTREAM && ((reinterpret_cast<uintptr_t>(cout) | static_cast<uintptr_t>(ldcout) * 4) & 63) == 0 && NR * 4 % 64 == 0;
#pragma GCC unroll 1
    for (int r = 0; r < MR; ++r) {
        if (!stream_c) prefetch_row<NR, 1>(cout + r * ldcout);
        if (cin && cin != cout) prefetch_row<NR, 0>(cin + r * ldcin);
    }

    // The multiply-adds of k + kk, a and b pointing at k.
    auto step = [&](auto kk) AKG_GEMM_LAMBDA_INLINE {
        T bv[NV];
        unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE { bv[v] = W::load(b + kk * bstep + v * L); });
        if constexpr (PACKED && W::G > 1 && MR % W::G == 0) {
            unroll<MR / W::G>([&](auto g) AKG_GEMM_LAMBDA_INLINE {
                T ag = W::load(a + kk * AS + g * W::G);
                unroll<W::G>([&](auto j) AKG_GEMM_LAMBDA_INLINE {
                    constexpr int r = decltype(g)::value * W::G + decltype(j)::value;
                    unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE {
                        c[r][v] = W::template fma_lane<decltype(j)::value>(bv[v], ag, c[r][v]);
                    });
                });
            });
        } else {
            // Row-major A: an opaque pointer to column k + kk, so that GCC addresses the MR rows from it
            // (lea chains) instead of keeping one offset per row and step in registers and on the stack.
            const float *ak = a + kk;
            if constexpr (!PACKED) __asm__("" : "+r"(ak));
            unroll<MR>([&](auto r) AKG_GEMM_LAMBDA_INLINE {
                T ar = W::bcast(PACKED ? a + kk * AS + r : ak + r * lda);
                unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE { c[r][v] = W::fma(ar, bv[v], c[r][v]); });
            });
        }
    };
    // Unrolled by W::KU in k: fewer pointer updates and loop branches per multiply-add.
    constexpr int KU = W::KU;
    int64_t k = 0;
    // A read in place: the tile below this one (the next the schedule runs, or the next batch
    // element's first) would wait on memory. One line of it a step, in address order from its
    // first row at column k: all of it where its rows are short (attention's BatchMatMuls).
    [[maybe_unused]] const float *anext = a + MR * lda;
    // The epilogue's lines (n), one a step over the loop's last 2n steps: requested together,
    // they fill the core's miss buffers and its loads wait. A loop of fewer steps is too short
    // for them to arrive in time that way, and requests them all first; so does a tile of A in
    // place, whose loop has no registers to spare for them. Read intent even for an output: a
    // line no other core holds comes exclusive, and its stores do not wait either.
    const void *const *line = lines.begin;
    int64_t line_k = 0;
    if (line < lines.end) {
        const int64_t nlines = lines.end - line, steps = kc / KU;
        if (!PACKED || steps < 2 * nlines)
            for (; line < lines.end; ++line) __builtin_prefetch(*line, 0, 3);
        else
            line_k = (steps - 2 * nlines) * KU;
    }
    for (; k + KU <= kc; k += KU, a += KU * ASTEP, b += KU * bstep) {
        if constexpr (!PACKED && W::PFA)
            unroll<KU>([&](auto kk) AKG_GEMM_LAMBDA_INLINE { __builtin_prefetch(anext + (k + kk) * 16, 0, 3); });
        // A kc x NR micro-panel of packed B is larger than L1 at the kc the blocking picks and
        // streams from L2; the L2-to-L1 prefetchers alone leave the loads waiting now and then.
        if constexpr (BPACKED && W::PF > 0)
            unroll<(KU * NR + 15) / 16>([&](auto i) AKG_GEMM_LAMBDA_INLINE { __builtin_prefetch(b + W::PF / 4 + i * 16, 0, 3); });
        // B read in place from memory comes a row of NR floats every ldb: a stride the
        // prefetchers do not follow. Each row's lines, the last one included.
        if constexpr (!BPACKED && BSTREAMED && W::PFROWS > 0)
            unroll<KU>([&](auto kk) AKG_GEMM_LAMBDA_INLINE {
                const float *row = b + (W::PFROWS + kk) * ldb;
                unroll<(NR + 15) / 16>([&](auto i) AKG_GEMM_LAMBDA_INLINE { __builtin_prefetch(row + i * 16, 0, 3); });
                __builtin_prefetch(row + NR - 1, 0, 3);
            });
        if (ahead.from < ahead.to) {
            __builtin_prefetch(ahead.from, 0, 2);
            ahead.from += 16;
        }
        if constexpr (PACKED)
            if (k >= line_k && line < lines.end) {
                __builtin_prefetch(*line, 0, 3);
                ++line;
            }
        unroll<KU>([&](auto kk) AKG_GEMM_LAMBDA_INLINE { step(kk); W::fence(); });
    }
    if constexpr (PACKED)
        for (; line < lines.end; ++line) __builtin_prefetch(*line, 0, 3);
    for (; k < kc; ++k, a += ASTEP, b += bstep) step(std::integral_constant<int, 0>());

    if (cin)
        unroll<MR>([&](auto r) AKG_GEMM_LAMBDA_INLINE {
            unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE { c[r][v] = W::add(c[r][v], W::load(cin + r * ldcin + v * L)); });
        });
    if constexpr (CSTREAM)
        if (stream_c) {
            unroll<MR>([&](auto r) AKG_GEMM_LAMBDA_INLINE {
                unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE { W::stream(cout + r * ldcout + v * L, c[r][v]); });
            });
            return;
        }
    unroll<MR>([&](auto r) AKG_GEMM_LAMBDA_INLINE {
        unroll<NV>([&](auto v) AKG_GEMM_LAMBDA_INLINE { W::store(cout + r * ldcout + v * L, c[r][v]); });
    });
}

} // namespace akg_gemm_detail

// C tile (AKG_GEMM_MR x AKG_GEMM_NR) = (cin ? cin : 0) + A·B over kc. ap: packed A micro-panel,
// ap[k*MR + r]; bp: packed B micro-panel, bp[k*NR + c]. cin/ldcin: the accumulator tile read
// first (row r at cin + r*ldcin), or null; cout/ldcout: where the full tile is stored (may equal
// cin).
// Not inlined: in the generated kernel's large function GCC's register allocation of the
// accumulators suffers (moves between registers in the k loop).
__attribute__((noinline, unused)) static void akg_gemm_micro(int64_t kc, const float *__restrict ap, const float *__restrict bp, const float *cin,
                                                     int64_t ldcin, float *cout, int64_t ldcout) {
    using namespace akg_gemm_detail;
    micro<V, AKG_GEMM_MR, AKG_GEMM_NR / V::L, true>(kc, ap, 0, bp, 0, cin, ldcin, cout, ldcout);
}

// The same with A read in place, row-major: a(r, k) = a[r*lda + k] (small M, where packing A
// does not pay).
__attribute__((noinline, unused)) static void akg_gemm_micro_rowmajor_a(int64_t kc, const float *__restrict a, int64_t lda,
                                                                const float *__restrict bp, const float *cin, int64_t ldcin,
                                                                float *cout, int64_t ldcout) {
    using namespace akg_gemm_detail;
    micro<V, AKG_GEMM_MR, AKG_GEMM_NR / V::L, false>(kc, a, lda, bp, 0, cin, ldcin, cout, ldcout);
}

namespace akg_gemm_detail {
template <int MR, bool APACKED, bool BPACKED, bool BSTREAMED, bool CSTREAM>
__attribute__((noinline)) static void tile(int64_t kc, const float *__restrict a, int64_t lda, const float *__restrict b, int64_t ldb,
                                           const float *cin, int64_t ldcin, float *cout, int64_t ldcout, akg_gemm_ahead ahead) {
    micro<V, MR, AKG_GEMM_NR / V::L, APACKED, AKG_GEMM_MR, BPACKED, BSTREAMED, CSTREAM>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, ahead);
}
// The same with the epilogue's lines: its own function, so that the calls without them keep
// their arguments in registers.
template <int MR, bool APACKED, bool BPACKED, bool BSTREAMED, bool CSTREAM>
__attribute__((noinline)) static void tile_lines(int64_t kc, const float *__restrict a, int64_t lda, const float *__restrict b, int64_t ldb,
                                                 const float *cin, int64_t ldcin, float *cout, int64_t ldcout, akg_gemm_ahead ahead,
                                                 akg_gemm_lines lines) {
    micro<V, MR, AKG_GEMM_NR / V::L, APACKED, AKG_GEMM_MR, BPACKED, BSTREAMED, CSTREAM>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, ahead, lines);
}
} // namespace akg_gemm_detail

// The first ROWS (1 .. AKG_GEMM_MR) rows of a tile of C = (cin ? cin : 0) + A·B over kc. The
// generator knows the height of the last, partial panel of rows (M mod MR), so a short edge runs
// a micro-kernel of its own height instead of a full tile on zero-padded rows, and each kernel
// instantiates only the heights it uses. APACKED: A is a packed micro-panel of AKG_GEMM_MR rows
// (a[k*MR + r]); otherwise row-major (a[r*lda + k]). BPACKED: B is a packed micro-panel
// (b[k*NR + c]); otherwise row-major in place (b[k*ldb + c]: small M, where packing B does not
// pay). BSTREAMED: B, in place, comes from memory (larger than L2): its rows are prefetched.
// CSTREAM: cout is an output streamed around the caches (non-temporal stores where cout and
// ldcout make its rows whole cache lines; the caller fences). Stores exactly ROWS rows of cout.
// ahead: lines to prefetch into L2 during the k loop (akg_gemm_next_panel); lines: the
// epilogue's lines, requested during the k loop too.
template <int ROWS, bool APACKED, bool BPACKED, bool BSTREAMED = false, bool CSTREAM = false>
static inline void akg_gemm_tile(int64_t kc, const float *__restrict a, int64_t lda, const float *__restrict b, int64_t ldb, const float *cin,
                                 int64_t ldcin, float *cout, int64_t ldcout, akg_gemm_ahead ahead = {}) {
    static_assert(ROWS >= 1 && ROWS <= AKG_GEMM_MR, "a tile of 1 .. AKG_GEMM_MR rows");
    static_assert(!(BPACKED && BSTREAMED), "only B read in place is streamed");
    akg_gemm_detail::tile<ROWS, APACKED, BPACKED, BSTREAMED, CSTREAM>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, ahead);
}
template <int ROWS, bool APACKED, bool BPACKED, bool BSTREAMED = false, bool CSTREAM = false>
static inline void akg_gemm_tile(int64_t kc, const float *__restrict a, int64_t lda, const float *__restrict b, int64_t ldb, const float *cin,
                                 int64_t ldcin, float *cout, int64_t ldcout, akg_gemm_ahead ahead, akg_gemm_lines lines) {
    static_assert(ROWS >= 1 && ROWS <= AKG_GEMM_MR, "a tile of 1 .. AKG_GEMM_MR rows");
    static_assert(!(BPACKED && BSTREAMED), "only B read in place is streamed");
    akg_gemm_detail::tile_lines<ROWS, APACKED, BPACKED, BSTREAMED, CSTREAM>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, ahead, lines);
}

// Tile `tile` of the `tiles` of a column of tiles (one block of rows) prefetches the tile-th
// share of the `floats` of the next column's micro-panel of packed B at `next`, so that the
// column after reads it from L2: spread over the whole column, the prefetches overlap the
// multiply-adds instead of the next column's first tile waiting on all of it.
static inline akg_gemm_ahead akg_gemm_next_panel(const float *next, int64_t floats, int64_t tile, int64_t tiles) {
    const int64_t share = ((floats + tiles - 1) / tiles + 15) / 16 * 16;
    const int64_t from = akg_imin(tile * share, floats);
    return {next + from, next + akg_imin(from + share, floats)};
}

// Packs `valid` rows of a float32 operand stored with k innermost (row x at src + x * ld) into a
// micro-panel of `width` rows, dst[k * width + x] for k < len, rows past `valid` zero: A's
// panels of a row-major A, B's of a transposed B. The transpose runs in 8 x 8 register blocks
// (akg_transpose of akg_kernel_support.h, which the generated kernels include first), a line
// of k of every row at a time, each row's line AKG_GEMM_PACK_AHEAD floats on prefetched: the
// rows are ld apart, often a multiple of 4 KiB, a pattern the hardware prefetchers miss.
#define AKG_GEMM_PACK_AHEAD 64
static inline void akg_gemm_pack_transposed(const float *__restrict src, int64_t ld, int64_t valid, int64_t len, int64_t width,
                                            float *__restrict dst) {
    for (int64_t k0 = 0; k0 < len; k0 += 16) {
        if (k0 + AKG_GEMM_PACK_AHEAD < len)
            for (int64_t x = 0; x < valid; ++x) __builtin_prefetch(src + x * ld + k0 + AKG_GEMM_PACK_AHEAD);
        akg_transpose(src + k0, ld, dst + k0 * width, width, valid, akg_imin(16, len - k0));
    }
    if (valid < width)
        for (int64_t k = 0; k < len; ++k)
            for (int64_t x = valid; x < width; ++x) dst[k * width + x] = 0.0f;
}

// The same for a float16 operand, converted to float32: the bits are transposed first (16-bit
// register transposes), a chunk of k at a time, into a staging block of whole micro-panel rows,
// which one vector conversion then writes to dst.
static inline void akg_gemm_pack_transposed_f16(const uint16_t *__restrict src, int64_t ld, int64_t valid, int64_t len, int64_t width,
                                                float *__restrict dst) {
    constexpr int64_t CHUNK = 128, MAX_WIDTH = AKG_GEMM_MR > AKG_GEMM_NR ? AKG_GEMM_MR : AKG_GEMM_NR;
    alignas(64) uint16_t stage[CHUNK * MAX_WIDTH];
    // Rows past `valid` stay +0 (no transpose writes them).
    if (valid < width)
        for (int64_t i = 0; i < CHUNK * width; ++i) stage[i] = 0;
    for (int64_t k0 = 0; k0 < len; k0 += CHUNK) {
        const int64_t n = len - k0 < CHUNK ? len - k0 : CHUNK;
        akg_transpose(src + k0, ld, stage, width, valid, n);
        akg_f16_to_f32_n(stage, dst + k0 * width, n * width);
    }
}

// Packs `valid` columns of a float16 operand stored with them innermost (k row at src + k * ld)
// into a micro-panel of `width`, converted to float32: dst[k * width + x], zero past `valid`.
static inline void akg_gemm_pack_copied_f16(const uint16_t *__restrict src, int64_t ld, int64_t valid, int64_t len, int64_t width,
                                            float *__restrict dst) {
    for (int64_t k = 0; k < len; ++k) {
        akg_f16_to_f32_n(src + k * ld, dst + k * width, valid);
        for (int64_t x = valid; x < width; ++x) dst[k * width + x] = 0.0f;
    }
}

// The sums over k of a packed micro-panel of B (panel[k * AKG_GEMM_NR + x], `len` values of k)
// into out[x] for its first `valid` columns: a bias gradient taken while the panel is in cache.
// The sums are double, as the reductions' own accumulators are.
static inline void akg_gemm_column_sums(const float *__restrict panel, int64_t len, int64_t valid, float *__restrict out) {
    double acc[AKG_GEMM_NR] = {};
    for (int64_t k = 0; k < len; ++k) {
#pragma omp simd
        for (int x = 0; x < AKG_GEMM_NR; ++x) acc[x] += (double)panel[k * AKG_GEMM_NR + x];
    }
    for (int64_t x = 0; x < valid; ++x) out[x] = (float)acc[x];
}
