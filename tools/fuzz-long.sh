#!/usr/bin/env bash
# Fuzzes the front end and pipeline (composite JSON → C++ source) with libFuzzer.
#
#   tools/fuzz-long.sh [SECONDS] [--build DIR] [--jobs N] [--quick-seeds]   default 900 s, build-san/
#
# --quick-seeds (the CI's short run): only the odd-shape catalog twins, the regression inputs
# and tests/fuzz/seeds (the ops of docs/OPS.md) as seeds (~80 small kernels, loaded in seconds
# instead of minutes).
# The seed corpus is copied at run time into a scratch working corpus: patterns/*.json,
# tests/patterns_small/*.json, tests/fuzz/regressions/*, tests/fuzz/seeds/*.json and every .json/.info kernel of
# ../shared/akg-corpus. Builds the fuzzer first (tools/ci-sanitized.sh configures DIR; without
# it, DIR is configured here with clang and -Dfuzzing=true). New crash/timeout/leak inputs are
# left in DIR/fuzz-artifacts/; minimize one with `DIR/tests/fuzz/fuzz_composite -minimize_crash=1
# -runs=10000 FILE`, fix the bug, and add the input to tests/fuzz/regressions/.
# Prints the executions, exec/s, the corpus size reached and any findings; exits 1 on a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=900; BUILD=build-san; JOBS=1; QUICK=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --quick-seeds) QUICK=1; shift ;;
    *) SECONDS_TO_RUN=$1; shift ;;
  esac
done
export CC=${CC:-clang-14} CXX=${CXX:-clang++-14}
if [ ! -d "$BUILD" ]; then
  meson setup "$BUILD" -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 \
    -Ddebug=false -Db_ndebug=false -Dfuzzing=true -Dbenchmarks=disabled \
    -Dc_args="-fno-sanitize-recover=all -fno-omit-frame-pointer -gline-tables-only" \
    -Dcpp_args="-fno-sanitize-recover=all -fno-omit-frame-pointer -gline-tables-only"
fi
ninja -C "$BUILD" tests/fuzz/fuzz_composite >/dev/null
fuzzer=$(realpath "$BUILD/tests/fuzz/fuzz_composite")
artifacts=$(realpath "$BUILD")/fuzz-artifacts/
dict=$PWD/tests/fuzz/composite.dict

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)}
# Leaks are findings here (appended: the last value of an option wins).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1}:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}

work=$(mktemp -d "${TMPDIR:-/tmp}/akg-fuzz.XXXXXX"); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/seeds" "$BUILD/fuzz-artifacts"
n=0
add_seed() { cp "$1" "$work/seeds/$n-$(basename "$1")"; n=$((n + 1)); }
seed_files=(tests/patterns_small/*.json tests/fuzz/regressions/* tests/fuzz/seeds/*.json)
[ "$QUICK" -eq 1 ] || seed_files+=(patterns/*.json)
for f in "${seed_files[@]}"; do [ -f "$f" ] && add_seed "$f"; done
if [ "$QUICK" -eq 0 ] && [ -d ../shared/akg-corpus ]; then
  while IFS= read -r -d '' f; do add_seed "$f"; done < <(find ../shared/akg-corpus -type f \( -name '*.json' -o -name '*.info' \) -print0)
fi
echo "fuzzing for ${SECONDS_TO_RUN} s with ${JOBS} job(s): $n seed inputs"

log=$work/fuzz.log
parallel=""
# With -jobs, libFuzzer writes one fuzz-N.log per job into the current folder: run in $work.
[ "$JOBS" -gt 1 ] && parallel="-jobs=$JOBS -workers=$JOBS"
# -timeout: one input taking over 30 s is a hang; -rss_limit_mb: a memory blow-up is a finding.
rc=0
(cd "$work" && nice -n 10 "$fuzzer" "$work/corpus" "$work/seeds" \
  -max_total_time="$SECONDS_TO_RUN" -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
  -dict="$dict" -print_final_stats=1 $parallel -artifact_prefix="$artifacts") >"$log" 2>&1 || rc=$?
[ "$JOBS" -gt 1 ] && cat "$work"/fuzz-*.log >>"$log" 2>/dev/null
execs=$(grep -h '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
speed=$(grep -h '^stat::average_exec_per_sec' "$log" | awk '{s += $2} END {print s + 0}')
new_units=$(find "$work/corpus" -type f | wc -l)
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
corp=$(grep -o 'corp: [0-9]*/[0-9A-Za-z]*' <<<"$last" | cut -d' ' -f2 || true)
cov=$(grep -o 'cov: [0-9]*' <<<"$last" | cut -d' ' -f2 || true)
echo "executions: $execs, exec/s: $speed, corpus reached: ${corp:-?} inputs/bytes ($new_units new inputs written, $n seeds), coverage: ${cov:-?} edges"
if [ "$rc" -ne 0 ] || grep -q -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: |escaped the generator' "$log"; then
  grep -E -A40 'ERROR: |runtime error:|escaped the generator|SUMMARY' "$log" | head -n 120
  echo "FINDING (exit $rc): inputs in $BUILD/fuzz-artifacts/:"; ls -1t "$BUILD/fuzz-artifacts/" | head
  exit 1
fi
echo "no findings"
