#!/usr/bin/env bash
# Replays every input of tests/fuzz/regressions (crashes the fuzzer once found).
#   replay_regressions.sh AKG_GEN DIR            akg-gen show FILE --dump-after=emit: exit 0 (a kernel)
#                                                or 1 (a clear error) for every file
#   replay_regressions.sh --fuzzer FUZZER DIR    the libFuzzer target runs each file once
set -uo pipefail
mode=akg-gen
if [ "${1:-}" = "--fuzzer" ]; then mode=fuzzer; shift; fi
tool=$1; dir=$2
shopt -s nullglob
files=("$dir"/*)
[ ${#files[@]} -gt 0 ] || { echo "no regression inputs in $dir"; exit 0; }
if [ "$mode" = fuzzer ]; then
  # libFuzzer runs the given files once each and exits non-zero on any finding.
  exec "$tool" -timeout=60 -rss_limit_mb=4096 "${files[@]}"
fi
failed=0
for f in "${files[@]}"; do
  timeout 120 "$tool" show "$f" --dump-after=emit >/dev/null 2>"${TMPDIR:-/tmp}/akg-replay.$$"
  rc=$?
  case $rc in
    0) echo "ok (kernel): $(basename "$f")" ;;
    1) echo "ok (error: $(tail -n 1 "${TMPDIR:-/tmp}/akg-replay.$$" | cut -c1-160)): $(basename "$f")" ;;
    *) echo "FAILED (exit $rc): $(basename "$f")"; tail -n 40 "${TMPDIR:-/tmp}/akg-replay.$$"; failed=$((failed + 1)) ;;
  esac
done
rm -f "${TMPDIR:-/tmp}/akg-replay.$$"
echo "${#files[@]} inputs, $failed failed"
[ "$failed" -eq 0 ]
