// C++ emission from isl's AST.
#include "codegen/emit_cpp.h"

#include "codegen/float16_bits.h"
#include "codegen/loop_invariants.h"
#include "passes/math_identities.h"
#include "poly/group_short_rows.h"
#include "poly/schedule_annotation.h"
#include "poly/stream_outputs.h"

#include <algorithm>
#include <functional>
#include <map>

#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

#include <isl/id.h>
#include <isl/val.h>

namespace akg {

using namespace Halide::Internal;

namespace {

std::string c_type_of(Halide::Type t) {
    if (t.is_bool()) return "bool";
    if (t.is_float()) return t.bits() == 16 ? "uint16_t" : t.bits() == 64 ? "double" : "float";
    if (t.is_uint()) return "uint" + std::to_string(t.bits()) + "_t";
    return "int" + std::to_string(t.bits()) + "_t";
}

std::string sanitize(const std::string &name) {
    std::string out;
    for (char c : name) out += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    return out;
}

std::string float_literal(double v, int bits) {
    if (std::isnan(v)) return bits == 64 ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
    if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (bits == 64 ? "__builtin_inf()" : "__builtin_inff()");
    char buf[64];
    if (bits == 64) std::snprintf(buf, sizeof buf, "%.17g", v);
    else std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return bits == 64 ? s : s + "f";
}

bool mentions(const std::string &text, const std::string &name) {
    return std::regex_search(text, std::regex("\\b" + name + "\\b"));
}

// (x * c0 + y) / c1 → x / (c1 / c0) and (x * c0 + y) % c1 → (x % (c1 / c0)) * c0 + y, when c0
// divides c1 and 0 <= y < c0 is provable: the index maps of reshapes that merge dimensions
// (a row of heads: (row * 768 + column) / 98304), which Halide's simplifier leaves alone.
class SplitDivisionOfMultiples : public IRMutator {
public:
    explicit SplitDivisionOfMultiples(const Scope<Interval> &bounds) : bounds_(bounds) {}

private:
    const Scope<Interval> &bounds_;
    using IRMutator::visit;
    // num = x * c0 + y with 0 <= y < c0 and c1 % c0 == 0: returns x, y, c0.
    bool split(const Halide::Expr &num, int64_t c1, Halide::Expr &x, Halide::Expr &y, int64_t &c0) {
        const Add *add = num.as<Add>();
        if (!add) return false;
        for (int k = 0; k < 2; ++k) {
            const Halide::Expr &term = k ? add->b : add->a, &rest = k ? add->a : add->b;
            const Mul *mul = term.as<Mul>();
            const int64_t *c = mul ? as_const_int(mul->b) : nullptr;
            if (!c || *c <= 0 || c1 % *c != 0) continue;
            Interval r = bounds_of_expr_in_scope(rest, bounds_);
            if (r.is_bounded() && can_prove(r.min >= 0 && r.max < Halide::Internal::make_const(rest.type(), *c))) {
                x = mul->a, y = rest, c0 = *c;
                return true;
            }
        }
        return false;
    }
    Halide::Expr visit(const Div *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b), x, y;
        const int64_t *c1 = as_const_int(b);
        int64_t c0;
        if (c1 && *c1 > 0 && split(a, *c1, x, y, c0)) return x / Halide::Internal::make_const(a.type(), *c1 / c0);
        return Div::make(a, b);
    }
    Halide::Expr visit(const Mod *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b), x, y;
        const int64_t *c1 = as_const_int(b);
        int64_t c0;
        if (c1 && *c1 > 0 && split(a, *c1, x, y, c0))
            return (x % Halide::Internal::make_const(a.type(), *c1 / c0)) * Halide::Internal::make_const(a.type(), c0) + y;
        return Mod::make(a, b);
    }
};

// Divisions and remainders whose numerator is not a single variable: each costs the vector
// loop a scalar or emulated 64-bit division.
int index_divisions(const Halide::Expr &e) {
    class Count : public IRVisitor {
    public:
        int n = 0;
        using IRVisitor::visit;
        void visit(const Div *op) override {
            n += !op->a.as<Variable>();
            IRVisitor::visit(op);
        }
        void visit(const Mod *op) override {
            ++n;
            IRVisitor::visit(op);
        }
    } c;
    e.accept(&c);
    return c.n;
}

// The row-major linear index sum(terms[d] * stride_d) in an array of `shape`, as C; an empty
// term (a dimension of extent 1, or at offset 0) is left out.
std::string linear_index(const std::vector<std::string> &terms, const Shape &shape) {
    std::string linear;
    int64_t stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (!terms[d].empty()) {
            std::string term = terms[d] + (stride != 1 ? " * " + std::to_string(stride) : "");
            linear = linear.empty() ? term : term + " + " + linear;
        }
        stride *= shape[d];
    }
    return linear.empty() ? "0" : linear;
}

// Prints Halide expressions as C++. Tensor reads become buffer accesses.
class ExprPrinter : public IRVisitor {
public:
    explicit ExprPrinter(const PolyModel *model) : model_(model) {}

    // Float16 tensors staged in float arrays in the parallel body being emitted (see stage_float16.h).
    void set_staged(const std::vector<Float16Staging> *stagings) {
        staged_.clear();
        if (stagings)
            for (const auto &s : *stagings) staged_[s.buffer] = &s;
    }
    bool is_staged(const std::string &buffer) const { return staged_.count(buffer) > 0; }

    // Outside every loop of its function a statement runs once per call (or per parallel
    // iteration) and is never vectorized: its float16 conversions use the scalar F16C
    // instructions (akg_*_scalar) instead of the integer code that vector loops need.
    void set_scalar_context(bool scalar) { f16_suffix_ = scalar ? "_scalar" : ""; }
    const std::string &f16_suffix() const { return f16_suffix_; }

    // A tile-transposes source read from its transposed tile (tile_transposes.h): `array`
    // holds element (row, column) of the tile at (column - column0) * rows + (row - row0), where
    // row and column are the read's indices at positions row_arg and column_arg.
    struct TransposedRead {
        std::string array, row0, column0;
        int row_arg = -1, column_arg = -1;
        int64_t rows = 0;
    };
    void read_transposed(const std::string &buffer, const TransposedRead &read) { transposed_[buffer] = read; }
    void stop_reading_transposed() { transposed_.clear(); }

    // A float32 output streamed from a block array (stream_outputs.h) that later statements of
    // the vector loop filling it read back: they read the element from the array, which is
    // streamed out only after the loop. Each store of the buffer in the loop registers the
    // element it writes (an expression in the loop iterators) and the array element it went to
    // ("" when it went to memory: a second store of the buffer in the loop, a conditional one).
    struct ForwardedStore {
        Halide::Expr element;
        std::string array_element;
    };
    void forward_store(const std::string &buffer, const ForwardedStore &store) { forwarded_[buffer].push_back(store); }
    bool forwards(const std::string &buffer) const { return forwarded_.count(buffer) > 0; }
    void clear_forwarded_stores() { forwarded_.clear(); }

    // Float16 reads in a block of a lane reduction (Emitter::lane_loops): a read whose address
    // advances by one element per lane is converted for the whole block at once before the lane
    // loop (akg_f16_to_f32_n: vcvtph2ps) and read back from a float array, instead of converting
    // each element with akg_f16_to_f32's integer code inside the loop.
    // `iterator` is the loop iterator, `first` the C name of its value in lane 0.
    // `written`: buffers the loop writes, whose reads are left alone (the block would be
    // converted before the writes).
    // `rows`: the iterator of an enclosing loop over rows, for block_row_streams (or "").
    void begin_block_staging(const std::string &iterator, const std::string &first, const std::string &lane, int lanes,
                             std::set<std::string> written = {}, std::string rows = "") {
        block_ = BlockStaging{iterator, first, lane, lanes, std::move(written), std::move(rows), {}, {}, {}, {}};
        block_active_ = true;
    }
    // The integer CSE temporaries of the statement being printed (index arithmetic shared by
    // several reads), so that block staging sees through them to the loop iterators.
    void forget_index_lets() { index_lets_.clear(); }
    void note_index_let(const std::string &name, const Halide::Expr &value) {
        if (value.type().is_int()) index_lets_[name] = substitute(index_lets_, value);
    }
    // The reads of the last block whose inputs prefetch-streams chose: (buffer, offset of the
    // block's first element), in the order first read.
    const std::vector<std::pair<std::string, std::string>> &block_streams() const { return block_.streams; }
    // Those of them whose block is a whole row of the `rows` loop: the next row's block follows
    // it in memory, so the reads of successive rows are one stream.
    std::vector<std::pair<std::string, std::string>> block_row_streams() const {
        std::vector<std::pair<std::string, std::string>> whole;
        for (const auto &s : block_.streams)
            if (auto r = block_.row_streams.find(s.first); r != block_.row_streams.end() && r->second) whole.push_back(s);
        return whole;
    }
    // The conversions the block needs, to be emitted before its lane loop.
    std::string end_block_staging(const std::string &indent) {
        block_active_ = false;
        std::string out;
        for (const auto &a : block_.arrays) out += indent + a + "\n";
        return out;
    }

    // While a statement is printed: its index variables as expressions of the loop iterators,
    // and what is known of the iterators (bounds, strides). Read indices are simplified with
    // them, so that a reshape's (i / 64, i % 64) inside a vector strip of 64 becomes
    // (c1 / 64, c2): contiguous in the vector loop instead of a gather.
    // `back` maps the simplifier's auxiliary variables back to iterators (see Emitter::enter_loop).
    void set_index_context(const std::map<std::string, Halide::Expr> *vars, const std::map<std::string, Halide::Expr> *vars_strided,
                           const Scope<Interval> *bounds, const Scope<ModulusRemainder> *alignment,
                           const std::map<std::string, Halide::Expr> *back) {
        index_vars_ = vars;
        index_vars_strided_ = vars_strided;
        bounds_ = bounds;
        alignment_ = alignment;
        back_ = back;
    }

    // Consulted for every subexpression, outermost first, while a statement is printed (see
    // Emitter::hoist_invariant): the name of a variable that holds its value, or "".
    using Hoister = std::function<std::string(const Halide::Expr &)>;
    Hoister set_hoister(Hoister h) {
        std::swap(h, hoister_);
        return h;
    }

    std::string print(const Halide::Expr &e) {
        if (hoister_) {
            std::string hoisted = hoister_(e);
            if (!hoisted.empty()) return hoisted;
        }
        std::string saved;
        std::swap(saved, out_);
        e.accept(this);
        std::swap(saved, out_);
        return saved;
    }

private:
    struct BlockStaging {
        std::string iterator, first, lane;
        int lanes = 0;
        std::set<std::string> written;
        std::string rows; // an enclosing loop over rows, or ""
        std::map<std::string, std::string> arrays_by_address; // "in0 + (base)" -> array name
        std::vector<std::string> arrays;                     // declarations and conversions
        std::vector<std::pair<std::string, std::string>> streams; // (buffer, base) of prefetched inputs
        std::map<std::string, bool> row_streams; // stream -> whether its every read advances by `lanes` per row
    };
    BlockStaging block_;
    std::map<std::string, std::vector<ForwardedStore>> forwarded_;
    std::map<std::string, TransposedRead> transposed_;
    std::map<std::string, Halide::Expr> index_lets_;
    bool block_active_ = false;
    std::string f16_suffix_;
    Hoister hoister_;

    // The offset of the read `buffer[args]` at the block's first iteration, as C, or "" when its
    // address does not advance by exactly one element per iteration of the block's loop.
    std::string block_base(const BufferInfo &b, const std::vector<Halide::Expr> &args) {
        if (args.size() != b.shape.size()) return "";
        std::vector<Halide::Expr> resolved;
        for (const auto &a : args) resolved.push_back(substitute(index_lets_, a));
        std::vector<Halide::Expr> idx = index_exprs(resolved);
        if (idx.empty()) return "";
        Halide::Expr flat = Halide::Internal::make_zero(Halide::Int(64));
        int64_t stride = 1;
        for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0; --d) {
            flat = flat + Halide::cast(Halide::Int(64), idx[d]) * Halide::Internal::make_const(Halide::Int(64), stride);
            stride *= b.shape[d];
        }
        // The address is printed before the loop, outside the statement: only loop iterators
        // (not the statement's CSE names) may appear in it.
        class OnlyIterators : public IRVisitor {
        public:
            const Scope<Interval> *loops = nullptr;
            bool ok = true;
            using IRVisitor::visit;
            void visit(const Variable *op) override { ok &= loops && loops->contains(op->name); }
        } only;
        only.loops = bounds_;
        flat.accept(&only);
        if (!only.ok) return "";
        Halide::Expr it = Variable::make(Halide::Int(64), block_.iterator);
        Halide::Expr step = simplify(substitute(block_.iterator, it + 1, flat) - flat);
        const int64_t *one = Halide::Internal::as_const_int(step);
        if (!one || *one != 1) return "";
        if (b.prefetched_in_rows && !block_.rows.empty()) {
            Halide::Expr row = Variable::make(Halide::Int(64), block_.rows);
            Halide::Expr advance = simplify(substitute(block_.rows, row + 1, flat) - flat);
            const int64_t *by = Halide::Internal::as_const_int(advance);
            bool whole_rows = by && *by == block_.lanes;
            if (auto [r, fresh] = block_.row_streams.emplace(b.name, whole_rows); !fresh) r->second = r->second && whole_rows;
        }
        return print(simplify(substitute(block_.iterator, Variable::make(Halide::Int(64), block_.first), flat)));
    }

    // A contiguous read of an input that prefetch-streams chose, for the block's prefetches.
    void note_stream(const BufferInfo &b, const std::string &base) {
        for (const auto &s : block_.streams)
            if (s.first == b.name) return;
        block_.streams.emplace_back(b.name, base);
    }

    // The read `buffer[args]` as an element of the current block's float array, or "" when its
    // address does not advance by exactly one element per iteration of the block's loop.
    std::string block_staged_read(const std::string &buffer, const std::vector<Halide::Expr> &args) {
        const BufferInfo &b = model_->buffer(buffer);
        if (b.promoted || b.dtype != DType::Float16 || block_.written.count(buffer) || transposed_.count(buffer)) return "";
        std::string base = block_base(b, args);
        if (base.empty()) return "";
        if (b.prefetched_ahead) note_stream(b, base);
        std::string address = buffer + " + (" + base + ")";
        auto found = block_.arrays_by_address.find(address);
        if (found == block_.arrays_by_address.end()) {
            std::string name = "block_" + block_.iterator + "_" + std::to_string(block_.arrays_by_address.size());
            const std::string lanes = std::to_string(block_.lanes);
            if (block_.lanes % 16 == 0) {
                block_.arrays.push_back("float " + name + "[" + lanes + "];");
                block_.arrays.push_back("akg_f16_to_f32_n(" + address + ", " + name + ", " + lanes + ");");
            } else { // whole vectors: the loop's loads then take their data from the stores
                block_.arrays.push_back("alignas(64) float " + name + "[AKG_F16_BLOCK_FLOATS(" + lanes + ")];");
                block_.arrays.push_back("akg_f16_to_f32_padded(" + address + ", " + name + ", " + lanes + ");");
            }
            found = block_.arrays_by_address.emplace(address, name).first;
        }
        return found->second + "[" + block_.lane + "]";
    }

    const PolyModel *model_;
    std::map<std::string, const Float16Staging *> staged_;
    const std::map<std::string, Halide::Expr> *index_vars_ = nullptr, *index_vars_strided_ = nullptr;
    const Scope<Interval> *bounds_ = nullptr;
    const Scope<ModulusRemainder> *alignment_ = nullptr;
    const std::map<std::string, Halide::Expr> *back_ = nullptr;
    std::string out_;
    using IRVisitor::visit;

    // Operands are printed one statement at a time, left to right: the order of the operands
    // of `+` is unspecified in C++, and printing registers the block arrays of lane loops
    // (block_staged_read) in order, so GCC and clang builds would name them differently.
    void bin(const Halide::Expr &a, const char *op, const Halide::Expr &b) {
        std::string x = print(a), y = print(b);
        out_ += "(" + x + " " + op + " " + y + ")";
    }
    void visit(const IntImm *op) override {
        out_ += op->type.bits() == 64 ? "INT64_C(" + std::to_string(op->value) + ")" : std::to_string(op->value);
    }
    void visit(const UIntImm *op) override { out_ += op->type.is_bool() ? (op->value ? "true" : "false") : std::to_string(op->value) + "u"; }
    void visit(const FloatImm *op) override { out_ += float_literal(op->value, op->type.bits()); }
    void visit(const Cast *op) override {
        // float16 goes through akg_vmath's integer conversions: GCC 12 vectorizes no _Float16
        // conversion. Storage is uint16_t; Cast(f32, Cast(f16, x)) is a rounding.
        if (op->type == Halide::Float(32) && op->value.type() == Halide::Float(16)) {
            const Call *read = op->value.as<Call>();
            if (read && read->name.rfind("buf$", 0) == 0 &&
                (model_->buffer(read->name.substr(4)).dtype != DType::Float16 || is_staged(read->name.substr(4)))) {
                // A float16 tensor kept in a wider scratch buffer.
                out_ += "((float)" + buffer_access(read->name.substr(4), read->args) + ")";
                return;
            }
            if (const Cast *inner = op->value.as<Cast>()) {
                out_ += "akg_round_f16" + f16_suffix_ + "(" + print(inner->value) + ")";
                return;
            }
            if (read && read->name.rfind("buf$", 0) == 0 && block_active_) {
                std::string element = block_staged_read(read->name.substr(4), read->args);
                if (!element.empty()) {
                    out_ += element;
                    return;
                }
            }
            out_ += "akg_f16_to_f32" + f16_suffix_ + "(" + print(op->value) + ")";
            return;
        }
        if (op->type == Halide::Float(16)) {
            out_ += "akg_f32_to_f16" + f16_suffix_ + "(" + print(op->value) + ")";
            return;
        }
        out_ += "((" + c_type_of(op->type) + ")(" + print(op->value) + "))";
    }
    void visit(const Variable *op) override {
        out_ += op->name.size() > 1 && (op->name[0] == 'i' || op->name[0] == 'r' || op->name[0] == 'c') &&
                        isdigit(static_cast<unsigned char>(op->name[1]))
                    ? op->name
                    : "v_" + sanitize(op->name);
    }
    // int32 tensor arithmetic wraps around, as in the reference (and MindSpore); signed overflow
    // in C++ would be undefined. Index arithmetic (int64) never overflows.
    void wrapping(const char *fn, const Halide::Expr &a, const Halide::Expr &b) {
        std::string x = print(a), y = print(b);
        out_ += std::string(fn) + "(" + x + ", " + y + ")";
    }
    void visit(const Add *op) override {
        if (op->type == Halide::Int(32)) wrapping("akg_wrap_add", op->a, op->b);
        else bin(op->a, "+", op->b);
    }
    void visit(const Sub *op) override {
        if (op->type == Halide::Int(32)) wrapping("akg_wrap_sub", op->a, op->b);
        else bin(op->a, "-", op->b);
    }
    void visit(const Mul *op) override {
        if (op->type == Halide::Int(32)) wrapping("akg_wrap_mul", op->a, op->b);
        else bin(op->a, "*", op->b);
    }
    // Integer division and modulo occur in index arithmetic, with Halide's floor semantics. C's
    // truncation agrees when the dividend is non-negative, which the loop bounds usually prove;
    // isl may also run a loop downwards from a negative start (i1 = -c1), and then the index
    // goes through akg_floordiv / akg_floormod.
    bool provably_non_negative(const Halide::Expr &e) const {
        if (!bounds_) return false;
        Interval range = bounds_of_expr_in_scope(e, *bounds_);
        if (!range.has_lower_bound()) return false;
        Halide::Expr min = simplify(range.min); // as_const_int points into it: keep it alive
        const int64_t *lo = Halide::Internal::as_const_int(min);
        return lo && *lo >= 0;
    }
    void visit(const Div *op) override {
        if (op->type.is_float() || provably_non_negative(op->a)) bin(op->a, "/", op->b);
        else {
            std::string a = print(op->a), b = print(op->b);
            out_ += "akg_floordiv(" + a + ", " + b + ")";
        }
    }
    void visit(const Mod *op) override {
        if (!op->type.is_float() && provably_non_negative(op->a)) return bin(op->a, "%", op->b);
        std::string a = print(op->a), b = print(op->b);
        out_ += (op->type.is_float() ? "fmodf(" : "akg_floormod(") + a + ", " + b + ")";
    }
    // Float max/min propagate NaN (akg_fmax: two compares, a mask or, a blend). Against a
    // constant that is not NaN (a ReLU's 0) one unordered compare does (akg_fmax_c).
    static bool non_nan_float_constant(const Halide::Expr &e) {
        const FloatImm *f = e.as<FloatImm>();
        return f && !std::isnan(f->value);
    }
    void visit(const Min *op) override {
        std::string a = print(op->a), b = print(op->b);
        // akg_imin is int64_t: narrower ints get their own type back (akg_abs(int32_t)).
        std::string narrow = !op->type.is_float() && op->type.bits() < 64 ? "(" + c_type_of(op->type) + ")" : "";
        const char *fn = op->type.is_float() ? (non_nan_float_constant(op->b) ? "akg_fmin_c(" : "akg_fmin(") : "akg_imin(";
        out_ += narrow + fn + a + ", " + b + ")";
    }
    void visit(const Max *op) override {
        std::string a = print(op->a), b = print(op->b);
        std::string narrow = !op->type.is_float() && op->type.bits() < 64 ? "(" + c_type_of(op->type) + ")" : "";
        const char *fn = op->type.is_float() ? (non_nan_float_constant(op->b) ? "akg_fmax_c(" : "akg_fmax(") : "akg_imax(";
        out_ += narrow + fn + a + ", " + b + ")";
    }
    void visit(const EQ *op) override { bin(op->a, "==", op->b); }
    void visit(const NE *op) override { bin(op->a, "!=", op->b); }
    void visit(const LT *op) override { bin(op->a, "<", op->b); }
    void visit(const LE *op) override { bin(op->a, "<=", op->b); }
    void visit(const GT *op) override { bin(op->a, ">", op->b); }
    void visit(const GE *op) override { bin(op->a, ">=", op->b); }
    // Bitwise on the two truth values, not && and ||: both operands are plain reads and
    // comparisons, and GCC 12 (-O2/-O3 with AVX-512BW) miscompiles a short-circuit || or && of
    // byte compares stored to interleaved bytes (o[3i + k] = (b != 0) || (a != 0) drops a's
    // half for some lanes: random graph seed 31415, tests/difftest/regressions/
    // logical_or_of_bools_interleaved.json).
    void visit(const And *op) override { bin(op->a, "&", op->b); }
    void visit(const Or *op) override { bin(op->a, "|", op->b); }
    void visit(const Not *op) override { out_ += "(!" + print(op->a) + ")"; }
    void visit(const Select *op) override {
        std::string c = print(op->condition), t = print(op->true_value), f = print(op->false_value);
        out_ += "akg_select<" + c_type_of(op->type) + ">(" + c + ", " + t + ", " + f + ")";
    }
    void visit(const Let *op) override {
        // Lets below the top of an expression: a GNU statement expression keeps sharing.
        std::string value = print(op->value), body = print(op->body);
        out_ += "({ const auto v_" + sanitize(op->name) + " = " + value + "; " + body + "; })";
    }
    // The read `buffer[args]` of a buffer stored in the current vector loop: the store of the
    // same element (stream_outputs.cpp checked the schedule), from its array or from memory.
    std::string forwarded_read(const BufferInfo &b, const std::vector<ForwardedStore> &stores, const std::vector<Halide::Expr> &args) {
        std::vector<Halide::Expr> idx = index_exprs(args);
        Halide::Expr linear = Halide::Internal::make_const(Halide::Int(64), 0);
        int64_t stride = 1;
        for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0 && !idx.empty(); --d) {
            linear = linear + idx[d] * Halide::Internal::make_const(Halide::Int(64), stride);
            stride *= b.shape[d];
        }
        for (const auto &store : stores)
            if (!idx.empty() && is_const_zero(simplify(linear - store.element, true, *bounds_, *alignment_)))
                return store.array_element.empty() ? buffer_access(b.name, args) : store.array_element;
        throw InternalError("a read of streamed output " + b.name + " is not an element its vector loop wrote");
    }

    void visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) == 0) {
            const BufferInfo &b = model_->buffer(op->name.substr(4));
            if (auto transposed = transposed_.find(b.name); transposed != transposed_.end()) {
                const TransposedRead &t = transposed->second;
                std::vector<Halide::Expr> idx = index_exprs(op->args);
                std::string row = print(idx.empty() ? op->args[t.row_arg] : idx[t.row_arg]);
                std::string column = print(idx.empty() ? op->args[t.column_arg] : idx[t.column_arg]);
                out_ += t.array + "[(" + column + " - " + t.column0 + ") * " + std::to_string(t.rows) + " + (" + row + " - " + t.row0 + ")]";
                return;
            }
            if (auto forwarded = forwarded_.find(b.name); forwarded != forwarded_.end()) {
                out_ += forwarded_read(b, forwarded->second, op->args);
                return;
            }
            if (block_active_ && b.prefetched_ahead && !is_staged(b.name) && !b.promoted) {
                std::string base = block_base(b, op->args);
                if (!base.empty()) note_stream(b, base);
            }
            std::string access = buffer_access(op->name.substr(4), op->args);
            // Double accumulators are read back as the float32 values the IR computes with.
            if (model_->buffer(op->name.substr(4)).dtype == DType::Float64 && op->type == Halide::Float(32))
                access = "((float)" + access + ")";
            // A staged float16 tensor read as float16 bits (not widened): convert back (exact).
            if (is_staged(op->name.substr(4)) && op->type == Halide::Float(16)) access = "akg_f32_to_f16" + f16_suffix_ + "(" + access + ")";
            out_ += access;
            return;
        }
        if (op->is_intrinsic(Call::reinterpret)) { // unsigned wrapping arithmetic back to signed (two's complement)
            out_ += "((" + c_type_of(op->type) + ")(" + print(op->args[0]) + "))";
            return;
        }
        out_ += op->name + "(";
        for (size_t k = 0; k < op->args.size(); ++k) out_ += (k ? ", " : "") + print(op->args[k]);
        out_ += ")";
    }

