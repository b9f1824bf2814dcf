#!/usr/bin/env bash
# The kernel variants of one library must not share code: a function that two variants' objects
# both define as weak or unique (an inline function of a header, a template instance) is kept
# once by the linker, possibly in its AVX-512 copy, and would then run on every CPU. Every
# function a variant object defines must therefore be local (static, anonymous namespace) or
# its own global kernel function; and no global function may be defined twice.
#   check_variant_symbols.sh LIBRARY.a
set -uo pipefail
lib=$1
# Allowed: clang's __clang_call_terminate, which every C++ object with a cleanup may define: its
# body is two calls (__cxa_begin_catch, std::terminate), the same instructions at every -march.
shared=$(readelf -sW "$lib" | awk '$4 == "FUNC" && $7 != "UND" && ($5 == "WEAK" || $5 == "UNIQUE") {print $8}' |
         grep -v -x '__clang_call_terminate' | sort -u)
twice=$(readelf -sW "$lib" | awk '$4 == "FUNC" && $7 != "UND" && $5 == "GLOBAL" {print $8}' | sort | uniq -d)
kernels=$(readelf -sW "$lib" | awk '$4 == "FUNC" && $7 != "UND" && $5 == "GLOBAL" {print $8}' | grep -c '^akg_kernel_fn_.*__')
failed=0
if [ -n "$shared" ]; then echo "FAILED: weak or unique functions, which the linker would share between variants:"; echo "$shared" | head -20; failed=1; fi
if [ -n "$twice" ]; then echo "FAILED: global functions defined twice:"; echo "$twice" | head -20; failed=1; fi
if [ "$kernels" -eq 0 ]; then echo "FAILED: no kernel variant function in $lib"; failed=1; fi
echo "$kernels kernel variant functions; $([ $failed -eq 0 ] && echo 1 || echo 0) passed, $failed failed"
exit $failed
