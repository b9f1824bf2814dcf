// C++ emission from isl's AST.
#include "codegen/emit_cpp.h"

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

// Prints Halide expressions as C++. Tensor reads become buffer accesses.
class ExprPrinter : public IRVisitor {
public:
    explicit ExprPrinter(const PolyModel *model) : model_(model) {}
    std::string print(const Halide::Expr &e) {
        std::string saved;
        std::swap(saved, out_);
        e.accept(this);
        std::swap(saved, out_);
        return saved;
    }

private:
    const PolyModel *model_;
    std::string out_;
    using IRVisitor::visit;

    void bin(const Halide::Expr &a, const char *op, const Halide::Expr &b) { out_ += "(" + print(a) + " " + op + " " + print(b) + ")"; }
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
            if (read && read->name.rfind("buf$", 0) == 0 && model_->buffer(read->name.substr(4)).dtype != DType::Float16) {
                // A float16 tensor kept in a wider scratch buffer.
                out_ += "((float)" + buffer_access(read->name.substr(4), read->args) + ")";
                return;
            }
            if (const Cast *inner = op->value.as<Cast>()) {
                out_ += "akg_round_f16(" + print(inner->value) + ")";
                return;
            }
            out_ += "akg_f16_to_f32(" + print(op->value) + ")";
            return;
        }
        if (op->type == Halide::Float(16)) {
            out_ += "akg_f32_to_f16(" + print(op->value) + ")";
            return;
        }
        out_ += "((" + c_type_of(op->type) + ")(" + print(op->value) + "))";
    }
    void visit(const Variable *op) override {
        out_ += op->name.size() > 1 && (op->name[0] == 'i' || op->name[0] == 'r') && isdigit(static_cast<unsigned char>(op->name[1]))
                    ? op->name
                    : "v_" + sanitize(op->name);
    }
    void visit(const Add *op) override { bin(op->a, "+", op->b); }
    void visit(const Sub *op) override { bin(op->a, "-", op->b); }
    void visit(const Mul *op) override { bin(op->a, "*", op->b); }
    // Integer division and modulo only occur in index arithmetic, whose operands are
    // non-negative, where C's truncation equals Halide's floor semantics.
    void visit(const Div *op) override { bin(op->a, "/", op->b); }
    void visit(const Mod *op) override {
        if (op->type.is_float()) out_ += "fmodf(" + print(op->a) + ", " + print(op->b) + ")";
        else bin(op->a, "%", op->b);
    }
    void visit(const Min *op) override {
        std::string a = print(op->a), b = print(op->b);
        out_ += (op->type.is_float() ? "akg_fmin(" : "akg_imin(") + a + ", " + b + ")";
    }
    void visit(const Max *op) override {
        std::string a = print(op->a), b = print(op->b);
        out_ += (op->type.is_float() ? "akg_fmax(" : "akg_imax(") + a + ", " + b + ")";
    }
    void visit(const EQ *op) override { bin(op->a, "==", op->b); }
    void visit(const NE *op) override { bin(op->a, "!=", op->b); }
    void visit(const LT *op) override { bin(op->a, "<", op->b); }
    void visit(const LE *op) override { bin(op->a, "<=", op->b); }
    void visit(const GT *op) override { bin(op->a, ">", op->b); }
    void visit(const GE *op) override { bin(op->a, ">=", op->b); }
    void visit(const And *op) override { bin(op->a, "&&", op->b); }
    void visit(const Or *op) override { bin(op->a, "||", op->b); }
    void visit(const Not *op) override { out_ += "(!" + print(op->a) + ")"; }
    void visit(const Select *op) override {
        out_ += "akg_select<" + c_type_of(op->type) + ">(" + print(op->condition) + ", " + print(op->true_value) + ", " +
                print(op->false_value) + ")";
    }
    void visit(const Let *op) override {
        // Lets below the top of an expression: a GNU statement expression keeps sharing.
        out_ += "({ const auto v_" + sanitize(op->name) + " = " + print(op->value) + "; " + print(op->body) + "; })";
    }
    void visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) == 0) {
            std::string access = buffer_access(op->name.substr(4), op->args);
            // Double accumulators are read back as the float32 values the IR computes with.
            if (model_->buffer(op->name.substr(4)).dtype == DType::Float64 && op->type == Halide::Float(32))
                access = "((float)" + access + ")";
            out_ += access;
            return;
        }
        out_ += op->name + "(";
        for (size_t k = 0; k < op->args.size(); ++k) out_ += (k ? ", " : "") + print(op->args[k]);
        out_ += ")";
    }

