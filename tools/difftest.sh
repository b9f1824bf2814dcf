#!/usr/bin/env bash
# tools/difftest.sh [COUNT] [SEED] — differential testing of random fused graphs, at scale.
#
# Writes COUNT (default 2000) random composite graphs for SEED (default: the time) with
# akg-random-graphs, checks them with `akg-gen check` in chunks of 200 (each graph generated,
# compiled, run on random inputs on two seeds and compared with the reference evaluator), and
# lists every FAIL/UNSUPPORTED/crash. Failing graphs are copied to $OUT/failures/ (default
# OUT=difftest-out); minimize one with
#   python3 tests/difftest/shrink.py BUILD/generator/akg-gen FAILING.json SMALL.json
# and save it in tests/difftest/regressions/. BUILD (default build) is the Meson build folder.
# Runs `nice`d. Exit status 1 when anything failed.
set -u
count=${1:-2000}
seed=${2:-$(date +%s)}
build=${BUILD:-build}
out=${OUT:-difftest-out}
chunk=${CHUNK:-200}
here=$(cd "$(dirname "$0")/.." && pwd)
gen=$build/tests/difftest/akg-random-graphs
akg_gen=$build/generator/akg-gen
for x in "$gen" "$akg_gen"; do
  [ -x "$x" ] || { echo "difftest.sh: $x not built (ninja -C $build)"; exit 2; }
done
mkdir -p "$out/failures"
total=0 bad=0
start=$(date +%s)
for ((first = 0; first < count; first += chunk)); do
  n=$((count - first < chunk ? count - first : chunk))
  dir=$out/chunk_${seed}_$first
  rm -rf "$dir"
  mkdir -p "$dir/graphs"
  "$gen" --seed "$seed" --first "$first" --count "$n" -o "$dir/graphs" || exit 2
  nice "$akg_gen" check "$dir/graphs" --unsupported-is-failure --all-parallel --seeds 1 2 --work-dir "$dir/work" > "$dir/check.log" 2>&1
  rc=$?
  passed=$(grep -cE '^\[[0-9]+/[0-9]+\] PASS' "$dir/check.log")
  grep -E '^\[[0-9]+/[0-9]+\] (FAIL|UNSUPPORTED)' "$dir/check.log" | while read -r _ _ file _; do
    cp "${file%:}" "$out/failures/"
  done
  grep -E '^\[[0-9]+/[0-9]+\] (FAIL|UNSUPPORTED)' "$dir/check.log"
  if [ "$passed" -ne "$n" ]; then
    bad=$((bad + n - passed))
    [ "$rc" -gt 1 ] && { echo "akg-gen check exited $rc (crash?) on $dir/graphs:"; tail -n 5 "$dir/check.log"; }
  else
    rm -rf "$dir"
  fi
  total=$((total + n))
  echo "difftest: seed $seed: $total graphs checked, $bad not passed, $(( $(date +%s) - start )) s"
done
echo "difftest: seed $seed: $total random graphs, $bad mismatches (failures in $out/failures)"
[ "$bad" -eq 0 ]
