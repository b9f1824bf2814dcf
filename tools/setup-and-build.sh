#!/usr/bin/env bash
# README command 1: install what akg needs from Debian 12, configure, generate the catalog's
# kernels and build libakgkernels.a with the tools and tests; prints the kernels it built.
# qemu-user lets the tests run the library as other x86-64 CPUs would (AVX2, SSE4.2).
# The benchmarks are left out of build/: tools/run-benchmarks.sh installs Google Benchmark and
# the peers and builds them in build-bench/ (release, no tests).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(build-essential meson ninja-build pkg-config libisl-dev libhalide14-0-dev
          nlohmann-json3-dev libcli11-dev libgtest-dev qemu-user)
bash tools/install-packages.sh "${packages[@]}"
[ -d build ] || meson setup build -Dbenchmarks=disabled
meson compile -C build
echo "== libakgkernels: $(ls build/generated/libakgkernels.a) =="
build/generator/akg-gen catalog --help >/dev/null
echo "kernels built from patterns/, each in the variants $(sed -n 's/^Message: kernel variants: //p' build/meson-logs/meson-log.txt | tail -1):"
for f in build/generated/*.cpp; do
  case "$(basename "$f")" in akg_catalog.cpp) ;; *) basename "$f" .cpp | sed 's/__.*//';; esac
done | sort -u | sed 's/^/  /'
echo "code and data per variant (size -t):"
for lib in build/generated/libakgkernels_*.a; do
  echo "  $(basename "$lib" .a | sed 's/libakgkernels_//'): $(size -t "$lib" | awk 'END {printf "%d KiB", ($1 + $2 + $3) / 1024}')"
done
