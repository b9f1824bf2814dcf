#!/usr/bin/env bash
# Survey of the generated kernels of the MindSpore corpus (../shared/akg-corpus): generates
# every kernel with build/generator/akg-gen, builds those that move at least --min-mb megabytes
# (every tensor once) with tools/time_kernel.cpp, times each alone (minimum of 30 runs) and
# prints them slowest first in effective GB/s: where the generator's schedules are far below the
# memory's speed. The catalog benchmark (tools/run-benchmarks.sh) never sees these kernels; the
# surveys found five scheduling bugs and two missed optimizations (docs/DESIGN.md, sink-columns
# and view-reshapes), then the transposes and optimizer updates that tile-transposes and
# stream-outputs now handle. Not part of the tests; run it on an idle machine after
# tools/setup-and-build.sh.
#
#   bash tools/corpus-survey.sh [--min-mb MB] [--threads N] [--target T] [--work DIR] [--corpus DIR]
#
# --target: the variant to generate and time (default: the best target this machine runs, the
# "best" of `akg-gen targets`), compiled with that target's flags (generated/targets.txt).
# Output: DIR/times.txt (GB/s, ms, MB, kernel), slowest first; DIR/src holds the kernel sources,
# DIR/table/NAME the one-kernel dispatch table that holds each one's descriptor, DIR/bin the
# binaries (kept: rerun a single one with OMP_NUM_THREADS=N DIR/bin/NAME).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
min_mb=8 threads=1 work="" target="" corpus="$root/../shared/akg-corpus"
while [ $# -gt 0 ]; do
  case "$1" in
    --min-mb) min_mb=$2; shift ;;
    --threads) threads=$2; shift ;;
    --target) target=$2; shift ;;
    --work) work=$2; shift ;;
    --corpus) corpus=$2; shift ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) echo "corpus-survey: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
gen="$root/build/generator/akg-gen"
[ -x "$gen" ] || { echo "corpus-survey: $gen is missing: run tools/setup-and-build.sh first" >&2; exit 1; }
[ -d "$corpus" ] || { echo "corpus-survey: no corpus at $corpus" >&2; exit 1; }
[ -n "$target" ] || target=$("$gen" targets | awk '$3 == "best" { print $1; exit }')
suffix="" flags=""
read -r suffix flags < <(awk -v t="$target" '$1 == t { s = $3; f = ""; for (i = 4; i <= NF; ++i) f = f " " $i; print s, f }' generated/targets.txt) || true
[ -n "$suffix" ] || { echo "corpus-survey: no target '$target' in generated/targets.txt" >&2; exit 2; }
define="-DAKG_HAS_VARIANT_${suffix^^}"
work=${work:-$(mktemp -d)}
mkdir -p "$work/src" "$work/table" "$work/bin"
jobs=$(nproc)

# A kernel file holds only the kernel's function; its descriptor (shapes, dtypes) is in a dispatch
# table: each kernel gets a table of its own, of the one target.
echo "== generating the corpus's kernels for $target into $work/src and $work/table"
find "$corpus" -name '*.info' -print0 |
  xargs -0 -P "$jobs" -I{} sh -c 'n=$(basename "$1" .info)
    "$0" kernel "$1" -o "$2/src/$n.cpp" --target "$3" 2>/dev/null &&
      "$0" catalog "$1" -o "$2/table/$n" --no-typed-entry-points --targets "$3" 2>/dev/null ||
      rm -f "$2/src/$n.cpp"' "$gen" {} "$work" "$target"

echo "== building the kernels of $min_mb MB or more"
python3 - "$work/src" "$work/table" "$min_mb" > "$work/selected.txt" <<'EOF'
import glob, os, re, sys
sizes = {'FLOAT16': 2, 'FLOAT32': 4, 'INT32': 4}
src, table, min_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
for path in sorted(glob.glob(os.path.join(src, '*.cpp'))):
    name = os.path.basename(path)[:-4]
    desc = os.path.join(table, name, 'akg_catalog.cpp')
    if not os.path.exists(desc):
        continue
    text = open(desc).read()
    shapes = {}
    for m in re.finditer(r'static const int64_t (\w+)_shape\[\] = \{([^}]*)\};', text):
        n = 1
        for v in m.group(2).split(','):
            if v.strip():
                n *= int(v)
        shapes[m.group(1)] = n
    moved = sum(shapes.get(m.group(2), 0) * sizes.get(m.group(1), 1)
                for m in re.finditer(r'\{"[^"]*", AKG_DTYPE_(\w+), \d+, (\w+)_shape', text))
    if moved >= min_mb * 1e6:
        print(name)
EOF
build_one() {
  local name=$1
  # shellcheck disable=SC2086  # $flags: the target's compiler flags, one word each
  g++ -O3 -fno-math-errno -fopenmp $flags "$define" -I "$root/kernellib/runtime" -I "$root/kernellib/include" \
    "$work/src/$name.cpp" "$work/table/$name/akg_catalog.cpp" "$root/tools/time_kernel.cpp" -o "$work/bin/$name" \
    2> "$work/bin/$name.err" || echo "corpus-survey: $name did not build (see $work/bin/$name.err)" >&2
}
export -f build_one
export root work flags define
xargs -P "$jobs" -n 1 bash -c 'build_one "$0"' < "$work/selected.txt"

echo "== timing $(wc -l < "$work/selected.txt") kernels at $threads thread(s)"
while read -r name; do
  [ -x "$work/bin/$name" ] || continue
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=true timeout 120 "$work/bin/$name" || echo "corpus-survey: $name failed" >&2
done < "$work/selected.txt" | awk '{printf "%8.2f GB/s %10.4f ms %9.1f MB  %s\n", $4, $2, $3, $1}' | sort -n > "$work/times.txt"
head -25 "$work/times.txt"
echo "== all $(wc -l < "$work/times.txt") in $work/times.txt"