public:
    // The indices of a read in the loop iterators, simplified (see buffer_access); empty
    // without an index context.
    std::vector<Halide::Expr> index_exprs(const std::vector<Halide::Expr> &args) {
        std::vector<Halide::Expr> idx;
        if (!index_vars_) return idx;
        for (const auto &a : args) {
            if (!a.type().is_int()) return {};
            Halide::Expr plain = simplify(substitute(*index_vars_, a), true, *bounds_, *alignment_);
            Halide::Expr split = simplify(substitute(*index_vars_strided_, a), true, *bounds_, *alignment_);
            split = simplify(SplitDivisionOfMultiples(*bounds_).mutate(split), true, *bounds_, *alignment_);
            split = simplify(substitute(*back_, split), true, *bounds_, *alignment_);
            idx.push_back(index_divisions(split) < index_divisions(plain) ? split : plain);
        }
        return idx;
    }

    std::string buffer_access(const std::string &buffer, const std::vector<Halide::Expr> &args) {
        std::vector<std::string> idx;
        for (const auto &a : args) {
            if (!index_vars_ || !a.type().is_int()) {
                idx.push_back(print(a));
                continue;
            }
            // Plain: the index in the loop iterators. Split: strided iterators written as
            // step * q + rem first (see Emitter::enter_loop), which lets a strip's
            // (c1 + c2) / 64 become c1 / 64; kept when it leaves fewer divisions.
            Halide::Expr plain = simplify(substitute(*index_vars_, a), true, *bounds_, *alignment_);
            Halide::Expr split = simplify(substitute(*index_vars_strided_, a), true, *bounds_, *alignment_);
            split = simplify(SplitDivisionOfMultiples(*bounds_).mutate(split), true, *bounds_, *alignment_);
            split = simplify(substitute(*back_, split), true, *bounds_, *alignment_);
            idx.push_back(print(index_divisions(split) < index_divisions(plain) ? split : plain));
        }
        return buffer_access(buffer, idx);
    }
    std::string buffer_access(const std::string &buffer, const std::vector<std::string> &idx) {
        auto staged = staged_.find(buffer);
        if (staged != staged_.end()) {
            const Float16Staging &st = *staged->second;
            std::vector<std::string> terms(st.box.size());
            for (size_t d = 0; d < st.box.size(); ++d)
                if (st.box[d] != 1) terms[d] = "(" + idx[d] + " - (" + st.offset_c[d] + "))";
            return "s_" + buffer + "[" + linear_index(terms, st.box) + "]";
        }
        const BufferInfo &b = model_->buffer(buffer);
        const Shape &shape = b.promoted ? b.local_shape : b.shape;
        std::vector<std::string> terms(shape.size());
        for (size_t d = 0; d < shape.size(); ++d)
            if (shape[d] != 1) terms[d] = b.promoted ? "(" + idx[d] + " - (" + b.local_offset_c[d] + "))" : idx[d];
        return buffer + "[" + linear_index(terms, shape) + "]";
    }
};

std::string ast_expr(isl_ast_expr *e);

std::string ast_op(isl_ast_expr *e, const char *op) {
    std::string a = ast_expr(isl_ast_expr_op_get_arg(e, 0)), b = ast_expr(isl_ast_expr_op_get_arg(e, 1));
    return "(" + a + " " + op + " " + b + ")";
}

// isl AST expression → C++; takes ownership of `e`.
std::string ast_expr(isl_ast_expr *e) {
    std::string s;
    switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_id: {
        isl_id *id = isl_ast_expr_get_id(e);
        s = isl_id_get_name(id);
        isl_id_free(id);
        break;
    }
    case isl_ast_expr_int: {
        isl_val *v = isl_ast_expr_get_val(e);
        long x = isl_val_get_num_si(v);
        s = x < INT32_MIN || x > INT32_MAX ? "INT64_C(" + std::to_string(x) + ")" : std::to_string(x);
        isl_val_free(v);
        break;
    }
    case isl_ast_expr_op: {
        auto arg = [&](int k) { return ast_expr(isl_ast_expr_op_get_arg(e, k)); };
        int n = isl_ast_expr_op_get_n_arg(e);
        switch (isl_ast_expr_op_get_type(e)) {
        case isl_ast_expr_op_and: case isl_ast_expr_op_and_then: s = ast_op(e, "&&"); break;
        case isl_ast_expr_op_or: case isl_ast_expr_op_or_else: s = ast_op(e, "||"); break;
        case isl_ast_expr_op_max:
        case isl_ast_expr_op_min: {
            const char *fn = isl_ast_expr_op_get_type(e) == isl_ast_expr_op_max ? "akg_imax" : "akg_imin";
            s = arg(0);
            for (int k = 1; k < n; ++k) s = std::string(fn) + "(" + s + ", " + arg(k) + ")";
            break;
        }
        case isl_ast_expr_op_minus: s = "(-" + arg(0) + ")"; break;
        case isl_ast_expr_op_add: s = ast_op(e, "+"); break;
        case isl_ast_expr_op_sub: s = ast_op(e, "-"); break;
        case isl_ast_expr_op_mul: s = ast_op(e, "*"); break;
        case isl_ast_expr_op_div: s = ast_op(e, "/"); break;
        case isl_ast_expr_op_fdiv_q: s = "akg_floordiv(" + arg(0) + ", " + arg(1) + ")"; break;
        case isl_ast_expr_op_pdiv_q: s = ast_op(e, "/"); break;
        case isl_ast_expr_op_pdiv_r: case isl_ast_expr_op_zdiv_r: s = ast_op(e, "%"); break;
        case isl_ast_expr_op_cond: case isl_ast_expr_op_select: s = "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")"; break;
        case isl_ast_expr_op_eq: s = ast_op(e, "=="); break;
        case isl_ast_expr_op_le: s = ast_op(e, "<="); break;
        case isl_ast_expr_op_lt: s = ast_op(e, "<"); break;
        case isl_ast_expr_op_ge: s = ast_op(e, ">="); break;
        case isl_ast_expr_op_gt: s = ast_op(e, ">"); break;
        default: isl_ast_expr_free(e); throw InternalError("unsupported isl AST expression");
        }
        break;
    }
    default: isl_ast_expr_free(e); throw InternalError("invalid isl AST expression");
    }
    isl_ast_expr_free(e);
    return s;
}

// isl AST expression → Halide (Int64), for the index simplification; undefined when the
// expression has an operation that index arithmetic does not need. Takes ownership of `e`.
Halide::Expr ast_to_halide(isl_ast_expr *e) {
    Halide::Expr r;
    switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_id: {
        isl_id *id = isl_ast_expr_get_id(e);
        r = Variable::make(Halide::Int(64), isl_id_get_name(id));
        isl_id_free(id);
        break;
    }
    case isl_ast_expr_int: {
        isl_val *v = isl_ast_expr_get_val(e);
        r = Halide::Internal::make_const(Halide::Int(64), isl_val_get_num_si(v));
        isl_val_free(v);
        break;
    }
    case isl_ast_expr_op: {
        int n = isl_ast_expr_op_get_n_arg(e);
        std::vector<Halide::Expr> a;
        for (int k = 0; k < n; ++k) a.push_back(ast_to_halide(isl_ast_expr_op_get_arg(e, k)));
        bool all = std::all_of(a.begin(), a.end(), [](const Halide::Expr &x) { return x.defined(); });
        if (!all) break;
        switch (isl_ast_expr_op_get_type(e)) {
        case isl_ast_expr_op_add: r = a[0] + a[1]; break;
        case isl_ast_expr_op_sub: r = a[0] - a[1]; break;
        case isl_ast_expr_op_mul: r = a[0] * a[1]; break;
        case isl_ast_expr_op_minus: r = -a[0]; break;
        case isl_ast_expr_op_fdiv_q: case isl_ast_expr_op_pdiv_q: case isl_ast_expr_op_div:
            r = Div::make(a[0], a[1]); // Halide's division floors (exact / non-negative here)
            break;
        case isl_ast_expr_op_min: r = a[0]; for (int k = 1; k < n; ++k) r = Min::make(r, a[k]); break;
        case isl_ast_expr_op_max: r = a[0]; for (int k = 1; k < n; ++k) r = Max::make(r, a[k]); break;
        default: break;
        }
        break;
    }
    default: break;
    }
    isl_ast_expr_free(e);
    return r;
}

// The statement a user node of the AST (the call `S3(c0, c1)`, kept) runs.
const PolyStatement &statement_of(const PolyModel &m, isl_ast_expr *call) {
    isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
    isl_id *id = isl_ast_expr_get_id(fn);
    const PolyStatement &st = m.statement(isl_id_get_name(id));
    isl_id_free(id);
    isl_ast_expr_free(fn);
    return st;
}

// The buffers a statement reads (an initialization reads none; other statements read what
// their stage's value reads).
std::set<std::string> buffers_read(const PolyStatement &st) {
    class Reads : public Halide::Internal::IRVisitor {
    public:
        std::set<std::string> names;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            if (op->name.rfind("buf$", 0) == 0) names.insert(op->name.substr(4));
            IRVisitor::visit(op);
        }
    } reads;
    if (st.role != StatementRole::ReduceInit) st.stage->value.accept(&reads);
    return reads.names;
}

// The statements under an AST node in the order they run (the order of the code), each with
// the buffers it reads.
std::vector<std::pair<const PolyStatement *, std::set<std::string>>> statements_in_order(const PolyModel &m, isl_ast_node *node) {
    struct Walk {
        const PolyModel *m;
        std::vector<std::pair<const PolyStatement *, std::set<std::string>>> order;
    } walk{&m, {}};
    isl_ast_node_foreach_descendant_top_down(
        node,
        [](isl_ast_node *n, void *user) -> isl_bool {
            if (isl_ast_node_get_type(n) != isl_ast_node_user) return isl_bool_true;
            auto *w = static_cast<Walk *>(user);
            isl_ast_expr *e = isl_ast_node_user_get_expr(n);
            const PolyStatement &st = statement_of(*w->m, e);
            w->order.emplace_back(&st, buffers_read(st));
            isl_ast_expr_free(e);
            return isl_bool_true;
        },
        &walk);
    return walk.order;
}

struct UserCall {
    const PolyStatement *statement = nullptr;
    std::vector<std::string> args;
    std::vector<Halide::Expr> index; // the same as Halide expressions (undefined where unknown)
};

class Emitter {
public:
    Emitter(const PolyModel &m, const EmitOptions &o) : m_(m), o_(o), printer_(&m) {}

    std::string emit(isl_ast_node *ast) {
        std::string body = emit_node(ast, 1);
        std::ostringstream os;
        for (const auto &f : helpers_) os << f << "\n";
        os << "extern \"C\" int akg_kernel_fn_" << o_.symbol << "(void *const *buffers) {\n";
        os << buffer_bindings("    ", true);
        os << body;
        if (streams_in_function_) os << "    akg_stream_fence();\n";
        os << scratch_frees("    ") << "    return AKG_STATUS_OK;\n}\n";
        return os.str();
    }

private:
    const PolyModel &m_;
    const EmitOptions &o_;
    ExprPrinter printer_;
    std::vector<std::string> helpers_;
    std::vector<std::string> iterators_; // enclosing loop iterators
    // What is known of the enclosing loops' iterators (for the index simplification).
    Scope<Interval> loop_bounds_;
    Scope<ModulusRemainder> loop_alignment_;

    static bool int_value(isl_ast_expr *e, int64_t &v) { // takes ownership
        bool ok = isl_ast_expr_get_type(e) == isl_ast_expr_int;
        if (ok) {
            isl_val *x = isl_ast_expr_get_val(e);
            v = isl_val_get_num_si(x);
            isl_val_free(x);
        }
        isl_ast_expr_free(e);
        return ok;
    }
    void enter_loop(isl_ast_node *for_node, const std::string &it) {
        int64_t lo = 0, step = 1, hi = 0;
        bool known_lo = int_value(isl_ast_node_for_get_init(for_node), lo);
        bool known_step = int_value(isl_ast_node_for_get_inc(for_node), step) && step > 0;
        bool known_hi = false;
        if (isl_ast_node_for_is_degenerate(for_node) == isl_bool_true) {
            hi = lo, known_hi = known_lo;
        } else {
            isl_ast_expr *cond = isl_ast_node_for_get_cond(for_node);
            if (isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_n_arg(cond) == 2) {
                isl_ast_expr_op_type op = isl_ast_expr_op_get_type(cond);
                known_hi = (op == isl_ast_expr_op_le || op == isl_ast_expr_op_lt) && int_value(isl_ast_expr_op_get_arg(cond, 1), hi);
                if (op == isl_ast_expr_op_lt) --hi;
            }
            isl_ast_expr_free(cond);
        }
        // A strided loop's last value (c1 <= 1023 stepping by 8 ends at 1016): what bounds reads
        // such as bias[c1 + c2], c2 < 8, within the tensor for hoisting.
        if (known_lo && known_hi && known_step && hi >= lo) hi = lo + (hi - lo) / step * step;
        Interval bounds = Interval::everything();
        if (known_lo) bounds.min = Halide::Internal::make_const(Halide::Int(64), lo);
        if (known_lo && known_hi) bounds.max = Halide::Internal::make_const(Halide::Int(64), hi);
        loop_bounds_.push(it, bounds);
        loop_alignment_.push(it, known_lo && known_step ? ModulusRemainder(step, ((lo % step) + step) % step) : ModulusRemainder());
        // A strided loop (a vector strip's outer loop, a tile loop) is written it = step * q + rem
        // for the simplifier, which then sees (64 * q + c2) / 64 as q when 0 <= c2 < 64.
        if (known_lo && known_step && step > 1) {
            int64_t rem = ((lo % step) + step) % step;
            std::string q = "q_" + it;
            Halide::Expr qv = Variable::make(Halide::Int(64), q), iv = Variable::make(Halide::Int(64), it);
            Halide::Expr s64 = Halide::Internal::make_const(Halide::Int(64), step), r64 = Halide::Internal::make_const(Halide::Int(64), rem);
            Interval qb = Interval::everything();
            qb.min = Halide::Internal::make_const(Halide::Int(64), (lo - rem) / step);
            if (known_hi) qb.max = Halide::Internal::make_const(Halide::Int(64), (hi - rem) / step);
            loop_bounds_.push(q, qb);
            strided_[it] = qv * s64 + r64;
            strided_back_[q] = Div::make(iv - r64, s64);
        }
    }
    void leave_loop(const std::string &it) {
        loop_bounds_.pop(it);
        loop_alignment_.pop(it);
        if (strided_.erase(it)) {
            loop_bounds_.pop("q_" + it);
            strided_back_.erase("q_" + it);
        }
    }
    std::map<std::string, Halide::Expr> strided_, strided_back_;
    bool in_simd_ = false;

    static std::string pad(int depth) { return std::string(4 * depth, ' '); }

    bool written(const BufferInfo &b) const {
        if (b.kind != BufferKind::KernelInput) return true;
        for (const auto &st : m_.statements)
            if (st.stage->buffer == b.name) return true;
        return false;
    }

