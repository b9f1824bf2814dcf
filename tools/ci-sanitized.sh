#!/usr/bin/env bash
# CI, part 2: the test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then a short
# libFuzzer run over the front end and pipeline.
#
# Builds build-san/ with clang (-fsanitize=address,undefined -fno-sanitize-recover=all: any
# report is fatal): akg-gen, libakgkernels (every generated kernel), the tests, and the fuzzer
# tests/fuzz/fuzz_composite. Kernels that akg-gen compiles at run time (akg-gen compile/check)
# get the same sanitizer flags (generator/meson.build) and are compiled with clang (CC/CXX).
# Then runs the suite (slow tests on a subset, see below) and the fuzzer for FUZZ_SECONDS
# (default 60) seeded with the odd-shape catalog twins and the regression inputs (the long run,
# tools/fuzz-long.sh, seeds with patterns/ and ../shared/akg-corpus too).
#
#   tools/ci-sanitized.sh                 configure/build/test/fuzz
#   FUZZ_SECONDS=0 tools/ci-sanitized.sh  no fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SAN_BUILD_DIR:-build-san}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(nproc)}
t_start=$(date +%s)

# clang 14 with its sanitizer/libFuzzer runtimes and LLVM's OpenMP (clang -fopenmp uses libomp).
packages=(clang-14 libclang-rt-14-dev libomp-14-dev llvm-14)
bash "$(dirname "$0")/install-packages.sh" "${packages[@]}"

export CC=clang-14 CXX=clang++-14
# Stack traces symbolized; every report fatal. Leaks are checked where no OpenMP kernel runs
# (the fuzzer, the fuzz regression replay: see tests/fuzz/meson.build): LeakSanitizer's
# stop-the-world crashes now and then ("Tracer caught signal 11") in processes that ran libomp
# worker threads, so the rest of the suite runs with detect_leaks=0.
export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0:detect_leaks=0:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1:detect_odr_violation=0:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}

san_args="-fno-sanitize-recover=all -fno-omit-frame-pointer -gline-tables-only"
if [ ! -d "$BUILD" ]; then
  meson setup "$BUILD" \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Db_ndebug=false \
    -Dc_args="$san_args" -Dcpp_args="$san_args" \
    -Dfuzzing=true -Dbenchmarks=disabled
fi
t0=$(date +%s)
ninja -C "$BUILD" -j "$JOBS"
t_build=$(( $(date +%s) - t0 ))
echo "== sanitized build: ${t_build} s =="

# The sanitized suite: every meson test, except
#  - corpus_check, replaced below by the same `akg-gen check` over every CORPUS_STRIDE-th corpus
#    kernel at scaled-down shapes (kernels compiled at run time with the sanitizer flags);
#  - catalog_unfused_check, replaced below by the fusion ablation's kernels at the odd shapes
#    (tests/patterns_small) only: at the real shapes they are the main build's business;
#  - install_consumer, which links the installed (instrumented) library with plain `cc`;
#  - abi_guard_pages, whose PROT_NONE pages around every buffer catch in the main build what
#    AddressSanitizer's redzones catch here (and which needs ASan's SEGV handler off);
#  - abi_c_all_kernels, every bad call on every kernel at real shapes: abi_c makes each kind of
#    bad call here, on a few kernels, through the same runtime code;
#  - catalog_qemu_*, the other CPUs emulated by qemu-user, which cannot map AddressSanitizer's
#    shadow memory (the main build runs them; catalog_max_isa_* run every variant here).
# The catalog kernels run at their real shapes without the reference (AKG_CATALOG_REAL_SHAPES=
# run-only: the instrumented double-precision reference takes 20x the kernel's time; the main
# build compares the values) and against it at the odd shapes. akg_run leaves out its two tests
# that only repeat, through .npy files, what catalog_kernels and the corpus subset run here.
# reference sweeps corpus kernels up to 10^6 elements; random_graphs checks 60 graphs.
# Slow tests may shrink further under SANITIZED_GTEST_FILTER (a gtest filter for every gtest binary).
CORPUS_STRIDE=${CORPUS_STRIDE:-8}
export AKG_REFERENCE_CORPUS_MAX_ELEMENTS=${AKG_REFERENCE_CORPUS_MAX_ELEMENTS:-1000000}
export AKG_CATALOG_REAL_SHAPES=${AKG_CATALOG_REAL_SHAPES:-run-only}
# random_graphs: 60 random graphs instead of the main build's batch (each compiled under ASan).
export AKG_RANDOM_GRAPHS_COUNT=${AKG_RANDOM_GRAPHS_COUNT:-60}
SANITIZED_GTEST_FILTER=${SANITIZED_GTEST_FILTER:--AkgRun.EveryCatalogKernelRunsByNameFromNpyFiles:AkgRun.CorpusKernelsCompiledOnDemandRunFromNpyFiles}
[ -n "${SANITIZED_GTEST_FILTER:-}" ] && export GTEST_FILTER=$SANITIZED_GTEST_FILTER
t0=$(date +%s)
all_tests=$(meson test -C "$BUILD" --no-rebuild --list 2>/dev/null)
tests=$(grep -v -x -e install_consumer -e corpus_check -e catalog_unfused_check -e abi_guard_pages -e abi_c_all_kernels \
              -e catalog_qemu_haswell -e catalog_qemu_nehalem -e generation_bound <<<"$all_tests")
