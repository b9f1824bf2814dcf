#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <Halide.h>

namespace akg {

// Loop-invariant parts of a statement's value, for the emitter to compute once before the
// loops they do not depend on (Emitter::hoist_invariant). Why: a float16 operand broadcast
// along a vector loop (global average pooling's gradient stores one value over each row of 49)
// is otherwise converted with akg_vmath's integer code, which vector loops need, in every
// iteration: some 40 scalar instructions each way once GCC has moved it out of the loop.
// Hoisted by the emitter, it is converted with one F16C instruction.
//
// Worth hoisting: an expression with a float16 conversion or a math function in it (cheap
// arithmetic GCC moves out of loops itself, at the same cost).
bool worth_hoisting(const Halide::Expr &e);

struct InvariantUse {
    bool hoistable = false;         // no lets, no variables but index variables, nothing that can trap
    std::set<std::string> iterators; // the loop iterators the value depends on
    struct Read {
        std::string buffer;             // in0, t2
        std::vector<Halide::Expr> index; // in the loop iterators
    };
    std::vector<Read> reads;
};

// `e` is in a statement's index variables (i0.., r0..); `index_vars` gives each as an
// expression of the loop iterators. Not hoistable: an expression with a let (its names are the
// statement's), any other variable, or an operation that can trap or is undefined for some
// inputs where the statement would not have run (integer division by a non-constant, float to
// integer conversion); the emitter also proves every read in bounds.
InvariantUse analyze_invariant(const Halide::Expr &e, const std::map<std::string, Halide::Expr> &index_vars);

} // namespace akg
