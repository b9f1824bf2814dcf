#!/usr/bin/env bash
# akg-gen compile / check from the command line: success, and every kind of bad input gets a
# clear message, a non-zero exit and no output file.
set -uo pipefail
akg_gen=$1; src=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
passed=0; failed=0
ok()   { echo "ok: $1"; passed=$((passed + 1)); }
bad()  { echo "FAILED: $1"; failed=$((failed + 1)); }
expect_error() { # name, expected message fragment, command...
  local name=$1 fragment=$2; shift 2
  if "$@" >"$work/out.txt" 2>&1; then bad "$name: exit status 0"; return; fi
  grep -qF -- "$fragment" "$work/out.txt" && ok "$name" || { bad "$name: message lacks '$fragment'"; cat "$work/out.txt"; }
}

# Success: a shared object that exports the C ABI over the kernel.
if "$akg_gen" compile "$src/patterns/layernorm_fwd_f32.json" -o "$work/ln.so" 2>"$work/log" &&
   nm -D "$work/ln.so" | grep -q " T akg_run$" && nm -D "$work/ln.so" | grep -q " T akg_kernel_lookup$"; then
  ok "compile exports the C ABI"
else bad "compile"; cat "$work/log"; fi

printf '{"op": "broken", "input_desc": [' > "$work/malformed.json"
expect_error "compile: malformed JSON" "malformed JSON" "$akg_gen" compile "$work/malformed.json" -o "$work/m.so"
[ -e "$work/m.so" ] && bad "malformed JSON left an output" || ok "malformed JSON: nothing written"
expect_error "compile: unknown op" "unknown op \"Frobnicate\"" "$akg_gen" compile "$src/tests/generator/bad_pattern.json" -o "$work/u.so"
expect_error "compile: missing compiler" "was not found" env CXX=/nonexistent/c++ "$akg_gen" compile "$src/patterns/add_relu_f32.json" -o "$work/c.so"
[ -e "$work/c.so" ] && bad "missing compiler left an output" || ok "missing compiler: nothing written"
expect_error "compile: unwritable output" "cannot write" "$akg_gen" compile "$src/patterns/add_relu_f32.json" -o "$work/ln.so/sub/x.so"
expect_error "compile: missing file" "File does not exist" "$akg_gen" compile "$work/none.json" -o "$work/n.so"

# check: a failing directory gives a non-zero exit and names the kernel.
mkdir -p "$work/set" && cp "$src/patterns/add_relu_f32.json" "$src/tests/generator/bad_pattern.json" "$work/set/"
if "$akg_gen" check "$work/set" >"$work/check.txt" 2>&1; then
  grep -q "1 passed, 0 failed, 1 unsupported" "$work/check.txt" && ok "check: pass + unsupported" || { bad "check summary"; cat "$work/check.txt"; }
else bad "check: exit status"; cat "$work/check.txt"; fi
expect_error "check: --unsupported-is-failure" "UNSUPPORTED" "$akg_gen" check "$work/set" --unsupported-is-failure
expect_error "check: no such path" "none of the given paths exists" "$akg_gen" check "$work/absent"

# check: a kernel over --max-elements runs at scaled-down shapes (one extent changed
# everywhere it occurs) and says so.
if "$akg_gen" check "$src/patterns/add_relu_f32.json" --max-elements 100000 --scaled-elements 50000 >"$work/scaled.txt" 2>&1 &&
   grep -q "PASS .*scaled from [0-9]* to [0-9]* elements (dim [0-9]* -> [0-9]*" "$work/scaled.txt" &&
   grep -q "1 passed, 0 failed, 0 unsupported, 0 skipped (1 run at scaled shapes)" "$work/scaled.txt"; then
  ok "check: scaled shapes"
else bad "check: scaled shapes"; cat "$work/scaled.txt"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