status=0
# shellcheck disable=SC2086
meson test -C "$BUILD" --no-rebuild --print-errorlogs --num-processes "$JOBS" --timeout-multiplier 3 $tests || status=1
if grep -q -x catalog_unfused_check <<<"$all_tests"; then
  echo "== the fusion ablation's kernels at the odd shapes under the sanitizers =="
  OMP_NUM_THREADS=3 "$BUILD/generator/akg-gen" check tests/patterns_small --unfused \
    >"$BUILD/meson-logs/unfused-sanitized.txt" 2>&1 || status=1
  grep -E '^\[[0-9]+/[0-9]+\] FAIL|runtime error|ERROR: ' "$BUILD/meson-logs/unfused-sanitized.txt" || true
  tail -n 1 "$BUILD/meson-logs/unfused-sanitized.txt"
fi
t_test=$(( $(date +%s) - t0 ))
echo "== sanitized tests: ${t_test} s =="

t0=$(date +%s)
if [ -d ../shared/akg-corpus ]; then
  mapfile -t corpus < <(find ../shared/akg-corpus -type f \( -name '*.json' -o -name '*.info' \) | LC_ALL=C sort |
                        awk -v s="$CORPUS_STRIDE" 'NR % s == 1')
  echo "== corpus subset under the sanitizers: ${#corpus[@]} kernels (every ${CORPUS_STRIDE}th) =="
  "$BUILD/generator/akg-gen" check "${corpus[@]}" --max-elements 2000000 --scaled-elements 500000 \
    >"$BUILD/meson-logs/corpus-sanitized.txt" 2>&1 || status=1
  grep -E '^\[[0-9]+/[0-9]+\] FAIL|runtime error|ERROR: ' "$BUILD/meson-logs/corpus-sanitized.txt" || true
  tail -n 5 "$BUILD/meson-logs/corpus-sanitized.txt"
fi
t_corpus=$(( $(date +%s) - t0 ))
echo "== sanitized corpus subset: ${t_corpus} s =="

t_fuzz=0
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  t0=$(date +%s)
  bash tools/fuzz-long.sh "$FUZZ_SECONDS" --build "$BUILD" --quick-seeds || status=1
  t_fuzz=$(( $(date +%s) - t0 ))
fi
echo "== sanitized CI: build ${t_build} s, tests ${t_test} s, corpus ${t_corpus} s, fuzz ${t_fuzz} s, total $(( $(date +%s) - t_start )) s =="
[ "$status" -eq 0 ] || { echo "== sanitized CI: FAILED (see above) =="; exit 1; }