public:
    std::string buffer_access(const std::string &buffer, const std::vector<Halide::Expr> &args) {
        std::vector<std::string> idx;
        for (const auto &a : args) idx.push_back(print(a));
        return buffer_access(buffer, idx);
    }
    std::string buffer_access(const std::string &buffer, const std::vector<std::string> &idx) {
        const BufferInfo &b = model_->buffer(buffer);
        const Shape &shape = b.promoted ? b.local_shape : b.shape;
        std::string linear;
        int64_t stride = 1;
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
            if (shape[d] != 1) {
                std::string term = b.promoted ? "(" + idx[d] + " - (" + b.local_offset_c[d] + "))" : idx[d];
                if (stride != 1) term += " * " + std::to_string(stride);
                linear = linear.empty() ? term : term + " + " + linear;
            }
            stride *= shape[d];
        }
        return buffer + "[" + (linear.empty() ? "0" : linear) + "]";
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

struct UserCall {
    const PolyStatement *statement = nullptr;
    std::vector<std::string> args;
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
        os << scratch_frees("    ") << "    return AKG_STATUS_OK;\n}\n";
        return os.str();
    }

private:
    const PolyModel &m_;
    const EmitOptions &o_;
    ExprPrinter printer_;
    std::vector<std::string> helpers_;
    std::vector<std::string> iterators_; // enclosing loop iterators
    bool in_simd_ = false;

    static std::string pad(int depth) { return std::string(4 * depth, ' '); }

    bool written(const BufferInfo &b) const {
        if (b.kind != BufferKind::KernelInput) return true;
        for (const auto &st : m_.statements)
            if (st.stage->buffer == b.name) return true;
        return false;
    }

    std::string storage_type(const BufferInfo &b) const { return dtype_c_type(b.dtype); }

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
                    os << indent << storage_type(b) << " " << b.name << "[" << element_count(b.local_shape) << "];\n";
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
        isl_ast_expr *fn = isl_ast_expr_op_get_arg(e, 0);
        isl_id *id = isl_ast_expr_get_id(fn);
        call.statement = &m_.statement(isl_id_get_name(id));
        isl_id_free(id);
        isl_ast_expr_free(fn);
        for (int k = 1; k < isl_ast_expr_op_get_n_arg(e); ++k) call.args.push_back(ast_expr(isl_ast_expr_op_get_arg(e, k)));
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

    static std::string combine(const Stage &s, const std::string &acc, const std::string &v) {
        switch (s.reduce_kind) {
        case ReduceKind::Sum: return acc + " + " + v;
        case ReduceKind::Prod: return acc + " * " + v;
        case ReduceKind::Max: return "akg_fmax(" + acc + ", " + v + ")";
        case ReduceKind::Min: return "akg_fmin(" + acc + ", " + v + ")";
        }
        return v;
    }

    static const char *omp_reduction(const Stage &s) {
        switch (s.reduce_kind) {
        case ReduceKind::Sum: return "+";
        case ReduceKind::Prod: return "*";
        case ReduceKind::Max: return "max";
        case ReduceKind::Min: return "min";
        }
        return "+";
    }

    // The value of a statement with CSE'd subexpressions hoisted into const locals.
    std::string value_with_lets(const Stage &s, const std::string &indent, std::string &lets) {
        // CSE names its temporaries from a process-wide counter; renaming them in order keeps
        // the output byte-for-byte reproducible.
        Halide::Expr e = common_subexpression_elimination(s.value);
        int n = 0;
        while (const Let *let = e.as<Let>()) {
            std::string name = "cse" + std::to_string(n++);
            lets += indent + "const " + c_type_of(let->value.type()) + " v_" + name + " = " + printer_.print(let->value) + ";\n";
            e = substitute(let->name, Variable::make(let->value.type(), name), let->body);
        }
        return printer_.print(e);
    }

    std::string store_cast(const BufferInfo &b, const std::string &v) const {
        if (b.dtype == DType::Float16) return "akg_f32_to_f16(" + v + ")";
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

    std::string out_access(const PolyStatement &st) {
        std::vector<std::string> idx;
        for (int d = 0; d < st.out_dims; ++d) idx.push_back(index_var(d));
        return printer_.buffer_access(st.stage->buffer, idx);
    }

    std::string emit_user(isl_ast_node *node, int depth, const std::string *accumulator) {
        UserCall c = user_call(node);
        const PolyStatement &st = *c.statement;
        const Stage &s = *st.stage;
        const BufferInfo &b = m_.buffer(s.buffer);
        std::string in = pad(depth + 1), out = pad(depth) + "{\n";
        if (accumulator) {
            out += bind_vars(c, in, false, true);
            std::string lets, v = value_with_lets(s, in, lets);
            return out + lets + in + *accumulator + " = " + combine(s, *accumulator, v) + ";\n" + pad(depth) + "}\n";
        }
        out += bind_vars(c, in, true, true);
        if (st.role == StatementRole::ReduceInit) return out + in + out_access(st) + " = " + init_value(s) + ";\n" + pad(depth) + "}\n";
        std::string lets, v = value_with_lets(s, in, lets);
        out += lets;
        if (st.role == StatementRole::ReduceUpdate) {
            // In memory, in the accumulator's own precision.
            std::string target = out_access(st);
            out += in + target + " = " + store_cast(b, combine(s, target, v)) + ";\n";
        } else {
            out += in + out_access(st) + " = " + store_cast(b, v) + ";\n";
        }
        return out + pad(depth) + "}\n";
    }

    // A loop nest that only accumulates one reduction: the loops' iterators do not index the
    // reduction's output. Returns the update statement's node or nullptr.
    isl_ast_node *reduction_nest(isl_ast_node *for_node, std::vector<isl_ast_node *> &loops) {
        isl_ast_node *node = isl_ast_node_copy(for_node);
        while (true) {
            auto t = isl_ast_node_get_type(node);
            if (t == isl_ast_node_for) {
                loops.push_back(isl_ast_node_copy(node));
                isl_ast_node *body = isl_ast_node_for_get_body(node);
                isl_ast_node_free(node);
                node = body;
            } else if (t == isl_ast_node_mark) {
                isl_ast_node *child = isl_ast_node_mark_get_node(node);
                isl_ast_node_free(node);
                node = child;
            } else if (t == isl_ast_node_block) {
                isl_ast_node_list *list = isl_ast_node_block_get_children(node);
                isl_ast_node_free(node);
                if (isl_ast_node_list_n_ast_node(list) != 1) {
                    isl_ast_node_list_free(list);
                    return nullptr;
                }
                node = isl_ast_node_list_get_ast_node(list, 0);
                isl_ast_node_list_free(list);
            } else break;
        }
        if (isl_ast_node_get_type(node) != isl_ast_node_user) {
            isl_ast_node_free(node);
            return nullptr;
        }
        UserCall c = user_call(node);
        if (c.statement->role != StatementRole::ReduceUpdate) {
            isl_ast_node_free(node);
            return nullptr;
        }
        for (isl_ast_node *loop : loops) {
            isl_ast_expr *it = isl_ast_node_for_get_iterator(loop);
            std::string name = ast_expr(it);
            for (int d = 0; d < c.statement->out_dims; ++d)
                if (mentions(c.args[d], name)) {
                    isl_ast_node_free(node);
                    return nullptr;
                }
        }
        return node;
    }

    std::string for_header(isl_ast_node *node, std::string &iterator) {
        iterator = ast_expr(isl_ast_node_for_get_iterator(node));
        std::string init = ast_expr(isl_ast_node_for_get_init(node));
        std::string cond = ast_expr(isl_ast_node_for_get_cond(node));
        std::string inc = ast_expr(isl_ast_node_for_get_inc(node));
        return "for (int64_t " + iterator + " = " + init + "; " + cond + "; " + iterator + " += " + inc + ")";
    }

    bool body_has_loop(isl_ast_node *node) {
        bool found = false;
        isl_ast_node_foreach_descendant_top_down(
            node,
            [](isl_ast_node *n, void *user) -> isl_bool {
                if (isl_ast_node_get_type(n) == isl_ast_node_for) *static_cast<bool *>(user) = true;
                return isl_bool_true;
            },
            &found);
        return found;
    }

    // A reduction nest accumulates in registers: one accumulator per loop level, each
    // starting from the identity and folded into the level above when its loop ends. Partial
    // sums then stay short (a BN-statistics sum over 100352 elements adds 32 sums of 56 sums of
    // 56), which keeps float32 rounding error near that of pairwise summation.
    std::string emit_accumulation(isl_ast_node *update, std::vector<isl_ast_node *> &loops, int depth) {
        UserCall c = user_call(update);
        const Stage &s = *c.statement->stage;
        const BufferInfo &b = m_.buffer(s.buffer);
        std::string type = c_type_of(s.value.type());
        // Long float sums (1024 terms and more) accumulate in double even in registers:
        // float lanes would each add thousands of terms.
        if (s.reduce_kind == ReduceKind::Sum && s.value.type().is_float() && element_count(s.reduce_extents) >= 1024) type = "double";
        std::string out = pad(depth) + "{\n" + bind_vars(c, pad(depth + 1), true, false);
        std::string target = out_access(*c.statement);
        out += pad(depth + 1) + type + " acc = " + target + ";\n";
        std::vector<std::string> closers;
        int d = depth + 1;
        std::string outer = "acc";
        for (size_t k = 0; k < loops.size(); ++k) {
            std::string it;
            std::string header = for_header(loops[k], it);
            std::string inner = "acc" + std::to_string(k + 1);
            if (k + 1 < loops.size()) {
                out += pad(d) + header + " {\n";
                out += pad(d + 1) + type + " " + inner + " = " + init_value(s) + ";\n";
                closers.push_back(pad(d + 1) + outer + " = " + combine(s, outer, inner) + ";\n" + pad(d) + "}\n");
                outer = inner;
                ++d;
            } else {
                out += pad(d) + type + " " + inner + " = " + init_value(s) + ";\n";
                out += pad(d) + "#pragma omp simd reduction(" + omp_reduction(s) + ":" + inner + ")\n";
                out += pad(d) + header + "\n";
                out += emit_user(update, d + 1, &inner);
                out += pad(d) + outer + " = " + combine(s, outer, inner) + ";\n";
            }
        }
        for (auto it = closers.rbegin(); it != closers.rend(); ++it) out += *it;
        out += pad(depth + 1) + target + " = " + store_cast(b, "acc") + ";\n";
        out += pad(depth) + "}\n";
        for (auto *l : loops) isl_ast_node_free(l);
        isl_ast_node_free(update);
        return out;
    }

    // The loops of a parallel band (up to `members` perfectly nested, non-degenerate loops)
    // run under one `omp parallel for collapse`; their body becomes a function of its own.
    std::string emit_parallel(isl_ast_node *for_node, int depth, int members) {
        std::vector<isl_ast_node *> chain{isl_ast_node_copy(for_node)};
        while (static_cast<int>(chain.size()) < members) {
            isl_ast_node *body = isl_ast_node_for_get_body(chain.back());
            if (isl_ast_node_get_type(body) != isl_ast_node_for || isl_ast_node_for_is_degenerate(body) == isl_bool_true) {
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
        for (const auto &it : its) iterators_.push_back(it);
        isl_ast_node *body = isl_ast_node_for_get_body(chain.back());
        std::string inner;
        for (const auto &b : m_.buffers)
            if (b.promoted) inner += "    " + storage_type(b) + " " + b.name + "[" + std::to_string(element_count(b.local_shape)) + "];\n";
        inner += emit_node(body, 1);
        isl_ast_node_free(body);
        for (size_t k = 0; k < its.size(); ++k) iterators_.pop_back();
        for (auto *loop : chain) isl_ast_node_free(loop);
        std::string plist = parameter_list(), alist = argument_list();
        helpers_[id] = "static void " + fn + "(" + params + (plist.empty() ? "" : ", " + plist) + ") {\n" + inner + "}\n";
        std::string out = pad(depth) + "#pragma omp parallel for" + (chain.size() > 1 ? " collapse(" + std::to_string(chain.size()) + ")" : "") +
                          " schedule(static)\n";
        for (size_t k = 0; k < headers.size(); ++k) out += pad(depth + static_cast<int>(k)) + headers[k] + "\n";
        return out + pad(depth + static_cast<int>(headers.size())) + fn + "(" + args + (alist.empty() ? "" : ", " + alist) + ");\n";
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
            isl_id *id = isl_ast_node_mark_get_id(node);
            std::string name = isl_id_get_name(id);
            isl_id_free(id);
            isl_ast_node *child = isl_ast_node_mark_get_node(node);
            std::string s;
            if (name.rfind("parallel_", 0) == 0 && isl_ast_node_get_type(child) == isl_ast_node_for &&
                isl_ast_node_for_is_degenerate(child) != isl_bool_true) {
                s = emit_parallel(child, depth, std::stoi(name.substr(9)));
            } else {
                bool saved = in_simd_;
                in_simd_ = name == "simd";
                s = emit_node(child, depth);
                in_simd_ = saved;
            }
            isl_ast_node_free(child);
            return s;
        }
        case isl_ast_node_for: {
            std::vector<isl_ast_node *> loops;
            if (isl_ast_node *update = reduction_nest(node, loops)) return emit_accumulation(update, loops, depth);
            for (auto *l : loops) isl_ast_node_free(l);
            std::string it;
            std::string header = for_header(node, it);
            isl_ast_node *body = isl_ast_node_for_get_body(node);
            std::string s;
            if (isl_ast_node_for_is_degenerate(node) == isl_bool_true) {
                s = pad(depth) + "{\n" + pad(depth + 1) + "const int64_t " + it + " = " +
                    ast_expr(isl_ast_node_for_get_init(node)) + ";\n";
                iterators_.push_back(it);
                s += emit_node(body, depth + 1);
                iterators_.pop_back();
                s += pad(depth) + "}\n";
            } else {
                if (in_simd_ && !body_has_loop(body)) s += pad(depth) + "#pragma omp simd\n";
                s += pad(depth) + header + " {\n";
                iterators_.push_back(it);
                s += emit_node(body, depth + 1);
                iterators_.pop_back();
                s += pad(depth) + "}\n";
            }
            isl_ast_node_free(body);
            return s;
        }
        case isl_ast_node_if: {
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
        case isl_ast_node_user: return emit_user(node, depth, nullptr);
        default: throw InternalError("unexpected isl AST node");
        }
    }
};

std::string tensor_defs(const std::string &symbol, const char *what, const std::vector<TensorDesc> &tensors,
                        const std::vector<bool> &inplace) {
    std::ostringstream os;
    for (size_t k = 0; k < tensors.size(); ++k) {
        os << "static const int64_t akg_" << symbol << "_" << what << k << "_shape[] = {";
        for (size_t d = 0; d < tensors[k].shape.size(); ++d) os << (d ? ", " : "") << tensors[k].shape[d];
        if (tensors[k].shape.empty()) os << "0";
        os << "};\n";
    }
    os << "static const akg_tensor_def akg_" << symbol << "_" << what << "s[] = {\n";
    for (size_t k = 0; k < tensors.size(); ++k)
        os << "    {\"" << tensors[k].name << "\", " << dtype_abi_enum(tensors[k].dtype) << ", " << tensors[k].shape.size()
           << ", akg_" << symbol << "_" << what << k << "_shape, " << (inplace.empty() ? 0 : inplace[k] ? 1 : 0) << "},\n";
    if (tensors.empty()) os << "    {\"\", AKG_DTYPE_FLOAT32, 0, nullptr, 0},\n";
    os << "};\n";
    return os.str();
}

} // namespace

