#!/usr/bin/env bash
# Robust regeneration (issue 5, item 6): `akg-gen generate` writes all or nothing, two
# generators writing one folder at once leave the same files as one, an interrupted run leaves
# only complete files, and `akg-gen compile` never leaves a half-written (or any) .so on failure.
# Every check also looks for leftover temporary files (*.tmp.*).
#   regenerate.sh AKG_GEN SOURCE_ROOT
set -uo pipefail
akg_gen=$1; src=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
passed=0; failed=0
ok()  { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAILED: $1"; failed=$((failed + 1)); }

# A subset of the catalog (the behaviour does not depend on which kernels): reductions,
# softmax, LayerNorm, GeLU, in-place updates, float16.
names="add_relu_f32 layernorm_fwd_f32 attention_softmax_dropout_f16 bias_gelu_f32 momentum_sgd_weight_decay_f32 softmax_grad_f16"
patterns=()
for n in $names; do patterns+=("$src/patterns/$n.json"); done
gen() { "$akg_gen" generate "$@" --source-root "$src" -q; }
no_temps() { [ -z "$(find "$1" -name '*.tmp.*' 2>/dev/null)" ]; }
sums() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -r sha256sum); }
# Makes every file of a folder stale (so that a generator has to rewrite all of them).
stale() { find "$1" -type f | while read -r f; do echo "// stale" >>"$f"; done; }

# The reference: one run into a fresh folder.
if gen "${patterns[@]}" -o "$work/single" && [ -f "$work/single/akg_catalog.h" ]; then
  ok "single run"
else bad "single run failed"; echo "$passed passed, $failed failed"; exit 1; fi
nfiles=$(find "$work/single" -type f | wc -l)

# 1. Two generators at once, into a fresh folder and then (twice) into a folder of stale files
#    that both have to rewrite: the result is the single run's, with no temporary file left.
for round in fresh stale1 stale2; do
  d="$work/concurrent_$round"
  if [ "$round" != fresh ]; then cp -r "$work/single" "$d"; stale "$d"; fi
  gen "${patterns[@]}" -o "$d" & p1=$!
  gen "${patterns[@]}" -o "$d" & p2=$!
  wait $p1; s1=$?; wait $p2; s2=$?
  if [ $s1 -eq 0 ] && [ $s2 -eq 0 ] && diff -r "$work/single" "$d" >/dev/null && no_temps "$d"; then
    ok "two generators at once ($round folder): same files as one run"
  else
    bad "two generators at once ($round folder): exit $s1/$s2"; diff -r "$work/single" "$d" | head -5
  fi
done

# 2. A bad pattern among good ones: non-zero exit, the folder untouched (byte for byte), a
#    missing folder not created.
cp -r "$work/single" "$work/bad"; stale "$work/bad"; before=$(sums "$work/bad")
bad_set=("${patterns[@]:0:3}" "$src/tests/generator/bad_pattern.json" "${patterns[@]:3}")
if gen "${bad_set[@]}" -o "$work/bad" 2>"$work/bad.log"; then bad "bad pattern: exit status 0"
elif [ "$(sums "$work/bad")" == "$before" ] && no_temps "$work/bad"; then ok "bad pattern among good ones: folder untouched"
else bad "bad pattern among good ones: the folder changed"; fi
grep -q "Frobnicate" "$work/bad.log" && ok "bad pattern: the message names the op" || { bad "bad pattern message"; cat "$work/bad.log"; }
gen "${bad_set[@]}" -o "$work/absent/out" 2>/dev/null
[ -e "$work/absent" ] && bad "bad pattern: created the output folder" || ok "bad pattern: no folder created"

# 3. A failure while writing (a target is a folder), after the kernels generated: nothing is
#    written, not even the files before it.
cp -r "$work/single" "$work/wfail"; stale "$work/wfail"
last=$(cd "$work/wfail/kernels" && ls */*.cpp | LC_ALL=C sort | tail -1)
rm "$work/wfail/kernels/$last"; mkdir "$work/wfail/kernels/$last"; before=$(sums "$work/wfail")
if gen "${patterns[@]}" -o "$work/wfail" 2>"$work/wfail.log"; then bad "write failure: exit status 0"
elif [ "$(sums "$work/wfail")" == "$before" ] && no_temps "$work/wfail"; then ok "write failure: nothing written at all"
else bad "write failure: some files were written"; fi
grep -q "cannot write" "$work/wfail.log" && ok "write failure: clear message" || { bad "write failure message"; cat "$work/wfail.log"; }

# 4. Interrupted runs (SIGINT, SIGTERM at several moments): every file present is complete
#    (equal to the single run's) and no temporary file is left.
i=0
for delay in 0.05 0.3 0.8 1.5; do
  for sig in INT TERM; do
    d="$work/interrupted_$i"; i=$((i + 1))
    cp -r "$work/single" "$d"; stale "$d"
    # akg-gen itself in the background, not the gen function: $! of a function is a subshell,
    # and killing that left akg-gen running (and renaming its temporary files) while the
    # checks below looked at the folder.
    "$akg_gen" generate "${patterns[@]}" --source-root "$src" -q -o "$d" 2>/dev/null & p=$!
    sleep "$delay"; kill -s "$sig" $p 2>/dev/null; wait $p
    good=1
    while read -r f; do
      rel=${f#"$d"/}
      cmp -s "$f" "$work/single/$rel" || { tail -1 "$f" | grep -q "^// stale$" && cmp -s <(sed '$d' "$f") "$work/single/$rel"; } || good=0
    done < <(find "$d" -type f)
    [ "$(find "$d" -type f | wc -l)" -eq "$nfiles" ] || good=0
    if [ $good -eq 1 ] && no_temps "$d"; then ok "SIG$sig after ${delay}s: only complete files (old or new), no temporary file"
    else bad "SIG$sig after ${delay}s: a half-written or leftover file"; find "$d" -name '*.tmp.*'; fi
  done
done

# 5. akg-gen compile: a failing compiler or a bad pattern leaves an existing .so as it was and
#    creates none where there was none; no temporary file is left.
echo "previous library" >"$work/lib.so"
env CXX=false "$akg_gen" compile "$src/patterns/add_relu_f32.json" -o "$work/lib.so" 2>/dev/null &&
  bad "compile with a failing compiler: exit status 0"
env CXX=false "$akg_gen" compile "$src/patterns/add_relu_f32.json" -o "$work/new.so" 2>/dev/null
"$akg_gen" compile "$src/tests/generator/bad_pattern.json" -o "$work/lib.so" 2>/dev/null
if [ "$(cat "$work/lib.so")" == "previous library" ] && [ ! -e "$work/new.so" ] && no_temps "$work"; then
  ok "failed compiles: the old .so untouched, no new .so, no temporary file"
else bad "failed compiles left something behind"; ls -la "$work"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
