#!/usr/bin/env bash
# 64-bit index arithmetic (issue 5, item 5): kernels over tensors of more than 2^31 elements go
# through the generator (akg-gen kernel and show), every index and loop variable of the emitted
# C++ is int64_t, the shapes in the descriptors (akg-gen catalog) are the full 64-bit values, and the kernel
# compiles with the library's flags. Nothing is allocated (the kernels are not run).
#   index64.sh AKG_GEN SOURCE_ROOT CXX [KERNEL_FLAGS...]
set -uo pipefail
akg_gen=$1; src=$2; cxx=$3; shift 3
flags=("$@")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
passed=0; failed=0
ok()  { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAILED: $1"; failed=$((failed + 1)); }

# 65536 x 32769 = 2147549184 elements (> 2^31 = 2147483648); the column sum's rows are 32769
# apart, the transpose's strides are both large, and the flat index of the last element does
# not fit an int32.
t() { echo "{\"tensor_name\": \"$1\", \"shape\": $2, \"data_type\": \"float32\", \"format\": \"DefaultFormat\"}"; }
cat >"$work/big_add.json" <<EOF
{"composite": true, "op": "big_add", "platform": "AKG", "process": "cpu", "id": 0,
 "input_desc": [[$(t x "[65536, 32769]")], [$(t b "[32769]")]],
 "output_desc": [$(t y "[65536, 32769]")],
 "op_desc": [{"name": "Add", "attr": null, "input_desc": [[$(t x "[65536, 32769]")], [$(t b "[32769]")]],
              "output_desc": [$(t y "[65536, 32769]")]}]}
EOF
cat >"$work/big_colsum.json" <<EOF
{"composite": true, "op": "big_colsum", "platform": "AKG", "process": "cpu", "id": 0,
 "input_desc": [[$(t x "[65536, 32769]")]],
 "output_desc": [$(t y "[1, 32769]")],
 "op_desc": [{"name": "ReduceSum", "attr": [{"name": "axis", "value": [0]}, {"name": "keep_dims", "value": true}],
              "input_desc": [[$(t x "[65536, 32769]")]], "output_desc": [$(t y "[1, 32769]")]}]}
EOF
cat >"$work/big_rowsum.json" <<EOF
{"composite": true, "op": "big_rowsum", "platform": "AKG", "process": "cpu", "id": 0,
 "input_desc": [[$(t x "[32769, 65536]")]],
 "output_desc": [$(t y "[32769, 1]")],
 "op_desc": [{"name": "ReduceSum", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": true}],
              "input_desc": [[$(t x "[32769, 65536]")]], "output_desc": [$(t y "[32769, 1]")]}]}
EOF
cat >"$work/big_transpose.json" <<EOF
{"composite": true, "op": "big_transpose", "platform": "AKG", "process": "cpu", "id": 0,
 "input_desc": [[$(t x "[65536, 32769]")]],
 "output_desc": [$(t y "[32769, 65536]")],
 "op_desc": [{"name": "Transpose", "attr": [{"name": "perm", "value": [1, 0]}],
              "input_desc": [[$(t x "[65536, 32769]")]], "output_desc": [$(t y "[32769, 65536]")]}]}
EOF
# Same shapes: the two dims fold into one loop of 2147549184 iterations.
cat >"$work/big_same.json" <<EOF
{"composite": true, "op": "big_same", "platform": "AKG", "process": "cpu", "id": 0,
 "input_desc": [[$(t x "[65536, 32769]")], [$(t y "[65536, 32769]")]],
 "output_desc": [$(t z "[65536, 32769]")],
 "op_desc": [{"name": "Add", "attr": null, "input_desc": [[$(t x "[65536, 32769]")], [$(t y "[65536, 32769]")]],
              "output_desc": [$(t z "[65536, 32769]")]}]}
EOF
# A softmax over rows of 2^30 + 1 elements (2^31 + 2 in all): reductions and a tail per row.
r="[2, 1073741825]"; r1="[2, 1]"
cat >"$work/big_softmax.json" <<EOF
{"composite": true, "op": "big_softmax", "platform": "AKG", "process": "cpu", "id": 0,
 "input_desc": [[$(t x "$r")]], "output_desc": [$(t y "$r")],
 "op_desc": [
  {"name": "ReduceMax", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": true}],
   "input_desc": [[$(t x "$r")]], "output_desc": [$(t m "$r1")]},
  {"name": "Sub", "attr": null, "input_desc": [[$(t x "$r")], [$(t m "$r1")]], "output_desc": [$(t d "$r")]},
  {"name": "Exp", "attr": null, "input_desc": [[$(t d "$r")]], "output_desc": [$(t e "$r")]},
  {"name": "ReduceSum", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": true}],
   "input_desc": [[$(t e "$r")]], "output_desc": [$(t s "$r1")]},
  {"name": "RealDiv", "attr": null, "input_desc": [[$(t e "$r")], [$(t s "$r1")]], "output_desc": [$(t y "$r")]}]}
EOF

for k in big_add big_same big_colsum big_rowsum big_transpose big_softmax; do
  cpp="$work/$k.cpp"
  if ! "$akg_gen" kernel "$work/$k.json" -o "$cpp" 2>"$work/$k.log"; then
    bad "$k: akg-gen kernel failed"; cat "$work/$k.log"; continue
  fi
  if "$akg_gen" show "$work/$k.json" --dump-after=ast >"$work/$k.ast" 2>&1; then ok "$k: akg-gen show"
  else bad "$k: akg-gen show failed"; tail -5 "$work/$k.ast"; fi
  # No 32-bit integer type anywhere in the kernel's code (the float32 data is float; status
  # returns are int): loop variables, index constants, index temporaries.
  narrow=$(grep -nE '\b(int|int32_t|unsigned|uint32_t|short|long)\b' "$cpp" |
           grep -vE 'extern "C" int akg_kernel_fn_|^[0-9]+: *(//|/\*|\*)|static (const )?int64_t' || true)
  if [ -z "$narrow" ]; then ok "$k: no 32-bit integer in the emitted code"
  else bad "$k: 32-bit integers in the emitted code"; echo "$narrow" | head -10; fi
  loops=$(grep -cE 'for \(int64_t c[0-9]+ = ' "$cpp")
  other_loops=$(grep -E 'for \(' "$cpp" | grep -vcE 'for \(int64_t ')
  if [ "$loops" -gt 0 ] && [ "$other_loops" -eq 0 ]; then ok "$k: every loop variable is int64_t ($loops loops)"
  else bad "$k: loops not all int64_t"; grep -nE 'for \(' "$cpp" | head; fi
  # The full extents are in the code (as loop bounds or strides) and in the descriptor.
  if [ "$k" == big_softmax ]; then extents='1073741824|1073741825'; shape='2, 1073741825'
  else extents='65535|65536|32768|32769|2147549183'; shape='65536, 32769|32769, 65536'; fi
  grep -qE "\\b($extents)\\b" "$cpp" && ok "$k: the large extents appear in the code" ||
    bad "$k: no large extent in the code"
  mkdir -p "$work/$k.catalog"
  "$akg_gen" catalog "$work/$k.json" -o "$work/$k.catalog" --no-typed-entry-points 2>>"$work/$k.log" &&
    grep -qE "shape\\[\\] = \\{[^}]*($shape)" "$work/$k.catalog/akg_catalog.cpp" && ok "$k: 64-bit shape in the descriptor" ||
    bad "$k: shape missing from the descriptor"
  # A folded flat index (65536 * 32769 elements as one loop) must count past 2^31 in int64_t.
  if [ "$k" == big_same ]; then
    grep -qE 'for \(int64_t c[0-9]+ = 0; \(c[0-9]+ <= (INT64_C\()?2147549183\)?\)' "$cpp" &&
      ok "$k: one folded int64_t loop up to 2147549183" || { bad "$k: no folded 2^31+ int64_t loop"; grep -n 'for (' "$cpp"; }
  fi
  # Nothing of the rows' size on the stack (a promoted per-row buffer of 2^30 floats would
  # overflow any thread's stack).
  big_local=$(grep -nE '^\s*(float|double|uint16_t|int64_t|int32_t|bool) t[0-9]+\[[0-9]{7,}\];' "$cpp" || true)
  [ -z "$big_local" ] && ok "$k: no huge local buffer" || { bad "$k: huge local buffer"; echo "$big_local"; }
  # It compiles with the library's kernel flags; -Wconversion would flag any implicit narrowing
  # of an index (int64_t -> int) in the kernel's own code.
  if "$cxx" -std=c++17 -fPIC "${flags[@]}" -Wconversion -I"$src/kernellib/include" -I"$src/kernellib/runtime" \
       -c "$cpp" -o "$work/$k.o" 2>"$work/$k.cc.log"; then
    ok "$k: compiles"
    conv=$(grep -E "$(basename "$cpp").*conversion .*(int64_t|long int).* to .*'int'" "$work/$k.cc.log" || true)
    [ -z "$conv" ] && ok "$k: no narrowing of a 64-bit value" || { bad "$k: narrowing"; echo "$conv" | head -5; }
  else bad "$k: does not compile"; tail -20 "$work/$k.cc.log"; fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
