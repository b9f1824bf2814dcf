#!/usr/bin/env bash
# The side-by-side benchmark suite (issue 4; not part of the tests): installs the optional
# peers it can (oneDNN, PyTorch, matplotlib) from Debian, builds build-bench/ (release), runs
# every catalog kernel against its peers and the roofline in one Google Benchmark process
# (interleaved repetitions; akg = the variant the library picks on this CPU, beside it the
# x86-64-v3 (AVX2) variant of the same kernel), measures what one core costs per vector in L1 (bench_machine: float16
# conversions, stores next to loads), runs the PyTorch eager peer, and writes
# benchmarks/REPORT.md and benchmarks/report.png.
#
#   bash tools/run-benchmarks.sh [--no-install] [--no-torch] [--no-halide] [--reps N]
#                                [--min-time S] [--filter REGEX] [--note TEXT]
#
# Defaults: 8 repetitions of at least 0.03 s each. Each cell is the minimum over its repetitions,
# which Google Benchmark interleaves in random order over the whole run: more, shorter samples
# are less often all caught in one of the shared VM's slow periods than 5 of 0.05 s, for about
# the same time.
# Environment: AKG_BENCH_BUILD (build folder, default build-bench).
# Measure on an idle machine: the report records the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${AKG_BENCH_BUILD:-build-bench}
install=1 torch=1 reps=8 min_time=0.03 filter="" note=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-install) install=0 ;;
    --no-torch) torch=0 ;;
    --no-halide) export AKG_BENCH_NO_HALIDE=1 ;;
    --reps) reps=$2; shift ;;
    --min-time) min_time=$2; shift ;;
    --filter) filter=$2; shift ;;
    --note) note=$2; shift ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "run-benchmarks: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
start=$(date +%s)
messages=()

# 1. packages: the build's own, then each optional peer on its own (a missing one is skipped).
if [ "$install" = 1 ] && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  required=(build-essential meson ninja-build pkg-config libisl-dev libhalide14-0-dev
            nlohmann-json3-dev libcli11-dev libbenchmark-dev)
  # Debian's oneDNN is built with an OpenCL GPU runtime: its CMake package needs the OpenCL
  # headers and loader (a Recommends of libdnnl-dev, which --no-install-recommends skips).
  # OpenBLAS's OpenMP build: the GEMM peers' sgemm runs on the same pinned libgomp threads as the
  # kernels (the pthreads build would add a second spinning pool on 2 cores); it also becomes
  # PyTorch's BLAS (Debian's torch calls libblas.so.3, else the netlib reference).
  optional=(libdnnl-dev ocl-icd-opencl-dev libopenblas-openmp-dev libopenblas-dev python3-torch python3-matplotlib)
  missing=()
  for p in "${required[@]}" "${optional[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get update || true
    for p in "${missing[@]}"; do
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$p" ||
        echo "run-benchmarks: could not install $p; the peers that need it are skipped" >&2
    done
  fi
fi

# 2. build (release, its own folder so that build/ keeps its configuration)
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --buildtype=release -Dtests=disabled -Dbenchmarks=enabled
else
  meson setup --reconfigure "$build" >/dev/null   # picks up a newly installed oneDNN
fi
ninja -C "$build" benchmarks/bench_catalog benchmarks/bench_machine benchmarks/bench_gemm
out="$build/bench-results"
mkdir -p "$out"
rm -f "$out"/gbench.json "$out"/torch.json "$out"/machine.json

# Debian's OpenBLAS 0.3.21 does not recognise Zen 5 and falls back to its Haswell (AVX2) kernels
# (~120 GFLOP/s instead of ~210 at one thread): on an AVX-512 CPU ask for its SkylakeX kernels,
# the strongest peer, unless the caller chose a core. Read by bench_catalog and by PyTorch's BLAS.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
bench_start=$(date +%s)

# 3. the suite: ours, unfused, roofline probes, oneDNN, Halide; interleaved repetitions
gb_args=(--benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true
         --benchmark_report_aggregates_only=true --benchmark_min_time="$min_time"
         --benchmark_out="$out/gbench.json" --benchmark_out_format=json)
[ -n "$filter" ] && gb_args+=(--benchmark_filter="$filter")
echo "== bench_catalog (${reps} interleaved repetitions) =="
OMP_PROC_BIND=true OMP_PLACES=cores AKG_SOURCE_ROOT="$root" \
  "$build/benchmarks/bench_catalog" "${gb_args[@]}" 2> >(tee "$out/bench_catalog.stderr" >&2)

# 4. what one core costs per vector in L1, for the report to read the compute-bound kernels against
echo "== bench_machine (per-vector costs of one core, operands in L1) =="
"$build/benchmarks/bench_machine" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_min_time=0.05 --benchmark_out="$out/machine.json" --benchmark_out_format=json

# 5. PyTorch eager (Debian's python3, not a pyenv one on PATH)
if [ "$torch" = 1 ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "== PyTorch eager =="
  tfilter=()
  [ -n "$filter" ] && tfilter=(--filter "$(echo "$filter" | sed 's/[^A-Za-z0-9_].*//')")
  MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=68719476736 \
    /usr/bin/python3 benchmarks/torch_catalog.py --out "$out/torch.json" --rounds "$reps" \
    --min-time "$min_time" "${tfilter[@]}"
else
  messages+=("PyTorch peer skipped: python3-torch not importable by /usr/bin/python3 (or --no-torch).")
  echo "run-benchmarks: ${messages[-1]}" >&2
fi

# 6. the report
end=$(date +%s)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
onednn=$(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null || echo "not installed")
/usr/bin/python3 - "$out/meta.json" <<EOF
import json, sys
json.dump({"date": "$(date -u '+%Y-%m-%d %H:%M UTC')", "cpu": """$cpu""", "cores": $(nproc),
           "loadavg_before": "$load_before", "loadavg_after": "$(cut -d' ' -f1-3 /proc/loadavg)",
           "repetitions": $reps, "openblas_coretype": "${OPENBLAS_CORETYPE:-}", "seconds": $((end - bench_start)), "seconds_with_build": $((end - start)), "onednn": "oneDNN $onednn",
           "note": """$note""", "messages": $(printf '%s\n' "${messages[@]:-}" | /usr/bin/python3 -c 'import json,sys; print(json.dumps([l for l in sys.stdin.read().splitlines() if l]))')},
          open(sys.argv[1], "w"), indent=1)
EOF
# The unfused kernels are generated for the build's best target (benchmarks/meson.build): the
# fused sources to compare them with are that target's, generated/kernels/<target>/.
fused_target=$(/usr/bin/python3 -c 'import json, sys
c = json.load(open(sys.argv[1])).get("context", {})
print(c.get("akg_unfused_target") or c.get("akg_variant") or "")' "$out/gbench.json")
/usr/bin/python3 benchmarks/make_report.py --gbench "$out/gbench.json" --torch "$out/torch.json" \
  --meta "$out/meta.json" --machine "$out/machine.json" --out-dir benchmarks \
  --fused-src "generated/kernels/$fused_target" --unfused-src "$build/benchmarks"
echo "== wrote benchmarks/REPORT.md and benchmarks/report.png ($((end - bench_start)) s of benchmarking, $((end - start)) s in all) =="
