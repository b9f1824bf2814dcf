#!/usr/bin/env bash
# Cross-builds libakgkernels and its tests for 64-bit Arm Linux in build-aarch64/ (Debian 12's
# cross toolchain, cross/aarch64-linux-gnu.ini; no benchmarks), then runs the tests that can run
# under qemu-aarch64 and prints which ran and which did not, and why. Installs its Debian
# packages when they are missing. The kernels come from the checked-in generated/ sources, or,
# where the native build's generator exists (build/generator/akg-gen, or AKG_GEN), are generated
# by it for the aarch64 target, which also builds the odd-shape twins and catalog_odd_shapes:
# every catalog kernel against the reference under qemu.
# Arguments, if any, replace the list of tests given to `meson test` (names or its options).
set -euo pipefail
cd "$(dirname "$0")/.."

# googletest: Meson builds GoogleTest from /usr/src/googletest for a cross build (the arm64
# libgtest-dev would need a second dpkg architecture). nlohmann-json3-dev is headers only,
# found through /usr/share/pkgconfig (see the cross file).
packages=(meson ninja-build pkg-config g++-aarch64-linux-gnu libgomp1-arm64-cross qemu-user
          nlohmann-json3-dev googletest)
bash tools/install-packages.sh "${packages[@]}"

options=(-Dgenerator=disabled -Dbenchmarks=disabled -Dtests=enabled)
akg_gen=${AKG_GEN:-build/generator/akg-gen}
if [ -x "$akg_gen" ]; then options+=("-Dgenerator_program=$(realpath "$akg_gen")"); else options+=(-Dgenerator_program=); fi
if [ -f build-aarch64/meson-private/coredata.dat ]; then
  meson setup --reconfigure build-aarch64 "${options[@]}"
else
  meson setup build-aarch64 --cross-file cross/aarch64-linux-gnu.ini "${options[@]}"
fi

# Tests that cannot run here: install_consumer compiles its C consumer with the build machine's
# cc; akg_run starts the aarch64 akg-run executable itself (posix_spawn), which only works where
# binfmt_misc hands Arm executables to qemu.
declare -A skip=(
  [install_consumer]="compiles its consumer with the build machine's cc"
  [catalog_kernels]="its real shapes take too long emulated: catalog_odd_shapes runs the odd-shape twins"
  [akg_run]="spawns the aarch64 akg-run itself; needs qemu-aarch64 registered in binfmt_misc"
)
if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then unset 'skip[akg_run]'; fi
run=()
while read -r t; do
  [ -n "$t" ] || continue
  if [ -z "${skip[$t]+x}" ]; then run+=("$t"); fi
done < <(meson test -C build-aarch64 --no-rebuild --list 2>/dev/null | grep -E '^[A-Za-z0-9_.:-]+$' | sed 's/^akg:\{1,2\}//')
if [ $# -gt 0 ]; then run=("$@"); fi

# Built: what the tests to run need (not the tests of the reference evaluator or of akg-run, which
# do not run here), or everything when an argument is not a test's name.
mapfile -t outputs < <(python3 - "${run[@]}" <<'EOF'
import json, os, subprocess, sys
def intro(what):
    return json.loads(subprocess.check_output(['meson', 'introspect', 'build-aarch64', what]))
tests = {t['name']: t['depends'] for t in intro('--tests')}
if not all(name in tests for name in sys.argv[1:]):
    sys.exit(0)
ids = {d for name in sys.argv[1:] for d in tests[name]}
for target in intro('--targets'):
    if target['id'] in ids:
        for f in target['filename']:
            print(os.path.relpath(f, os.path.abspath('build-aarch64')))
EOF
)
if [ ${#outputs[@]} -gt 0 ]; then nice ninja -C build-aarch64 "${outputs[@]}"; else nice meson compile -C build-aarch64; fi

echo "== running under qemu-aarch64: ${run[*]}"
for t in "${!skip[@]}"; do echo "== not run: $t (${skip[$t]})"; done
echo "== not built without isl and Halide for the host: generator, fuzz, difftest, robustness"
# Emulated, the tests take several times their native time: their timeouts are scaled, the
# vmath accuracy sweeps take every 99th input unless AKG_VMATH_SWEEP_SCALE says otherwise, and
# abi_threads runs the kernels of up to 8 MiB of buffers (AKG_THREADS_MAX_MIB).
export AKG_VMATH_SWEEP_SCALE=${AKG_VMATH_SWEEP_SCALE:-99}
export AKG_THREADS_MAX_MIB=${AKG_THREADS_MAX_MIB:-8}
meson test -C build-aarch64 --no-rebuild --print-errorlogs --timeout-multiplier 20 "${run[@]}"
