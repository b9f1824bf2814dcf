// Tests of kernellib/runtime/akg_gemm.h, compiled with the generated kernels' flags: the
// micro-kernels (A packed or row-major, B packed or row-major in place, every height of a last
// partial panel of rows through akg_gemm_tile, a sample of them under AddressSanitizer) against
// a naive loop over the tile that does the same operations in the same order (a chain of
// multiply-adds over k from 0, fused where the ISA has FMA, then + cin), compared bit for bit,
// NaN matching any NaN; and against a double-precision sum within a rounding bound, which checks
// that reference. Shapes: kc around the unroll and register-blocking boundaries, cin null /
// separate / the same buffer as cout, row strides wider than the tile, unaligned panels, C
// streamed (non-temporal stores on aligned lines, ordinary ones elsewhere); nothing outside the
// tile's rows may be written. Special values (infinities, NaN) must propagate as in
// that chain. The float16 packers are checked against the element conversion, the column sums
// of a packed panel against a long-double sum.
#include "akg_gemm.h"

#include <array>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace {

constexpr int MR = AKG_GEMM_MR, NR = AKG_GEMM_NR;
int failures = 0, printed = 0;

float madd(float a, float b, float c) {
#if defined(__FMA__) || defined(__aarch64__)
    return __builtin_fmaf(a, b, c);
#else
    return a * b + c; // no FMA instruction on this target: a product, then a sum
#endif
}

bool same(float x, float y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0; }

enum CinMode { NO_CIN, SEPARATE_CIN, CIN_IS_COUT };
const char *mode_name[] = {"cin=null", "cin separate", "cin==cout"};

// The heights of akg_gemm_tile under test: every one, but under AddressSanitizer (where clang
// takes minutes at -O3 over them all) 1, 2, MR/2, MR-1 and MR stand for the rest, the same
// template unrolled to other counts.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AKG_TEST_FEW_HEIGHTS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(AKG_TEST_FEW_HEIGHTS)
#define AKG_TEST_FEW_HEIGHTS 1
#endif
#ifdef AKG_TEST_FEW_HEIGHTS
constexpr int kHeights[] = {1, 2, MR / 2, MR - 1, MR};
#else
template <size_t... I> constexpr std::array<int, sizeof...(I)> heights_up_to(std::index_sequence<I...>) { return {static_cast<int>(I) + 1 ...}; }
constexpr std::array<int, MR> kHeights = heights_up_to(std::make_index_sequence<MR>());
#endif

// akg_gemm_tile<rows, A packed?, B packed?> for a height of kHeights known at run time; every
// second call with B in place and A packed runs the variant that prefetches B's rows (BSTREAMED),
// every second with both packed prefetches a run ahead (B itself) and the lines of C's rows as an
// epilogue's (akg_gemm_lines, spread over the k loop or requested first where it is
// short), every second with A in place and B packed those lines too: none may change a result.
int in_place_b_calls = 0, packed_calls = 0, in_place_a_calls = 0;
template <size_t... I>
void tile_of_height_seq(int rows, bool ap, bool bp, bool cstream, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                        const float *cin, int64_t ldcin, float *cout, int64_t ldcout, std::index_sequence<I...>) {
    bool ran = false;
    const void *lines[2 * MR];
    for (int r = 0; r < rows; ++r) {
        lines[2 * r] = cout + r * ldcout;
        lines[2 * r + 1] = cout + r * ldcout + NR - 1;
    }
    const akg_gemm_ahead ahead = akg_gemm_next_panel(b, kc * NR, 0, 1);
    const akg_gemm_lines with_lines{lines, lines + 2 * rows};
    auto one = [&](auto i) {
        constexpr int H = kHeights[decltype(i)::value];
        if (H != rows || ran) return;
        ran = true;
        if (cstream && ap && bp) akg_gemm_tile<H, true, true, false, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
        else if (cstream) akg_gemm_tile<H, false, false, false, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
        else if (ap && bp && ++packed_calls % 2) akg_gemm_tile<H, true, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, ahead, with_lines);
        else if (ap && bp) akg_gemm_tile<H, true, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
        else if (ap && ++in_place_b_calls % 2) akg_gemm_tile<H, true, false, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
        else if (ap) akg_gemm_tile<H, true, false>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
        else if (bp && ++in_place_a_calls % 2) akg_gemm_tile<H, false, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, ahead, with_lines);
        else if (bp) akg_gemm_tile<H, false, true>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
        else akg_gemm_tile<H, false, false>(kc, a, lda, b, ldb, cin, ldcin, cout, ldcout);
    };
    (one(std::integral_constant<size_t, I>()), ...);
    if (!ran) std::printf("FAIL: no akg_gemm_tile of height %d under test\n", rows), ++failures;
}
void tile_of_height(int rows, bool ap, bool bp, bool cstream, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                    const float *cin, int64_t ldcin, float *cout, int64_t ldcout) {
    tile_of_height_seq(rows, ap, bp, cstream, kc, a, lda, b, ldb, cin, ldcin, cout, ldcout, std::make_index_sequence<std::size(kHeights)>());
    if (cstream) akg_stream_fence();
}