    std::string storage_type(const BufferInfo &b) const { return dtype_c_type(b.dtype); }
    // The declaration of a promoted buffer, local to a parallel body or a function. A value
    // stored in one pass over a row and read by the next (materialize's saved_for_later_passes)
    // is reached through a __restrict pointer: GCC otherwise assumes the stores into it may
    // alias the lane accumulators of the row's reductions, and keeps those on the stack (a load
    // and a store per vector; a LayerNorm's passes ran 1.4x slower).
    std::string local_buffer_declaration(const BufferInfo &b, const std::string &indent) const {
        std::string type = storage_type(b), count = std::to_string(element_count(b.local_shape));
        if (!b.saved_for_later_passes) return indent + type + " " + b.name + "[" + count + "];\n";
        return indent + "alignas(64) " + type + " " + b.name + "_local[" + count + "];\n" + indent + type + " *__restrict " + b.name +
               " = " + b.name + "_local;\n";
    }

    // Declarations of every buffer at the top of the kernel function (from `buffers`) or of a
    // parallel body (as parameters: see parameter_list).
    std::string buffer_bindings(const std::string &indent, bool kernel_entry) {
        std::ostringstream os;
        int slot = 0;
        int num_inputs = 0;
        for (const auto &b : m_.buffers) num_inputs += b.kind == BufferKind::KernelInput;
        for (const auto &b : m_.buffers) {
            if (b.kind == BufferKind::Scratch) continue;
            int index = b.kind == BufferKind::KernelInput ? std::stoi(b.name.substr(2)) : num_inputs + std::stoi(b.name.substr(3));
            (void)slot;
            os << indent << (written(b) ? "" : "const ") << storage_type(b) << " *__restrict " << b.name << " = ("
               << (written(b) ? "" : "const ") << storage_type(b) << " *)buffers[" << index << "];\n";
        }
        if (kernel_entry) {
            std::string allocated_frees; // the scratch buffers allocated so far
            for (const auto &b : m_.buffers) {
                if (b.kind != BufferKind::Scratch) continue;
                if (b.promoted) {
                    os << local_buffer_declaration(b, indent);
                    continue;
                }
                os << indent << storage_type(b) << " *" << b.name << " = (" << storage_type(b) << " *)malloc(sizeof("
                   << storage_type(b) << ") * " << std::max<int64_t>(1, element_count(b.shape)) << ");\n";
                os << indent << "if (!" << b.name << ") {\n" << allocated_frees
                   << indent << "    return AKG_STATUS_OUT_OF_MEMORY;\n" << indent << "}\n";
                allocated_frees += indent + "    free(" + b.name + ");\n";
            }
        }
        return os.str();
    }

    std::string scratch_frees(const std::string &indent) const {
        std::string s;
        for (const auto &b : m_.buffers)
            if (b.kind == BufferKind::Scratch && !b.promoted) s += indent + "free(" + b.name + ");\n";
        return s;
    }

    std::string parameter_list() const {
        std::string s;
        for (const auto &b : m_.buffers) {
            if (b.promoted) continue;
            s += std::string(s.empty() ? "" : ", ") + (written(b) ? "" : "const ") + storage_type(b) + " *__restrict " + b.name;
        }
        return s;
    }
    std::string argument_list() const {
        std::string s;
        for (const auto &b : m_.buffers)
            if (!b.promoted) s += std::string(s.empty() ? "" : ", ") + b.name;
        return s;
    }

    UserCall user_call(isl_ast_node *node) {
        isl_ast_expr *e = isl_ast_node_user_get_expr(node);
        UserCall call;
        call.statement = &statement_of(m_, e);
        for (int k = 1; k < isl_ast_expr_op_get_n_arg(e); ++k) {
            call.args.push_back(ast_expr(isl_ast_expr_op_get_arg(e, k)));
            call.index.push_back(ast_to_halide(isl_ast_expr_op_get_arg(e, k)));
        }
        isl_ast_expr_free(e);
        return call;
    }

    static std::string init_value(const Stage &s) {
        Halide::Type t = s.value.type();
        bool f = t.is_float();
        switch (s.reduce_kind) {
        case ReduceKind::Sum: return f ? "0.0f" : "0";
        case ReduceKind::Prod: return f ? "1.0f" : "1";
        case ReduceKind::Max: return f ? "-__builtin_inff()" : "INT32_MIN";
        case ReduceKind::Min: return f ? "__builtin_inff()" : "INT32_MAX";
        }
        return "0";
    }

    static bool ordered_extremum(const Stage &s) { return s.ignores_nan || is_nan_free_flag(s.value); }

    static std::string combine(const Stage &s, const std::string &acc, const std::string &v) {
        bool wrap = s.value.type() == Halide::Int(32); // see ExprPrinter::wrapping
        switch (s.reduce_kind) {
        case ReduceKind::Sum: return wrap ? "akg_wrap_add(" + acc + ", " + v + ")" : acc + " + " + v;
        case ReduceKind::Prod: return wrap ? "akg_wrap_mul(" + acc + ", " + v + ")" : acc + " * " + v;
        // Flags (is_nan_free_flag) hold no NaN, and a NaN-dominated extremum (Stage::ignores_nan)
        // may drop one: the ordered max/min is one instruction where the NaN-propagating one
        // takes four.
        case ReduceKind::Max: return (ordered_extremum(s) ? "akg_max_ordered(" : "akg_fmax(") + acc + ", " + v + ")";
        case ReduceKind::Min: return (ordered_extremum(s) ? "akg_min_ordered(" : "akg_fmin(") + acc + ", " + v + ")";
        }
        return v;
    }

    static const char *omp_reduction(const Stage &s) {
        switch (s.reduce_kind) {
        case ReduceKind::Sum: return "+";
        case ReduceKind::Prod: return "*";
        // Float max/min combine their lanes with NaN-propagating user-defined reductions
        // (akg_kernel_support.h): OpenMP's max/min drop a NaN held by one lane (issue 5).
        case ReduceKind::Max: return s.value.type().is_float() ? "akg_max" : "max";
        case ReduceKind::Min: return s.value.type().is_float() ? "akg_min" : "min";
        }
        return "+";
    }

    // The value of a statement with CSE'd subexpressions hoisted into const locals.
    // The value a statement stores. A float16 buffer stores its value rounded to float16, so a
    // rounding to float16 at the top of the value (a Cast to float16 and back) is redundant:
    // converting the unrounded value gives the same bits, and the rounding is the costliest part.
    Halide::Expr stored_value(const Stage &s) const {
        if (rounding_deferred_.count(&s)) return float16_rounded_operand(s.value);
        if (s.kind == StageKind::Compute && m_.buffer(s.buffer).dtype == DType::Float16)
            if (Halide::Expr x = float16_rounded_operand(s.value); x.defined()) return x;
        return s.value;
    }

    // The maximum (minimum) of values rounded to float16 is the rounding of their maximum
    // (minimum): rounding is monotonic, and NaN stays NaN. A max/min reduction of rounded values
    // then accumulates the unrounded ones and rounds once per loop instead of once per element
    // (log-softmax over a float16 cast: the rounding cost more than the comparison).
    std::set<const Stage *> rounding_deferred_;

    std::string value_with_lets(const Stage &s, const std::string &indent, std::string &lets) { return value_with_lets(stored_value(s), indent, lets); }
    std::string value_with_lets(const Halide::Expr &value, const std::string &indent, std::string &lets) {
        // CSE names its temporaries from a process-wide counter; renaming them in order keeps
        // the output byte-for-byte reproducible.
        Halide::Expr e = common_subexpression_elimination(value);
        int n = 0;
        printer_.forget_index_lets();
        while (const Let *let = e.as<Let>()) {
            std::string name = "cse" + std::to_string(n++);
            lets += indent + "const " + c_type_of(let->value.type()) + " v_" + name + " = " + printer_.print(let->value) + ";\n";
            printer_.note_index_let(name, let->value);
            e = substitute(let->name, Variable::make(let->value.type(), name), let->body);
        }
        return printer_.print(e);
    }

    // The float16 bits an assignment to a float16 kernel tensor stores when its value is chosen
    // between constants (float16_bits.h); undefined otherwise, and for tensors staged as float
    // arrays, or forwarded to reads in the same loop (which expect floats).
    Halide::Expr float16_store_bits(const PolyStatement &st) const {
        const BufferInfo &b = m_.buffer(st.stage->buffer);
        if (st.role != StatementRole::Assign || b.dtype != DType::Float16 || b.kind == BufferKind::Scratch || printer_.is_staged(b.name) ||
            printer_.forwards(b.name))
            return Halide::Expr();
        return float16_bits_of_constants(stored_value(*st.stage));
    }

    std::string store_cast(const BufferInfo &b, const std::string &v) const {
        if (printer_.is_staged(b.name)) return v; // a float array, converted once after the body
        if (b.dtype == DType::Float16) return "akg_f32_to_f16" + printer_.f16_suffix() + "(" + v + ")";
        return "(" + storage_type(b) + ")(" + v + ")";
    }

    std::string bind_vars(const UserCall &c, const std::string &indent, bool out_dims, bool red_dims) {
        std::string s;
        const PolyStatement &st = *c.statement;
        for (int d = 0; d < st.out_dims && out_dims; ++d)
            s += indent + "[[maybe_unused]] const int64_t " + index_var(d) + " = " + c.args[d] + ";\n";
        for (int d = 0; d < st.reduce_dims && red_dims; ++d)
            s += indent + "[[maybe_unused]] const int64_t " + reduce_var(d) + " = " + c.args[st.out_dims + d] + ";\n";
        return s;
    }

    // Streamed outputs (stream_outputs.h). In a vector loop with constant bounds, an
    // unconditional, unit-stride store of such an output goes to a float block array; after the
    // loop the block is streamed out with non-temporal stores. Fine-grained on purpose: streaming
    // each 64-element block right after computing it keeps the loads and the streaming stores
    // interleaved (one burst of stores per parallel task measured slower than ordinary stores).
    // Outputs converted per block (BufferInfo::converted_per_block) go the same way with
    // ordinary stores: every statement storing to such an output gets a block of its own (a
    // transposing cast writes nine planes of one output per iteration), copied out in the
    // statements' order.
    struct StreamedBlock {
        std::string buffer, array, base; // the output; the block array; the element offset of its first element
        bool bits = false;               // a uint16 array of float16 bits (float16_bits_of_constants), not floats
    };
    struct StreamedLoop {
        std::string iterator;
        int64_t lo = 0, trip = 0;
        int conditional_depth = 0;
        std::vector<StreamedBlock> blocks;
        bool has_block_of(const std::string &buffer) const {
            return std::any_of(blocks.begin(), blocks.end(), [&](const StreamedBlock &block) { return block.buffer == buffer; });
        }
    };
    StreamedLoop *streamed_loop_ = nullptr;
    int conditional_depth_ = 0;        // if-nodes around the node being emitted
    bool streams_in_function_ = false; // the function being emitted streams: it fences at its end
    const std::map<std::string, Halide::Expr> *statement_index_ = nullptr; // i0.. of the statement

    bool kernel_writes_blocks() const {
        for (const auto &b : m_.buffers)
            if (b.streamed || b.converted_per_block) return true;
        return false;
    }

    // The block array element the statement stores to, or "" when it stores to memory.
    std::string streamed_block_access(const PolyStatement &st) {
        const BufferInfo &b = m_.buffer(st.stage->buffer);
        StreamedLoop *loop = streamed_loop_;
        Halide::Expr linear = statement_index_ ? store_offset(b, *statement_index_) : Halide::Expr();
        // A store to memory of a buffer whose reads the loop forwards: they read it from memory.
        auto to_memory = [&]() -> std::string {
            if (printer_.forwards(b.name)) {
                if (!linear.defined()) throw InternalError("a store of streamed output " + b.name + " at an unknown element");
                printer_.forward_store(b.name, {linear, ""});
            }
            return "";
        };
        if (!(b.streamed || b.converted_per_block) || !loop || !statement_index_ || loop->conditional_depth != conditional_depth_ ||
            (b.streamed && loop->has_block_of(b.name)))
            return to_memory();
        if (!linear.defined()) return to_memory();
        Halide::Expr it = Variable::make(Halide::Int(64), loop->iterator);
        Halide::Expr step = simplify(substitute(loop->iterator, it + 1, linear) - linear);
        if (!Halide::Internal::is_const_one(step)) return to_memory();
        Halide::Expr base = simplify(substitute(loop->iterator, Halide::Internal::make_const(Halide::Int(64), loop->lo), linear));
        // Whole cache lines (given a line-aligned tensor), or blocks of long rows of half lines
        // (see stream_outputs.h): akg_stream_* streams a half line a block shares with its
        // neighbour on both sides, so no line is written partly by both kinds.
        const int64_t line = 64, bytes = dtype_bytes(b.dtype);
        ModulusRemainder at = Halide::Internal::modulus_remainder(base, loop_alignment_);
        bool whole_lines = (at.modulus * bytes) % line == 0 && (at.remainder * bytes) % line == 0;
        if (b.streamed && ((loop->trip * bytes) % line != 0 || (!whole_lines && b.shape.back() * bytes < kLongStreamedRowBytes))) return to_memory();
        std::string array = "blk_" + b.name;
        for (int k = 1; std::any_of(loop->blocks.begin(), loop->blocks.end(), [&](const StreamedBlock &other) { return other.array == array; }); ++k)
            array = "blk_" + b.name + "_" + std::to_string(k);
        loop->blocks.push_back(StreamedBlock{b.name, array, printer_.print(base)});
        std::string element = array + "[" + loop->iterator + (loop->lo ? " - " + std::to_string(loop->lo) : "") + "]";
        if (b.streamed && b.dtype == DType::Float32) printer_.forward_store(b.name, {linear, element});
        return element;
    }

