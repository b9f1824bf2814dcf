#!/usr/bin/env bash
# Every stress pattern generates within BOUND seconds (issue 38): the graphs that kept isl's
# scheduler busy for minutes now fall back to a simpler schedule once the bound of
# poly/bounded_schedule.h trips. Also checks that the patterns match make_stress.py and that
# the fallback is the one the schedule dump names.
# Usage: generation_bound.sh AKG_GEN SOURCE_ROOT [BOUND_SECONDS]
set -euo pipefail
gen=$1 root=$2 bound=${3:-10}
python3 "$root/tests/stress/make_stress.py" --check
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0 total_ms=0 worst_ms=0 worst_name=
runs=0
for f in "$root"/tests/stress/*.json; do
  # Float16 graphs in both modes: their ILPs differ (per-op rounding splits the reductions).
  modes=float16
  [[ $f == *f16* ]] && modes="float16 float32"
  for mode in $modes; do
    name="$(basename "$f" .json) ($mode intermediates)"
    runs=$((runs + 1))
    start=$(date +%s%N)
    if ! timeout $((bound * 3)) "$gen" kernel "$f" -o "$out/k.cpp" --target x86-64-v4 --float16-intermediates=$mode > "$out/k.log" 2>&1; then
        echo "FAIL $name: akg-gen did not finish (or failed) within $((bound * 3)) s"; cat "$out/k.log"; fail=1; continue
    fi
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    total_ms=$((total_ms + ms))
    if (( ms > worst_ms )); then worst_ms=$ms worst_name=$name; fi
    if (( ms > bound * 1000 )); then echo "FAIL $name: $ms ms, over the bound of $bound s"; fail=1; fi
  done
done
echo "stress patterns: $runs generations, $total_ms ms in all, the slowest $worst_ms ms ($worst_name); bound $bound s"
# The float16 LayerNorm backward with float32 intermediates is the known blow-up (about 30 s
# unbounded): its dump must say that the fewer-loops candidate was dropped.
"$gen" show "$root/tests/stress/layernorm_grad_expanded_2d_f16_addn0.json" --dump-after schedule --target x86-64-v4 \
    --float16-intermediates=float32 > "$out/dump.txt"
if ! grep -q "^# fewer-loops candidate over its time bound" "$out/dump.txt"; then
    echo "FAIL: the schedule dump does not name the fallback:"; head -5 "$out/dump.txt"; fail=1
fi
exit $fail