// One case: A (MR x kc) and B (kc x NR) as dense row-major matrices, cin tile, specials: how
// many special values to scatter into A, B and cin. rows: the tile's height (MR: the full
// micro-kernels; fewer: akg_gemm_tile's edge kernels); bpacked: B from a packed micro-panel or
// read in place (akg_gemm_tile only). cstream: C stored as a streamed output (akg_gemm_tile's
// CSTREAM; with A and B both packed or both in place); aligned: cout and its row stride on
// 64-byte lines, where the micro-kernel then stores with non-temporal stores.
void check(bool packed, bool bpacked, int rows, int64_t kc, CinMode mode, int specials, std::mt19937 &rng, bool cstream = false,
           bool aligned = false) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> a(MR * kc), b(kc * NR), cin0(MR * NR);
    for (auto &x : a) x = dist(rng);
    for (auto &x : b) x = dist(rng);
    for (auto &x : cin0) x = 4 * dist(rng);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const float special[] = {inf, -inf, nan, 0.0f, -0.0f, 3e38f};
    for (int s = 0; s < specials; ++s) {
        float v = special[rng() % 6];
        switch (rng() % 3) {
        case 0: a[rng() % a.size()] = v; break;
        case 1: b[rng() % b.size()] = v; break;
        default: cin0[rng() % cin0.size()] = v;
        }
    }

    // Inputs in the layouts the kernels read, one float off 64-byte alignment.
    const int64_t lda = kc + 3, ldb = NR + 7, ldcin = NR + 5, ldcout = aligned ? (NR + 16 + 15) / 16 * 16 : NR + 11;
    std::vector<float> ap(MR * kc + 1), arow(MR * lda + 1), bp(kc * NR + 1), brow(kc * ldb + 1, std::numeric_limits<float>::quiet_NaN());
    for (int64_t k = 0; k < kc; ++k)
        for (int r = 0; r < MR; ++r) ap[1 + k * MR + r] = a[r * kc + k];
    for (int r = 0; r < MR; ++r)
        for (int64_t k = 0; k < kc; ++k) arow[1 + r * lda + k] = a[r * kc + k];
    std::memcpy(bp.data() + 1, b.data(), b.size() * sizeof(float));
    for (int64_t k = 0; k < kc; ++k)
        for (int c = 0; c < NR; ++c) brow[1 + k * ldb + c] = b[k * NR + c];
    const float sentinel = -12345.0f;
    std::vector<float> cinbuf((MR + 1) * ldcin, sentinel), coutbuf((MR + 1) * ldcout + 16, sentinel);
    // cout at coutbuf[co]: one float off 64-byte alignment, or on it (aligned), after a float or more.
    int64_t co = 1;
    while (aligned && reinterpret_cast<uintptr_t>(coutbuf.data() + co) % 64 != 0) ++co;
    float *cout = coutbuf.data() + co;
    const float *cin = nullptr;
    int64_t ldc_in = 0;
    if (mode == SEPARATE_CIN) {
        for (int r = 0; r < MR; ++r)
            for (int c = 0; c < NR; ++c) cinbuf[1 + r * ldcin + c] = cin0[r * NR + c];
        cin = cinbuf.data() + 1, ldc_in = ldcin;
    } else if (mode == CIN_IS_COUT) {
        for (int r = 0; r < MR; ++r)
            for (int c = 0; c < NR; ++c) cout[r * ldcout + c] = cin0[r * NR + c];
        cin = cout, ldc_in = ldcout;
    }
    std::vector<float> cinbuf_before = cinbuf;

    const float *a_in = packed ? ap.data() + 1 : arow.data() + 1;
    const float *b_in = bpacked ? bp.data() + 1 : brow.data() + 1;
    const int64_t b_ld = bpacked ? 0 : ldb;
    const char *name = cstream ? (aligned ? "akg_gemm_tile (C streamed, aligned)" : "akg_gemm_tile (C streamed, unaligned)") : "akg_gemm_tile";
    if (rows == MR && bpacked && !cstream) {
        name = packed ? "akg_gemm_micro" : "akg_gemm_micro_rowmajor_a";
        if (packed) akg_gemm_micro(kc, a_in, b_in, cin, ldc_in, cout, ldcout);
        else akg_gemm_micro_rowmajor_a(kc, a_in, lda, b_in, cin, ldc_in, cout, ldcout);
    } else {
        tile_of_height(rows, packed, bpacked, cstream, kc, a_in, packed ? 0 : lda, b_in, b_ld, cin, ldc_in, cout, ldcout);
    }

    int bad = 0;
    auto fail = [&](const char *what, int r, int c, float got, float want) {
        if (bad++ < 3 && printed++ < 30)
            std::printf("FAIL %s (A %s, B %s, %d rows) kc=%lld %s specials=%d: %s at (%d, %d): got %.9g, want %.9g\n", name,
                        packed ? "packed" : "row-major", bpacked ? "packed" : "in place", rows, (long long)kc, mode_name[mode], specials,
                        what, r, c, got, want);
    };
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < NR; ++c) {
            float acc = 0.0f;
            double exact = 0.0, magnitude = 0.0;
            for (int64_t k = 0; k < kc; ++k) {
                acc = madd(a[r * kc + k], b[k * NR + c], acc);
                exact += (double)a[r * kc + k] * b[k * NR + c];
                magnitude += std::fabs((double)a[r * kc + k] * b[k * NR + c]);
            }
            if (mode != NO_CIN) {
                acc = acc + cin0[r * NR + c];
                exact += cin0[r * NR + c];
                magnitude += std::fabs(cin0[r * NR + c]);
            }
            float got = cout[r * ldcout + c];
            if (!same(got, acc)) fail("differs from the naive chain", r, c, got, acc);
            if (specials == 0 && !(std::fabs(got - exact) <= (kc + 2) * 0x1p-24 * magnitude))
                fail("too far from the exact sum", r, c, got, (float)exact);
        }
    // Nothing outside the tile's rows: the rest of each row of cout, its rows from `rows` on (those
    // hold cin0 when cin is cout), and all of cin's buffer.
    for (int64_t i = 0; i < (int64_t)coutbuf.size(); ++i) {
        int64_t r = (i - co) / ldcout, c = (i - co) % ldcout;
        bool inside = i >= co && r < rows && c < NR;
        float want = mode == CIN_IS_COUT && i >= co && r < MR && c < NR ? cin0[r * NR + c] : sentinel;
        if (!inside && !same(coutbuf[i], want)) fail("written outside the tile", (int)r, (int)c, coutbuf[i], want);
    }
    if (std::memcmp(cinbuf.data(), cinbuf_before.data(), cinbuf.size() * sizeof(float)) != 0)
        fail("cin modified", 0, 0, 0, 0);
    failures += bad != 0;
}

