#!/usr/bin/env bash
# Is a catalog kernel bound by its core or by memory? (issue 4; a diagnostic, not part of the
# tests.) For each kernel named, at each thread count:
#   - bench_catalog measures the kernel and its roofline probe (5 interleaved repetitions, the
#     minimum of each);
#   - tools/time_kernel.cpp times the checked-in generated source of the variant the akg rows run
#     (generated/kernels/<target>/KERNEL.cpp, compiled with the target's flags from
#     generated/targets.txt, its descriptor from a one-kernel table that akg-gen catalog writes) and
#     an "in-cache" copy of it,
#     alternately (6 rounds, the minimum; each round is a minimum of 30 runs). The copy is the
#     same code with the kernel's outer row indices folded into a window of a few rows (the sed
#     expression of the table below), so that every operand stays in L1 or L2 and
#     non-temporal stores become ordinary ones: what the core's instructions cost without the
#     memory.
# The in-cache time is printed as a percentage of the roofline time. At 100% or more the kernel
# cannot reach the roofline however well memory is used: its instructions must get cheaper. Well
# below 100%, the kernel loses time on the memory side (its access pattern, its prefetching).
# At 2 threads the copies of kernels that write a large output have both threads write the
# same window of lines, which the cores then pass back and forth; read those at 1 thread (the
# core's work halves at 2).
#
#   bash tools/core-bound.sh [--threads "1 2"] [--target T] KERNEL...   (KERNEL from the table, or "all")
#
# --target: the variant to time (default: the one akg_run picks on this CPU, AKG_MAX_ISA
# included, as bench_catalog's akg rows do). Needs build-bench/ (tools/run-benchmarks.sh builds
# it). Run on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${AKG_BENCH_BUILD:-build-bench}
threads="1 2"
target=""
kernels=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --target) target=$2; shift ;;
    -h|--help) sed -n 2,27p "$0"; exit 0 ;;
    *) kernels+=("$1") ;;
  esac
  shift
done

