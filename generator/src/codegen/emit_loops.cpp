// Loops: isl AST nodes and for loops, the bounds known of their iterators, and the loop-invariant
// values hoisted out of them.
#include "codegen/emitter.h"

namespace akg::codegen {

namespace {

std::string ast_op(isl_ast_expr *e, const char *op) {
    std::string a = ast_expr(isl_ast_expr_op_get_arg(e, 0)), b = ast_expr(isl_ast_expr_op_get_arg(e, 1));
    return "(" + a + " " + op + " " + b + ")";
}

} // namespace

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

bool Emitter::int_value(isl_ast_expr *e, int64_t &v) { // takes ownership
    bool ok = isl_ast_expr_get_type(e) == isl_ast_expr_int;
    if (ok) {
        isl_val *x = isl_ast_expr_get_val(e);
        v = isl_val_get_num_si(x);
        isl_val_free(x);
    }
    isl_ast_expr_free(e);
    return ok;
}

void Emitter::enter_loop(isl_ast_node *for_node, const std::string &it) {
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

void Emitter::leave_loop(const std::string &it) {
    loop_bounds_.pop(it);
    loop_alignment_.pop(it);
    if (strided_.erase(it)) {
        loop_bounds_.pop("q_" + it);
        strided_back_.erase("q_" + it);
    }
}

std::set<std::string> Emitter::written_buffers(isl_ast_node *node) {
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
void Emitter::enter_hoist_frame(const std::string &iterator, isl_ast_node *body) {
    hoist_frames_.push_back(HoistFrame{iterator, iterator.empty() ? std::set<std::string>{} : written_buffers(body), {}, {}});
}

std::string Emitter::leave_hoist_frame(int depth, const std::string &loop_code) {
    std::string declarations;
    for (const auto &d : hoist_frames_.back().declarations) declarations += pad(depth) + d + "\n";
    hoist_frames_.pop_back();
    return declarations + loop_code;
}

bool Emitter::provably_in_bounds(const InvariantUse::Read &read) const {
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

std::string Emitter::hoist_invariant(const Halide::Expr &e) {
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

// The children of the block `node` (taken), or `node` itself when it is not a block.
std::vector<isl_ast_node *> Emitter::statements_of(isl_ast_node *node) {
    if (isl_ast_node_get_type(node) != isl_ast_node_block) return {node};
    std::vector<isl_ast_node *> children;
    isl_ast_node_list *list = isl_ast_node_block_get_children(node);
    for (int k = 0; k < isl_ast_node_list_n_ast_node(list); ++k) children.push_back(isl_ast_node_list_get_ast_node(list, k));
    isl_ast_node_list_free(list);
    isl_ast_node_free(node);
    return children;
}

// `node` (taken) without the one-child blocks around what it holds.
isl_ast_node *Emitter::without_single_blocks(isl_ast_node *node) {
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
isl_ast_node *Emitter::unwrapped(isl_ast_node *node) {
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
isl_ast_node *Emitter::simd_loop_body(isl_ast_node *loop) {
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

// Whether the bounds of loop `node` use the iterator of one of the loops `outer`: OpenMP
// collapses rectangular nests only (a skewed band: `for (c1 = c0; c1 <= c0 + 7; ...)`).
bool Emitter::bounds_use_iterators(isl_ast_node *node, const std::vector<isl_ast_node *> &outer) {
    std::string bounds = ast_expr(isl_ast_node_for_get_init(node)) + " " + ast_expr(isl_ast_node_for_get_cond(node));
    for (auto *loop : outer)
        if (mentions(bounds, ast_expr(isl_ast_node_for_get_iterator(loop)))) return true;
    return false;
}

std::string Emitter::for_header(isl_ast_node *node, std::string &iterator) {
    iterator = ast_expr(isl_ast_node_for_get_iterator(node));
    std::string init = ast_expr(isl_ast_node_for_get_init(node));
    std::string cond = ast_expr(isl_ast_node_for_get_cond(node));
    std::string inc = ast_expr(isl_ast_node_for_get_inc(node));
    return "for (int64_t " + iterator + " = " + init + "; " + cond + "; " + iterator + " += " + inc + ")";
}

// `code` one level deeper.
std::string Emitter::indented(const std::string &code) {
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
bool Emitter::contains(isl_ast_node *node, isl_ast_node_type type) {
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

// The statements below `node` (borrowed), in AST order.
std::vector<isl_ast_node *> Emitter::user_nodes(isl_ast_node *node) {
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

std::string Emitter::emit_node(isl_ast_node *node, int depth) {
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
            header = "for (int64_t " + it + " = " + it + "_block; " + it + " <= akg_imin(" + it + "_block + " + std::to_string(m_.column_sum_block_rows - 1) + ", " +
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

} // namespace akg::codegen