std::string expr_to_cpp(const Halide::Expr &e, const PolyModel *model) { return ExprPrinter(model).print(e); }

std::string emit_kernel_cpp(const PolyModel &m, isl_ast_node *ast, const CompositeKernel &kernel, const EmitOptions &o) {
    std::ostringstream os;
    os << "// Auto-generated by akg-gen " << o.generator_version << " from " << o.pattern_file << ". Do not edit!\n";
    os << "// Kernel " << o.kernel_name << ": " << kernel.inputs.size() << " input(s), " << kernel.outputs.size() << " output(s).\n";
    os << "// Regenerate with: meson compile -C build regenerate\n\n";
    os << "#include \"akg_kernel_support.h\"\n\n";
    Emitter emitter(m, o);
    os << emitter.emit(ast) << "\n";
    std::vector<bool> inplace(kernel.inputs.size(), false);
    for (const auto &b : m.buffers)
        if (b.kind == BufferKind::KernelInput)
            for (const auto &st : m.statements)
                if (st.stage->buffer == b.name) inplace[std::stoi(b.name.substr(2))] = true;
    os << tensor_defs(o.symbol, "input", kernel.inputs, inplace);
    os << tensor_defs(o.symbol, "output", kernel.outputs, {});
    os << "\nextern \"C\" const akg_kernel akg_kernel_desc_" << o.symbol << " = {\n    \"" << o.kernel_name << "\", \""
       << o.pattern_file << "\",\n    " << kernel.inputs.size() << ", akg_" << o.symbol << "_inputs, " << kernel.outputs.size()
       << ", akg_" << o.symbol << "_outputs,\n    akg_kernel_fn_" << o.symbol << "};\n";
    return os.str();
}

} // namespace akg
