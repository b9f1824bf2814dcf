// Halide expressions as C++ (ExprPrinter): tensor reads become buffer accesses.
#include "codegen/expr_printer.h"

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

namespace akg::codegen {

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

namespace {

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

} // namespace

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

// Float16 tensors staged in float arrays in the parallel body being emitted (see stage_float16.h).
void ExprPrinter::set_staged(const std::vector<Float16Staging> *stagings) {
    staged_.clear();
    if (stagings)
        for (const auto &s : *stagings) staged_[s.buffer] = &s;
}

// Float16 reads in a block of a lane reduction (Emitter::lane_loops): a read whose address
// advances by one element per lane is converted for the whole block at once before the lane
// loop (akg_f16_to_f32_n: vcvtph2ps) and read back from a float array, instead of converting
// each element with akg_f16_to_f32's integer code inside the loop.
// `iterator` is the loop iterator, `first` the C name of its value in lane 0.
// `written`: buffers the loop writes, whose reads are left alone (the block would be
// converted before the writes).
// `rows`: the iterator of an enclosing loop over rows, for block_row_streams (or "").
void ExprPrinter::begin_block_staging(const std::string &iterator, const std::string &first, const std::string &lane, int lanes,
                         std::set<std::string> written, std::string rows) {
    block_ = BlockStaging{iterator, first, lane, lanes, std::move(written), std::move(rows), {}, {}, {}, {}};
    block_active_ = true;
}

void ExprPrinter::note_index_let(const std::string &name, const Halide::Expr &value) {
    if (value.type().is_int()) index_lets_[name] = substitute(index_lets_, value);
}

// Those of them whose block is a whole row of the `rows` loop: the next row's block follows
// it in memory, so the reads of successive rows are one stream.
std::vector<std::pair<std::string, std::string>> ExprPrinter::block_row_streams() const {
    std::vector<std::pair<std::string, std::string>> whole;
    for (const auto &s : block_.streams)
        if (auto r = block_.row_streams.find(s.first); r != block_.row_streams.end() && r->second) whole.push_back(s);
    return whole;
}

// The conversions the block needs, to be emitted before its lane loop.
std::string ExprPrinter::end_block_staging(const std::string &indent) {
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
void ExprPrinter::set_index_context(const std::map<std::string, Halide::Expr> *vars, const std::map<std::string, Halide::Expr> *vars_strided,
                       const Scope<Interval> *bounds, const Scope<ModulusRemainder> *alignment,
                       const std::map<std::string, Halide::Expr> *back) {
    index_vars_ = vars;
    index_vars_strided_ = vars_strided;
    bounds_ = bounds;
    alignment_ = alignment;
    back_ = back;
}

ExprPrinter::Hoister ExprPrinter::set_hoister(Hoister h) {
    std::swap(h, hoister_);
    return h;
}

std::string ExprPrinter::print(const Halide::Expr &e) {
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

// The offset of the read `buffer[args]` at the block's first iteration, as C, or "" when its
// address does not advance by exactly one element per iteration of the block's loop.
std::string ExprPrinter::block_base(const BufferInfo &b, const std::vector<Halide::Expr> &args) {
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
void ExprPrinter::note_stream(const BufferInfo &b, const std::string &base) {
    for (const auto &s : block_.streams)
        if (s.first == b.name) return;
    block_.streams.emplace_back(b.name, base);
}

// The read `buffer[args]` as an element of the current block's float array, or "" when its
// address does not advance by exactly one element per iteration of the block's loop.
std::string ExprPrinter::block_staged_read(const std::string &buffer, const std::vector<Halide::Expr> &args) {
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

void ExprPrinter::note_value_let(const std::string &name, const std::string &printed) {
    if (!block_active_) return;
    std::string lane = "[" + block_.lane + "]";
    size_t id = printed.size() - std::min(printed.size(), lane.size());
    if (id == 0 || printed.compare(id, std::string::npos, lane) != 0) return;
    for (size_t k = 0; k < id; ++k)
        if (!isalnum(static_cast<unsigned char>(printed[k])) && printed[k] != '_') return;
    block_lets_[name] = printed;
}

// Whether `e` can be computed for every lane of the block before the block's loop: it reads
// only the loop iterators, tensors the loop does not write, and CSE temporaries that are
// block array elements themselves.
bool ExprPrinter::computable_before_block(const Halide::Expr &e) {
    class Check : public IRVisitor {
    public:
        ExprPrinter &p;
        bool ok = true;
        explicit Check(ExprPrinter &printer) : p(printer) {}
        using IRVisitor::visit;
        void visit(const Variable *op) override {
            ok &= (p.bounds_ && p.bounds_->contains(op->name)) || p.block_lets_.count(op->name) > 0;
        }
        void visit(const Let *) override { ok = false; }
        void visit(const Load *) override { ok = false; }
        void visit(const Call *op) override {
            if (op->name.rfind("buf$", 0) != 0) {
                ok &= op->is_pure();
                IRVisitor::visit(op);
                return;
            }
            const BufferInfo &b = p.model_->buffer(op->name.substr(4));
            if (p.block_.written.count(b.name) || p.transposed_.count(b.name) || p.forwarded_.count(b.name)) {
                ok = false;
                return;
            }
            std::vector<Halide::Expr> idx = p.index_exprs(op->args);
            if (idx.size() != op->args.size()) {
                ok = false;
                return;
            }
            for (const auto &i : idx) i.accept(this);
        }
    } check(*this);
    e.accept(&check);
    return check.ok;
}

// A float16 rounding inside a block-staged vector loop, when its operand can be computed
// before the loop: the operand is computed for the whole block into an array, which
// akg_round_f16_n rounds with the hardware conversions (vcvtps2ph + vcvtph2ps), and the
// rounded value is read back from the array. In the loop itself a chain of roundings is a
// chain of akg_round_f16's dependent integer and float operations, which keeps the core
// waiting on latency; staged, the block's vectors are independent and the conversions are
// two instructions. Returns the array element, or "" to round in the loop.
std::string ExprPrinter::block_rounded(const Halide::Expr &value) {
    if (block_.lanes > 1024) return "";
    Halide::Expr v = substitute(index_lets_, value);
    if (!computable_before_block(v)) return "";
    std::string operand = print(v);
    auto found = block_.rounded_by_value.find(operand);
    if (found == block_.rounded_by_value.end()) {
        std::string name = "rounded_" + block_.iterator + "_" + std::to_string(block_.rounded_by_value.size());
        const std::string lanes = std::to_string(block_.lanes);
        block_.arrays.push_back("alignas(64) float " + name + "[" + lanes + "];");
        block_.arrays.push_back("#pragma omp simd");
        const std::string &it = block_.iterator, &lane = block_.lane;
        bool lane_variable = std::all_of(lane.begin(), lane.end(), [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; });
        if (lane_variable) // a lane reduction's loop: for (lane ...) { const int64_t it = first + lane; ... }
            block_.arrays.push_back("for (int64_t " + lane + " = 0; " + lane + " < " + lanes + "; ++" + lane + ") { const int64_t " + it +
                                    " = " + block_.first + " + " + lane + "; " + name + "[" + lane + "] = " + operand + "; }");
        else
            block_.arrays.push_back("for (int64_t " + it + " = " + block_.first + "; " + it + " < " + block_.first + " + " + lanes + "; " + it +
                                    " += 1) " + name + "[" + lane + "] = " + operand + ";");
        block_.arrays.push_back("akg_round_f16_n(" + name + ", " + lanes + ");");
        found = block_.rounded_by_value.emplace(operand, name).first;
    }
    return found->second + "[" + block_.lane + "]";
}

// Operands are printed one statement at a time, left to right: the order of the operands
// of `+` is unspecified in C++, and printing registers the block arrays of lane loops
// (block_staged_read) in order, so GCC and clang builds would name them differently.
void ExprPrinter::bin(const Halide::Expr &a, const char *op, const Halide::Expr &b) {
    std::string x = print(a), y = print(b);
    out_ += "(" + x + " " + op + " " + y + ")";
}

void ExprPrinter::visit(const IntImm *op) {
    out_ += op->type.bits() == 64 ? "INT64_C(" + std::to_string(op->value) + ")" : std::to_string(op->value);
}

void ExprPrinter::visit(const Cast *op) {
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
            if (block_active_ && f16_suffix_.empty())
                if (std::string element = block_rounded(inner->value); !element.empty()) {
                    out_ += element;
                    return;
                }
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

void ExprPrinter::visit(const Variable *op) {
    if (auto element = block_lets_.find(op->name); block_active_ && element != block_lets_.end()) {
        out_ += element->second;
        return;
    }
    out_ += op->name.size() > 1 && (op->name[0] == 'i' || op->name[0] == 'r' || op->name[0] == 'c') &&
                    isdigit(static_cast<unsigned char>(op->name[1]))
                ? op->name
                : "v_" + sanitize(op->name);
}

// int32 tensor arithmetic wraps around, as in the reference (and MindSpore); signed overflow
// in C++ would be undefined. Index arithmetic (int64) never overflows.
void ExprPrinter::wrapping(const char *fn, const Halide::Expr &a, const Halide::Expr &b) {
    std::string x = print(a), y = print(b);
    out_ += std::string(fn) + "(" + x + ", " + y + ")";
}

void ExprPrinter::visit(const Add *op) {
    if (op->type == Halide::Int(32)) wrapping("akg_wrap_add", op->a, op->b);
    else bin(op->a, "+", op->b);
}

void ExprPrinter::visit(const Sub *op) {
    if (op->type == Halide::Int(32)) wrapping("akg_wrap_sub", op->a, op->b);
    else bin(op->a, "-", op->b);
}

void ExprPrinter::visit(const Mul *op) {
    if (op->type == Halide::Int(32)) wrapping("akg_wrap_mul", op->a, op->b);
    else bin(op->a, "*", op->b);
}

// Integer division and modulo occur in index arithmetic, with Halide's floor semantics. C's
// truncation agrees when the dividend is non-negative, which the loop bounds usually prove;
// isl may also run a loop downwards from a negative start (i1 = -c1), and then the index
// goes through akg_floordiv / akg_floormod.
bool ExprPrinter::provably_non_negative(const Halide::Expr &e) const {
    if (!bounds_) return false;
    Interval range = bounds_of_expr_in_scope(e, *bounds_);
    if (!range.has_lower_bound()) return false;
    Halide::Expr min = simplify(range.min); // as_const_int points into it: keep it alive
    const int64_t *lo = Halide::Internal::as_const_int(min);
    return lo && *lo >= 0;
}

void ExprPrinter::visit(const Div *op) {
    if (op->type.is_float() || provably_non_negative(op->a)) bin(op->a, "/", op->b);
    else {
        std::string a = print(op->a), b = print(op->b);
        out_ += "akg_floordiv(" + a + ", " + b + ")";
    }
}

void ExprPrinter::visit(const Mod *op) {
    if (!op->type.is_float() && provably_non_negative(op->a)) return bin(op->a, "%", op->b);
    std::string a = print(op->a), b = print(op->b);
    out_ += (op->type.is_float() ? "fmodf(" : "akg_floormod(") + a + ", " + b + ")";
}

// Float max/min propagate NaN (akg_fmax: two compares, a mask or, a blend). Against a
// constant that is not NaN (a ReLU's 0) one unordered compare does (akg_fmax_c).
bool ExprPrinter::non_nan_float_constant(const Halide::Expr &e) {
    const FloatImm *f = e.as<FloatImm>();
    return f && !std::isnan(f->value);
}

void ExprPrinter::visit(const Min *op) {
    std::string a = print(op->a), b = print(op->b);
    // akg_imin is int64_t: narrower ints get their own type back (akg_abs(int32_t)).
    std::string narrow = !op->type.is_float() && op->type.bits() < 64 ? "(" + c_type_of(op->type) + ")" : "";
    const char *fn = op->type.is_float() ? (non_nan_float_constant(op->b) ? "akg_fmin_c(" : "akg_fmin(") : "akg_imin(";
    out_ += narrow + fn + a + ", " + b + ")";
}

void ExprPrinter::visit(const Max *op) {
    std::string a = print(op->a), b = print(op->b);
    std::string narrow = !op->type.is_float() && op->type.bits() < 64 ? "(" + c_type_of(op->type) + ")" : "";
    const char *fn = op->type.is_float() ? (non_nan_float_constant(op->b) ? "akg_fmax_c(" : "akg_fmax(") : "akg_imax(";
    out_ += narrow + fn + a + ", " + b + ")";
}

void ExprPrinter::visit(const Select *op) {
    std::string c = print(op->condition), t = print(op->true_value), f = print(op->false_value);
    out_ += "akg_select<" + c_type_of(op->type) + ">(" + c + ", " + t + ", " + f + ")";
}

void ExprPrinter::visit(const Let *op) {
    // Lets below the top of an expression: a GNU statement expression keeps sharing.
    std::string value = print(op->value), body = print(op->body);
    out_ += "({ const auto v_" + sanitize(op->name) + " = " + value + "; " + body + "; })";
}

// The read `buffer[args]` of a buffer stored in the current vector loop: the store of the
// same element (stream_outputs.cpp checked the schedule), from its array or from memory.
std::string ExprPrinter::forwarded_read(const BufferInfo &b, const std::vector<ForwardedStore> &stores, const std::vector<Halide::Expr> &args) {
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

void ExprPrinter::visit(const Call *op) {
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

// The indices of a read in the loop iterators, simplified (see buffer_access); empty
// without an index context.
std::vector<Halide::Expr> ExprPrinter::index_exprs(const std::vector<Halide::Expr> &args) {
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

std::string ExprPrinter::buffer_access(const std::string &buffer, const std::vector<Halide::Expr> &args) {
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

std::string ExprPrinter::buffer_access(const std::string &buffer, const std::vector<std::string> &idx) {
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

} // namespace akg::codegen
