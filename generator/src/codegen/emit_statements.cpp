// Statements: a statement instance's index bindings, stored value and store.
#include "codegen/emitter.h"

namespace akg::codegen {

UserCall Emitter::user_call(isl_ast_node *node) {
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

std::string Emitter::init_value(const Stage &s) {
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

std::string Emitter::combine(const Stage &s, const std::string &acc, const std::string &v) {
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

const char *Emitter::omp_reduction(const Stage &s) {
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
Halide::Expr Emitter::stored_value(const Stage &s) const {
    if (rounding_deferred_.count(&s)) return float16_rounded_operand(s.value);
    if (s.kind == StageKind::Compute && m_.buffer(s.buffer).dtype == DType::Float16)
        if (Halide::Expr x = float16_rounded_operand(s.value); x.defined()) return x;
    return s.value;
}

std::string Emitter::value_with_lets(const Halide::Expr &value, const std::string &indent, std::string &lets) {
    // CSE names its temporaries from a process-wide counter; renaming them in order keeps
    // the output byte-for-byte reproducible.
    Halide::Expr e = common_subexpression_elimination(value);
    int n = 0;
    printer_.forget_index_lets();
    while (const Let *let = e.as<Let>()) {
        std::string name = "cse" + std::to_string(n++);
        std::string value = printer_.print(let->value);
        lets += indent + "const " + c_type_of(let->value.type()) + " v_" + name + " = " + value + ";\n";
        printer_.note_index_let(name, let->value);
        printer_.note_value_let(name, value);
        e = substitute(let->name, Variable::make(let->value.type(), name), let->body);
    }
    return printer_.print(e);
}

// The float16 bits an assignment to a float16 kernel tensor stores when its value is chosen
// between constants (float16_bits.h); undefined otherwise, and for tensors staged as float
// arrays, or forwarded to reads in the same loop (which expect floats).
Halide::Expr Emitter::float16_store_bits(const PolyStatement &st) const {
    const BufferInfo &b = m_.buffer(st.stage->buffer);
    if (st.role != StatementRole::Assign || b.dtype != DType::Float16 || b.kind == BufferKind::Scratch || printer_.is_staged(b.name) ||
        printer_.forwards(b.name))
        return Halide::Expr();
    return float16_bits_of_constants(stored_value(*st.stage));
}

std::string Emitter::store_cast(const BufferInfo &b, const std::string &v) const {
    if (printer_.is_staged(b.name)) return v; // a float array, converted once after the body
    if (b.dtype == DType::Float16) return "akg_f32_to_f16" + printer_.f16_suffix() + "(" + v + ")";
    return "(" + storage_type(b) + ")(" + v + ")";
}

std::string Emitter::bind_vars(const UserCall &c, const std::string &indent, bool out_dims, bool red_dims) {
    std::string s;
    const PolyStatement &st = *c.statement;
    for (int d = 0; d < st.out_dims && out_dims; ++d)
        s += indent + "[[maybe_unused]] const int64_t " + index_var(d) + " = " + c.args[d] + ";\n";
    for (int d = 0; d < st.reduce_dims && red_dims; ++d)
        s += indent + "[[maybe_unused]] const int64_t " + reduce_var(d) + " = " + c.args[st.out_dims + d] + ";\n";
    return s;
}

// The element offset a statement with index `index` (i0.. -> expression) stores to in `b`;
// undefined when an index is unknown.
Halide::Expr Emitter::store_offset(const BufferInfo &b, const std::map<std::string, Halide::Expr> &index) {
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

std::map<std::string, Halide::Expr> Emitter::index_map(const UserCall &c) {
    std::map<std::string, Halide::Expr> vars;
    for (size_t k = 0; k < c.index.size(); ++k) {
        int out_dims = c.statement->out_dims;
        std::string name = static_cast<int>(k) < out_dims ? index_var(static_cast<int>(k)) : reduce_var(static_cast<int>(k) - out_dims);
        if (c.index[k].defined()) vars[name] = c.index[k];
    }
    return vars;
}

std::string Emitter::out_access(const PolyStatement &st) {
    std::vector<std::string> idx;
    for (int d = 0; d < st.out_dims; ++d) idx.push_back(index_var(d));
    return printer_.buffer_access(st.stage->buffer, idx);
}

std::string Emitter::emit_user(isl_ast_node *node, int depth, const std::string *accumulator, bool hoist) {
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

std::string Emitter::emit_statement(const UserCall &c, int depth, const std::string *accumulator) {
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

} // namespace akg::codegen