// The float16 packers against akg_f16_to_f32 element by element: every valid row or column
// converted to its place, the rest of the panel zero; bits compared (NaN payloads quieted alike).
void check_f16_packing(bool transposed, int64_t valid, int64_t len, int width, std::mt19937 &rng) {
    const int64_t ld = (transposed ? len : width) + 5;
    const int64_t rows = transposed ? width : len;
    std::vector<uint16_t> src(rows * ld + 1);
    for (auto &h : src) h = static_cast<uint16_t>(rng());
    std::vector<float> dst(len * width + 1, -1.0f);
    if (transposed) akg_gemm_pack_transposed_f16(src.data() + 1, ld, valid, len, width, dst.data());
    else akg_gemm_pack_copied_f16(src.data() + 1, ld, valid, len, width, dst.data());
    int bad = 0;
    for (int64_t k = 0; k < len; ++k)
        for (int64_t x = 0; x < width; ++x) {
            const uint16_t h = transposed ? src[1 + x * ld + k] : src[1 + k * ld + x];
            const float want = x < valid ? akg_f16_to_f32(h) : 0.0f, got = dst[k * width + x];
            if (!same(got, want) && bad++ < 3 && printed++ < 30)
                std::printf("FAIL %s valid=%lld len=%lld width=%d at (k %lld, x %lld): got %.9g, want %.9g\n",
                            transposed ? "akg_gemm_pack_transposed_f16" : "akg_gemm_pack_copied_f16", (long long)valid, (long long)len, width,
                            (long long)k, (long long)x, got, want);
        }
    if (dst[len * width] != -1.0f && bad++ < 3 && printed++ < 30) std::printf("FAIL: written past the panel\n");
    failures += bad != 0;
}

