#!/usr/bin/env bash
# run_random_graphs.sh AKG_RANDOM_GRAPHS AKG_GEN COUNT SEED WORKDIR [SEEDS...]
# Writes COUNT random composite graphs for SEED into WORKDIR/graphs, checks them all with
# `akg-gen check` (generated kernel vs reference evaluator), and fails on any FAIL,
# UNSUPPORTED (the generator of graphs emits only supported ops) or crash.
set -u
# AKG_RANDOM_GRAPHS_COUNT, when set, overrides COUNT (a smaller batch for the sanitized suite).
gen=$1 akg_gen=$2 count=${AKG_RANDOM_GRAPHS_COUNT:-$3} seed=$4 work=$5
shift 5
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(1)
rm -rf "$work"
mkdir -p "$work/graphs"
"$gen" --seed "$seed" --count "$count" -o "$work/graphs" || { echo "akg-random-graphs failed"; exit 1; }
start=$(date +%s)
"$akg_gen" check "$work/graphs" --unsupported-is-failure --all-parallel --seeds "${seeds[@]}" --work-dir "$work/check" \
  > "$work/check.log" 2>&1
rc=$?
end=$(date +%s)
grep -E '^\[[0-9]+/[0-9]+\] (FAIL|UNSUPPORTED)' "$work/check.log"
tail -n 1 "$work/check.log"
echo "random graphs: seed $seed, $count graphs, $((end - start)) s, akg-gen check exit $rc"
bad=$(grep -cE '^\[[0-9]+/[0-9]+\] (FAIL|UNSUPPORTED)' "$work/check.log")
passed=$(grep -cE '^\[[0-9]+/[0-9]+\] PASS' "$work/check.log")
if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ] || [ "$passed" -ne "$count" ]; then
  echo "MISMATCH: $bad failing, $passed of $count passed; graphs in $work/graphs (tests/difftest/shrink.py minimizes one)"
  [ "$rc" -gt 1 ] && tail -n 20 "$work/check.log"
  exit 1
fi
rm -rf "$work/check"
exit 0