# The fold of each kernel: row indices taken modulo a few rows (or dropped), streaming calls
# replaced by ordinary stores.
declare -A fold=(
  [attention_softmax_dropout_f16]='s/(c0 \* INT64_C(196608))/INT64_C(0)/g; s/(c1 \* INT64_C(16384))/INT64_C(0)/g'
  [bias_dropout_residual_layernorm_f16]='s/(c0 \* INT64_C(768))/((c0 \& 15) * INT64_C(768))/g; s/c0 \* 768/(c0 \& 15) * 768/g'
  [bias_dropout_residual_layernorm_f32]='s/c0 \* 768/(c0 \& 15) * 768/g'
  [bias_gelu_f16]='s/(c0 \* INT64_C(3072))/((c0 \& 7) * INT64_C(3072))/g'
  [bias_gelu_f32]='s/(c0 \* INT64_C(3072))/((c0 \& 7) * INT64_C(3072))/g; s/c0 \* 3072/(c0 \& 7) * 3072/g'
  [bias_gelu_grad_f16]='s/(c0 \* INT64_C(3072))/((c0 \& 7) * INT64_C(3072))/g'
  [bn_train_stats_f16]='s/(c1 \* INT64_C(802816))/INT64_C(0)/g; s/((c0 + c2) \* INT64_C(3136))/((c2 \& 15) * INT64_C(3136))/g'
  [bn_train_stats_nhwc_f16]='s/(c0 \* INT64_C(256))/((c0 \& 127) * INT64_C(256))/g'
  [embedding_sum_f32]='s/c0 \* 98304/(c0 \& 0) * 98304/g; s/(c1 + c2)/((c1 \& 8191) + c2)/g'
  [global_avgpool_fwd_f16]='s/(c0 \* INT64_C(2048))/INT64_C(0)/g'
  [grad_overflow_check_f16]='s/in0 + (c0_block)/in0 + (c0_block \& 16383)/g; s/in0 + (c0_last)/in0 + (c0_last \& 16383)/g'
  [layernorm_bwd_dgamma_dbeta_f32]='s/c1 \* 768/(c1 \& 31) * 768/g'
  [layernorm_fwd_f16]='s/(c0 \* INT64_C(768))/((c0 \& 15) * INT64_C(768))/g; s/c0 \* 768/(c0 \& 15) * 768/g'
  [layernorm_fwd_f32]='s/(c0 + c1) \* 768/((c0 \& 15) + c1) * 768/g'
  [mlm_bias_log_softmax_f32]='s/(c0 \* INT64_C(21128))/((c0 \& 3) * INT64_C(21128))/g; s/c0 \* 21128/(c0 \& 3) * 21128/g; s/(1 + c0) \* 21128/((1 + c0) \& 3) * 21128/g'
  [softmax_grad_f16]='s/(c0 \* INT64_C(196608))/INT64_C(0)/g; s/(c1 \* INT64_C(16384))/INT64_C(0)/g'
)
if [ ${#kernels[@]} -eq 0 ] || [ "${kernels[0]}" = all ]; then
  mapfile -t kernels < <(printf '%s\n' "${!fold[@]}" | sort)
fi
[ -x "$build/benchmarks/bench_catalog" ] || { echo "core-bound: $build/benchmarks/bench_catalog is missing (run tools/run-benchmarks.sh first)" >&2; exit 1; }
gen="$build/generator/akg-gen"

# The target: the variant bench_catalog's akg rows run (the akg_variant of its results' context,
# from one short run), unless --target; another target's rows are akg_<target> (x86-64-v3 only).
picked=$("$build/benchmarks/bench_catalog" --benchmark_filter="^${kernels[0]}/akg/1/" --benchmark_min_time=0.001 \
           --benchmark_format=json 2>/dev/null |
         /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["context"].get("akg_variant", ""))' || true)
target=${target:-$picked}
[ -n "$target" ] || { echo "core-bound: cannot tell which variant akg runs here; name it with --target" >&2; exit 1; }
impl=akg
[ "$target" = "$picked" ] || impl="akg_$target"
# Its symbol suffix and compiler flags, as the build compiles it (generated/targets.txt).
suffix="" flags=""
read -r suffix flags < <(awk -v t="$target" '$1 == t { s = $3; f = ""; for (i = 4; i <= NF; ++i) f = f " " $i; print s, f }' generated/targets.txt) || true
[ -n "$suffix" ] || { echo "core-bound: no target $target in generated/targets.txt" >&2; exit 2; }
define="-DAKG_HAS_VARIANT_${suffix^^}"
echo "core-bound: the $target variant ($flags)" >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compile() { # source binary kernel: the kernel file, its one-kernel table (descriptor), time_kernel.cpp
  mkdir -p "$work/table_$3"
  [ -f "$work/table_$3/akg_catalog.cpp" ] ||
    "$gen" catalog "patterns/$3.json" -o "$work/table_$3" --source-root "$root" --no-typed-entry-points --targets "$target"
  # shellcheck disable=SC2086  # $flags: the target's compiler flags, one word each
  g++ -O3 -fno-math-errno -fopenmp $flags "$define" -I "$root/kernellib/runtime" -I "$root/kernellib/include" \
    "$1" "$work/table_$3/akg_catalog.cpp" "$root/tools/time_kernel.cpp" -o "$2"
}
min_ms() { awk -v w="$1" '$1 == w { if (m == "" || $2 < m) m = $2 } END { print m }' "$2"; }

for k in "${kernels[@]}"; do
  src="generated/kernels/$target/$k.cpp"
  [ -n "${fold[$k]:-}" ] && [ -f "$src" ] || { echo "core-bound: no fold for $k (see the table in $0)" >&2; exit 2; }
  sed "${fold[$k]}; s/akg_stream_f32_to_f16_n/akg_f32_to_f16_n/g" "$src" > "$work/in_cache.cpp"
  if cmp -s "$src" "$work/in_cache.cpp"; then echo "core-bound: the fold of $k no longer matches $src" >&2; exit 2; fi
  compile "$src" "$work/real" "$k"
  compile "$work/in_cache.cpp" "$work/in_cache" "$k"
  for t in $threads; do
    OMP_PROC_BIND=true OMP_PLACES=cores "$build/benchmarks/bench_catalog" --benchmark_filter="^$k/(stream|stream_nt|$impl)/$t/" --benchmark_repetitions=5 \
      --benchmark_enable_random_interleaving=true --benchmark_min_time=0.05 2>/dev/null |
      awk '/_min /{ split($1, p, "/"); print (p[2] ~ /^stream/ ? "stream" : p[2]), $2 }' > "$work/bench.txt"
    for round in 1 2 3 4 5 6; do
      for v in real in_cache; do
        echo "$v $(OMP_NUM_THREADS=$t OMP_PROC_BIND=true "$work/$v" | awk '{ print $2 }')"
      done
    done > "$work/times.txt"
    awk -v k="$k" -v t="$t" -v rl="$(min_ms stream "$work/bench.txt")" -v ak="$(min_ms "$impl" "$work/bench.txt")" \
      -v real="$(min_ms real "$work/times.txt")" -v cached="$(min_ms in_cache "$work/times.txt")" 'BEGIN {
        bench = ak == "" ? "kernel not in bench_catalog" : sprintf("kernel %.3f ms (%.0f%% of the roofline)", ak, 100 * rl / ak)
        printf "%-38s %d thr: roofline %.3f ms, %s; time_kernel: %.3f ms, in cache %.3f ms (%.0f%% of the roofline time)\n",
               k, t, rl, bench, real, cached, 100 * cached / rl }'
  done
done
