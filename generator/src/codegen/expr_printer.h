// The emitter's printer of Halide expressions as C++, and the small helpers of the C++ it
// prints (private to codegen/).
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <Halide.h>

#include "poly/poly_model.h"

namespace akg::codegen {

using namespace Halide::Internal;

std::string c_type_of(Halide::Type t);
std::string sanitize(const std::string &name);
std::string float_literal(double v, int bits);
bool mentions(const std::string &text, const std::string &name);
std::string linear_index(const std::vector<std::string> &terms, const Shape &shape);

// Prints Halide expressions as C++. Tensor reads become buffer accesses.
class ExprPrinter : public IRVisitor {
public:
    explicit ExprPrinter(const PolyModel *model) : model_(model) {}

    void set_staged(const std::vector<Float16Staging> *stagings);
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

    void begin_block_staging(const std::string &iterator, const std::string &first, const std::string &lane, int lanes,
                             std::set<std::string> written = {}, std::string rows = "");
    // The integer CSE temporaries of the statement being printed (index arithmetic shared by
    // several reads), so that block staging sees through them to the loop iterators.
    void forget_index_lets() {
        index_lets_.clear();
        block_lets_.clear();
    }
    void note_index_let(const std::string &name, const Halide::Expr &value);
    // A CSE temporary of the statement being printed whose value printed as `printed`: when
    // that is an element of a block array, later block roundings may read it before the loop.
    void note_value_let(const std::string &name, const std::string &printed);
    // The reads of the last block whose inputs prefetch-streams chose: (buffer, offset of the
    // block's first element), in the order first read.
    const std::vector<std::pair<std::string, std::string>> &block_streams() const { return block_.streams; }
    std::vector<std::pair<std::string, std::string>> block_row_streams() const;
    std::string end_block_staging(const std::string &indent);

    void set_index_context(const std::map<std::string, Halide::Expr> *vars, const std::map<std::string, Halide::Expr> *vars_strided,
                           const Scope<Interval> *bounds, const Scope<ModulusRemainder> *alignment,
                           const std::map<std::string, Halide::Expr> *back);

    // Consulted for every subexpression, outermost first, while a statement is printed (see
    // Emitter::hoist_invariant): the name of a variable that holds its value, or "".
    using Hoister = std::function<std::string(const Halide::Expr &)>;
    Hoister set_hoister(Hoister h);

    std::string print(const Halide::Expr &e);

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
        std::map<std::string, std::string> rounded_by_value; // printed operand -> its rounded array
    };
    BlockStaging block_;
    std::map<std::string, std::vector<ForwardedStore>> forwarded_;
    std::map<std::string, TransposedRead> transposed_;
    std::map<std::string, Halide::Expr> index_lets_;
    std::map<std::string, std::string> block_lets_; // CSE name -> block array element
    bool block_active_ = false;
    std::string f16_suffix_;
    Hoister hoister_;

    std::string block_base(const BufferInfo &b, const std::vector<Halide::Expr> &args);

    void note_stream(const BufferInfo &b, const std::string &base);

    std::string block_staged_read(const std::string &buffer, const std::vector<Halide::Expr> &args);
    bool computable_before_block(const Halide::Expr &e);
    std::string block_rounded(const Halide::Expr &value);

    const PolyModel *model_;
    std::map<std::string, const Float16Staging *> staged_;
    const std::map<std::string, Halide::Expr> *index_vars_ = nullptr, *index_vars_strided_ = nullptr;
    const Scope<Interval> *bounds_ = nullptr;
    const Scope<ModulusRemainder> *alignment_ = nullptr;
    const std::map<std::string, Halide::Expr> *back_ = nullptr;
    std::string out_;
    using IRVisitor::visit;

    void bin(const Halide::Expr &a, const char *op, const Halide::Expr &b);
    void visit(const IntImm *op) override;
    void visit(const UIntImm *op) override { out_ += op->type.is_bool() ? (op->value ? "true" : "false") : std::to_string(op->value) + "u"; }
    void visit(const FloatImm *op) override { out_ += float_literal(op->value, op->type.bits()); }
    void visit(const Cast *op) override;
    void visit(const Variable *op) override;
    void wrapping(const char *fn, const Halide::Expr &a, const Halide::Expr &b);
    void visit(const Add *op) override;
    void visit(const Sub *op) override;
    void visit(const Mul *op) override;
    bool provably_non_negative(const Halide::Expr &e) const;
    void visit(const Div *op) override;
    void visit(const Mod *op) override;
    static bool non_nan_float_constant(const Halide::Expr &e);
    void visit(const Min *op) override;
    void visit(const Max *op) override;
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
    void visit(const Select *op) override;
    void visit(const Let *op) override;
    std::string forwarded_read(const BufferInfo &b, const std::vector<ForwardedStore> &stores, const std::vector<Halide::Expr> &args);

    void visit(const Call *op) override;

public:
    std::vector<Halide::Expr> index_exprs(const std::vector<Halide::Expr> &args);

    std::string buffer_access(const std::string &buffer, const std::vector<Halide::Expr> &args);
    std::string buffer_access(const std::string &buffer, const std::vector<std::string> &idx);
};

} // namespace akg::codegen