// akg_gemm_column_sums against a long-double sum of each column: within float32's rounding of
// the result (the sums are double), the columns past `valid` of `out` untouched.
void check_column_sums(int64_t len, int64_t valid, std::mt19937 &rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> panel(len * NR);
    for (int64_t k = 0; k < len; ++k)
        for (int x = 0; x < NR; ++x) panel[k * NR + x] = x < valid ? normal(rng) * (k % 7 == 3 ? 1e4f : 1.0f) : 0.0f;
    std::vector<float> out(NR + 1, -7.0f);
    akg_gemm_column_sums(panel.data(), len, valid, out.data());
    int bad = 0;
    for (int x = 0; x <= NR; ++x) {
        long double exact = 0, magnitude = 0;
        for (int64_t k = 0; x < valid && k < len; ++k) exact += panel[k * NR + x], magnitude += std::fabs(panel[k * NR + x]);
        const bool ok = x < valid ? std::fabs(out[x] - (double)exact) <= 0x1p-24 * std::fabs((double)exact) + 0x1p-40 * (double)magnitude
                                  : out[x] == -7.0f;
        if (!ok && bad++ < 3 && printed++ < 30)
            std::printf("FAIL akg_gemm_column_sums len=%lld valid=%lld column %d: got %.9g, want %.9Lg\n", (long long)len, (long long)valid, x,
                        out[x], x < valid ? exact : -7.0L);
    }
    failures += bad != 0;
}

// The shares of akg_gemm_next_panel: whole lines (16 floats) from the panel's start, in tile
// order, together exactly the panel, the tiles past the end with empty runs.
void check_next_panel(int64_t floats, int64_t tiles) {
    static float panel[4096];
    const float *at = panel;
    bool ok = true;
    for (int64_t t = 0; t < tiles; ++t) {
        const akg_gemm_ahead run = akg_gemm_next_panel(panel, floats, t, tiles);
        ok &= run.from == at && run.to >= run.from && (run.to == panel + floats || (run.to - panel) % 16 == 0);
        at = run.to;
    }
    ok &= at == panel + floats;
    if (!ok && printed++ < 30) std::printf("FAIL akg_gemm_next_panel floats=%lld tiles=%lld\n", (long long)floats, (long long)tiles);
    failures += !ok;
}

} // namespace

int main() {
    std::printf("akg_gemm: tile %d x %d, %zu heights of akg_gemm_tile\n", MR, NR, std::size(kHeights));
    std::mt19937 rng(2024);
    int cases = 0;
    for (bool packed : {true, false})
        for (int64_t kc : {1, 2, 3, 7, 64, 255, 256, 257})
            for (CinMode mode : {NO_CIN, SEPARATE_CIN, CIN_IS_COUT})
                for (int specials : {0, 1, 4, 16}) {
                    check(packed, true, MR, kc, mode, specials, rng);
                    ++cases;
                }
    // akg_gemm_tile: each height of kHeights, both B layouts, fewer k and modes.
    for (bool packed : {true, false})
        for (bool bpacked : {true, false})
            for (int rows : kHeights)
                for (int64_t kc : {1, 5, 64, 257})
                    for (CinMode mode : {NO_CIN, SEPARATE_CIN, CIN_IS_COUT}) {
                        check(packed, bpacked, rows, kc, mode, kc == 5 ? 4 : 0, rng);
                        ++cases;
                    }
    // C streamed: aligned (non-temporal stores) and not (ordinary stores), both operand layouts.
    for (bool aligned : {true, false})
        for (bool packed : {true, false})
            for (int rows : kHeights)
                for (int64_t kc : {1, 5, 257})
                    for (CinMode mode : {NO_CIN, SEPARATE_CIN, CIN_IS_COUT}) {
                        check(packed, packed, rows, kc, mode, kc == 5 ? 4 : 0, rng, true, aligned);
                        ++cases;
                    }
    for (bool transposed : {true, false})
        for (int width : {MR, NR})
            for (int64_t valid : {int64_t{1}, int64_t{width - 1}, int64_t{width}})
                for (int64_t len : {1, 7, 8, 127, 128, 129, 300}) {
                    check_f16_packing(transposed, valid, len, width, rng);
                    ++cases;
                }
    for (int64_t len : {1, 2, 51, 2048})
        for (int64_t valid : {int64_t{1}, int64_t{NR - 1}, int64_t{NR}}) {
            check_column_sums(len, valid, rng);
            ++cases;
        }
    for (int64_t floats : {0, 8, 16, 100, 4096})
        for (int64_t tiles : {1, 3, 6, 23, 300}) {
            check_next_panel(floats, tiles);
            ++cases;
        }
    std::printf("%d of %d cases failed\n", failures, cases);
    return failures != 0;
}