    // The element offset a statement with index `index` (i0.. -> expression) stores to in `b`;
    // undefined when an index is unknown.
    static Halide::Expr store_offset(const BufferInfo &b, const std::map<std::string, Halide::Expr> &index) {
        Halide::Expr linear;
        int64_t stride = 1;
        for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0; --d) {
            if (b.shape[d] != 1) {
                auto found = index.find(index_var(d));
                if (found == index.end()) return Halide::Expr();
                Halide::Expr term = found->second * Halide::Internal::make_const(Halide::Int(64), stride);
                linear = linear.defined() ? linear + term : term;
            }
            stride *= b.shape[d];
        }
        return linear;
    }
    static std::map<std::string, Halide::Expr> index_map(const UserCall &c) {
        std::map<std::string, Halide::Expr> vars;
        for (size_t k = 0; k < c.index.size(); ++k) {
            int out_dims = c.statement->out_dims;
            std::string name = static_cast<int>(k) < out_dims ? index_var(static_cast<int>(k)) : reduce_var(static_cast<int>(k) - out_dims);
            if (c.index[k].defined()) vars[name] = c.index[k];
        }
        return vars;
    }

    // Interleaved float16 stores (NCHW float32 -> NHWC float16 with 3 channels: the vector loop
    // runs over pixels and its G statements each store every G-th element). One statement alone
    // could not use the hardware conversion (vcvtps2ph), which needs adjacent elements; together
    // they write one contiguous run of trip * G elements per loop. They store to a float block
    // array instead, converted at once after the loop (akg_f32_to_f16_n).
    struct GroupedBlock {
        std::string array;
        Halide::Expr base; // the element offset of the run's first element
        int64_t group = 0; // G
    };
    struct GroupedLoop {
        std::string iterator;
        int64_t lo = 0, trip = 0;
        std::map<std::string, GroupedBlock> blocks; // by buffer
    };
    GroupedLoop *grouped_loop_ = nullptr;
    static constexpr int64_t kMaxGroup = 8;

    // The statements directly in `body` (a statement or a block of them), or nothing when there
    // is anything else (a condition, a loop).
    std::vector<UserCall> body_statements(isl_ast_node *body) {
        std::vector<UserCall> calls;
        if (isl_ast_node_get_type(body) == isl_ast_node_user) {
            calls.push_back(user_call(body));
            return calls;
        }
        if (isl_ast_node_get_type(body) != isl_ast_node_block) return calls;
        isl_ast_node_list *list = isl_ast_node_block_get_children(body);
        bool only_statements = true;
        for (isl_size i = 0, n = isl_ast_node_list_n_ast_node(list); i < n; ++i) {
            isl_ast_node *child = isl_ast_node_list_get_at(list, i);
            if (isl_ast_node_get_type(child) == isl_ast_node_user) calls.push_back(user_call(child));
            else only_statements = false;
            isl_ast_node_free(child);
        }
        isl_ast_node_list_free(list);
        if (!only_statements) calls.clear();
        return calls;
    }

    // Finds the float16 outputs that the statements of a constant vector loop write as one
    // interleaved run: G statements (2 <= G <= kMaxGroup) that each advance by G elements per
    // iteration and start at the G offsets base, base + 1, ..., base + G - 1.
    void find_grouped_blocks(isl_ast_node *body, GroupedLoop &loop) {
        std::map<std::string, std::vector<Halide::Expr>> starts; // by buffer
        std::map<std::string, int64_t> steps;
        std::set<std::string> rejected;
        Halide::Expr it = Variable::make(Halide::Int(64), loop.iterator);
        Halide::Expr lo = Halide::Internal::make_const(Halide::Int(64), loop.lo);
        for (const UserCall &c : body_statements(body)) {
            const PolyStatement &st = *c.statement;
            const BufferInfo &b = m_.buffer(st.stage->buffer);
            if (b.dtype != DType::Float16 || b.streamed || printer_.is_staged(b.name)) continue;
            Halide::Expr linear = store_offset(b, index_map(c));
            const int64_t *step = nullptr;
            Halide::Expr advance;
            if (linear.defined()) {
                advance = simplify(substitute(loop.iterator, it + 1, linear) - linear);
                step = Halide::Internal::as_const_int(advance);
            }
            if (st.role != StatementRole::Assign || m_.float16_copy_source(*st.stage) || !step || *step < 2 || *step > kMaxGroup ||
                (steps.count(b.name) && steps[b.name] != *step)) {
                rejected.insert(b.name);
                continue;
            }
            steps[b.name] = *step;
            starts[b.name].push_back(simplify(substitute(loop.iterator, lo, linear)));
        }
        for (const auto &[buffer, first] : starts) {
            int64_t group = steps[buffer];
            if (rejected.count(buffer) || static_cast<int64_t>(first.size()) != group || loop.trip * group > kMaxStreamedBlock * kMaxGroup) continue;
            // The smallest start is the base; the others must be base + 1 .. base + G - 1, once each.
            std::set<int64_t> offsets;
            for (const Halide::Expr &candidate : first) {
                offsets.clear();
                for (const Halide::Expr &other : first) {
                    Halide::Expr difference = simplify(other - candidate); // as_const_int points into it
                    const int64_t *r = Halide::Internal::as_const_int(difference);
                    if (r && *r >= 0 && *r < group) offsets.insert(*r);
                }
                if (static_cast<int64_t>(offsets.size()) == group) {
                    loop.blocks[buffer] = GroupedBlock{"grp_" + buffer, candidate, group};
                    break;
                }
            }
        }
    }

    // The block array element the statement stores to, or "" when it is not in a group.
    std::string grouped_block_access(const PolyStatement &st) {
        const BufferInfo &b = m_.buffer(st.stage->buffer);
        if (!grouped_loop_ || !statement_index_ || st.role != StatementRole::Assign) return "";
        auto found = grouped_loop_->blocks.find(b.name);
        if (found == grouped_loop_->blocks.end()) return "";
        const GroupedBlock &block = found->second;
        Halide::Expr linear = store_offset(b, *statement_index_);
        Halide::Expr lo = Halide::Internal::make_const(Halide::Int(64), grouped_loop_->lo);
        Halide::Expr offset = simplify(substitute(grouped_loop_->iterator, lo, linear) - block.base); // as_const_int points into it
        const int64_t *r = Halide::Internal::as_const_int(offset);
        if (!r || *r < 0 || *r >= block.group) throw InternalError("a grouped float16 store outside its run");
        std::string from_lo = grouped_loop_->iterator + (grouped_loop_->lo ? " - " + std::to_string(grouped_loop_->lo) : "");
        return block.array + "[(" + from_lo + ") * " + std::to_string(block.group) + " + " + std::to_string(*r) + "]";
    }

    std::string with_grouped_blocks(const GroupedLoop &loop, int depth, const std::string &loop_code) {
        std::string before, after;
        for (const auto &[buffer, block] : loop.blocks) {
            std::string n = std::to_string(loop.trip * block.group);
            before += pad(depth) + "alignas(64) float " + block.array + "[" + n + "];\n";
            after += pad(depth) + "akg_f32_to_f16_n(" + block.array + ", " + buffer + " + (" + printer_.print(block.base) + "), " + n + ");\n";
        }
        return before + loop_code + after;
    }

    // Around a vector loop: the block arrays before it, the streaming stores after it.
    std::string with_streamed_blocks(const StreamedLoop &loop, int depth, const std::string &loop_code) {
        if (loop.blocks.empty()) return loop_code;
        std::string before, after;
        for (const auto &block : loop.blocks) {
            const std::string &buffer = block.buffer;
            const BufferInfo &b = m_.buffer(buffer);
            streams_in_function_ |= b.streamed;
            std::string copy = block.bits ? "akg_stream_u16_n(" : !b.streamed ? "akg_f32_to_f16_n(" : b.dtype == DType::Float16 ? "akg_stream_f32_to_f16_n(" : "akg_stream_f32_n(";
            before += pad(depth) + "alignas(64) " + (block.bits ? "uint16_t " : "float ") + block.array + "[" + std::to_string(loop.trip) + "];\n";
            after += pad(depth) + copy + block.array + ", " + buffer + " + (" + block.base + "), " + std::to_string(loop.trip) + ");\n";
        }
        return before + loop_code + after;
    }

    std::string out_access(const PolyStatement &st) {
        std::vector<std::string> idx;
        for (int d = 0; d < st.out_dims; ++d) idx.push_back(index_var(d));
        return printer_.buffer_access(st.stage->buffer, idx);
    }

    std::string emit_user(isl_ast_node *node, int depth, const std::string *accumulator, bool hoist = true) {
        UserCall c = user_call(node);
        std::map<std::string, Halide::Expr> vars = index_map(c), vars_strided;
        bool known = vars.size() == c.index.size();
        for (const auto &[name, index] : vars) vars_strided[name] = substitute(strided_, index);
        printer_.set_index_context(known ? &vars : nullptr, &vars_strided, &loop_bounds_, &loop_alignment_, &strided_back_);
        printer_.set_scalar_context(loop_depth_ == 0);
        statement_index_ = known ? &vars : nullptr;
        // Accumulations keep their values in the lanes of their own loops (emit_accumulation).
        ExprPrinter::Hoister saved = printer_.set_hoister(
            accumulator || !hoist ? ExprPrinter::Hoister{} : [this](const Halide::Expr &e) { return hoist_invariant(e); });
        std::string code = emit_statement(c, depth, accumulator);
        printer_.set_hoister(saved);
        statement_index_ = nullptr;
        printer_.set_index_context(nullptr, nullptr, nullptr, nullptr, nullptr);
        return code;
    }

    // Loop-invariant subexpressions (loop_invariants.h). Each loop of the function being
    // emitted has a frame; a hoisted value is declared before the outermost loop it does not
    // depend on, that writes none of the buffers it reads, within its function (a parallel
    // body starts with a barrier). Reads must be provably in bounds: a loop may run zero times,
    // or its statement only under a condition, and the hoisted value is computed regardless.
    struct HoistFrame {
        std::string iterator; // "" for a barrier
        std::set<std::string> written;
        std::vector<std::string> declarations;
        std::map<std::string, std::string> names; // declared value -> variable
    };
    std::vector<HoistFrame> hoist_frames_;
    int hoisted_count_ = 0;

    std::set<std::string> written_buffers(isl_ast_node *node) {
        struct Ctx {
            Emitter *self;
            std::set<std::string> buffers;
        } ctx{this, {}};
        isl_ast_node_foreach_descendant_top_down(
            node,
            [](isl_ast_node *n, void *user) -> isl_bool {
                auto &c = *static_cast<Ctx *>(user);
                if (isl_ast_node_get_type(n) == isl_ast_node_user) c.buffers.insert(c.self->user_call(n).statement->stage->buffer);
                return isl_bool_true;
            },
            &ctx);
        return ctx.buffers;
    }
    // Frames around the code of one loop: its hoisted declarations go before `loop_code`.
    void enter_hoist_frame(const std::string &iterator, isl_ast_node *body) {
        hoist_frames_.push_back(HoistFrame{iterator, iterator.empty() ? std::set<std::string>{} : written_buffers(body), {}, {}});
    }
    std::string leave_hoist_frame(int depth, const std::string &loop_code) {
        std::string declarations;
        for (const auto &d : hoist_frames_.back().declarations) declarations += pad(depth) + d + "\n";
        hoist_frames_.pop_back();
        return declarations + loop_code;
    }

    bool provably_in_bounds(const InvariantUse::Read &read) const {
        const BufferInfo &b = m_.buffer(read.buffer);
        if (b.promoted || printer_.is_staged(read.buffer) || read.index.size() != b.shape.size()) return false;
        for (size_t d = 0; d < read.index.size(); ++d) {
            Interval range = bounds_of_expr_in_scope(read.index[d], loop_bounds_);
            if (!range.is_bounded()) return false;
            Halide::Expr lo = simplify(range.min), hi = simplify(range.max); // as_const_int points into them
            const int64_t *l = as_const_int(lo), *h = as_const_int(hi);
            if (!l || !h || *l < 0 || *h >= b.shape[d]) return false;
        }
        return true;
    }

    std::string hoist_invariant(const Halide::Expr &e) {
        if (!statement_index_ || hoist_frames_.empty() || !worth_hoisting(e)) return "";
        InvariantUse use = analyze_invariant(e, *statement_index_);
        if (!use.hoistable || use.reads.empty()) return "";
        for (const auto &read : use.reads)
            if (!provably_in_bounds(read)) return "";
        int target = -1;
        for (int f = static_cast<int>(hoist_frames_.size()) - 1; f >= 0; --f) {
            const HoistFrame &frame = hoist_frames_[f];
            bool writes_read = false;
            for (const auto &read : use.reads) writes_read |= frame.written.count(read.buffer) > 0;
            if (frame.iterator.empty() || use.iterators.count(frame.iterator) || writes_read) break;
            target = f;
        }
        if (target < 0) return "";
        // Computed once: the scalar F16C conversions, not the vector loops' integer code.
        ExprPrinter::Hoister self = printer_.set_hoister({});
        bool scalar = printer_.f16_suffix() == "_scalar";
        printer_.set_scalar_context(true);
        std::string value = printer_.print(substitute(*statement_index_, e));
        printer_.set_scalar_context(scalar);
        printer_.set_hoister(self);
        HoistFrame &frame = hoist_frames_[target];
        std::string type = c_type_of(e.type());
        auto found = frame.names.find(type + " " + value);
        if (found != frame.names.end()) return found->second;
        std::string name = "hoisted" + std::to_string(hoisted_count_++);
        frame.declarations.push_back("const " + type + " " + name + " = " + value + ";");
        frame.names.emplace(type + " " + value, name);
        return name;
    }

    std::string emit_statement(const UserCall &c, int depth, const std::string *accumulator) {
        const PolyStatement &st = *c.statement;
        const Stage &s = *st.stage;
        const BufferInfo &b = m_.buffer(s.buffer);
        std::string in = pad(depth + 1), out = pad(depth) + "{\n";
        if (accumulator) {
            out += bind_vars(c, in, accumulators_by_element_, true);
            std::string lets, v = value_with_lets(s, in, lets);
            if (!lane_mask_.empty()) v = "akg_select(" + lane_mask_ + ", " + c_type_of(s.value.type()) + "(" + v + "), " + c_type_of(s.value.type()) + "(" + init_value(s) + "))";
            return out + lets + in + *accumulator + " = " + combine(s, *accumulator, v) + ";\n" + pad(depth) + "}\n";
        }
        out += bind_vars(c, in, true, true);
        if (st.role == StatementRole::ReduceInit) return out + in + out_access(st) + " = " + init_value(s) + ";\n" + pad(depth) + "}\n";
        if (auto side = side_blocks_.find(b.name); side != side_blocks_.end() && st.role == StatementRole::Assign) {
            // A side block of bits (begin_side_blocks) for a value chosen between constants.
            Halide::Expr bits = float16_store_bits(st);
            std::string lets, v = bits.defined() ? value_with_lets(bits, in, lets) : value_with_lets(s, in, lets);
            return out + lets + in + side->second + " = " + v + ";\n" + pad(depth) + "}\n";
        }
        if (std::string grouped = grouped_block_access(st); !grouped.empty()) {
            std::string lets, v = value_with_lets(s, in, lets);
            return out + lets + in + grouped + " = " + v + ";\n" + pad(depth) + "}\n";
        }
        if (st.role == StatementRole::Assign && b.dtype == DType::Float16 && !b.streamed && !printer_.is_staged(b.name) &&
            !m_.float16_copy_source(s)) {
            // A float16 value invariant in the loop: hoisted with its conversion to float16.
            std::string bits = hoist_invariant(Halide::Internal::Cast::make(Halide::Float(16), stored_value(s)));
            if (!bits.empty()) return out + in + out_access(st) + " = " + bits + ";\n" + pad(depth) + "}\n";
        }
        if (const Call *source = m_.float16_copy_source(s); st.role != StatementRole::ReduceUpdate && source &&
                                                             !printer_.is_staged(s.buffer) && !printer_.is_staged(source->name.substr(4))) {
            // A float16 copy (transpose, reshape): the bits, with no conversion either way
            // (which would also quiet a signalling NaN).
            return out + in + out_access(st) + " = " + printer_.print(Halide::Expr(source)) + ";\n" + pad(depth) + "}\n";
        }
        if (Halide::Expr bits = float16_store_bits(st); bits.defined()) {
            // Chosen between constants: their float16 bits, stored as they are.
            std::string lets, v = value_with_lets(bits, in, lets);
            std::string target = b.streamed ? streamed_block_access(st) : "";
            if (!target.empty()) streamed_loop_->blocks.back().bits = true;
            else target = out_access(st);
            return out + lets + in + target + " = " + v + ";\n" + pad(depth) + "}\n";
        }
        std::string lets, v = value_with_lets(s, in, lets);
        out += lets;
        if (st.role == StatementRole::ReduceUpdate) {
            // In memory, in the accumulator's own precision.
            std::string target = out_access(st);
            out += in + target + " = " + store_cast(b, combine(s, target, v)) + ";\n";
        } else if (std::string block = streamed_block_access(st); !block.empty()) {
            out += in + block + " = " + (b.dtype == DType::Float16 ? v : "(float)(" + v + ")") + ";\n";
        } else {
            out += in + out_access(st) + " = " + store_cast(b, v) + ";\n";
        }
        return out + pad(depth) + "}\n";
    }

    // A loop nest that only accumulates reductions: its innermost body is one update statement
    // or several (sibling reductions over the same domain, fused by the scheduler), and the
    // loops' iterators index none of their outputs. Returns the update statements' nodes, or
    // nothing.
    std::vector<isl_ast_node *> reduction_nest(isl_ast_node *for_node, std::vector<isl_ast_node *> &loops, std::vector<isl_ast_node *> &sides) {
        isl_ast_node *node = isl_ast_node_copy(for_node);
        std::vector<isl_ast_node *> updates;
        auto fail = [&updates, &sides]() {
            for (auto *u : updates) isl_ast_node_free(u);
            for (auto *u : sides) isl_ast_node_free(u);
            sides.clear();
            return std::vector<isl_ast_node *>{};
        };
        while (true) {
            node = unwrapped(node);
            if (isl_ast_node_get_type(node) != isl_ast_node_for) break;
            loops.push_back(isl_ast_node_copy(node));
            isl_ast_node *body = isl_ast_node_for_get_body(node);
            isl_ast_node_free(node);
            node = body;
        }
        updates = statements_of(node);
        // Elementwise statements that join-reductions moved into the nest store from its
        // innermost loop (side statements of emit_lane_reduction).
        for (auto u = updates.begin(); u != updates.end();) {
            if (isl_ast_node_get_type(*u) == isl_ast_node_user && m_.side_statements.count(user_call(*u).statement->name)) {
                sides.push_back(*u);
                u = updates.erase(u);
            } else {
                ++u;
            }
        }
        if (updates.empty()) return fail();
        std::vector<std::string> first_out_args;
        for (isl_ast_node *u : updates) {
            if (isl_ast_node_get_type(u) != isl_ast_node_user) return fail();
            UserCall c = user_call(u);
            if (c.statement->role != StatementRole::ReduceUpdate) return fail();
            std::vector<std::string> out_args(c.args.begin(), c.args.begin() + c.statement->out_dims);
            // Sibling updates share the bindings of the output index (see emit_accumulation).
            if (u == updates.front()) first_out_args = out_args;
            else if (out_args != first_out_args) return fail();
            for (isl_ast_node *loop : loops) {
                std::string name = ast_expr(isl_ast_node_for_get_iterator(loop));
                for (const auto &a : out_args)
                    if (mentions(a, name)) return fail();
            }
        }
        return updates;
    }

    // The children of the block `node` (taken), or `node` itself when it is not a block.
    static std::vector<isl_ast_node *> statements_of(isl_ast_node *node) {
        if (isl_ast_node_get_type(node) != isl_ast_node_block) return {node};
        std::vector<isl_ast_node *> children;
        isl_ast_node_list *list = isl_ast_node_block_get_children(node);
        for (int k = 0; k < isl_ast_node_list_n_ast_node(list); ++k) children.push_back(isl_ast_node_list_get_ast_node(list, k));
        isl_ast_node_list_free(list);
        isl_ast_node_free(node);
        return children;
    }

    // `node` (taken) without the one-child blocks around what it holds.
    static isl_ast_node *without_single_blocks(isl_ast_node *node) {
        while (isl_ast_node_get_type(node) == isl_ast_node_block) {
            isl_ast_node_list *list = isl_ast_node_block_get_children(node);
            bool single = isl_ast_node_list_n_ast_node(list) == 1;
            if (single) {
                isl_ast_node_free(node);
                node = isl_ast_node_list_get_ast_node(list, 0);
            }
            isl_ast_node_list_free(list);
            if (!single) break;
        }
        return node;
    }

    // `node` (taken) without the marks and one-child blocks around what it holds.
    static isl_ast_node *unwrapped(isl_ast_node *node) {
        node = without_single_blocks(node);
        while (isl_ast_node_get_type(node) == isl_ast_node_mark) {
            isl_ast_node *child = isl_ast_node_mark_get_node(node);
            isl_ast_node_free(node);
            node = without_single_blocks(child);
        }
        return node;
    }

    // The loop under a mark::Simd that is all of `loop`'s body (taken: the caller frees it), or
    // null.
    isl_ast_node *simd_loop_body(isl_ast_node *loop) {
        isl_ast_node *body = without_single_blocks(isl_ast_node_for_get_body(loop));
        if (!mark_as<mark::Simd>(body)) {
            isl_ast_node_free(body);
            return nullptr;
        }
        isl_ast_node *child = isl_ast_node_mark_get_node(body);
        isl_ast_node_free(body);
        if (isl_ast_node_get_type(child) != isl_ast_node_for) {
            isl_ast_node_free(child);
            return nullptr;
        }
        return child;
    }

    // A bound on the value of an isl AST expression: the constant, or a constant argument of a
    // min (the last group of rows: min(15, 66 - c1)).
    static bool constant_bound(isl_ast_expr *e, int64_t &v) { // takes ownership
        bool ok = int_value(isl_ast_expr_copy(e), v);
        if (!ok && isl_ast_expr_get_type(e) == isl_ast_expr_op && isl_ast_expr_op_get_type(e) == isl_ast_expr_op_min)
            for (int k = 0; k < isl_ast_expr_op_get_n_arg(e) && !ok; ++k) ok = int_value(isl_ast_expr_op_get_arg(e, k), v);
        isl_ast_expr_free(e);
        return ok;
    }

    // Column sums (dgamma/dbeta, bias gradients: sink-columns walks a block of columns down
    // the rows) accumulate every row's float value into a double accumulator per column, two
    // conversions and a double addition per element. Here the rows run in blocks of
    // kColumnBlockRows: each block sums into float partials per column, and the partials are
    // added to the double accumulators once per block. LayerNorm's dgamma/dbeta: 0.15 -> 0.12 ms
    // at 1 thread, 0.09 -> 0.075 ms at 2; GeLU's backward (each row computes, sums and stores):
    // 3.2 -> 2.8 ms at 1 thread (harness). The block's float sum adds at most kColumnBlockRows
    // terms, as the lanes of a row reduction do. Applies to a loop over the reduction index
    // whose body holds one or more vector loops over columns holding such sums (float values,
    // double accumulators indexed by the column alone), the rest of the body (also the other
    // statements of those loops) neither reading nor writing their accumulators.
    static constexpr int64_t kColumnBlockRows = 32;
    struct ColumnSumLoop {
        isl_ast_node *columns = nullptr; // the vector loop over columns (owned)
        std::vector<isl_ast_node *> sums; // its statements (owned)
        std::vector<std::string> partials; // one per sum
        std::string col_it;
        int64_t col_lo = 0, col_hi = 0;
    };
    struct ColumnBlocking {
        std::string row_it;
        int64_t lo = 0, hi = 0;
        // A tile of at most kColumnBlockRows rows (sink-columns' mark::ColumnRowTile: the
        // loop's own bounds): one block, no loop over blocks.
        bool single = false;
        std::vector<ColumnSumLoop> loops;
        void release() {
            for (auto &l : loops) {
                for (auto *u : l.sums) isl_ast_node_free(u);
                isl_ast_node_free(l.columns);
            }
            loops.clear();
        }
    };
    bool row_tile_pending_ = false; // the next row loop is a mark::ColumnRowTile (ColumnBlocking::single)
    // Statement name -> its partial's element, while the rows of a ColumnBlocking are emitted.
    std::map<std::string, std::string> column_partials_;
    std::string column_rows_it_; // the iterator of those rows

    // The column sums of `row_loop` to block (see above); none when it has none or they do not
    // qualify.
    ColumnBlocking column_blocking(isl_ast_node *row_loop) {
        ColumnBlocking b;
        b.single = row_tile_pending_;
        row_tile_pending_ = false;
        int64_t step = 0;
        if (!column_partials_.empty() || isl_ast_node_for_is_degenerate(row_loop) == isl_bool_true || !int_value(isl_ast_node_for_get_inc(row_loop), step) ||
            step != 1 || !int_value(isl_ast_node_for_get_init(row_loop), b.lo))
            return b;
        {
            isl_ast_expr *cond = isl_ast_node_for_get_cond(row_loop);
            bool le = isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le &&
                      (b.single ? constant_bound(isl_ast_expr_op_get_arg(cond, 1), b.hi) : int_value(isl_ast_expr_op_get_arg(cond, 1), b.hi));
            isl_ast_expr_free(cond);
            // More than one block of rows (39 rows as 32 + 7: a [16000, 39, 80] middle-axis sum
            // 6.5 -> 5.4 ms at 1 thread); not one block alone (32 rows or fewer), which went both
            // ways (a sum over rows of 2 and a fused one over 32 rows 1.2x slower).
            if (!le || (b.single ? b.hi - b.lo + 1 > kColumnBlockRows : b.hi - b.lo + 1 <= kColumnBlockRows)) return b;
        }
        b.row_it = ast_expr(isl_ast_node_for_get_iterator(row_loop));
        std::set<std::string> accumulators, summed;
        int partials = 0;
        for (isl_ast_node *child : statements_of(without_single_blocks(isl_ast_node_for_get_body(row_loop)))) {
            ColumnSumLoop l;
            if (column_sum_loop(child, b.row_it, l)) {
                for (isl_ast_node *u : l.sums) {
                    const PolyStatement &st = *user_call(u).statement;
                    accumulators.insert(st.stage->buffer);
                    summed.insert(st.name);
                    l.partials.push_back("partial_" + b.row_it + (partials ? "_" + std::to_string(partials) : ""));
                    ++partials;
                }
                b.loops.push_back(std::move(l));
            }
            isl_ast_node_free(child);
        }
        // No statement of the rows reads an accumulator, and only the sums write them.
        bool ok = true;
        isl_ast_node *body = isl_ast_node_for_get_body(row_loop);
        for (const auto &[st, reads] : statements_in_order(m_, body)) {
            for (const auto &a : accumulators) ok &= !reads.count(a);
            ok &= summed.count(st->name) || !accumulators.count(st->stage->buffer);
        }
        isl_ast_node_free(body);
        if (!ok) b.release();
        return b;
    }

    // Whether `node` (borrowed) is a mark::Simd around a vector loop over columns whose body
    // holds column sums over the rows of `row_it`; fills `l` (which then owns its nodes).
    bool column_sum_loop(isl_ast_node *node, const std::string &row_it, ColumnSumLoop &l) {
        if (!mark_as<mark::Simd>(node)) return false;
        isl_ast_node *columns = without_single_blocks(isl_ast_node_mark_get_node(node));
        int64_t col_step = 0;
        bool ok = isl_ast_node_get_type(columns) == isl_ast_node_for && isl_ast_node_for_is_degenerate(columns) != isl_bool_true &&
                  int_value(isl_ast_node_for_get_inc(columns), col_step) && col_step == 1 && int_value(isl_ast_node_for_get_init(columns), l.col_lo);
        if (ok) {
            isl_ast_expr *cond = isl_ast_node_for_get_cond(columns);
            // The last block of columns may be partial (min(63, 1848 - c0)): its partials are
            // sized for a whole block, the loop's header keeps the bound.
            ok = isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le &&
                 constant_bound(isl_ast_expr_op_get_arg(cond, 1), l.col_hi) && l.col_hi - l.col_lo + 1 <= kMaxStreamedBlock;
            isl_ast_expr_free(cond);
        }
        std::vector<isl_ast_node *> sums;
        if (ok) {
            l.col_it = ast_expr(isl_ast_node_for_get_iterator(columns));
            // The loop's column sums; its other statements (the row's elementwise outputs) stay
            // as they are.
            for (isl_ast_node *u : statements_of(unwrapped(isl_ast_node_for_get_body(columns)))) {
                if (isl_ast_node_get_type(u) != isl_ast_node_user) {
                    ok = false;
                    isl_ast_node_free(u);
                    continue;
                }
                UserCall c = user_call(u);
                const PolyStatement &st = *c.statement;
                bool sum = st.role == StatementRole::ReduceUpdate && st.stage->reduce_kind == ReduceKind::Sum && st.stage->value.type() == Halide::Float(32) &&
                           m_.buffer(st.stage->buffer).dtype == DType::Float64 && !m_.side_statements.count(st.name);
                for (int d = 0; sum && d < st.out_dims; ++d) sum &= !mentions(c.args[d], row_it);
                bool over_rows = false;
                for (int d = st.out_dims; sum && d < static_cast<int>(c.args.size()); ++d) {
                    over_rows |= mentions(c.args[d], row_it); // the rows of a tile: r0 = (c1 + c3)
                    sum &= !mentions(c.args[d], l.col_it);
                }
                if (sum && over_rows) sums.push_back(u);
                else isl_ast_node_free(u);
            }
        }
        if (ok && !sums.empty()) {
            l.columns = columns;
            l.sums = std::move(sums);
            return true;
        }
        for (auto *u : sums) isl_ast_node_free(u);
        isl_ast_node_free(columns);
        return false;
    }

    // The row loop's `rows_code` (its header runs over one block of rows) inside the loop over
    // blocks, with the partials declared before and added to the accumulators after each block.
    std::string blocked_rows_code(ColumnBlocking &b, const std::string &rows_code, int depth) {
        std::string block = b.row_it + "_block";
        std::string lo = std::to_string(b.lo), hi = std::to_string(b.hi);
        if (chunk_rows_ > 0) { // the rows of one chunk (emit_row_chunks)
            lo = (b.lo ? std::to_string(b.lo) + " + " : std::string()) + "chunk * " + std::to_string(chunk_rows_);
            hi = "akg_imin(" + lo + " + " + std::to_string(chunk_rows_ - 1) + ", " + hi + ")";
        }
        std::string out = b.single ? pad(depth) + "{\n"
                                   : pad(depth) + "for (int64_t " + block + " = " + lo + "; " + block + " <= " + hi + "; " + block + " += " +
                                         std::to_string(kColumnBlockRows) + ") {\n";
        for (const auto &l : b.loops)
            for (const auto &p : l.partials) out += pad(depth + 1) + "float " + p + "[" + std::to_string(l.col_hi - l.col_lo + 1) + "] = {0};\n";
        out += indented(rows_code);
        for (auto &l : b.loops) {
            std::string named, col_header = for_header(l.columns, named);
            std::string lane = "(" + l.col_it + (l.col_lo ? " - " + std::to_string(l.col_lo) : "") + ")";
            enter_loop(l.columns, l.col_it);
            ++loop_depth_;
            out += pad(depth + 1) + "#pragma omp simd\n" + pad(depth + 1) + col_header + " {\n";
            for (size_t k = 0; k < l.sums.size(); ++k) {
                UserCall c = user_call(l.sums[k]);
                std::string target = out_access(*c.statement);
                out += pad(depth + 2) + "{\n" + bind_vars(c, pad(depth + 3), true, false);
                out += pad(depth + 3) + target + " = " + store_cast(m_.buffer(c.statement->stage->buffer), target + " + " + l.partials[k] + "[" + lane + "]") + ";\n";
                out += pad(depth + 2) + "}\n";
            }
            out += pad(depth + 1) + "}\n";
            --loop_depth_;
            leave_loop(l.col_it);
        }
        return out + pad(depth) + "}\n";
    }

    // The sums over short rows that group-rows grouped (group_short_rows.h): the loop over a
    // group's rows around the loop over a row's terms becomes one akg_row_sums_* call for the
    // group, then a loop that adds each row's sum to its accumulator. "" when `row_loop` is not
    // such a nest, or its rows are not each one contiguous run of the input.
    std::string emit_grouped_row_sums(isl_ast_node *row_loop, int depth) {
        if (m_.grouped_row_sums.empty() || isl_ast_node_for_is_degenerate(row_loop) == isl_bool_true) return "";
        int64_t step = 0, lo = 0;
        if (!int_value(isl_ast_node_for_get_inc(row_loop), step) || step != 1 || !int_value(isl_ast_node_for_get_init(row_loop), lo)) return "";
        isl_ast_node *terms = unwrapped(isl_ast_node_for_get_body(row_loop)), *update = nullptr;
        int64_t term_lo = 0, term_hi = 0, term_step = 0;
        bool nest = isl_ast_node_get_type(terms) == isl_ast_node_for && isl_ast_node_for_is_degenerate(terms) != isl_bool_true &&
                    int_value(isl_ast_node_for_get_inc(terms), term_step) && term_step == 1 && int_value(isl_ast_node_for_get_init(terms), term_lo);
        if (nest) {
            isl_ast_expr *cond = isl_ast_node_for_get_cond(terms);
            nest = isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le &&
                   int_value(isl_ast_expr_op_get_arg(cond, 1), term_hi);
            isl_ast_expr_free(cond);
        }
        if (nest) {
            update = unwrapped(isl_ast_node_for_get_body(terms));
            nest = isl_ast_node_get_type(update) == isl_ast_node_user && m_.grouped_row_sums.count(user_call(update).statement->name);
        }
        // The group's rows: lo..hi, at most kRowsPerGroup.
        std::string rows;
        if (nest) {
            isl_ast_expr *cond = isl_ast_node_for_get_cond(row_loop);
            int64_t bound = 0;
            nest = isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le &&
                   constant_bound(isl_ast_expr_op_get_arg(cond, 1), bound) && bound - lo + 1 <= kRowsPerGroup;
            int64_t hi = 0;
            if (nest && int_value(isl_ast_expr_op_get_arg(cond, 1), hi)) rows = std::to_string(hi - lo + 1);
            else if (nest) rows = "(" + ast_expr(isl_ast_expr_op_get_arg(cond, 1)) + ")" + (lo ? " - " + std::to_string(lo) : "") + " + 1";
            isl_ast_expr_free(cond);
        }
        std::string out;
        if (nest) out = grouped_row_sums_code(row_loop, terms, update, lo, term_lo, term_hi - term_lo + 1, rows, depth);
        if (update) isl_ast_node_free(update);
        isl_ast_node_free(terms);
        return out;
    }

    std::string grouped_row_sums_code(isl_ast_node *row_loop, isl_ast_node *terms, isl_ast_node *update, int64_t lo, int64_t term_lo, int64_t n,
                                      const std::string &rows, int depth) {
        std::string row_it = ast_expr(isl_ast_node_for_get_iterator(row_loop)), term_it = ast_expr(isl_ast_node_for_get_iterator(terms));
        UserCall c = user_call(update);
        const Stage &s = *c.statement->stage;
        // The outer loop runs over the rows (the sum's output index), the inner one over a
        // row's terms (its reduction index) and nothing else.
        for (int d = 0; d < c.statement->out_dims; ++d)
            if (mentions(c.args[d], term_it)) return "";
        bool over_terms = false;
        for (int d = c.statement->out_dims; d < static_cast<int>(c.args.size()); ++d) {
            over_terms |= mentions(c.args[d], term_it);
            if (mentions(c.args[d], row_it)) return "";
        }
        if (!over_terms) return "";
        const Halide::Internal::Call *read = summed_input_read(m_, s);
        const BufferInfo &in = m_.buffer(read->name.substr(4));
        // The read's offset in the input, in the loop iterators: one element per term, a
        // constant stride per row.
        enter_loop(row_loop, row_it);
        enter_loop(terms, term_it);
        std::map<std::string, Halide::Expr> vars = index_map(c), vars_strided;
        for (const auto &[name, index] : vars) vars_strided[name] = substitute(strided_, index);
        printer_.set_index_context(vars.size() == c.index.size() ? &vars : nullptr, &vars_strided, &loop_bounds_, &loop_alignment_, &strided_back_);
        std::vector<Halide::Expr> idx = printer_.index_exprs(read->args);
        printer_.set_index_context(nullptr, nullptr, nullptr, nullptr, nullptr);
        leave_loop(term_it);
        leave_loop(row_it);
        if (idx.size() != in.shape.size()) return "";
        Halide::Expr flat = Halide::Internal::make_zero(Halide::Int(64));
        int64_t stride = 1;
        for (int d = static_cast<int>(in.shape.size()) - 1; d >= 0; --d) {
            flat = flat + Halide::cast(Halide::Int(64), idx[d]) * Halide::Internal::make_const(Halide::Int(64), stride);
            stride *= in.shape[d];
        }
        auto advance = [&](const std::string &it) {
            Halide::Expr v = Variable::make(Halide::Int(64), it);
            return simplify(substitute(it, v + 1, flat) - flat);
        };
        Halide::Expr term_step = advance(term_it), row_step = advance(row_it);
        const int64_t *one = Halide::Internal::as_const_int(term_step), *row_stride = Halide::Internal::as_const_int(row_step);
        if (!one || *one != 1 || !row_stride || *row_stride < n) return "";
        std::map<std::string, Halide::Expr> first{{row_it, Halide::Internal::make_const(Halide::Int(64), lo)},
                                                  {term_it, Halide::Internal::make_const(Halide::Int(64), term_lo)}};
        std::string base = printer_.print(simplify(substitute(first, flat)));
        std::string sums = "sums_" + row_it, type = c_type_of(s.value.type());
        std::string out = pad(depth) + "{\n";
        out += pad(depth + 1) + "float " + sums + "[" + std::to_string(kRowsPerGroup) + "];\n";
        out += pad(depth + 1) + std::string(in.dtype == DType::Float16 ? "akg_row_sums_f16(" : "akg_row_sums_f32(") + in.name + " + (" + base + "), " +
               std::to_string(*row_stride) + ", " + std::to_string(n) + ", " + rows + ", " + sums + ");\n";
        std::string it;
        out += pad(depth + 1) + for_header(row_loop, it) + " {\n";
        out += pad(depth + 2) + "{\n" + bind_vars(c, pad(depth + 3), true, false);
        std::string target = out_access(*c.statement);
        out += pad(depth + 3) + "const " + type + " acc = " + target + ";\n";
        out += pad(depth + 3) + target + " = " + store_cast(m_.buffer(s.buffer), "acc + " + sums + "[" + row_it + (lo ? " - " + std::to_string(lo) : "") + "]") + ";\n";
        out += pad(depth + 2) + "}\n" + pad(depth + 1) + "}\n";
        return out + pad(depth) + "}\n";
    }

    // Whether the bounds of loop `node` use the iterator of one of the loops `outer`: OpenMP
    // collapses rectangular nests only (a skewed band: `for (c1 = c0; c1 <= c0 + 7; ...)`).
    bool bounds_use_iterators(isl_ast_node *node, const std::vector<isl_ast_node *> &outer) {
        std::string bounds = ast_expr(isl_ast_node_for_get_init(node)) + " " + ast_expr(isl_ast_node_for_get_cond(node));
        for (auto *loop : outer)
            if (mentions(bounds, ast_expr(isl_ast_node_for_get_iterator(loop)))) return true;
        return false;
    }

    std::string for_header(isl_ast_node *node, std::string &iterator) {
        iterator = ast_expr(isl_ast_node_for_get_iterator(node));
        std::string init = ast_expr(isl_ast_node_for_get_init(node));
        std::string cond = ast_expr(isl_ast_node_for_get_cond(node));
        std::string inc = ast_expr(isl_ast_node_for_get_inc(node));
        return "for (int64_t " + iterator + " = " + init + "; " + cond + "; " + iterator + " += " + inc + ")";
    }

    // A loop `for (it = lo; it <= hi; it += 1)` with constant bounds: fills `loop` (the block
    // arrays of streamed outputs need a constant size).
    bool constant_unit_loop(isl_ast_node *node, const std::string &it, StreamedLoop &loop) {
        int64_t step = 0;
        if (!int_value(isl_ast_node_for_get_init(node), loop.lo) || !int_value(isl_ast_node_for_get_inc(node), step) || step != 1 ||
            !loop_bounds_.contains(it))
            return false;
        const Interval bounds = loop_bounds_.get(it); // a copy: as_const_int points into it
        const int64_t *hi = Halide::Internal::as_const_int(bounds.max);
        if (!hi || *hi < loop.lo) return false;
        loop.iterator = it;
        loop.trip = *hi - loop.lo + 1;
        loop.conditional_depth = conditional_depth_;
        return loop.trip <= kMaxStreamedBlock;
    }
    static constexpr int64_t kMaxStreamedBlock = 1024; // elements of a block array (on the stack)
    struct ConditionalScope {
        int &depth;
        explicit ConditionalScope(int &d) : depth(d) { ++depth; }
        ~ConditionalScope() { --depth; }
    };

    // `code` one level deeper.
    static std::string indented(const std::string &code) {
        std::string out;
        size_t start = 0;
        while (start < code.size()) {
            size_t end = code.find('\n', start);
            if (end == std::string::npos) end = code.size() - 1;
            out += (code[start] == '\n' ? "" : "    ") + code.substr(start, end - start + 1);
            start = end + 1;
        }
        return out;
    }

    // Whether a node of `type` lies at or below `node`.
    static bool contains(isl_ast_node *node, isl_ast_node_type type) {
        struct Find {
            isl_ast_node_type type;
            bool found = false;
        } find{type};
        isl_ast_node_foreach_descendant_top_down(
            node,
            [](isl_ast_node *n, void *user) -> isl_bool {
                auto &f = *static_cast<Find *>(user);
                f.found |= isl_ast_node_get_type(n) == f.type;
                return isl_bool_true;
            },
            &find);
        return find.found;
    }

    // One reduction of a reduction nest: its update statement, its accumulator type, and the
    // prefix of its accumulators' names (acc, acc1, ... for the first; accB, accB1, ... next).
    struct Accumulation {
        isl_ast_node *update;
        const Stage *stage;
        std::string type;
        std::string prefix;
    };

    // A reduction nest accumulates in registers: one accumulator per loop level, each
    // starting from the identity and folded into the level above when its loop ends. Partial
    // sums then stay short (a BN-statistics sum over 100352 elements adds 32 sums of 56 sums of
    // 56), which keeps float32 rounding error near that of pairwise summation. Sibling
    // reductions (sum and sum of squares of one tensor) share the loops, each with its own
    // accumulators.
    // The side statements of a reduction's innermost loop that feed its updates (saved values
    // the updates read: stored first), or the others (stored after the updates).
    std::string emit_sides(const std::vector<isl_ast_node *> &sides, bool feeding, int depth) {
        std::string out;
        for (auto *side : sides)
            if (m_.feeding_side_statements.count(user_call(side).statement->name) == feeding) out += emit_user(side, depth, nullptr, false);
        return out;
    }

    std::string emit_accumulation(const std::vector<isl_ast_node *> &updates, const std::vector<isl_ast_node *> &sides, std::vector<isl_ast_node *> &loops,
                                  int depth) {
        std::vector<Accumulation> accs;
        for (size_t u = 0; u < updates.size(); ++u) {
            const Stage &s = *user_call(updates[u]).statement->stage;
            std::string type = c_type_of(s.value.type());
            // Long float sums (1024 terms and more) accumulate in double between loop levels;
            // the innermost loop's lanes stay float unless each lane would add 1024 terms or
            // more (emit_lane_reduction).
            if (s.reduce_kind == ReduceKind::Sum && s.value.type().is_float() && element_count(s.reduce_extents) >= 1024) type = "double";
            // int32 sums and products wrap: unsigned accumulators, so that OpenMP's own
            // combination of the lanes wraps too.
            if ((s.reduce_kind == ReduceKind::Sum || s.reduce_kind == ReduceKind::Prod) && s.value.type() == Halide::Int(32)) type = "uint32_t";
            accs.push_back({updates[u], &s, type, u == 0 ? "acc" : "acc" + std::string(1, static_cast<char>('A' + u))});
        }
        UserCall first = user_call(updates.front());
        std::string out = pad(depth) + "{\n" + bind_vars(first, pad(depth + 1), true, false);
        std::vector<std::string> targets;
        for (const auto &a : accs) {
            targets.push_back(out_access(*user_call(a.update).statement));
            out += pad(depth + 1) + a.type + " " + a.prefix + " = " + targets.back() + ";\n";
        }
        std::vector<std::string> closers;
        int d = depth + 1;
        std::vector<std::string> entered;
        auto level = [](const Accumulation &a, size_t k) { return a.prefix + (k ? std::to_string(k) : ""); };
        ++loop_depth_;
        for (size_t k = 0; k < loops.size(); ++k) {
            std::string it;
            std::string header = for_header(loops[k], it);
            enter_loop(loops[k], it);
            entered.push_back(it);
            if (k + 1 < loops.size()) {
                out += pad(d) + header + " {\n";
                std::string closer;
                for (const auto &a : accs) {
                    out += pad(d + 1) + a.type + " " + level(a, k + 1) + " = " + init_value(*a.stage) + ";\n";
                    closer += pad(d + 1) + level(a, k) + " = " + combine(*a.stage, level(a, k), level(a, k + 1)) + ";\n";
                }
                closers.push_back(closer + pad(d) + "}\n");
                ++d;
                continue;
            }
            std::vector<std::string> results;
            std::vector<bool> defer;
            rounding_deferred_.clear();
            for (const auto &a : accs) {
                results.push_back(level(a, k + 1));
                out += pad(d) + a.type + " " + results.back() + " = " + init_value(*a.stage) + ";\n";
                const Stage &s = *a.stage;
                defer.push_back((s.reduce_kind == ReduceKind::Max || s.reduce_kind == ReduceKind::Min) && float16_rounded_operand(s.value).defined());
                if (defer.back()) rounding_deferred_.insert(&s);
            }
            std::string lanes = emit_lane_reduction(loops[k], accs, sides, results, d);
            rounding_deferred_.clear();
            if (!lanes.empty()) {
                out += lanes;
            } else {
                std::string clauses;
                for (size_t u = 0; u < accs.size(); ++u)
                    clauses += std::string(u ? " " : "") + "reduction(" + omp_reduction(*accs[u].stage) + ":" + results[u] + ")";
                out += pad(d) + "#pragma omp simd " + clauses + "\n";
                bool block = accs.size() + sides.size() > 1;
                out += pad(d) + header + (block ? " {" : "") + "\n";
                out += emit_sides(sides, true, d + 1);
                for (size_t u = 0; u < accs.size(); ++u) out += emit_user(accs[u].update, d + 1, &results[u]);
                out += emit_sides(sides, false, d + 1);
                if (block) out += pad(d) + "}\n";
            }
            for (size_t u = 0; u < accs.size(); ++u) {
                if (defer[u] && !lanes.empty()) out += pad(d) + results[u] + " = akg_round_f16(" + results[u] + ");\n";
                out += pad(d) + level(accs[u], k) + " = " + combine(*accs[u].stage, level(accs[u], k), results[u]) + ";\n";
            }
        }
        for (auto it = closers.rbegin(); it != closers.rend(); ++it) out += *it;
        for (const auto &it : entered) leave_loop(it);
        --loop_depth_;
        printer_.set_scalar_context(loop_depth_ == 0);
        for (size_t u = 0; u < accs.size(); ++u)
            out += pad(depth + 1) + targets[u] + " = " + store_cast(m_.buffer(accs[u].stage->buffer), accs[u].prefix) + ";\n";
        out += pad(depth) + "}\n";
        for (auto *l : loops) isl_ast_node_free(l);
        for (auto *u : updates) isl_ast_node_free(u);
        for (auto *u : sides) isl_ast_node_free(u);
        return out;
    }

    // The innermost loop of a reduction nest, accumulated in kLanes explicit lanes: blocks of
    // kLanes consecutive iterations are added lane by lane under `omp simd`, the last partial
    // block re-reads the final kLanes iterations with the ones already counted masked to the
    // identity (every read stays in bounds, and the block stays one vector), and the lanes are
    // combined by a halving tree (akg_combine_lanes). The order of the additions is therefore
    // fixed by the generated code, not by the compiler. OpenMP's `simd reduction` leaves the
    // lanes to GCC, which adds them one after the other at the end of each loop and runs the
    // remainder as scalar code: on a row of 49 float16 values (global average pooling) those
    // two cost more than the vector loop. Two vectors of lanes (kLanes = 32 floats) also hide
    // the latency of the additions; loops of kWideLanesFrom iterations or more get four
    // (kWideLanes = 64): LayerNorm f16's three loops over rows of 768 (12 blocks) became 1.1 to
    // 1.2x faster, and a row of fewer than 64 elements would run the scalar loop. Returns ""
    // when the loop is not a unit-stride `it <= ub` loop or a type has no lanes; the caller
    // then emits the `simd reduction` loop.
    static constexpr int kLanes = 32, kWideLanes = 64;
    static constexpr int64_t kWideLanesFrom = 512;
    std::string emit_lane_reduction(isl_ast_node *loop, const std::vector<Accumulation> &accs, const std::vector<isl_ast_node *> &sides,
                                    const std::vector<std::string> &results, int d) {
        for (const auto &a : accs) {
            Halide::Type t = a.stage->value.type();
            if (!(t.is_float() && (t.bits() == 32 || t.bits() == 64)) && t != Halide::Int(32)) return "";
        }
        int64_t step = 0;
        if (!int_value(isl_ast_node_for_get_inc(loop), step) || step != 1) return "";
        if (isl_ast_node_for_is_degenerate(loop) == isl_bool_true) return "";
        isl_ast_expr *cond = isl_ast_node_for_get_cond(loop);
        std::string it = ast_expr(isl_ast_node_for_get_iterator(loop)), end;
        if (isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_n_arg(cond) == 2) {
            isl_ast_expr_op_type op = isl_ast_expr_op_get_type(cond);
            isl_ast_expr *lhs = isl_ast_expr_op_get_arg(cond, 0);
            bool on_iterator = ast_expr(lhs) == it;
            if (on_iterator && op == isl_ast_expr_op_le) end = "(" + ast_expr(isl_ast_expr_op_get_arg(cond, 1)) + ") + 1";
            if (on_iterator && op == isl_ast_expr_op_lt) end = ast_expr(isl_ast_expr_op_get_arg(cond, 1));
        }
        isl_ast_expr_free(cond);
        if (end.empty()) return "";
        std::string begin_v = it + "_begin", end_v = it + "_end";
        std::string out = pad(d) + "{\n";
        out += pad(d + 1) + "const int64_t " + begin_v + " = " + ast_expr(isl_ast_node_for_get_init(loop)) + ", " + end_v + " = " + end + ";\n";
        enter_loop(loop, it);
        int64_t lo = 0, hi = 0, trips = 0; // trips: 0 when not a constant
        if (int_value(isl_ast_node_for_get_init(loop), lo) && loop_bounds_.contains(it) && loop_bounds_.get(it).has_upper_bound() &&
            Halide::Internal::as_const_int(loop_bounds_.get(it).max))
            trips = (hi = *Halide::Internal::as_const_int(loop_bounds_.get(it).max)) - lo + 1;
        bool split = iterators_.empty() && trips >= kSplitMinIterations;
        int lanes = split || trips >= kWideLanesFrom ? kWideLanes : kLanes;
        // Float lanes unless one lane alone would add a thousand terms (see emit_accumulation).
        std::vector<std::string> lane_types;
        for (const auto &a : accs) {
            lane_types.push_back(a.type);
            if (a.type == "double" && a.stage->value.type() == Halide::Float(32)) {
                int64_t longest = 1;
                for (const auto &e : a.stage->reduce_extents) longest = std::max<int64_t>(longest, e);
                if (longest / lanes < 1024) lane_types.back() = "float";
            }
        }
        for (const auto &t : lane_types)
            if (t == "double") lanes = kLanes; // already four vectors
        if (split) {
            // A reduction of the whole kernel (nothing outside it runs in parallel): kChunks
            // fixed ranges reduced in parallel, then combined in order, so that the result does
            // not depend on the number of threads.
            std::string K = std::to_string(kChunks), chunk = it + "_chunk";
            std::vector<std::string> partials;
            for (size_t u = 0; u < accs.size(); ++u) {
                partials.push_back("partials_" + results[u]);
                out += pad(d + 1) + lane_types[u] + " " + partials.back() + "[" + K + "];\n";
            }
            // The chunks' loop, on the calling thread alone when there is one (akg_single_thread).
            std::string chunks = pad(d + 2) + "for (int64_t " + chunk + " = 0; " + chunk + " < " + K + "; ++" + chunk + ") {\n";
            chunks += pad(d + 3) + "const int64_t " + it + "_lo = " + begin_v + " + (" + end_v + " - " + begin_v + ") * " + chunk + " / " + K +
                      ", " + it + "_hi = " + begin_v + " + (" + end_v + " - " + begin_v + ") * (" + chunk + " + 1) / " + K + ";\n";
            std::vector<std::string> chunk_results;
            for (const auto &p : partials) chunk_results.push_back(p + "[" + chunk + "]");
            chunks += lane_loops(accs, sides, lane_types, lanes, it, it + "_lo", it + "_hi", chunk_results, d + 3);
            chunks += pad(d + 2) + "}\n";
            out += pad(d + 1) + "if (akg_single_thread()) {\n" + chunks + pad(d + 1) + "} else {\n";
            out += pad(d + 2) + "#pragma omp parallel for schedule(static)\n" + chunks + pad(d + 1) + "}\n";
            for (size_t u = 0; u < accs.size(); ++u)
                out += pad(d + 1) + results[u] + " = akg_combine_lanes<" + K + ">(" + partials[u] + ", [](" + lane_types[u] + " a, " + lane_types[u] +
                       " b) { return " + combine(*accs[u].stage, "a", "b") + "; });\n";
        } else {
            out += lane_loops(accs, sides, lane_types, lanes, it, begin_v, end_v, results, d + 1);
        }
        leave_loop(it);
        return out + pad(d) + "}\n";
    }
    static constexpr int kChunks = 16;
    static constexpr int64_t kSplitMinIterations = 1 << 16;
    static constexpr int kFloatLaneBlocks = 32; // see lane_loops

    // A lane reduction that reads a run some earlier statement of the parallel body read (its
    // second pass over the run) prefetches the next iteration's run, a share per block
    // (prefetch_next_rows.h). Declares the shares before the block loop (into `out`) and
    // returns the block loop's prefetch calls.
    std::string next_row_prefetches(const std::vector<Accumulation> &accs, const std::string &it, const std::string &begin_v,
                                    const std::string &full, const std::string &block, const std::string &L, const std::string &p1,
                                    const std::string &p2, std::string &out) {
        if (!in_parallel_body_ || !row_prefetches_) return "";
        std::set<const PolyStatement *> updates = update_statements(accs);
        auto is_update = [&](const auto &entry) { return updates.count(entry.first) > 0; };
        auto first = first_update_in_body(updates);
        std::string calls;
        for (const auto &p : *row_prefetches_) {
            if (prefetched_in_body_.count(p.buffer)) continue;
            auto reads_run = [&](const auto &entry) { return entry.second.count(p.buffer) > 0; };
            bool reads = std::any_of(first, body_order_.cend(), [&](const auto &entry) { return is_update(entry) && reads_run(entry); });
            bool read_before = std::any_of(body_order_.cbegin(), first, reads_run);
            if (!reads || !read_before) continue;
            prefetched_in_body_.insert(p.buffer);
            const BufferInfo &b = m_.buffer(p.buffer);
            std::vector<std::string> terms(b.shape.size());
            for (size_t d = 0; d < b.shape.size(); ++d)
                if (p.box[d] != b.shape[d]) terms[d] = "(int64_t)(" + p.next_offset_c[d] + ")";
            int64_t bytes = dtype_bytes(b.dtype);
            std::string from = it + "_next_" + p.buffer, share = it + "_share_" + p.buffer;
            out += p1 + "const int64_t " + from + " = (" + linear_index(terms, b.shape) + ") * " + std::to_string(bytes) + ", " + share +
                   " = akg_prefetch_share(" + std::to_string(element_count(p.box) * bytes) + ", (" + full + " - " + begin_v + ") / " + L + ");\n";
            calls += p2 + "akg_prefetch_l2(" + p.buffer + ", " + from + " + (" + block + " - " + begin_v + ") / " + L + " * " + share + ", " + share +
                     ", " + std::to_string(element_count(b.shape) * bytes) + ");\n";
        }
        return calls;
    }

    std::set<const PolyStatement *> update_statements(const std::vector<Accumulation> &accs) {
        std::set<const PolyStatement *> updates;
        for (const auto &a : accs) updates.insert(user_call(a.update).statement);
        return updates;
    }
    // The first of `updates` in the parallel body's statement order; the statements before it
    // run before the reduction.
    // The parallel body's statements in execution order, with the buffers each reads.
    using BodyOrder = std::vector<std::pair<const PolyStatement *, std::set<std::string>>>;
    BodyOrder::const_iterator first_update_in_body(const std::set<const PolyStatement *> &updates) const {
        return std::find_if(body_order_.cbegin(), body_order_.cend(), [&](const auto &entry) { return updates.count(entry.first) > 0; });
    }

    // A block of a lane reduction prefetches ahead of its contiguous reads of the inputs that
    // prefetch-streams chose (akg_prefetch_ahead), unless a statement of the parallel body that
    // runs before the reduction read the input: the reduction then finds its data cached.
    std::string stream_prefetches(const std::vector<Accumulation> &accs, int lanes_per_block, const std::string &indent) {
        std::string calls;
        // The statements of the body that run before this reduction (none outside a body).
        auto first = in_parallel_body_ ? first_update_in_body(update_statements(accs)) : body_order_.cbegin();
        for (const auto &[buffer, base] : printer_.block_streams()) {
            const std::string &name = buffer;
            if (std::any_of(body_order_.cbegin(), first, [&](const auto &entry) { return entry.second.count(name) > 0; })) continue;
            const BufferInfo &b = m_.buffer(buffer);
            int64_t bytes = dtype_bytes(b.dtype);
            calls += indent + "akg_prefetch_ahead(" + buffer + ", (" + base + ") * " + std::to_string(bytes) + ", " +
                     std::to_string(lanes_per_block * bytes) + ", " + std::to_string(element_count(b.shape) * bytes) + ");\n";
        }
        return calls;
    }

    // Column sums over whole rows (the NHWC BatchNorm statistics: rows of 256 channels, one
    // after the other) read one stream through the input, but not in a lane reduction: each
    // row's vector loop over the columns prefetches the bytes AKG_STREAM_PREFETCH_AHEAD beyond
    // its row of the inputs that prefetch-streams chose for this (prefetched_in_rows), as a lane
    // reduction's blocks do. Left to the hardware prefetchers, `bn_train_stats_nhwc_f16` read
    // 51 MB in 1.45 ms at 1 thread; with these 0.91 ms, as its NCHW version (harness). Not for
    // blocks of columns of longer rows (dgamma/dbeta's 64 of 768), whose next row is not the
    // next block in memory.
    std::string column_row_prefetches(int columns, const std::string &indent) {
        std::string calls;
        for (const auto &[buffer, base] : printer_.block_row_streams()) {
            const BufferInfo &b = m_.buffer(buffer);
            int64_t bytes = dtype_bytes(b.dtype);
            calls += indent + "akg_prefetch_ahead(" + buffer + ", (" + base + ") * " + std::to_string(bytes) + ", " + std::to_string(columns * bytes) + ", " +
                     std::to_string(element_count(b.shape) * bytes) + ");\n";
        }
        return calls;
    }

    // The lane loops of emit_lane_reduction over [begin_v, end_v), combined into `results`.
    std::string lane_loops(const std::vector<Accumulation> &accs, const std::vector<isl_ast_node *> &sides, const std::vector<std::string> &lane_types,
                           int lanes_per_block, const std::string &it, const std::string &begin_v, const std::string &end_v,
                           const std::vector<std::string> &results, int d) {
        lane_reductions_in_function_ = true;
        std::string L = std::to_string(lanes_per_block), lane = it + "_lane", block = it + "_block";
        std::string p0 = pad(d), p1 = pad(d + 1), p2 = pad(d + 2);
        std::vector<std::string> lanes, acc, first;
        std::string out;
        for (size_t u = 0; u < accs.size(); ++u) {
            lanes.push_back("lanes_" + it + (u ? "_" + std::to_string(u) : ""));
            acc.push_back(lanes[u] + "[" + lane + "]");
            first.push_back(lanes[u] + "[0]");
            out += p0 + lane_types[u] + " " + lanes[u] + "[" + L + "];\n";
            out += p0 + "#pragma omp simd\n";
            out += p0 + "for (int64_t " + lane + " = 0; " + lane + " < " + L + "; ++" + lane + ") " + lanes[u] + "[" + lane + "] = " +
                   init_value(*accs[u].stage) + ";\n";
        }
        auto bodies = [&](int at, const std::vector<std::string> &targets) {
            std::string b = emit_sides(sides, true, at);
            for (size_t u = 0; u < accs.size(); ++u) b += emit_user(accs[u].update, at, &targets[u]);
            return b + emit_sides(sides, false, at);
        };
        // Float sums in double lanes (a lane would add a thousand terms or more) add each group
        // of kFloatLaneBlocks whole blocks in float lanes first, then the float lanes into the
        // double ones: a double addition per lane and group instead of two conversions and two
        // double additions per vector (a whole gradient's sum of squares: 0.150 -> 0.121 ms),
        // each float lane adding 32 terms, as the column sums' float partials of 32 rows do.
        std::vector<std::string> block_acc = acc, partials(accs.size());
        for (size_t u = 0; u < accs.size(); ++u)
            if (lane_types[u] == "double" && accs[u].stage->reduce_kind == ReduceKind::Sum && accs[u].stage->value.type() == Halide::Float(32)) {
                partials[u] = "partial_" + lanes[u];
                block_acc[u] = partials[u] + "[" + lane + "]";
            }
        bool grouped = block_acc != acc;
        std::string group = it + "_group", pg = grouped ? p2 : p1, pb = pad(d + (grouped ? 3 : 2));
        out += p0 + "if (" + end_v + " - " + begin_v + " >= " + L + ") {\n";
        std::string full = it + "_full"; // the end of the whole blocks
        out += p1 + "const int64_t " + full + " = " + begin_v + " + (" + end_v + " - " + begin_v + ") / " + L + " * " + L + ";\n";
        std::string prefetch = next_row_prefetches(accs, it, begin_v, full, block, L, pg, pb, out);
        std::string group_step = std::to_string(lanes_per_block * kFloatLaneBlocks);
        if (grouped) {
            out += p1 + "for (int64_t " + group + " = " + begin_v + "; " + group + " < " + full + "; " + group + " += " + group_step + ") {\n";
            for (const auto &partial : partials)
                if (!partial.empty()) out += p2 + "float " + partial + "[" + L + "] = {0};\n";
            out += pg + "for (int64_t " + block + " = " + group + "; " + block + " < akg_imin(" + group + " + " + group_step + ", " + full + "); " + block +
                   " += " + L + ") {\n";
        } else {
            out += p1 + "for (int64_t " + block + " = " + begin_v + "; " + block + " < " + full + "; " + block + " += " + L + ") {\n";
        }
        printer_.begin_block_staging(it, block, lane, lanes_per_block);
        std::string side_after = begin_side_blocks(sides, it, block, lane, lanes_per_block, out, pb);
        std::string body = bodies(d + (grouped ? 4 : 3), block_acc);
        side_blocks_.clear();
        out += printer_.end_block_staging(pb);
        out += stream_prefetches(accs, lanes_per_block, pb);
        out += pb + "#pragma omp simd\n";
        out += pb + "for (int64_t " + lane + " = 0; " + lane + " < " + L + "; ++" + lane + ") {\n";
        out += pad(d + (grouped ? 4 : 3)) + "const int64_t " + it + " = " + block + " + " + lane + ";\n";
        out += body;
        out += pb + "}\n" + side_after + prefetch + pb + "akg_end_of_lane_block();\n" + pg + "}\n";
        if (grouped) {
            for (size_t u = 0; u < accs.size(); ++u) {
                if (partials[u].empty()) continue;
                out += p2 + "#pragma omp simd\n";
                out += p2 + "for (int64_t " + lane + " = 0; " + lane + " < " + L + "; ++" + lane + ") " + acc[u] + " += " + partials[u] + "[" + lane + "];\n";
            }
            out += p1 + "}\n";
        }
        out += p1 + "if (" + full + " < " + end_v + ") {\n";
        std::string last = it + "_last";
        out += p2 + "const int64_t " + last + " = " + end_v + " - " + L + ";\n";
        lane_mask_ = it + " >= " + full;
        printer_.begin_block_staging(it, last, lane, lanes_per_block);
        side_after = begin_side_blocks(sides, it, last, lane, lanes_per_block, out, p2);
        body = bodies(d + 3, acc);
        side_blocks_.clear();
        out += printer_.end_block_staging(p2);
        lane_mask_.clear();
        out += p2 + "#pragma omp simd\n";
        out += p2 + "for (int64_t " + lane + " = 0; " + lane + " < " + L + "; ++" + lane + ") {\n";
        out += pad(d + 3) + "const int64_t " + it + " = " + last + " + " + lane + ";\n";
        out += body;
        out += p2 + "}\n" + side_after + p1 + "}\n";
        out += p0 + "} else {\n";
        out += p1 + "for (int64_t " + it + " = " + begin_v + "; " + it + " < " + end_v + "; ++" + it + ") {\n";
        out += bodies(d + 2, first);
        out += p1 + "}\n";
        out += p0 + "}\n";
        for (size_t u = 0; u < accs.size(); ++u)
            out += p0 + results[u] + " = akg_combine_lanes<" + L + ">(" + lanes[u] + ", [](" + lane_types[u] + " a, " + lane_types[u] +
                   " b) { return " + combine(*accs[u].stage, "a", "b") + "; });\n";
        return out;
    }
    std::string lane_mask_; // set while emitting the masked last block of a lane reduction

    // Side statements with a float16 output store a block's values to a float array, converted
    // after the block loop (akg_f32_to_f16_n: vcvtps2ph) instead of per element with the integer
    // code of vector loops; streamed outputs (stream_outputs.h) are streamed from the array,
    // within parallel bodies, which fence their non-temporal stores (BatchNorm's ReLU gradient
    // output: 1.35x faster than ordinary stores). The masked last block stores all its lanes:
    // the ones already stored by the previous block get the same values again. Declares the
    // arrays into `out` and returns the conversions to emit after the lane loop.
    std::map<std::string, std::string> side_blocks_; // buffer -> its block array element
    bool in_parallel_body_ = false;
    // The parallel body's row prefetches (prefetch_next_rows.h), its statements in execution
    // order, and the buffers already prefetched.
    const std::vector<RowPrefetch> *row_prefetches_ = nullptr;
    BodyOrder body_order_; // with the buffers each reads
    std::set<std::string> prefetched_in_body_;
    std::string begin_side_blocks(const std::vector<isl_ast_node *> &sides, const std::string &it, const std::string &first,
                                  const std::string &lane, int lanes_per_block, std::string &out, const std::string &indent) {
        std::string after;
        Halide::Expr iv = Variable::make(Halide::Int(64), it);
        for (auto *node : sides) {
            UserCall c = user_call(node);
            const BufferInfo &b = m_.buffer(c.statement->stage->buffer);
            bool stream = b.streamed && in_parallel_body_ && (b.dtype == DType::Float16 || b.dtype == DType::Float32);
            if ((b.dtype != DType::Float16 && !stream) || printer_.is_staged(b.name) || side_blocks_.count(b.name)) continue;
            Halide::Expr linear = store_offset(b, index_map(c));
            if (!linear.defined() || !Halide::Internal::is_const_one(simplify(substitute(it, iv + 1, linear) - linear))) continue;
            // Float16 bits chosen between constants need no conversion: stored as they are
            // unless streamed, then streamed from an array of bits.
            const bool bits = float16_store_bits(*c.statement).defined();
            if (bits && !stream) continue;
            std::string array = "side_" + b.name, n = std::to_string(lanes_per_block);
            Halide::Expr base = simplify(substitute(it, Variable::make(Halide::Int(64), first), linear));
            out += indent + "alignas(64) " + (bits ? "uint16_t " : "float ") + array + "[" + n + "];\n";
            std::string convert = bits ? "akg_stream_u16_n(" : !stream ? "akg_f32_to_f16_n(" : b.dtype == DType::Float16 ? "akg_stream_f32_to_f16_n(" : "akg_stream_f32_n(";
            after += indent + convert + array + ", " + b.name + " + (" + printer_.print(base) + "), " + n + ");\n";
            streams_in_function_ |= stream;
            side_blocks_[b.name] = array + "[" + lane + "]";
        }
        return after;
    }
    bool lane_reductions_in_function_ = false;
    int loop_depth_ = 0;    // loops around the statement being emitted, within its function

    // The float array of a float16 tensor staged for a parallel body. Where the body has lane
    // reductions (emit_lane_reduction), a tensor copied in is then read through a __restrict
    // pointer: GCC keeps the lanes in registers only when it can tell that the loop's reads do
    // not touch them, and reads of another local array directly defeat that (LayerNorm f16's
    // lanes went through memory on every block: its variance loop was latency-bound). Elsewhere
    // arrays stay plain arrays, which GCC knows more about (alignment, stores it may forward):
    // through __restrict pointers the elementwise ReLU gradient was 1.3x slower.
    static std::string staging_array(const Float16Staging &st, bool read_by_lane_reductions) {
        std::string name = "s_" + st.buffer, n = std::to_string(element_count(st.box));
        if (st.output || !read_by_lane_reductions) return "    float " + name + "[" + n + "];\n";
        return "    float " + name + "_data[" + n + "];\n    float *__restrict " + name + " = " + name + "_data;\n";
    }

    // The loops of a parallel band (up to `members` perfectly nested, non-degenerate loops)
    // run under one `omp parallel for collapse`; their body becomes a function of its own.
    // `stagings`: float16 tensors converted once per iteration (declared, copied in, out here).
    std::string emit_parallel(isl_ast_node *for_node, int depth, int members, const std::vector<Float16Staging> *stagings,
                              const std::vector<RowPrefetch> *prefetches) {
        std::vector<isl_ast_node *> chain{isl_ast_node_copy(for_node)};
        while (static_cast<int>(chain.size()) < members) {
            isl_ast_node *body = isl_ast_node_for_get_body(chain.back());
            if (isl_ast_node_get_type(body) != isl_ast_node_for || isl_ast_node_for_is_degenerate(body) == isl_bool_true ||
                bounds_use_iterators(body, chain)) {
                isl_ast_node_free(body);
                break;
            }
            chain.push_back(body);
        }
        std::vector<std::string> headers, its;
        for (auto *loop : chain) {
            std::string it;
            headers.push_back(for_header(loop, it));
            its.push_back(it);
        }
        int id = static_cast<int>(helpers_.size());
        helpers_.push_back(""); // reserve the slot: nested helpers are not expected, but keep ids stable
        std::string fn = "akg_" + o_.symbol + "_parallel_body_" + std::to_string(id);
        std::string params, args;
        for (const auto &outer : iterators_) {
            params += "int64_t " + outer + ", ";
            args += outer + ", ";
        }
        for (size_t k = 0; k < its.size(); ++k) {
            params += std::string(k ? ", " : "") + "int64_t " + its[k];
            args += std::string(k ? ", " : "") + its[k];
        }
        for (size_t k = 0; k < its.size(); ++k) {
            iterators_.push_back(its[k]);
            enter_loop(chain[k], its[k]);
        }
        isl_ast_node *body = isl_ast_node_for_get_body(chain.back());
        std::string inner;
        for (const auto &b : m_.buffers)
            if (b.promoted) inner += local_buffer_declaration(b, "    ");
        // The staging offsets are expressions in all the band's iterators: only when the loops
        // of the band are all here.
        if (stagings && static_cast<int>(chain.size()) != members) stagings = nullptr;
        printer_.set_staged(stagings);
        const std::vector<RowPrefetch> *outer_prefetches = row_prefetches_;
        auto outer_order = std::move(body_order_);
        std::set<std::string> outer_prefetched = std::move(prefetched_in_body_);
        row_prefetches_ = members == 1 && chain.size() == 1 ? prefetches : nullptr;
        body_order_ = statements_in_order(m_, body);
        prefetched_in_body_.clear();
        bool streams = false, reduces = false;
        std::string body_code = emit_function_body(body, streams, reduces);
        row_prefetches_ = outer_prefetches;
        body_order_ = std::move(outer_order);
        prefetched_in_body_ = std::move(outer_prefetched);
        printer_.set_staged(nullptr);
        std::string copy_out;
        for (const auto &st : stagings ? *stagings : std::vector<Float16Staging>{}) {
            const BufferInfo &b = m_.buffer(st.buffer);
            if (st.contiguous) {
                // One run of the tensor: one conversion call, no clamping. (The offset of a
                // dimension the box covers whole is 0.)
                std::vector<std::string> terms(b.shape.size());
                for (size_t d = 0; d < b.shape.size(); ++d)
                    if (st.box[d] != b.shape[d]) terms[d] = "(int64_t)(" + st.offset_c[d] + ")";
                std::string start = linear_index(terms, b.shape);
                std::string n = std::to_string(element_count(st.box));
                inner += staging_array(st, reduces);
                streams |= st.streamed;
                if (st.output)
                    copy_out += std::string(st.streamed ? "    akg_stream_f32_to_f16_n(s_" : "    akg_f32_to_f16_n(s_") + st.buffer + ", " + st.buffer + " + (" +
                                start + "), " + n + ");\n";
                else inner += "    akg_f16_to_f32_n(" + st.buffer + " + (" + start + "), s_" + st.buffer + ", " + n + ");\n";
                continue;
            }
            std::string shape, box, offset;
            for (size_t d = 0; d < st.box.size(); ++d) {
                shape += (d ? ", " : "") + std::to_string(b.shape[d]);
                box += (d ? ", " : "") + std::to_string(st.box[d]);
                offset += (d ? ", " : "") + std::string("(int64_t)(") + st.offset_c[d] + ")";
            }
            std::string args = "(" + st.buffer + ", " + std::to_string(st.box.size()) + ", " + st.buffer + "_shape, " + st.buffer +
                               "_offset, " + st.buffer + "_box, s_" + st.buffer + ");\n";
            inner += staging_array(st, reduces);
            inner += "    static const int64_t " + st.buffer + "_shape[] = {" + shape + "}, " + st.buffer + "_box[] = {" + box + "};\n";
            inner += "    const int64_t " + st.buffer + "_offset[] = {" + offset + "};\n";
            if (st.output) copy_out += "    akg_stage_f16_out" + args;
            else inner += "    akg_stage_f16_in" + args;
        }
        inner += body_code + copy_out;
        isl_ast_node_free(body);
        for (size_t k = 0; k < its.size(); ++k) {
            iterators_.pop_back();
            leave_loop(its[k]);
        }
        for (auto *loop : chain) isl_ast_node_free(loop);
        std::string plist = parameter_list(), alist = argument_list();
        helpers_[id] = "static void " + fn + "(" + params + (plist.empty() ? "" : ", " + plist) + ") {\n" + inner + "}\n";
        return parallel_for_code(headers, fn + "(" + args + (alist.empty() ? "" : ", " + alist) + ");\n", streams, runs_serially(for_node), depth);
    }

    // Whether every statement below `node` belongs to a nest that parallelize left to the
    // calling thread (PolyModel::serial_statements).
    bool runs_serially(isl_ast_node *node) const {
        std::vector<std::string> names;
        isl_ast_node_foreach_descendant_top_down(
            node,
            [](isl_ast_node *n, void *user) -> isl_bool {
                if (isl_ast_node_get_type(n) != isl_ast_node_user) return isl_bool_true;
                isl_ast_expr *call = isl_ast_node_user_get_expr(n);
                isl_ast_expr *callee = isl_ast_expr_get_op_arg(call, 0);
                isl_id *id = isl_ast_expr_get_id(callee);
                static_cast<std::vector<std::string> *>(user)->push_back(isl_id_get_name(id));
                isl_id_free(id);
                isl_ast_expr_free(callee);
                isl_ast_expr_free(call);
                return isl_bool_true;
            },
            &names);
        for (const auto &name : names)
            if (!m_.serial_statements.count(name)) return false;
        return !names.empty();
    }

    // `node` emitted as the body of a function of its own (a parallel iteration's, a chunk of
    // rows'): nothing is hoisted out of it and its loop depths count from it. `streams`: it
    // streams (its caller fences); `reduces`: it has lane reductions.
    std::string emit_function_body(isl_ast_node *node, bool &streams, bool &reduces) {
        int outer_depth = loop_depth_;
        bool outer_streams = streams_in_function_, outer_reduces = lane_reductions_in_function_, outer_in_body = in_parallel_body_;
        loop_depth_ = 0;
        streams_in_function_ = lane_reductions_in_function_ = false;
        in_parallel_body_ = true;
        enter_hoist_frame("", nullptr); // nothing moves out of the function
        std::string code = leave_hoist_frame(1, emit_node(node, 1));
        streams = streams_in_function_;
        reduces = lane_reductions_in_function_;
        in_parallel_body_ = outer_in_body;
        streams_in_function_ = outer_streams;
        lane_reductions_in_function_ = outer_reduces;
        loop_depth_ = outer_depth;
        return code;
    }

    // The loops `headers` (perfectly nested, collapsed) run in parallel, each iteration `call`;
    // `serial`: on the calling thread.
    std::string parallel_for_code(const std::vector<std::string> &headers, const std::string &call, bool streams, bool serial, int depth) const {
        std::string out;
        if (serial) {
            for (size_t k = 0; k < headers.size(); ++k) out += pad(depth + static_cast<int>(k)) + headers[k] + "\n";
            out += pad(depth + static_cast<int>(headers.size())) + call;
            return streams ? out + pad(depth) + "akg_stream_fence();\n" : out;
        }
        // One thread: the same loops on the calling thread, without an OpenMP region (see
        // akg_single_thread).
        return pad(depth) + "if (akg_single_thread()) {\n" + parallel_for_code(headers, call, streams, true, depth + 1) +
               pad(depth) + "} else {\n" + parallel_region_code(headers, call, streams, depth + 1) + pad(depth) + "}\n";
    }

    // The OpenMP region of parallel_for_code.
    std::string parallel_region_code(const std::vector<std::string> &headers, const std::string &call, bool streams, int depth) const {
        std::string collapse = headers.size() > 1 ? " collapse(" + std::to_string(headers.size()) + ")" : "";
        std::string out;
        if (!streams) {
            out = pad(depth) + "#pragma omp parallel for" + collapse + " schedule(static)\n";
            for (size_t k = 0; k < headers.size(); ++k) out += pad(depth + static_cast<int>(k)) + headers[k] + "\n";
            return out + pad(depth + static_cast<int>(headers.size())) + call;
        }
        // Non-temporal stores are weakly ordered: each thread fences its own once, after its
        // last task and before the barrier that ends the parallel region (a fence per task
        // waits for the task's stores to reach memory: twice as slow on 512-byte tasks).
        out = pad(depth) + "#pragma omp parallel\n" + pad(depth) + "{\n";
        out += pad(depth + 1) + "#pragma omp for" + collapse + " schedule(static) nowait\n";
        for (size_t k = 0; k < headers.size(); ++k) out += pad(depth + 1 + static_cast<int>(k)) + headers[k] + "\n";
        out += pad(depth + 1 + static_cast<int>(headers.size())) + call;
        return out + pad(depth + 1) + "akg_stream_fence();\n" + pad(depth) + "}\n";
    }

    // sink-columns' whole-row column sums (a loop over the rows marked mark::RowChunks{N}, at the top
    // of the kernel): the rows run in N chunks of chunk_rows_ (a whole number of blocks of
    // kColumnBlockRows), in parallel, each chunk adding into accumulators of its own, a slice
    // of akg_row_chunks that the chunk zeroes first; then the slices are added to the kernel's
    // accumulators in chunk order, so that the bits do not depend on the thread count. "" when
    // the loop does not qualify: its column sums block (column_blocking), their accumulators are
    // kernel scratch, every other statement of the loop writes elements of its own row only
    // (nothing carries from row to row), and the loop's local arrays are used nowhere else.
    std::string emit_row_chunks(isl_ast_node *row_loop, int chunks_wanted, int depth) {
        if (in_parallel_body_ || !iterators_.empty()) return "";
        ColumnBlocking probe = column_blocking(row_loop);
        std::vector<const BufferInfo *> accumulators;
        std::set<std::string> sums;
        for (const auto &l : probe.loops)
            for (isl_ast_node *u : l.sums) {
                const PolyStatement &st = *user_call(u).statement;
                sums.insert(st.name);
                const BufferInfo &b = m_.buffer(st.stage->buffer);
                if (std::find(accumulators.begin(), accumulators.end(), &b) == accumulators.end()) accumulators.push_back(&b);
            }
        std::string row_it = probe.row_it;
        int64_t rows = probe.hi - probe.lo + 1;
        const bool blocked = !probe.loops.empty();
        probe.release();
        if (!blocked) return emit_wide_row_chunks(row_loop, depth);
        bool ok = !accumulators.empty();
        for (const auto *b : accumulators) ok &= !b->promoted && b->kind == BufferKind::Scratch;
        // Every other statement's element lies in its own row.
        std::set<std::string> inside, local;
        for (isl_ast_node *u : user_nodes(row_loop)) {
            UserCall c = user_call(u);
            inside.insert(c.statement->name);
            bool own_row = sums.count(c.statement->name) > 0;
            for (int d = 0; d < c.statement->out_dims && !own_row; ++d) own_row = mentions(c.args[d], row_it);
            ok &= own_row;
            if (m_.buffer(c.statement->stage->buffer).promoted) local.insert(c.statement->stage->buffer);
            for (const auto &r : buffers_read(*c.statement))
                if (m_.buffer(r).promoted) local.insert(r);
            isl_ast_node_free(u);
        }
        for (const auto &st : m_.statements)
            if (!inside.count(st.name))
                for (const auto &b : local) ok &= st.stage->buffer != b && !buffers_read(st).count(b);
        if (!ok) return "";

        int64_t chunk_rows = (rows + chunks_wanted - 1) / chunks_wanted;
        chunk_rows = (chunk_rows + kColumnBlockRows - 1) / kColumnBlockRows * kColumnBlockRows;
        int64_t chunks = (rows + chunk_rows - 1) / chunk_rows, total = 0;
        std::vector<int64_t> offsets;
        for (const auto *b : accumulators) {
            offsets.push_back(total);
            total += element_count(b->shape);
        }

        int id = 0;
        std::string fn = reserve_row_chunk_helper(id), inner = local_declarations(local);
        for (const auto *b : accumulators)
            inner += "    for (int64_t e = 0; e < " + std::to_string(element_count(b->shape)) + "; ++e) " + b->name + "[e] = 0;\n";
        bool streams = false, reduces = false;
        chunk_rows_ = chunk_rows;
        inner += emit_function_body(row_loop, streams, reduces);
        chunk_rows_ = 0;
        std::string plist = parameter_list(), args;
        for (const auto &b : m_.buffers) {
            if (b.promoted) continue;
            auto acc = std::find_if(accumulators.begin(), accumulators.end(), [&](const BufferInfo *a) { return a->name == b.name; });
            std::string arg = acc == accumulators.end() ? b.name
                                                        : "akg_row_chunks + chunk * INT64_C(" + std::to_string(total) + ") + " +
                                                              std::to_string(offsets[acc - accumulators.begin()]);
            args += (args.empty() ? "" : ", ") + arg;
        }
        helpers_[id] = "static void " + fn + "(int64_t chunk, " + plist + ") {\n" + inner + "}\n";

        std::string out = pad(depth) + "{\n";
        out += pad(depth + 1) + "double *akg_row_chunks = (double *)malloc(sizeof(double) * " + std::to_string(chunks * total) + ");\n";
        out += pad(depth + 1) + "if (!akg_row_chunks) {\n" + scratch_frees(pad(depth + 2)) + pad(depth + 2) + "return AKG_STATUS_OUT_OF_MEMORY;\n" +
               pad(depth + 1) + "}\n";
        std::string loop = "for (int64_t chunk = 0; chunk < " + std::to_string(chunks) + "; ++chunk)";
        out += parallel_for_code({loop}, fn + "(chunk, " + args + ");\n", streams, false, depth + 1);
        out += pad(depth + 1) + loop + " {\n";
        for (size_t k = 0; k < accumulators.size(); ++k) {
            const BufferInfo &b = *accumulators[k];
            out += pad(depth + 2) + "#pragma omp simd\n" + pad(depth + 2) + "for (int64_t e = 0; e < " + std::to_string(element_count(b.shape)) + "; ++e) " +
                   b.name + "[e] += akg_row_chunks[chunk * INT64_C(" + std::to_string(total) + ") + " + std::to_string(offsets[k]) + " + e];\n";
        }
        out += pad(depth + 1) + "}\n" + pad(depth + 1) + "free(akg_row_chunks);\n" + pad(depth) + "}\n";
        return out;
    }
    int64_t chunk_rows_ = 0; // while emit_row_chunks emits a chunk's rows

    // A helper function's slot and name for a chunk of rows (emit_row_chunks).
    std::string reserve_row_chunk_helper(int &id) {
        id = static_cast<int>(helpers_.size());
        helpers_.push_back("");
        return "akg_" + o_.symbol + "_row_chunk_" + std::to_string(id);
    }
    // The declarations of the promoted buffers named in `local`, for a helper's body.
    std::string local_declarations(const std::set<std::string> &local) const {
        std::string out;
        for (const auto &b : m_.buffers)
            if (b.promoted && local.count(b.name)) out += local_buffer_declaration(b, "    ");
        return out;
    }

    // The statements below `node` (borrowed), in AST order.
    static std::vector<isl_ast_node *> user_nodes(isl_ast_node *node) {
        std::vector<isl_ast_node *> users;
        isl_ast_node_foreach_descendant_top_down(
            node,
            [](isl_ast_node *n, void *user) -> isl_bool {
                if (isl_ast_node_get_type(n) == isl_ast_node_user) static_cast<std::vector<isl_ast_node *> *>(user)->push_back(isl_ast_node_copy(n));
                return isl_bool_true;
            },
            &users);
        return users;
    }

    // sink-columns' wide rows (walk_wide_rows: a loop over the rows marked mark::RowChunks whose
    // rows are walked whole, each column sum adding the row's values element by element into
    // its double accumulators). The rows run in parallel in chunks of kColumnBlockRows; each
    // chunk adds its rows in float into sums of its own (its slice of akg_chunk_sums, zeroed
    // first), which are added to the accumulators in chunk order afterwards, in parallel over
    // the accumulators' elements: as the blocked column sums do, 32 rows at a time in float, and
    // the bits do not depend on the thread count. "" when the loop does not qualify: constant
    // bounds, sums of float values into double kernel scratch indexed without the row, every
    // other statement writing elements of its own row, local arrays used nowhere else.
    std::string emit_wide_row_chunks(isl_ast_node *row_loop, int depth) {
        int64_t lo = 0, hi = 0, step = 0;
        if (isl_ast_node_get_type(row_loop) != isl_ast_node_for || isl_ast_node_for_is_degenerate(row_loop) == isl_bool_true ||
            !int_value(isl_ast_node_for_get_inc(row_loop), step) || step != 1 || !int_value(isl_ast_node_for_get_init(row_loop), lo))
            return "";
        {
            isl_ast_expr *cond = isl_ast_node_for_get_cond(row_loop);
            bool le = isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le &&
                      int_value(isl_ast_expr_op_get_arg(cond, 1), hi);
            isl_ast_expr_free(cond);
            if (!le || hi - lo + 1 < 2 * kColumnBlockRows) return "";
        }
        const std::string row_it = ast_expr(isl_ast_node_for_get_iterator(row_loop));
        std::vector<const PolyStatement *> sums;
        std::vector<const BufferInfo *> accumulators;
        std::set<std::string> inside, local;
        bool ok = true;
        for (isl_ast_node *u : user_nodes(row_loop)) {
            UserCall c = user_call(u);
            const PolyStatement &st = *c.statement;
            inside.insert(st.name);
            const BufferInfo &b = m_.buffer(st.stage->buffer);
            bool sum = st.role == StatementRole::ReduceUpdate && st.stage->reduce_kind == ReduceKind::Sum && st.stage->value.type() == Halide::Float(32) &&
                       b.dtype == DType::Float64 && b.kind == BufferKind::Scratch && !b.promoted && !m_.side_statements.count(st.name);
            bool own_row = false, over_rows = false;
            for (int d = 0; d < st.out_dims; ++d) own_row |= mentions(c.args[d], row_it);
            for (int d = st.out_dims; d < static_cast<int>(c.args.size()); ++d) over_rows |= mentions(c.args[d], row_it);
            if (sum && !own_row && over_rows) {
                sums.push_back(&st);
                if (std::find(accumulators.begin(), accumulators.end(), &b) == accumulators.end()) accumulators.push_back(&b);
            } else {
                ok &= own_row && st.role != StatementRole::ReduceUpdate;
            }
            if (b.promoted) local.insert(b.name);
            for (const auto &r : buffers_read(st))
                if (m_.buffer(r).promoted) local.insert(r);
            isl_ast_node_free(u);
        }
        ok &= !sums.empty();
        // Nothing else in the loop reads or writes an accumulator (the sums' own reads aside).
        for (const auto &st : m_.statements) {
            if (!inside.count(st.name)) {
                for (const auto &b : local) ok &= st.stage->buffer != b && !buffers_read(st).count(b);
                continue;
            }
            if (std::find(sums.begin(), sums.end(), &st) != sums.end()) continue;
            for (const auto *a : accumulators) ok &= st.stage->buffer != a->name && !buffers_read(st).count(a->name);
        }
        if (!ok) return "";

        const int64_t rows = hi - lo + 1, chunks = (rows + kColumnBlockRows - 1) / kColumnBlockRows;
        int64_t total = 0;
        std::map<std::string, int64_t> offsets;
        for (const auto *a : accumulators) {
            offsets[a->name] = total;
            total += element_count(a->shape);
        }
        // Each sum adds into the chunk's slice at its accumulator's element.
        for (const auto *st : sums) {
            const std::string target = out_access(*st), name = st->stage->buffer;
            const int64_t offset = offsets[name];
            column_partials_[st->name] = "akg_chunk_sums[" + (offset ? std::to_string(offset) + " + " : std::string()) + target.substr(name.size() + 1);
        }
        int id = 0;
        std::string fn = reserve_row_chunk_helper(id), inner = local_declarations(local);
        inner += "    for (int64_t e = 0; e < " + std::to_string(total) + "; ++e) akg_chunk_sums[e] = 0.0f;\n";
        const std::string first = (lo ? std::to_string(lo) + " + " : std::string()) + "chunk * " + std::to_string(kColumnBlockRows);
        chunk_row_header_ = {row_it, "for (int64_t " + row_it + " = " + first + "; " + row_it + " <= akg_imin(" + first + " + " +
                                         std::to_string(kColumnBlockRows - 1) + ", " + std::to_string(hi) + "); " + row_it + " += 1)"};
        bool streams = false, reduces = false;
        accumulators_by_element_ = true;
        inner += emit_function_body(row_loop, streams, reduces);
        accumulators_by_element_ = false;
        chunk_row_header_ = {};
        column_partials_.clear();
        helpers_[id] = "static void " + fn + "(int64_t chunk, float *__restrict akg_chunk_sums, " + parameter_list() + ") {\n" + inner + "}\n";
        std::string args;
        for (const auto &b : m_.buffers)
            if (!b.promoted) args += ", " + b.name;

        const std::string slices = std::to_string(chunks * total);
        std::string out = pad(depth) + "{\n";
        out += pad(depth + 1) + "float *akg_chunk_sums = (float *)malloc(sizeof(float) * " + slices + ");\n";
        out += pad(depth + 1) + "if (!akg_chunk_sums) {\n" + scratch_frees(pad(depth + 2)) + pad(depth + 2) + "return AKG_STATUS_OUT_OF_MEMORY;\n" +
               pad(depth + 1) + "}\n";
        out += parallel_for_code({"for (int64_t chunk = 0; chunk < " + std::to_string(chunks) + "; ++chunk)"},
                                 fn + "(chunk, akg_chunk_sums + chunk * INT64_C(" + std::to_string(total) + ")" + args + ");\n", streams, false, depth + 1);
        // Each element adds the chunks' sums in chunk order; blocks of elements in parallel.
        for (const auto *a : accumulators) {
            const int64_t n = element_count(a->shape), off = offsets[a->name];
            std::string block = "for (int64_t e0 = 0; e0 < " + std::to_string(n) + "; e0 += " + std::to_string(kChunkSumsBlock) + ")";
            std::string body = "for (int64_t chunk = 0; chunk < " + std::to_string(chunks) + "; ++chunk) {\n" + pad(depth + 3) + "#pragma omp simd\n" +
                               pad(depth + 3) + "for (int64_t e = e0; e < akg_imin(e0 + " + std::to_string(kChunkSumsBlock) + ", " + std::to_string(n) + "); ++e) " +
                               a->name + "[e] += akg_chunk_sums[chunk * INT64_C(" + std::to_string(total) + ") + " + (off ? std::to_string(off) + " + " : std::string()) + "e];\n" +
                               pad(depth + 2) + "}\n";
            out += parallel_for_code({block}, body, false, n < kChunkSumsBlock * 2, depth + 1);
        }
        out += pad(depth + 1) + "free(akg_chunk_sums);\n" + pad(depth) + "}\n";
        return out;
    }
    static constexpr int64_t kChunkSumsBlock = 1024; // accumulator elements per task of the chunks' sum
    // While emit_wide_row_chunks emits a chunk: its sums' slices are indexed by their
    // accumulator's element (i0, ...), which emit_statement binds.
    bool accumulators_by_element_ = false;
    // While emit_wide_row_chunks emits a chunk: the row loop's iterator and its header there.
    std::pair<std::string, std::string> chunk_row_header_;

    // The loop of a tile: its iterator, first value and trip count, as C expressions.
    struct TileLoop {
        std::string iterator, first, trip;
    };
    static bool tile_loop(isl_ast_node *loop, TileLoop &out) {
        if (isl_ast_node_get_type(loop) != isl_ast_node_for) return false;
        out.iterator = ast_expr(isl_ast_node_for_get_iterator(loop));
        out.first = ast_expr(isl_ast_node_for_get_init(loop));
        if (isl_ast_node_for_is_degenerate(loop) == isl_bool_true) {
            out.trip = "1";
            return true;
        }
        int64_t step = 0;
        if (!int_value(isl_ast_node_for_get_inc(loop), step) || step != 1) return false;
        isl_ast_expr *cond = isl_ast_node_for_get_cond(loop);
        bool ok = isl_ast_expr_get_type(cond) == isl_ast_expr_op &&
                  (isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le || isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_lt);
        if (ok) {
            bool inclusive = isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le;
            ok = ast_expr(isl_ast_expr_op_get_arg(cond, 0)) == out.iterator;
            out.trip = "(" + ast_expr(isl_ast_expr_op_get_arg(cond, 1)) + " - " + out.first + (inclusive ? " + 1)" : ")");
        }
        isl_ast_expr_free(cond);
        return ok;
    }

    // tile-transposes' tile (tile_transposes.h): a loop over the tile's rows around one over its
    // columns, around the copies. Each copy becomes one call of akg_transpose from the tile's
    // first element; the columns' bounds must not depend on the row. "" when the loops are not
    // in that form (they are then emitted as loops, which copy the same elements).
    std::string emit_transpose_tile(isl_ast_node *rows_loop, int depth) {
        TileLoop rows, columns;
        if (!tile_loop(rows_loop, rows)) return "";
        isl_ast_node *columns_loop = isl_ast_node_for_get_body(rows_loop);
        bool ok = tile_loop(columns_loop, columns) && !mentions(columns.first, rows.iterator) && !mentions(columns.trip, rows.iterator);
        isl_ast_node *body = ok ? isl_ast_node_for_get_body(columns_loop) : nullptr;
        isl_ast_node_free(columns_loop);
        std::vector<isl_ast_node *> users;
        if (body && isl_ast_node_get_type(body) == isl_ast_node_user) {
            users.push_back(isl_ast_node_copy(body));
        } else if (body && isl_ast_node_get_type(body) == isl_ast_node_block) {
            isl_ast_node_list *list = isl_ast_node_block_get_children(body);
            for (int k = 0; k < isl_ast_node_list_n_ast_node(list); ++k) users.push_back(isl_ast_node_list_get_ast_node(list, k));
            isl_ast_node_list_free(list);
        }
        isl_ast_node_free(body);
        std::string calls;
        for (isl_ast_node *u : users) {
            if (ok && isl_ast_node_get_type(u) == isl_ast_node_user) {
                UserCall c = user_call(u);
                auto tile = m_.transpose_tiles.find(c.statement->name);
                ok = tile != m_.transpose_tiles.end() && !tile->second.staged;
                if (ok) {
                    // A streamed output (stream_outputs.cpp: each tile one contiguous run) goes
                    // through a local array and non-temporal stores.
                    bool streamed = m_.buffer(c.statement->stage->buffer).streamed;
                    streams_in_function_ |= streamed;
                    std::string in = pad(depth + 2), strides = std::to_string(tile->second.source_row_stride) + ", &" + out_access(*c.statement) +
                                                                  (streamed ? "" : ", " + std::to_string(tile->second.output_column_stride));
                    calls += pad(depth + 1) + "{\n" + bind_vars(c, in, true, false) + in + (streamed ? "akg_transpose_streamed(&" : "akg_transpose(&") +
                             printer_.buffer_access(tile->second.source, tile->second.source_args) + ", " + strides + ", " + rows.trip + ", " + columns.trip +
                             ");\n" + pad(depth + 1) + "}\n";
                }
            } else {
                ok = false;
            }
            isl_ast_node_free(u);
        }
        if (!ok || calls.empty()) return "";
        return pad(depth) + "{\n" + pad(depth + 1) + "const int64_t " + rows.iterator + " = " + rows.first + ";\n" + pad(depth + 1) +
               "const int64_t " + columns.iterator + " = " + columns.first + ";\n" + calls + pad(depth) + "}\n";
    }

    // tile-transposes' tile of a computing statement (tile_transposes.h): a loop over the
    // tile's columns around a mark::Simd and the vector loop over its rows, around the
    // statement. The source's tile is transposed into a local array first (akg_transpose, from
    // the tile's first element), and the statement reads the source from it. "" when the loops
    // are not in that form (they are then emitted reading the source itself).
    std::string emit_staged_transpose_tile(isl_ast_node *columns_loop, int depth) {
        TileLoop columns, rows;
        if (!tile_loop(columns_loop, columns)) return "";
        isl_ast_node *mark = isl_ast_node_for_get_body(columns_loop);
        isl_ast_node *rows_loop = isl_ast_node_get_type(mark) == isl_ast_node_mark ? isl_ast_node_mark_get_node(mark) : nullptr;
        isl_ast_node_free(mark);
        bool ok = rows_loop && tile_loop(rows_loop, rows) && !mentions(rows.first, columns.iterator) && !mentions(rows.trip, columns.iterator);
        isl_ast_node *body = ok ? isl_ast_node_for_get_body(rows_loop) : nullptr;
        isl_ast_node_free(rows_loop);
        ok = body && isl_ast_node_get_type(body) == isl_ast_node_user;
        std::string s;
        if (ok) {
            UserCall c = user_call(body);
            auto tile = m_.transpose_tiles.find(c.statement->name);
            ok = tile != m_.transpose_tiles.end() && tile->second.staged;
            if (ok) {
                const TransposeTile &t = tile->second;
                const BufferInfo &source = m_.buffer(t.source);
                std::string array = "tile_" + t.source, in = pad(depth + 2);
                s = pad(depth) + "{\n" + pad(depth + 1) + "alignas(64) " + storage_type(source) + " " + array + "[" +
                    std::to_string(t.tile_rows * t.tile_columns) + "];\n" + pad(depth + 1) + "int64_t " + array + "_row0, " + array + "_column0;\n" +
                    pad(depth + 1) + "{\n" + in + "const int64_t " + columns.iterator + " = " + columns.first + ";\n" + in + "const int64_t " +
                    rows.iterator + " = " + rows.first + ";\n" + bind_vars(c, in, true, false) + in + array + "_row0 = " +
                    printer_.print(t.source_args[t.row_arg]) + ";\n" + in + array + "_column0 = " + printer_.print(t.source_args[t.column_arg]) +
                    ";\n" + in + "akg_transpose(&" + printer_.buffer_access(t.source, t.source_args) + ", " + std::to_string(t.source_row_stride) +
                    ", " + array + ", " + std::to_string(t.tile_rows) + ", " + rows.trip + ", " + columns.trip + ");\n" + pad(depth + 1) + "}\n";
                printer_.read_transposed(t.source, {array, array + "_row0", array + "_column0", t.row_arg, t.column_arg, t.tile_rows});
                s += emit_node(columns_loop, depth + 1);
                printer_.stop_reading_transposed();
                s += pad(depth) + "}\n";
            }
        }
        isl_ast_node_free(body);
        return ok ? s : "";
    }

    std::string emit_node(isl_ast_node *node, int depth) {
        switch (isl_ast_node_get_type(node)) {
        case isl_ast_node_block: {
            isl_ast_node_list *list = isl_ast_node_block_get_children(node);
            std::string s;
            for (int k = 0; k < isl_ast_node_list_n_ast_node(list); ++k) {
                isl_ast_node *child = isl_ast_node_list_get_ast_node(list, k);
                s += emit_node(child, depth);
                isl_ast_node_free(child);
            }
            isl_ast_node_list_free(list);
            return s;
        }
        case isl_ast_node_mark: {
            std::optional<ScheduleAnnotation> annotation = mark_annotation(node);
            const auto *parallel = annotation ? std::get_if<mark::Parallel>(&*annotation) : nullptr;
            const auto *row_chunks = annotation ? std::get_if<mark::RowChunks>(&*annotation) : nullptr;
            const auto *transpose_tile = annotation ? std::get_if<mark::TransposeTile>(&*annotation) : nullptr;
            isl_ast_node *child = isl_ast_node_mark_get_node(node);
            std::string s;
            if (parallel && isl_ast_node_get_type(child) == isl_ast_node_for && isl_ast_node_for_is_degenerate(child) != isl_bool_true) {
                const size_t *k = parallel->body_plans ? &*parallel->body_plans : nullptr; // body_plans_of_mark keeps both vectors the same length
                s = emit_parallel(child, depth, parallel->loops, k ? &m_.float16_stagings.at(*k) : nullptr, k ? &m_.row_prefetches.at(*k) : nullptr);
            } else if (row_chunks && !(s = emit_row_chunks(child, row_chunks->chunks, depth)).empty()) {
            } else if (transpose_tile && !transpose_tile->staged && !(s = emit_transpose_tile(child, depth)).empty()) {
            } else if (transpose_tile && transpose_tile->staged && !(s = emit_staged_transpose_tile(child, depth)).empty()) {
            } else if (annotation && std::holds_alternative<mark::ColumnRowTile>(*annotation)) {
                row_tile_pending_ = isl_ast_node_get_type(child) == isl_ast_node_for;
                s = emit_node(child, depth);
                row_tile_pending_ = false;
            } else {
                bool saved = in_simd_;
                in_simd_ = annotation && std::holds_alternative<mark::Simd>(*annotation);
                s = emit_node(child, depth);
                in_simd_ = saved;
            }
            isl_ast_node_free(child);
            return s;
        }
        case isl_ast_node_for: {
            std::string grouped = emit_grouped_row_sums(node, depth);
            if (!grouped.empty()) return grouped;
            ColumnBlocking blocking = column_blocking(node);
            if (blocking.loops.empty()) {
                std::vector<isl_ast_node *> loops;
                std::vector<isl_ast_node *> sides;
                std::vector<isl_ast_node *> updates = reduction_nest(node, loops, sides);
                if (!updates.empty()) return emit_accumulation(updates, sides, loops, depth);
                for (auto *l : loops) isl_ast_node_free(l);
            }
            std::string it;
            std::string header = for_header(node, it);
            if (!chunk_row_header_.first.empty() && it == chunk_row_header_.first) { // emit_wide_row_chunks: the chunk's rows
                header = chunk_row_header_.second;
                chunk_row_header_ = {};
            }
            if (!blocking.loops.empty() && !blocking.single) { // one block of rows; blocked_rows_code adds the rest
                header = "for (int64_t " + it + " = " + it + "_block; " + it + " <= akg_imin(" + it + "_block + " + std::to_string(kColumnBlockRows - 1) + ", " +
                         std::to_string(blocking.hi) + "); " + it + " += 1)";
            }
            if (!blocking.loops.empty()) {
                for (const auto &l : blocking.loops)
                    for (size_t k = 0; k < l.sums.size(); ++k)
                        column_partials_[user_call(l.sums[k]).statement->name] =
                            l.partials[k] + "[(" + l.col_it + (l.col_lo ? " - " + std::to_string(l.col_lo) : "") + ")]";
                column_rows_it_ = it;
            }
            isl_ast_node *body = isl_ast_node_for_get_body(node);
            std::string s;
            enter_hoist_frame(it, body);
            if (isl_ast_node_for_is_degenerate(node) == isl_bool_true) {
                s = pad(depth) + "{\n" + pad(depth + 1) + "const int64_t " + it + " = " +
                    ast_expr(isl_ast_node_for_get_init(node)) + ";\n";
                iterators_.push_back(it);
                enter_loop(node, it);
                s += emit_node(body, depth + 1);
                leave_loop(it);
                iterators_.pop_back();
                s += pad(depth) + "}\n";
            } else {
                bool vector_loop = in_simd_ && !contains(body, isl_ast_node_for);
                if (vector_loop) s += pad(depth) + "#pragma omp simd\n";
                s += pad(depth) + header + " {\n";
                iterators_.push_back(it);
                enter_loop(node, it);
                ++loop_depth_;
                StreamedLoop streamed;
                StreamedLoop *outer_streamed = streamed_loop_;
                bool constant = vector_loop && constant_unit_loop(node, it, streamed);
                streamed_loop_ = constant && kernel_writes_blocks() ? &streamed : nullptr;
                GroupedLoop grouped{streamed.iterator, streamed.lo, streamed.trip, {}};
                GroupedLoop *outer_grouped = grouped_loop_;
                if (constant) find_grouped_blocks(body, grouped);
                grouped_loop_ = grouped.blocks.empty() ? nullptr : &grouped;
                // Float16 reads that advance by one element per iteration are converted for the
                // whole loop before it (akg_f16_to_f32_n: vcvtph2ps), as in the blocks of lane
                // reductions, where stage-float16 did not stage them (a parallel iteration's box
                // too large: GeLU's backward pass reads 2048 rows of its block of columns).
                // Not below a condition, whose statements may not read every iteration's element.
                bool block_staging = constant && !contains(body, isl_ast_node_if);
                if (block_staging) // the loop's hoist frame (entered above) knows what it writes
                    printer_.begin_block_staging(it, it + "_first", "(" + it + " - " + it + "_first)", static_cast<int>(streamed.trip),
                                                 hoist_frames_.back().written, column_partials_.empty() ? "" : column_rows_it_);
                s += emit_node(body, depth + 1);
                if (streamed_loop_) printer_.clear_forwarded_stores();
                std::string block_arrays = block_staging ? column_row_prefetches(static_cast<int>(streamed.trip), pad(depth + 1)) : "";
                if (block_staging) block_arrays += printer_.end_block_staging(pad(depth + 1));
                streamed_loop_ = outer_streamed;
                grouped_loop_ = outer_grouped;
                --loop_depth_;
                leave_loop(it);
                iterators_.pop_back();
                s += pad(depth) + "}\n";
                s = with_streamed_blocks(streamed, depth, s);
                s = with_grouped_blocks(grouped, depth, s);
                if (!block_arrays.empty()) // a scope of their own, one level deeper
                    s = pad(depth) + "{\n" + pad(depth + 1) + "const int64_t " + it + "_first = " + std::to_string(streamed.lo) + ";\n" +
                        block_arrays + indented(s) + pad(depth) + "}\n";
                if (!blocking.loops.empty()) {
                    column_partials_.clear();
                    column_rows_it_.clear();
                    s = blocked_rows_code(blocking, s, depth);
                }
            }
            blocking.release();
            s = leave_hoist_frame(depth, s);
            isl_ast_node_free(body);
            return s;
        }
        case isl_ast_node_if: {
            ConditionalScope conditional(conditional_depth_);
            std::string s = pad(depth) + "if (" + ast_expr(isl_ast_node_if_get_cond(node)) + ") {\n";
            isl_ast_node *then_node = isl_ast_node_if_get_then_node(node);
            s += emit_node(then_node, depth + 1);
            isl_ast_node_free(then_node);
            if (isl_ast_node_if_has_else_node(node) == isl_bool_true) {
                isl_ast_node *else_node = isl_ast_node_if_get_else_node(node);
                s += pad(depth) + "} else {\n" + emit_node(else_node, depth + 1);
                isl_ast_node_free(else_node);
            }
            return s + pad(depth) + "}\n";
        }
        case isl_ast_node_user: {
            auto partial = column_partials_.find(user_call(node).statement->name);
            return emit_user(node, depth, partial == column_partials_.end() ? nullptr : &partial->second);
        }
        default: throw InternalError("unexpected isl AST node");
        }
    }
};

} // namespace

std::string expr_to_cpp(const Halide::Expr &e, const PolyModel *model) { return ExprPrinter(model).print(e); }

std::string emit_kernel_cpp(const PolyModel &m, isl_ast_node *ast, const CompositeKernel &kernel, const EmitOptions &o) {
    std::ostringstream os;
    os << "// Auto-generated by akg-gen " << o.generator_version << " from " << o.pattern_file << " for " << o.target_name
       << ". Do not edit!\n";
    os << "// Kernel " << o.kernel_name << ": " << kernel.inputs.size() << " input(s), " << kernel.outputs.size() << " output(s).\n";
    os << "// Its descriptor and dispatch entry are in akg_catalog.cpp.\n";
    os << "// Regenerate with: meson compile -C build regenerate\n\n";
    os << "#include \"akg_kernel_support.h\"\n\n";
    Emitter emitter(m, o);
    os << emitter.emit(ast);
    return os.str();
}

} // namespace akg
