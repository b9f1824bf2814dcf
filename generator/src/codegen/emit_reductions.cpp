// Reductions: reduction nests, explicit lanes (ReductionPlan), column sums in blocks and chunks of
// rows, grouped row sums.
#include "codegen/emitter.h"

namespace akg::codegen {

// A loop nest that only accumulates reductions: its innermost body is one update statement
// or several (sibling reductions over the same domain, fused by the scheduler), and the
// loops' iterators index none of their outputs. Returns the update statements' nodes, or
// nothing.
std::vector<isl_ast_node *> Emitter::reduction_nest(isl_ast_node *for_node, std::vector<isl_ast_node *> &loops, std::vector<isl_ast_node *> &sides) {
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

// A bound on the value of an isl AST expression: the constant, or a constant argument of a
// min (the last group of rows: min(15, 66 - c1)).
bool Emitter::constant_bound(isl_ast_expr *e, int64_t &v) { // takes ownership
    bool ok = int_value(isl_ast_expr_copy(e), v);
    if (!ok && isl_ast_expr_get_type(e) == isl_ast_expr_op && isl_ast_expr_op_get_type(e) == isl_ast_expr_op_min)
        for (int k = 0; k < isl_ast_expr_op_get_n_arg(e) && !ok; ++k) ok = int_value(isl_ast_expr_op_get_arg(e, k), v);
    isl_ast_expr_free(e);
    return ok;
}

// The column sums of `row_loop` to block (see above); none when it has none or they do not
// qualify.
Emitter::ColumnBlocking Emitter::column_blocking(isl_ast_node *row_loop) {
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
        if (!le || (b.single ? b.hi - b.lo + 1 > m_.column_sum_block_rows : b.hi - b.lo + 1 <= m_.column_sum_block_rows)) return b;
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
bool Emitter::column_sum_loop(isl_ast_node *node, const std::string &row_it, ColumnSumLoop &l) {
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
std::string Emitter::blocked_rows_code(ColumnBlocking &b, const std::string &rows_code, int depth) {
    std::string block = b.row_it + "_block";
    std::string lo = std::to_string(b.lo), hi = std::to_string(b.hi);
    if (chunk_rows_ > 0) { // the rows of one chunk (emit_row_chunks)
        lo = (b.lo ? std::to_string(b.lo) + " + " : std::string()) + "chunk * " + std::to_string(chunk_rows_);
        hi = "akg_imin(" + lo + " + " + std::to_string(chunk_rows_ - 1) + ", " + hi + ")";
    }
    std::string out = b.single ? pad(depth) + "{\n"
                               : pad(depth) + "for (int64_t " + block + " = " + lo + "; " + block + " <= " + hi + "; " + block + " += " +
                                     std::to_string(m_.column_sum_block_rows) + ") {\n";
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
std::string Emitter::emit_grouped_row_sums(isl_ast_node *row_loop, int depth) {
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

std::string Emitter::grouped_row_sums_code(isl_ast_node *row_loop, isl_ast_node *terms, isl_ast_node *update, int64_t lo, int64_t term_lo, int64_t n,
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

// A reduction nest accumulates in registers: one accumulator per loop level, each
// starting from the identity and folded into the level above when its loop ends. Partial
// sums then stay short (a BN-statistics sum over 100352 elements adds 32 sums of 56 sums of
// 56), which keeps float32 rounding error near that of pairwise summation. Sibling
// reductions (sum and sum of squares of one tensor) share the loops, each with its own
// accumulators.
// The side statements of a reduction's innermost loop that feed its updates (saved values
// the updates read: stored first), or the others (stored after the updates).
std::string Emitter::emit_sides(const std::vector<isl_ast_node *> &sides, bool feeding, int depth) {
    std::string out;
    for (auto *side : sides)
        if (m_.feeding_side_statements.count(user_call(side).statement->name) == feeding) out += emit_user(side, depth, nullptr, false);
    return out;
}

std::string Emitter::emit_accumulation(const std::vector<isl_ast_node *> &updates, const std::vector<isl_ast_node *> &sides, std::vector<isl_ast_node *> &loops,
                              int depth) {
    std::vector<Accumulation> accs;
    for (size_t u = 0; u < updates.size(); ++u) {
        const PolyStatement &st = *user_call(updates[u]).statement;
        const ReductionPlan &plan = m_.reduction_plans.at(st.name);
        // int32 sums and products accumulate unsigned (plan-reductions), so that OpenMP's
        // own combination of the lanes wraps too.
        accs.push_back({updates[u], st.stage, c_type_of(plan.accumulator), u == 0 ? "acc" : "acc" + std::string(1, static_cast<char>('A' + u)), &plan});
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

// The innermost loop of a reduction nest, accumulated in explicit lanes (plan-reductions
// chose how many): blocks of that many consecutive iterations are added lane by lane under
// `omp simd`, the last partial block re-reads the final block's iterations with the ones
// already counted masked to the
// identity (every read stays in bounds, and the block stays one vector), and the lanes are
// combined by a halving tree (akg_combine_lanes). The order of the additions is therefore
// fixed by the generated code, not by the compiler. OpenMP's `simd reduction` leaves the
// lanes to GCC, which adds them one after the other at the end of each loop and runs the
// remainder as scalar code: on a row of 49 float16 values (global average pooling) those
// two cost more than the vector loop. Returns "" when the loop is not a unit-stride
// `it <= ub` loop or a type has no lanes; the caller then emits the `simd reduction` loop.
std::string Emitter::emit_lane_reduction(isl_ast_node *loop, const std::vector<Accumulation> &accs, const std::vector<isl_ast_node *> &sides,
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
    const int lanes = accs.front().plan->lanes, chunks = accs.front().plan->chunks;
    std::vector<std::string> lane_types;
    for (const auto &a : accs) lane_types.push_back(c_type_of(a.plan->lane));
    if (chunks > 0) {
        // A reduction of the whole kernel (nothing outside it runs in parallel): fixed
        // ranges reduced in parallel, then combined in order, so that the result does not
        // depend on the number of threads.
        std::string K = std::to_string(chunks), chunk = it + "_chunk";
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

// A lane reduction that reads a run some earlier statement of the parallel body read (its
// second pass over the run) prefetches the next iteration's run, a share per block
// (prefetch_next_rows.h). Declares the shares before the block loop (into `out`) and
// returns the block loop's prefetch calls.
std::string Emitter::next_row_prefetches(const std::vector<Accumulation> &accs, const std::string &it, const std::string &begin_v,
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

std::set<const PolyStatement *> Emitter::update_statements(const std::vector<Accumulation> &accs) {
    std::set<const PolyStatement *> updates;
    for (const auto &a : accs) updates.insert(user_call(a.update).statement);
    return updates;
}

Emitter::BodyOrder::const_iterator Emitter::first_update_in_body(const std::set<const PolyStatement *> &updates) const {
    return std::find_if(body_order_.cbegin(), body_order_.cend(), [&](const auto &entry) { return updates.count(entry.first) > 0; });
}

// A block of a lane reduction prefetches ahead of its contiguous reads of the inputs that
// prefetch-streams chose (akg_prefetch_ahead), unless a statement of the parallel body that
// runs before the reduction read the input: the reduction then finds its data cached.
std::string Emitter::stream_prefetches(const std::vector<Accumulation> &accs, int lanes_per_block, const std::string &indent) {
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
std::string Emitter::column_row_prefetches(int columns, const std::string &indent) {
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
std::string Emitter::lane_loops(const std::vector<Accumulation> &accs, const std::vector<isl_ast_node *> &sides, const std::vector<std::string> &lane_types,
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
    // Float sums in double lanes add groups of whole blocks in float lanes first, then the
    // float lanes into the double ones (ReductionPlan::float_lane_blocks).
    std::vector<std::string> block_acc = acc, partials(accs.size());
    int float_lane_blocks = 0;
    for (size_t u = 0; u < accs.size(); ++u)
        if (accs[u].plan->float_lane_blocks > 0) {
            float_lane_blocks = accs[u].plan->float_lane_blocks;
            partials[u] = "partial_" + lanes[u];
            block_acc[u] = partials[u] + "[" + lane + "]";
        }
    bool grouped = block_acc != acc;
    std::string group = it + "_group", pg = grouped ? p2 : p1, pb = pad(d + (grouped ? 3 : 2));
    out += p0 + "if (" + end_v + " - " + begin_v + " >= " + L + ") {\n";
    std::string full = it + "_full"; // the end of the whole blocks
    out += p1 + "const int64_t " + full + " = " + begin_v + " + (" + end_v + " - " + begin_v + ") / " + L + " * " + L + ";\n";
    std::string prefetch = next_row_prefetches(accs, it, begin_v, full, block, L, pg, pb, out);
    std::string group_step = std::to_string(lanes_per_block * float_lane_blocks);
    if (grouped) {
        out += p1 + "for (int64_t " + group + " = " + begin_v + "; " + group + " < " + full + "; " + group + " += " + group_step + ") {\n";
        for (const auto &partial : partials)
            if (!partial.empty()) out += p2 + "float " + partial + "[" + L + "] = {0};\n";
        out += pg + "for (int64_t " + block + " = " + group + "; " + block + " < akg_imin(" + group + " + " + group_step + ", " + full + "); " + block +
               " += " + L + ") {\n";
    } else {
        out += p1 + "for (int64_t " + block + " = " + begin_v + "; " + block + " < " + full + "; " + block + " += " + L + ") {\n";
    }
    std::set<std::string> written; // what the lane loop writes is not read before it
    for (const auto &a : accs) written.insert(a.stage->buffer);
    for (isl_ast_node *side : sides) written.merge(written_buffers(side));
    printer_.begin_block_staging(it, block, lane, lanes_per_block, written);
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
        for (size_t u = 0; u < accs.size(); ++u)
            if (!partials[u].empty()) out += p2 + "akg_add_lanes<" + L + ">(" + lanes[u] + ", " + partials[u] + ");\n";
        out += p1 + "}\n";
    }
    out += p1 + "if (" + full + " < " + end_v + ") {\n";
    std::string last = it + "_last";
    out += p2 + "const int64_t " + last + " = " + end_v + " - " + L + ";\n";
    lane_mask_ = it + " >= " + full;
    printer_.begin_block_staging(it, last, lane, lanes_per_block, written);
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

// sink-columns' whole-row column sums (a loop over the rows marked mark::RowChunks{N}, at the top
// of the kernel): the rows run in N chunks of chunk_rows_ (a whole number of blocks of
// column_sum_block_rows), in parallel, each chunk adding into accumulators of its own, a slice
// of akg_row_chunks that the chunk zeroes first; then the slices are added to the kernel's
// accumulators in chunk order, so that the bits do not depend on the thread count. "" when
// the loop does not qualify: its column sums block (column_blocking), their accumulators are
// kernel scratch, every other statement of the loop writes elements of its own row only
// (nothing carries from row to row), and the loop's local arrays are used nowhere else.
std::string Emitter::emit_row_chunks(isl_ast_node *row_loop, int chunks_wanted, int depth) {
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
    chunk_rows = (chunk_rows + m_.column_sum_block_rows - 1) / m_.column_sum_block_rows * m_.column_sum_block_rows;
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
    // Each accumulator adds its slices in chunk order.
    for (size_t k = 0; k < accumulators.size(); ++k) {
        const BufferInfo &b = *accumulators[k];
        out += pad(depth + 1) + "akg_add_chunk_sums(" + b.name + ", akg_row_chunks" + (offsets[k] ? " + " + std::to_string(offsets[k]) : std::string()) + ", " +
               std::to_string(element_count(b.shape)) + ", " + std::to_string(chunks) + ", " + std::to_string(total) + ");\n";
    }
    out += pad(depth + 1) + "free(akg_row_chunks);\n" + pad(depth) + "}\n";
    return out;
}

// sink-columns' wide rows (walk_wide_rows: a loop over the rows marked mark::RowChunks whose
// rows are walked whole, each column sum adding the row's values element by element into
// its double accumulators). The rows run in parallel in chunks of column_sum_block_rows; each
// chunk adds its rows in float into sums of its own (its slice of akg_chunk_sums, zeroed
// first), which are added to the accumulators in chunk order afterwards, in parallel over
// the accumulators' elements: as the blocked column sums do, 32 rows at a time in float, and
// the bits do not depend on the thread count. "" when the loop does not qualify: constant
// bounds, sums of float values into double kernel scratch indexed without the row, every
// other statement writing elements of its own row, local arrays used nowhere else.
std::string Emitter::emit_wide_row_chunks(isl_ast_node *row_loop, int depth) {
    int64_t lo = 0, hi = 0, step = 0;
    if (isl_ast_node_get_type(row_loop) != isl_ast_node_for || isl_ast_node_for_is_degenerate(row_loop) == isl_bool_true ||
        !int_value(isl_ast_node_for_get_inc(row_loop), step) || step != 1 || !int_value(isl_ast_node_for_get_init(row_loop), lo))
        return "";
    {
        isl_ast_expr *cond = isl_ast_node_for_get_cond(row_loop);
        bool le = isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_op_get_type(cond) == isl_ast_expr_op_le &&
                  int_value(isl_ast_expr_op_get_arg(cond, 1), hi);
        isl_ast_expr_free(cond);
        if (!le || hi - lo + 1 < 2 * m_.column_sum_block_rows) return "";
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

    const int64_t rows = hi - lo + 1, chunks = (rows + m_.column_sum_block_rows - 1) / m_.column_sum_block_rows;
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
    const std::string first = (lo ? std::to_string(lo) + " + " : std::string()) + "chunk * " + std::to_string(m_.column_sum_block_rows);
    chunk_row_header_ = {row_it, "for (int64_t " + row_it + " = " + first + "; " + row_it + " <= akg_imin(" + first + " + " +
                                     std::to_string(m_.column_sum_block_rows - 1) + ", " + std::to_string(hi) + "); " + row_it + " += 1)"};
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
        std::string block = "for (int64_t e0 = 0; e0 < " + std::to_string(n) + "; e0 += " + std::to_string(m_.chunk_sums_block) + ")";
        std::string body = "akg_add_chunk_sums(" + a->name + " + e0, akg_chunk_sums + " + (off ? std::to_string(off) + " + " : std::string()) + "e0, akg_imin(" +
                           std::to_string(m_.chunk_sums_block) + ", " + std::to_string(n) + " - e0), " + std::to_string(chunks) + ", " + std::to_string(total) + ");\n";
        out += parallel_for_code({block}, body, false, n < m_.chunk_sums_block * 2, depth + 1);
    }
    out += pad(depth + 1) + "free(akg_chunk_sums);\n" + pad(depth) + "}\n";
    return out;
}

} // namespace akg::codegen
