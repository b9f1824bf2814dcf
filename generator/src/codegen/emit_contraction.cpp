// The C++ of a GEMM part (PolyModel::contraction) from isl's AST of tile-contraction's tree:
// loops as isl built them, PackB/PackA statements as panel copies, and at each micro_kernel
// mark one call of kernellib's register-blocked micro-kernel on the tile, followed on the last
// panel of k by the epilogue over the tile while it is in L1.
#include "codegen/emit_contraction.h"

#include <isl/ast_build.h>
#include <isl/map.h>
#include <isl/union_map.h>

#include "codegen/emitter.h"
#include "codegen/expr_printer.h"
#include "poly/schedule_annotation.h"

namespace akg {

using namespace Halide::Internal;

namespace {

// The first and last instance of the update statement in one tile, as calls S(b.., i, j, r) in
// the loop iterators: the tile's origin and its last k. isl computes them at the mark from the
// schedule around it, so degenerate loops (substituted by isl) need no special case.
struct TileExtent {
    isl_ast_expr *first = nullptr, *last = nullptr;
};

void free_tile_extent(void *user) {
    auto *t = static_cast<TileExtent *>(user);
    isl_ast_expr_free(t->first);
    isl_ast_expr_free(t->last);
    delete t;
}

struct MarkContext {
    const PolyModel *model;
};

isl_ast_node *annotate_micro_kernel(isl_ast_node *node, isl_ast_build *build, void *user) {
    if (!mark_as<mark::MicroKernel>(node)) return node;
    const PolyModel &m = *static_cast<MarkContext *>(user)->model;
    isl_union_map *sched = isl_ast_build_get_schedule(build);
    std::pair<std::string, isl_map *> found{m.contraction->update, nullptr};
    isl_union_map_foreach_map(
        sched,
        [](isl_map *map, void *u) {
            auto *f = static_cast<std::pair<std::string, isl_map *> *>(u);
            if (!f->second && isl_map_get_tuple_name(map, isl_dim_in) == f->first) f->second = map;
            else isl_map_free(map);
            return isl_stat_ok;
        },
        &found);
    isl_union_map_free(sched);
    isl_map *upd = found.second;
    // isl may generate the mark once per statement below it when the tile loops are
    // degenerate: the copies holding only the initialization or the epilogue are empty, as
    // the copy holding the products runs both.
    if (!upd) return node;
    isl_map *rev = isl_map_reverse(upd);
    auto *extent = new TileExtent;
    extent->first = isl_ast_build_call_from_pw_multi_aff(build, isl_map_lexmin_pw_multi_aff(isl_map_copy(rev)));
    extent->last = isl_ast_build_call_from_pw_multi_aff(build, isl_map_lexmax_pw_multi_aff(rev));
    isl_id *id = isl_id_alloc(isl_ast_build_get_ctx(build), "tile_extent", extent);
    id = isl_id_set_free_user(id, &free_tile_extent);
    return isl_ast_node_set_annotation(node, id);
}

// Reads of the tile's values (the product and the epilogue's scratch values) become variables.
class TileValues : public IRMutator {
public:
    std::map<std::string, std::string> names; // buffer -> variable
    using IRMutator::visit;
    Halide::Expr visit(const Cast *op) override {
        if (const Call *c = op->value.as<Call>(); c && op->type == Halide::Float(32) && tile_read(c)) return variable(c);
        return IRMutator::visit(op);
    }
    Halide::Expr visit(const Call *op) override {
        if (tile_read(op)) return op->type == Halide::Float(32) ? variable(op) : Cast::make(op->type, variable(op));
        return IRMutator::visit(op);
    }

private:
    bool tile_read(const Call *c) const { return c->name.rfind("buf$", 0) == 0 && names.count(c->name.substr(4)); }
    Halide::Expr variable(const Call *c) const { return Variable::make(Halide::Float(32), names.at(c->name.substr(4))); }
};

// Each float16 rounding Cast(f32, Cast(f16, x)) becomes what `stage` makes of its operand x
// (whose own roundings are replaced first): the staged epilogue's array of rounded values.
class StagedRoundings : public IRMutator {
public:
    explicit StagedRoundings(std::function<Halide::Expr(const Halide::Expr &)> stage) : stage_(std::move(stage)) {}
    using IRMutator::visit;
    Halide::Expr visit(const Cast *op) override {
        const Cast *inner = op->value.as<Cast>();
        if (op->type == Halide::Float(32) && inner && inner->type == Halide::Float(16) && inner->value.type() == Halide::Float(32))
            return stage_(mutate(inner->value));
        return IRMutator::visit(op);
    }

private:
    std::function<Halide::Expr(const Halide::Expr &)> stage_;
};

class VariableNames : public IRVisitor {
public:
    std::set<std::string> names;

private:
    using IRVisitor::visit;
    void visit(const Variable *op) override { names.insert(op->name); }
};

class ContractionEmitter {
public:
    ContractionEmitter(const PolyModel &m, const EmitOptions &o) : m_(m), p_(*m.contraction), o_(o), printer_(&m) {}

    std::string emit(isl_ast_node *ast) {
        std::ostringstream os;
        const GemmBlocking &b = p_.blocking;
        os << "static_assert(AKG_GEMM_MR == " << b.mr << " && AKG_GEMM_NR == " << b.nr
           << ", \"the micro-tile the schedule was made for is the micro-kernel's\");\n\n";
        os << "extern \"C\" int akg_kernel_fn_" << o_.symbol << "(void *const *buffers) {\n";
        os << bindings("    ");
        // A row part's failure (it may allocate) is returned once every thread is done.
        if (p_.row_epilogue) os << "    int akg_row_status = AKG_STATUS_OK;\n";
        std::string body = node(ast, 1);
        if (!parallel_) os << buffers("    ", true) << body << fence("    ") << frees("    ");
        else os << body;
        os << "    return " << (p_.row_epilogue ? "akg_row_status" : "AKG_STATUS_OK") << ";\n}\n";
        if (p_.prepacked_b) os << pack_function();
        return os.str();
    }

    // akg_pack_input's packing of B for this kernel: every micro-panel of nr columns over all
    // of k, zero past the last column, in the order of the columns.
    std::string pack_function() {
        const GemmBlocking &b = p_.blocking;
        const ContractionPlan::PlainOperand &op = *p_.b_plain;
        const std::string type = op.f16 ? "uint16_t" : "float";
        std::string s = "\nextern \"C\" void akg_pack_fn_" + o_.symbol + "(const void *akg_input, void *akg_packed) {\n";
        s += "    const " + type + " *__restrict " + op.buffer + " = (const " + type + " *)akg_input;\n";
        for (size_t d = 0; d < p_.batch.size(); ++d) s += "    [[maybe_unused]] const int64_t " + index_var(static_cast<int>(d)) + " = 0;\n";
        s += "    #pragma omp parallel for schedule(static) if (!akg_single_thread())\n";
        s += "    for (int64_t akg_jr = 0; akg_jr < " + n(p_.n_tiles()) + "; ++akg_jr) {\n";
        s += "        float *__restrict akg_dst = (float *)akg_packed + akg_jr * " + n(p_.k * b.nr) + ";\n";
        s += "        const int64_t akg_j0 = akg_jr * " + n(b.nr) + ";\n";
        s += "        const int64_t akg_valid = akg_imin(" + n(b.nr) + ", " + n(p_.n) + " - akg_j0);\n";
        s += plain_pack(op, "akg_j0", "0", "akg_valid", n(p_.k), b.nr, pad(2));
        return s + "    }\n}\n";
    }

private:
    const PolyModel &m_;
    const ContractionPlan &p_;
    const EmitOptions &o_;
    codegen::ExprPrinter printer_;
    bool parallel_ = false;

    static std::string pad(int depth) { return std::string(4 * depth, ' '); }
    std::string n(int64_t v) const { return v > INT32_MAX ? "INT64_C(" + std::to_string(v) + ")" : std::to_string(v); }

    std::string bindings(const std::string &indent) const {
        std::ostringstream os;
        int num_inputs = 0;
        for (const auto &b : m_.buffers) num_inputs += b.kind == BufferKind::KernelInput;
        for (const auto &b : m_.buffers) {
            if (b.kind == BufferKind::Scratch || blocked(b)) continue;
            bool in = b.kind == BufferKind::KernelInput;
            int index = in ? std::stoi(b.name.substr(2)) : num_inputs + std::stoi(b.name.substr(3));
            const bool packed = p_.prepacked_b && b.name == p_.b_plain->buffer; // akg_pack_input's floats
            std::string type = std::string(in ? "const " : "") + (packed ? std::string("float") : dtype_c_type(b.dtype));
            os << indent << type << " *__restrict " << b.name << " = (" << type << " *)buffers[" << index << "];\n";
        }
        return os.str();
    }

    // B's packed micro-panels: a panel of nc columns, or only the last, partial micro-panel when B
    // is read in place.
    int64_t bp_floats() const {
        if (p_.prepacked_b) return 0;
        if (p_.pack_b) return p_.k * (p_.b_packed_per_column ? p_.blocking.nr : p_.blocking.nc);
        return p_.n % p_.blocking.nr ? p_.k * p_.blocking.nr : 0;
    }

    // An output kept per thread for the row part, a block of mc rows (RowEpilogue::blocked).
    bool blocked(const BufferInfo &b) const { return p_.row_epilogue && p_.row_epilogue->blocked.count(b.name); }
    // The offset of element (row, col) of the product in a block kept for the row part: its
    // rows are the product's, mc of them.
    std::string blocked_offset(const std::string &row, const std::string &col) const {
        return "(" + row + " % " + n(p_.blocking.mc) + ") * " + n(p_.n) + " + " + col;
    }

    int64_t acc_rows() const { return p_.split == GemmSplit::Rows ? p_.slice_rows : p_.m_tiles() * p_.blocking.mr; }

    // The panels one thread (or the calling thread) works in.
    std::string buffers(const std::string &indent, bool returns) const {
        const GemmBlocking &b = p_.blocking;
        std::ostringstream os;
        auto alloc = [&](const std::string &name, int64_t floats) {
            int64_t bytes = (floats * 4 + 63) / 64 * 64;
            os << indent << "float *" << name << " = (float *)aligned_alloc(64, " << n(bytes) << ");\n";
        };
        if (bp_floats()) alloc("akg_bp", bp_floats());
        // The slice whose B akg_bp holds (ContractionPlan::b_shared_by_slices).
        if (p_.b_shared_by_slices) os << indent << "int64_t akg_bp_slice = -1;\n";
        if (p_.pack_a) alloc("akg_ap", b.mc * b.kc);
        if (p_.k_panels > 1) alloc("akg_acc", acc_rows() * b.nc);
        std::string ok;
        auto need = [&](const std::string &ptr) { ok += (ok.empty() ? "" : " && ") + ptr; };
        for (const auto &buf : m_.buffers)
            if (blocked(buf)) {
                const std::string type = dtype_c_type(buf.dtype);
                const int64_t bytes = (b.mc * p_.n * dtype_bytes(buf.dtype) + 63) / 64 * 64;
                os << indent << type << " *__restrict " << buf.name << " = (" << type << " *)aligned_alloc(64, " << n(bytes) << ");\n";
                need(buf.name);
            }
        if (bp_floats()) need("akg_bp");
        if (p_.pack_a) need("akg_ap");
        if (p_.k_panels > 1) need("akg_acc");
        if (ok.empty()) ok = "true";
        if (returns) os << indent << "if (!(" << ok << ")) {\n" << frees(indent + "    ") << indent << "    return AKG_STATUS_OUT_OF_MEMORY;\n" << indent << "}\n";
        else os << indent << "const bool akg_ok = " << ok << ";\n";
        return os.str();
    }

    // Each thread's non-temporal stores are ordered before the kernel returns.
    std::string fence(const std::string &indent) const {
        for (const auto &b : m_.buffers)
            if (b.streamed) return indent + "akg_stream_fence();\n";
        return "";
    }

    std::string frees(const std::string &indent) const {
        std::string s = bp_floats() ? indent + "free(akg_bp);\n" : "";
        if (p_.pack_a) s += indent + "free(akg_ap);\n";
        if (p_.k_panels > 1) s += indent + "free(akg_acc);\n";
        for (const auto &buf : m_.buffers)
            if (blocked(buf)) s += indent + "free(" + buf.name + ");\n";
        return s;
    }

    std::string node(isl_ast_node *nd, int depth) {
        switch (isl_ast_node_get_type(nd)) {
        case isl_ast_node_block: {
            std::string s;
            isl_ast_node_list *children = isl_ast_node_block_get_children(nd);
            for (int k = 0; k < isl_ast_node_list_n_ast_node(children); ++k) {
                isl_ast_node *c = isl_ast_node_list_get_ast_node(children, k);
                s += node(c, depth);
                isl_ast_node_free(c);
            }
            isl_ast_node_list_free(children);
            return s;
        }
        case isl_ast_node_for: return for_loop(nd, depth, "");
        case isl_ast_node_if: {
            std::string s = pad(depth) + "if (" + codegen::ast_expr(isl_ast_node_if_get_cond(nd)) + ") {\n";
            isl_ast_node *t = isl_ast_node_if_get_then_node(nd);
            s += node(t, depth + 1);
            isl_ast_node_free(t);
            s += pad(depth) + "}";
            if (isl_ast_node_if_has_else_node(nd) == isl_bool_true) {
                isl_ast_node *e = isl_ast_node_if_get_else_node(nd);
                s += " else {\n" + node(e, depth + 1) + pad(depth) + "}";
                isl_ast_node_free(e);
            }
            return s + "\n";
        }
        case isl_ast_node_mark: return mark(nd, depth);
        case isl_ast_node_user: return user(nd, depth);
        default: throw InternalError("emit-contraction: unexpected isl AST node");
        }
    }

    std::string for_loop(isl_ast_node *nd, int depth, const std::string &inner_prefix) {
        std::string it = codegen::ast_expr(isl_ast_node_for_get_iterator(nd));
        std::string s = pad(depth) + "for (int64_t " + it + " = " + codegen::ast_expr(isl_ast_node_for_get_init(nd)) + "; " +
                        codegen::ast_expr(isl_ast_node_for_get_cond(nd)) + "; " + it + " += " + codegen::ast_expr(isl_ast_node_for_get_inc(nd)) +
                        ") {\n";
        isl_ast_node *body = isl_ast_node_for_get_body(nd);
        s += inner_prefix + node(body, depth + 1);
        isl_ast_node_free(body);
        return s + pad(depth) + "}\n";
    }

    std::string mark(isl_ast_node *nd, int depth) {
        isl_ast_node *child = isl_ast_node_mark_get_node(nd);
        std::string s;
        if (auto par = mark_as<mark::Parallel>(nd)) s = parallel(child, par->loops, depth);
        else if (mark_as<mark::MicroKernel>(nd)) s = micro_kernel(nd, depth);
        else s = node(child, depth);
        isl_ast_node_free(child);
        return s;
    }

    // One OpenMP region: each thread allocates its panels once, then takes iterations of the
    // collapsed loops (static: the slices and panels are planned as a multiple of the threads).
    std::string parallel(isl_ast_node *loop, int loops, int depth) {
        parallel_ = true;
        int collapse = 0;
        isl_ast_node *inner = isl_ast_node_copy(loop);
        std::vector<isl_ast_node *> chain;
        while (collapse < loops && isl_ast_node_get_type(inner) == isl_ast_node_for) {
            ++collapse;
            chain.push_back(inner);
            inner = isl_ast_node_for_get_body(inner);
        }
        std::string s = pad(depth) + "{\n" + pad(depth + 1) + "int akg_failed = 0;\n";
        s += pad(depth + 1) + "#pragma omp parallel if (!akg_single_thread())\n" + pad(depth + 1) + "{\n";
        s += buffers(pad(depth + 2), false);
        s += pad(depth + 2) + "if (!akg_ok) {\n" + pad(depth + 3) + "#pragma omp atomic write\n" + pad(depth + 3) + "akg_failed = 1;\n" +
             pad(depth + 2) + "}\n";
        if (collapse > 0) s += pad(depth + 2) + "#pragma omp for collapse(" + std::to_string(collapse) + ") schedule(static)\n";
        std::string loops_code;
        int d = depth + 2;
        std::vector<std::string> closes;
        for (isl_ast_node *f : chain) {
            std::string it = codegen::ast_expr(isl_ast_node_for_get_iterator(f));
            loops_code += pad(d) + "for (int64_t " + it + " = " + codegen::ast_expr(isl_ast_node_for_get_init(f)) + "; " +
                          codegen::ast_expr(isl_ast_node_for_get_cond(f)) + "; " + it + " += " + codegen::ast_expr(isl_ast_node_for_get_inc(f)) +
                          ") {\n";
            closes.push_back(pad(d) + "}\n");
            ++d;
        }
        loops_code += pad(d) + "if (akg_ok) {\n" + node(inner, d + 1) + pad(d) + "}\n";
        for (auto it = closes.rbegin(); it != closes.rend(); ++it) loops_code += *it;
        s += loops_code + fence(pad(depth + 2)) + frees(pad(depth + 2)) + pad(depth + 1) + "}\n";
        s += pad(depth + 1) + "if (akg_failed) return AKG_STATUS_OUT_OF_MEMORY;\n" + pad(depth) + "}\n";
        for (size_t k = 1; k < chain.size(); ++k) isl_ast_node_free(chain[k]);
        if (!chain.empty()) isl_ast_node_free(chain[0]);
        isl_ast_node_free(inner);
        return s;
    }

    std::vector<std::string> call_args(isl_ast_expr *call) {
        std::vector<std::string> args;
        int nargs = isl_ast_expr_op_get_n_arg(call);
        for (int k = 1; k < nargs; ++k) args.push_back(codegen::ast_expr(isl_ast_expr_op_get_arg(call, k)));
        isl_ast_expr_free(call);
        return args;
    }

    std::string call_name(isl_ast_expr *call) {
        isl_ast_expr *f = isl_ast_expr_op_get_arg(call, 0);
        std::string name = codegen::ast_expr(f);
        return name;
    }

    // Binds the batch indices i0.. (the operands' and the epilogue's expressions use them).
    std::string bind_batch(const std::vector<std::string> &values, const std::string &indent) const {
        std::string s;
        for (size_t d = 0; d < p_.batch.size(); ++d) s += indent + "[[maybe_unused]] const int64_t " + index_var(static_cast<int>(d)) + " = " + values[d] + ";\n";
        return s;
    }

    std::string user(isl_ast_node *nd, int depth) {
        isl_ast_expr *call = isl_ast_node_user_get_expr(nd);
        std::string name = call_name(call);
        std::vector<std::string> args = call_args(call);
        const GemmBlocking &b = p_.blocking;
        const size_t nb = p_.batch.size();
        const std::string in = pad(depth), in1 = pad(depth + 1), in2 = pad(depth + 2);
        const std::string im = index_var(static_cast<int>(nb)), jn = index_var(static_cast<int>(nb) + 1);
        std::string s = in + "{\n" + bind_batch(args, in1);
        if (name == "PackB") {
            // Micro-panel jr: all of k, nr columns, zero past the last column.
            const std::string jr = args.back();
            const int64_t per_panel = b.nc / b.nr;
            // B shared by slices: packed for the thread's first slice, found there by the later ones.
            const bool shared = p_.b_shared_by_slices;
            const std::string slice = shared ? "(" + args[nb] + ")" : "", ib = shared ? in2 : in1;
            if (shared) s += in1 + "if (akg_bp_slice < 0 || akg_bp_slice == " + slice + ") {\n" + ib + "akg_bp_slice = " + slice + ";\n";
            const bool panel = p_.pack_b && !p_.b_packed_per_column;
            s += ib + "float *__restrict akg_dst = akg_bp" + (panel ? " + ((" + jr + ") % " + n(per_panel) + ") * " + n(p_.k * b.nr) : std::string()) + ";\n";
            s += ib + "const int64_t akg_j0 = (" + jr + ") * " + n(b.nr) + ";\n";
            s += ib + "const int64_t akg_valid = akg_imin(" + n(b.nr) + ", " + n(p_.n) + " - akg_j0);\n";
            if (p_.b_plain)
                s += plain_pack(*p_.b_plain, "akg_j0", "0", "akg_valid", n(p_.k), b.nr, ib);
            else
                s += computed_pack(p_.rhs, jn, "akg_j0", "0", n(p_.k), b.nr, p_.rhs_k_inner, ib);
            if (p_.column_sum) {
                // Slices of rows each pack all of B: the first one sums it.
                const std::string sums = "akg_gemm_column_sums(akg_dst, " + n(p_.k) + ", akg_valid, " + p_.column_sum->output + " + akg_j0);\n";
                s += ib + (p_.split == GemmSplit::Rows ? "if ((" + args[nb] + ") == 0) " : std::string()) + sums;
            }
            if (shared) s += in1 + "}\n";
        } else if (name == "PackA") {
            // Micro-panel ir of the row block: panel pt of k, mr rows, zero past the last row.
            const std::string pt = args[nb + 1], ir = args[nb + 2];
            s += in1 + "const int64_t akg_i0 = (" + ir + ") * " + n(b.mr) + ", akg_k0 = (" + pt + ") * " + n(b.kc) + ";\n";
            s += in1 + "const int64_t akg_kn = akg_imin(" + n(b.kc) + ", " + n(p_.k) + " - akg_k0);\n";
            s += in1 + "float *__restrict akg_dst = akg_ap + ((akg_i0 % " + n(b.mc) + ") / " + n(b.mr) + ") * " + n(b.kc * b.mr) + ";\n";
            s += in1 + "const int64_t akg_valid = akg_imin(" + n(b.mr) + ", " + n(p_.m) + " - akg_i0);\n";
            if (p_.a_plain)
                s += plain_pack(*p_.a_plain, "akg_i0", "akg_k0", "akg_valid", "akg_kn", b.mr, in1);
            else
                s += computed_pack(p_.lhs, im, "akg_i0", "akg_k0", "akg_kn", b.mr, p_.lhs_k_inner, in1);
        } else if (name == "RowPart") {
            s += row_part(args, in1);
        } else {
            throw InternalError("emit-contraction: statement " + name + " outside a micro-kernel tile");
        }
        return s + in + "}\n";
    }

    // The row part on micro-panel ir of rows (args: the batch indices, ir): each argument at the
    // panel's first row, a block's rows at theirs within the block.
    std::string row_part(const std::vector<std::string> &args, const std::string &in) const {
        const RowEpilogue &re = *p_.row_epilogue;
        const GemmBlocking &b = p_.blocking;
        const size_t nb = p_.batch.size();
        std::string s = in + "const int64_t akg_r0 = (" + args[nb] + ") * " + n(b.mr) + ";\n";
        s += in + "void *const akg_row_args[] = {";
        for (size_t k = 0; k < re.args.size(); ++k) {
            const RowEpilogue::Arg &a = re.args[k];
            const std::string type = dtype_c_type(a.dtype);
            std::string base, offset;
            if (!a.buffer.empty() && blocked(m_.buffer(a.buffer))) {
                base = a.buffer;
                offset = "(akg_r0 % " + n(b.mc) + ") * " + n(p_.n);
            } else {
                base = a.buffer.empty() ? "((" + type + " *)buffers[" + std::to_string(re.first_extra + a.extra) + "])" : a.buffer;
                for (size_t d = 0; d < nb; ++d)
                    if (a.row_strides[d]) offset += index_var(static_cast<int>(d)) + " * " + n(a.row_strides[d]) + " + ";
                offset += a.row_strides[nb] ? "akg_r0 * " + n(a.row_strides[nb]) : "0";
            }
            s += std::string(k ? ", " : "") + "(void *)(" + base + " + " + offset + ")";
        }
        s += "};\n";
        std::string call = re.full_rows + "(akg_row_args)";
        if (p_.m % b.mr) call = "akg_r0 + " + n(b.mr) + " <= " + n(p_.m) + " ? " + call + " : " + re.last_rows + "(akg_row_args)";
        s += in + "const int akg_status = " + call + ";\n";
        s += in + "if (akg_status != AKG_STATUS_OK) {\n" + in + "    #pragma omp atomic write\n" + in + "    akg_row_status = akg_status;\n" + in + "}\n";
        return s;
    }

    // A micro-panel of `width` rows x of a plain operand from x0 and k0 (`len` values of k) into
    // akg_dst: register transposes when k is innermost, row copies when x is (float16 operands
    // through the vector conversions of akg_gemm.h's float16 packers).
    std::string plain_pack(const ContractionPlan::PlainOperand &op, const std::string &x0, const std::string &k0, const std::string &valid,
                           const std::string &len, int width, const std::string &in) {
        std::string base = op.buffer + " + (" + printer_.print(op.offset) + ") + " + x0 + " * " + n(op.x_stride) + " + " + k0 + " * " + n(op.k_stride);
        const std::string f16 = op.f16 ? "_f16" : "";
        if (op.k_stride == 1)
            return in + "akg_gemm_pack_transposed" + f16 + "(" + base + ", " + n(op.x_stride) + ", " + valid + ", " + len + ", " + n(width) + ", akg_dst);\n";
        if (op.f16 && op.x_stride == 1)
            return in + "akg_gemm_pack_copied_f16(" + base + ", " + n(op.k_stride) + ", " + valid + ", " + len + ", " + n(width) + ", akg_dst);\n";
        std::string s = in + "const " + std::string(op.f16 ? "uint16_t" : "float") + " *akg_src = " + base + ";\n";
        std::string elem = "akg_src[akg_k * " + n(op.k_stride) + " + akg_x * " + n(op.x_stride) + "]";
        if (op.f16) elem = "akg_f16_to_f32(" + elem + ")";
        s += in + "for (int64_t akg_k = 0; akg_k < " + len + "; ++akg_k) {\n";
        s += in + "    #pragma omp simd\n" + in + "    for (int64_t akg_x = 0; akg_x < " + n(width) + "; ++akg_x)\n";
        s += in + "        akg_dst[akg_k * " + n(width) + " + akg_x] = akg_x < " + valid + " ? " + elem + " : 0.0f;\n";
        return s + in + "}\n";
    }

    // The same for an operand computed from its tensors (a cast, a transpose, a scale: the
    // prologue fused into packing), element by element, the loop over the operand's innermost
    // index inside.
    std::string computed_pack(const Halide::Expr &value, const std::string &x_var, const std::string &x0, const std::string &k0,
                              const std::string &len, int width, bool k_inner, const std::string &in) {
        std::string v = printer_.print(value), limit = x_var == index_var(static_cast<int>(p_.batch.size())) ? n(p_.m) : n(p_.n);
        std::string body = in + "        const int64_t " + x_var + " = " + x0 + " + akg_x, " + reduce_var(0) + " = " + k0 + " + akg_k;\n" + in +
                           "        akg_dst[akg_k * " + n(width) + " + akg_x] = " + x_var + " < " + limit + " ? (float)(" + v + ") : 0.0f;\n";
        std::string k_loop = "for (int64_t akg_k = 0; akg_k < " + len + "; ++akg_k)";
        std::string x_loop = "for (int64_t akg_x = 0; akg_x < " + n(width) + "; ++akg_x)";
        std::string outer = k_inner ? x_loop : k_loop, inner = k_inner ? k_loop : x_loop;
        return in + outer + " {\n" + in + "    #pragma omp simd\n" + in + "    " + inner + " {\n" + body + in + "    }\n" + in + "}\n";
    }

    std::string offset_of(const BufferInfo &b) const {
        std::string s;
        int64_t stride = 1;
        for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0; --d) {
            if (b.shape[d] != 1) s = index_var(d) + (stride == 1 ? "" : " * " + n(stride)) + (s.empty() ? "" : " + " + s);
            stride *= b.shape[d];
        }
        return s.empty() ? "0" : s;
    }

    // A store of v to b at `at` (by default the element of the product's indices).
    std::string store(const BufferInfo &b, const std::string &v, const std::string &at = "") const {
        std::string value = b.dtype == DType::Float16 ? "akg_f32_to_f16(" + v + ")" : v;
        std::string where = at;
        if (where.empty() && blocked(b)) {
            const size_t nb = p_.batch.size();
            where = blocked_offset(index_var(static_cast<int>(nb)), index_var(static_cast<int>(nb) + 1));
        } else if (where.empty()) {
            where = offset_of(b);
        }
        return b.name + "[" + where + "] = " + value + ";\n";
    }

    // Which B the micro-kernel reads: the packed micro-panel, B in place, or (B in place with a
    // partial last micro-panel) the one the tile's width calls for.
    enum class BSource { Packed, InPlace, ByWidth };

    // stream_c: the tile is stored to a streamed output (non-temporal stores where its lines align).
    // lines: the micro-kernel prefetches the epilogue's lines listed in akg_lines (prefetches()).
    std::string micro_call(const std::string &cin, const std::string &ldcin, const std::string &cout, const std::string &ldcout,
                           const std::string &indent, BSource bsrc, bool stream_c = false, bool lines = false) const {
        const GemmBlocking &b = p_.blocking;
        if (bsrc == BSource::ByWidth) {
            if (!bp_floats()) return micro_call(cin, ldcin, cout, ldcout, indent, BSource::InPlace, stream_c, lines);
            return indent + "if (akg_nv == " + n(b.nr) + ") {\n" +
                   micro_call(cin, ldcin, cout, ldcout, indent + "    ", BSource::InPlace, stream_c, lines) + indent + "} else {\n" +
                   micro_call(cin, ldcin, cout, ldcout, indent + "    ", BSource::Packed, stream_c, lines) + indent + "}\n";
        }
        const bool packed_b = bsrc == BSource::Packed;
        const bool next_panel = packed_b && (p_.b_next_prefetched || p_.b_packed_per_column);
        std::string ahead = next_panel ? ", akg_ahead" : "";
        if (lines) ahead = std::string(next_panel ? ", akg_ahead" : ", akg_gemm_ahead{}") + ", akg_gemm_lines{akg_lines, akg_lines + akg_nl}";
        auto call = [&](int64_t rows) {
            const bool b_streamed = !packed_b && p_.b_streamed;
            return "akg_gemm_tile<" + std::to_string(rows) + ", " + (p_.pack_a ? "true" : "false") + ", " + (packed_b ? "true" : "false") +
                   (b_streamed || stream_c ? std::string(", ") + (b_streamed ? "true" : "false") : "") + (stream_c ? ", true" : "") + ">(akg_kn, akg_a, " +
                   (p_.pack_a ? "0" : n(p_.a_plain->x_stride)) + ", " + (packed_b ? "akg_b, 0" : "akg_bi, " + n(p_.b_plain->k_stride)) + ", " + cin + ", " +
                   ldcin + ", " + cout + ", " + ldcout + ahead + ");\n";
        };
        if (p_.m % b.mr == 0) return indent + call(b.mr);
        // The last panel of rows (tiles start at multiples of mr) runs a micro-kernel of its own height.
        return indent + "if (akg_mv == " + n(b.mr) + ") {\n" + indent + "    " + call(b.mr) + indent + "} else {\n" + indent + "    " +
               call(p_.m % b.mr) + indent + "}\n";
    }

    std::string micro_kernel(isl_ast_node *nd, int depth) {
        isl_id *id = isl_ast_node_get_annotation(nd);
        if (!id) return ""; // the initialization or the epilogue alone (see annotate_micro_kernel)
        auto *extent = static_cast<TileExtent *>(isl_id_get_user(id));
        std::vector<std::string> first = call_args(isl_ast_expr_copy(extent->first)), last = call_args(isl_ast_expr_copy(extent->last));
        isl_id_free(id);
        const GemmBlocking &b = p_.blocking;
        const size_t nb = p_.batch.size();
        const std::string in = pad(depth), in1 = pad(depth + 1), in2 = pad(depth + 2), in3 = pad(depth + 3);
        std::string s = in + "{\n" + bind_batch(first, in1);
        s += in1 + "const int64_t akg_i = " + first[nb] + ", akg_j = " + first[nb + 1] + ", akg_k = " + first[nb + 2] + ";\n";
        s += in1 + "const int64_t akg_kn = " + last[nb + 2] + " - akg_k + 1;\n";
        s += in1 + "const int64_t akg_mv = akg_imin(" + n(b.mr) + ", " + n(p_.m) + " - akg_i), akg_nv = akg_imin(" + n(b.nr) + ", " + n(p_.n) + " - akg_j);\n";
        s += in1 + "(void)akg_nv;\n";
        if (p_.prepacked_b)
            s += in1 + "const float *akg_b = " + p_.b_plain->buffer + " + (akg_j / " + n(b.nr) + ") * " + n(p_.k * b.nr) + " + akg_k * " + n(b.nr) + ";\n";
        else if (p_.b_packed_per_column)
            s += in1 + "const float *akg_b = akg_bp + akg_k * " + n(b.nr) + ";\n";
        else if (p_.pack_b)
            s += in1 + "const float *akg_b = akg_bp + ((akg_j / " + n(b.nr) + ") % " + n(b.nc / b.nr) + ") * " + n(p_.k * b.nr) + " + akg_k * " + n(b.nr) + ";\n";
        else {
            const auto &bo = *p_.b_plain;
            s += in1 + "const float *akg_bi = " + bo.buffer + " + (" + printer_.print(bo.offset) + ") + akg_j + akg_k * " + n(bo.k_stride) + ";\n";
            if (bp_floats()) s += in1 + "const float *akg_b = akg_bp + akg_k * " + n(b.nr) + ";\n";
        }
        if (p_.b_next_prefetched || p_.b_packed_per_column) {
            // The tiles of a column share out the next column's micro-panel of packed B, or, B
            // packed per column, its source (nr rows of all of k, one run of memory); if that
            // column is in the thread's panel (all of B when packed ahead).
            const std::string next = "akg_j + " + n(b.nr);
            std::string when = next + " < " + n(p_.n), from, floats;
            if (!p_.prepacked_b) when = "(akg_j / " + n(b.nr) + ") % " + n(b.nc / b.nr) + " + 1 < " + n(b.nc / b.nr) + " && " + when;
            if (p_.b_packed_per_column) {
                const auto &bo = *p_.b_plain;
                from = bo.buffer + " + (" + printer_.print(bo.offset) + ") + (" + next + ") * " + n(bo.x_stride);
                floats = "akg_imin(" + n(b.nr) + ", " + n(p_.n) + " - (" + next + ")) * " + n(p_.k);
            } else {
                from = "akg_b + " + n(p_.k * b.nr);
                floats = "akg_kn * " + n(b.nr);
            }
            s += in1 + "const akg_gemm_ahead akg_ahead = " + when + " ? akg_gemm_next_panel(" + from + ", " + floats + ", (akg_i % " + n(b.mc) + ") / " +
                 n(b.mr) + ", " + n((b.mc + b.mr - 1) / b.mr) + ") : akg_gemm_ahead{};\n";
        }
        if (p_.pack_a)
            s += in1 + "const float *akg_a = akg_ap + ((akg_i % " + n(b.mc) + ") / " + n(b.mr) + ") * " + n(b.kc * b.mr) + ";\n";
        else
            s += in1 + "const float *akg_a = " + p_.a_plain->buffer + " + (" + printer_.print(p_.a_plain->offset) + ") + akg_i * " +
                 n(p_.a_plain->x_stride) + " + akg_k;\n";
        const BSource bsrc = p_.pack_b ? BSource::Packed : BSource::ByWidth;
        std::string cin = "nullptr", acc_tile;
        if (p_.k_panels > 1) {
            std::string base = p_.split == GemmSplit::Rows ? "(akg_i / " + n(p_.slice_rows) + ") * " + n(p_.slice_rows) : "0";
            s += in1 + "float *akg_c = akg_acc + (akg_i - " + base + ") * " + n(b.nc) + " + akg_j % " + n(b.nc) + ";\n";
            s += in1 + "const float *akg_cin = akg_k == 0 ? nullptr : akg_c;\n";
            cin = "akg_cin";
            s += in1 + "if (akg_k + akg_kn < " + n(p_.k) + ") {\n" + micro_call(cin, n(b.nc), "akg_c", n(b.nc), in2, bsrc) + in1 + "} else {\n";
        } else {
            s += in1 + "{\n";
        }
        const std::string ldcin = p_.k_panels > 1 ? n(b.nc) : "0";
        if (!p_.direct_output.empty()) {
            const BufferInfo &out = m_.buffer(p_.direct_output);
            // Tiles of full width go straight to the output (a short last panel of rows too); narrower ones
            // through the tile.
            std::string base = "(" + out.name + " + (" + [&] {
                std::string o;
                int64_t stride = p_.m * p_.n;
                for (int d = static_cast<int>(nb) - 1; d >= 0; --d) {
                    if (p_.batch[d] != 1) o += (o.empty() ? "" : " + ") + index_var(d) + " * " + n(stride);
                    stride *= p_.batch[d];
                }
                return o.empty() ? std::string("0") : o;
            }() + ") + akg_i * " + n(p_.n) + " + akg_j)";
            std::string ld = n(p_.n);
            if (blocked(out)) base = "(" + out.name + " + " + blocked_offset("akg_i", "akg_j") + ")";
            if (!p_.direct_permuted.empty()) {
                // Merged heads: the tile's rows are runs of the output a fixed distance apart.
                const auto &ps = p_.permuted.at(p_.direct_permuted);
                const std::map<std::string, Halide::Expr> origin = {{index_var(static_cast<int>(nb)), Variable::make(Halide::Int(64), "tile_i0")},
                                                                    {index_var(static_cast<int>(nb) + 1), Variable::make(Halide::Int(64), "tile_j0")}};
                s += in2 + "const int64_t v_tile_i0 = akg_i, v_tile_j0 = akg_j;\n";
                base = "(" + out.name + " + (" + printer_.print(simplify(substitute(origin, ps.offset))) + "))";
                ld = n(ps.tile_row_stride);
            }
            const std::string full_width = micro_call(cin, ldcin, base, ld, in3, p_.pack_b ? BSource::Packed : BSource::InPlace, out.streamed);
            if (p_.n % b.nr == 0) {
                s += in2 + "{\n" + full_width + in2 + "}\n";
            } else {
                s += in2 + "if (akg_nv == " + n(b.nr) + ") {\n" + full_width + in2 + "} else {\n";
                s += in3 + "alignas(64) float akg_tile[" + n(b.mr * b.nr) + "];\n" + micro_call(cin, ldcin, "akg_tile", n(b.nr), in3, bsrc);
                s += in3 + "for (int64_t akg_r = 0; akg_r < akg_mv; ++akg_r)\n" + in3 + "    for (int64_t akg_c = 0; akg_c < akg_nv; ++akg_c)\n" + in3 +
                     "        " + base + "[akg_r * " + ld + " + akg_c] = akg_tile[akg_r * " + n(b.nr) + " + akg_c];\n";
                s += in2 + "}\n";
            }
        } else {
            const std::string lines = prefetches(in2);
            s += lines + in2 + "alignas(64) float akg_tile[" + n(b.mr * b.nr) + "];\n" +
                 micro_call(cin, ldcin, "akg_tile", n(b.nr), in2, bsrc, false, !lines.empty() && p_.lines_in_k_loop);
            s += p_.staged_float16_epilogue ? staged_epilogue_by_width(in2) : epilogue(in2);
        }
        s += in1 + "}\n";
        return s + in + "}\n";
    }

    // The lines of the tile's elements of the epilogue's row-walking reads (ContractionPlan::
    // tile_prefetches) and of the outputs it stores (tile_write_prefetches, for writing):
    // requested before the micro-kernel call, or listed in akg_lines for the micro-kernel to
    // request during its k loop (lines_in_k_loop, akg_gemm_lines).
    std::string prefetches(const std::string &indent) {
        if (p_.tile_prefetches.empty() && p_.tile_write_prefetches.empty()) return "";
        const size_t nb = p_.batch.size();
        const std::string im = index_var(static_cast<int>(nb)), jn = index_var(static_cast<int>(nb) + 1);
        const bool listed = p_.lines_in_k_loop;
        // The elements one line apart, by the tensors' element size: float16 rows have half as many lines.
        std::map<int64_t, std::string> requests_by_step;
        auto request = [&](const std::string &buffer, const std::string &element, bool write) {
            const int64_t step = p_.prefetch_line_floats * 4 / dtype_bytes(m_.buffer(buffer).dtype);
            requests_by_step[step] += indent + "        " +
                                      (listed ? "akg_lines[akg_nl++] = &" + element : "__builtin_prefetch(&" + element + (write ? ", 1)" : ")")) + ";\n";
            return step;
        };
        const GemmBlocking &b = p_.blocking;
        int64_t lines = 0;
        for (const auto &read : p_.tile_prefetches) {
            const int64_t step = request(read.as<Call>()->name.substr(4), printer_.print(read), false);
            lines += b.mr * ((b.nr + step - 1) / step);
        }
        for (const auto &name : p_.tile_write_prefetches) {
            const int64_t step = request(name, name + "[" + offset_of(m_.buffer(name)) + "]", true);
            lines += b.mr * ((b.nr + step - 1) / step);
        }
        std::string s = listed ? indent + "const void *akg_lines[" + n(lines) + "];\n" + indent + "int64_t akg_nl = 0;\n" : "";
        for (const auto &[step, requests] : requests_by_step) {
            s += indent + "for (int64_t akg_r = 0; akg_r < akg_mv; ++akg_r) {\n";
            s += indent + "    [[maybe_unused]] const int64_t " + im + " = akg_i + akg_r;\n";
            s += indent + "    for (int64_t akg_c = 0; akg_c < akg_nv; akg_c += " + n(step) + ") {\n";
            s += indent + "        [[maybe_unused]] const int64_t " + jn + " = akg_j + akg_c;\n" + requests;
            s += indent + "    }\n" + indent + "}\n";
        }
        return s;
    }

    // The tile's values through the epilogue statements, stored where they are kernel outputs.
    std::string epilogue(const std::string &indent) {
        const size_t nb = p_.batch.size();
        const std::string im = index_var(static_cast<int>(nb)), jn = index_var(static_cast<int>(nb) + 1);
        const std::string i1 = indent + "    ", i2 = indent + "        ";
        std::string s = indent + "for (int64_t akg_r = 0; akg_r < akg_mv; ++akg_r) {\n";
        s += i1 + "const int64_t " + im + " = akg_i + akg_r;\n";
        // A permuted store whose row of the tile is one run: its start, once per row.
        bool row_starts = false;
        for (const auto &[name, ps] : p_.permuted)
            if (ps.rows_contiguous) {
                if (!row_starts) s += i1 + "const int64_t v_tile_j0 = akg_j;\n";
                row_starts = true;
                s += row_start(i1, name, ps);
            }
        s += i1 + "#pragma omp simd\n" + i1 + "for (int64_t akg_c = 0; akg_c < akg_nv; ++akg_c) {\n";
        s += i2 + "const int64_t " + jn + " = akg_j + akg_c;\n";
        // A streamed output's row goes to a row array, streamed out after the loop.
        std::string decls, after;
        auto out = [&](const BufferInfo &b, const std::string &v, const std::string &at) {
            if (!b.streamed || !at.empty()) return i2 + store(b, v, at);
            const std::string row = "akg_s_" + b.name;
            decls += indent + "alignas(64) float " + row + "[" + n(p_.blocking.nr) + "];\n";
            after += i1 + "{\n" + i1 + "    const int64_t " + jn + " = akg_j;\n" + i1 + "    akg_stream_f32_n(" + row + ", " + b.name + " + " +
                     offset_of(b) + ", akg_nv);\n" + i1 + "}\n";
            return i2 + row + "[akg_c] = " + v + ";\n";
        };
        TileValues tv;
        const Stage &c = *p_.stage;
        const BufferInfo &cb = m_.buffer(c.buffer);
        std::string cv = "v_tile_" + c.buffer;
        std::string raw = "akg_tile[akg_r * " + n(p_.blocking.nr) + " + akg_c]";
        // A float16 product is rounded before anything reads it, as the framework stores it.
        s += i2 + "const float " + cv + " = " + (c.dtype == DType::Float16 ? "akg_round_f16(" + raw + ")" : raw) + ";\n";
        if (cb.kind == BufferKind::KernelOutput) s += out(cb, cv, "");
        tv.names[c.buffer] = "tile_" + c.buffer;
        for (const auto &name : p_.epilogue) {
            const Stage &st = *m_.statement(name).stage;
            const BufferInfo &b = m_.buffer(st.buffer);
            const auto permuted = p_.permuted.find(name);
            const Halide::Expr value = tv.mutate(statement_value(name));
            std::string lets, v = "v_tile_" + st.buffer, printed_value = printed(value, st.buffer, i2, lets);
            s += lets + i2 + "const " + codegen::c_type_of(value.type()) + " " + v + " = " + printed_value + ";\n";
            if (b.kind == BufferKind::KernelOutput) {
                std::string at;
                if (permuted != p_.permuted.end())
                    at = permuted->second.rows_contiguous ? "akg_o_" + name + " + akg_c" : printer_.print(permuted->second.offset);
                s += out(b, v, at);
            }
            tv.names[st.buffer] = "tile_" + st.buffer;
        }
        s += i1 + "}\n" + after + indent + "}\n";
        return decls + s;
    }

    // The declaration of akg_o_<name>, where the tile row's run of a permuted store whose rows
    // are contiguous starts (v_tile_j0 holds the tile's first column).
    std::string row_start(const std::string &indent, const std::string &name, const ContractionPlan::PermutedStore &ps) {
        const std::string jn = index_var(static_cast<int>(p_.batch.size()) + 1);
        const Halide::Expr start = simplify(substitute(jn, Variable::make(Halide::Int(64), "tile_j0"), ps.offset));
        return indent + "const int64_t akg_o_" + name + " = " + printer_.print(start) + ";\n";
    }

    // What epilogue statement `name` computes, in the product's index variables; a float16
    // output's final rounding is left to its store's conversion.
    Halide::Expr statement_value(const std::string &name) const {
        const Stage &st = *m_.statement(name).stage;
        const BufferInfo &b = m_.buffer(st.buffer);
        const auto permuted = p_.permuted.find(name);
        Halide::Expr value = permuted != p_.permuted.end() ? permuted->second.value : st.value;
        if (b.dtype == DType::Float16 && b.kind == BufferKind::KernelOutput)
            if (Halide::Expr x = float16_rounded_operand(value); x.defined()) value = x;
        return value;
    }

    // A value printed with its common subexpressions as constants before it (`lets`).
    std::string printed(const Halide::Expr &value, const std::string &prefix, const std::string &indent, std::string &lets) {
        Halide::Expr e = common_subexpression_elimination(value);
        int k = 0;
        while (const Let *let = e.as<Let>()) {
            std::string lname = prefix + "_cse" + std::to_string(k++);
            lets += indent + "const " + codegen::c_type_of(let->value.type()) + " v_" + lname + " = " + printer_.print(let->value) + ";\n";
            e = substitute(let->name, Variable::make(let->value.type(), lname), let->body);
        }
        return printer_.print(e);
    }

    // The staged epilogue, in a lambda over the tile's width where it rounds many values: called
    // with the width as a constant where the tile is full, each of its short loops compiles to
    // whole vectors with no remainder to test for. That pays for GeLU's nine roundings; with one
    // or two (the attention scores' scale, the LayerNorm's bias and residual) it was slower.
    std::string staged_epilogue_by_width(const std::string &indent) {
        constexpr size_t kMinRoundings = 4;
        size_t roundings = 0;
        std::string body = staged_epilogue(indent, &roundings);
        if (roundings < kMinRoundings) return body;
        const std::string nr = n(p_.blocking.nr), full = "std::integral_constant<int64_t, " + nr + ">()";
        std::string s = indent + "auto akg_epilogue = [&](auto akg_width) AKG_GEMM_LAMBDA_INLINE {\n";
        s += indent + "    const int64_t akg_nv = akg_width;\n" + codegen::Emitter::indented(body) + indent + "};\n";
        if (p_.n % p_.blocking.nr == 0) return s + indent + "akg_epilogue(" + full + ");\n";
        return s + indent + "if (akg_nv == " + nr + ") akg_epilogue(" + full + ");\n" + indent + "else akg_epilogue(akg_nv);\n";
    }

    // The epilogue of a float16 tile (ContractionPlan::staged_float16_epilogue): every value
    // that is rounded to float16 is computed for the whole tile into an array in a loop of its
    // own, then the array is rounded row by row with akg_round_f16_n's vector conversions; each
    // epilogue statement's value goes to an array too, and a float16 output whose tile rows are
    // runs is converted and stored from it a row at a time (akg_f32_to_f16_n).
    // `roundings`: how many values it rounds to float16 in arrays of their own.
    std::string staged_epilogue(const std::string &indent, size_t *roundings) {
        const size_t nb = p_.batch.size();
        const std::string im = index_var(static_cast<int>(nb)), jn = index_var(static_cast<int>(nb) + 1);
        const std::string i1 = indent + "    ", i2 = indent + "        ";
        const std::string nr = n(p_.blocking.nr), tile_size = n(p_.blocking.mr * p_.blocking.nr);
        std::string decls, loops;
        std::map<std::string, std::string> arrays; // variable -> the array holding its tile
        std::set<std::string> rounded;             // variables whose values are float16 values
        auto element = [&](const std::string &array) { return array + "[akg_r * " + nr + " + akg_c]"; };
        auto row = [&](const std::string &array) { return array + " + akg_r * " + nr; };
        TileValues tv;
        const Stage &c = *p_.stage;
        const BufferInfo &cb = m_.buffer(c.buffer);
        const std::string cv = "tile_" + c.buffer;
        // A float16 product is rounded before anything reads it, as the framework stores it; a
        // float16 output converted from it needs no rounding first.
        bool round_product = c.dtype == DType::Float16;
        // The staged values `e` reads, declared from their arrays.
        auto reads = [&](const Halide::Expr &e) {
            VariableNames vn;
            e.accept(&vn);
            std::string d;
            for (const auto &v : vn.names)
                if (auto a = arrays.find(v); a != arrays.end()) {
                    if (v == cv && round_product) {
                        loops += indent + "for (int64_t akg_r = 0; akg_r < akg_mv; ++akg_r) akg_round_f16_n(" + row("akg_tile") + ", akg_nv);\n";
                        round_product = false;
                    }
                    d += i2 + "const float v_" + v + " = " + element(a->second) + ";\n";
                }
            return d;
        };
        // A loop over the tile: `row_lines` once per row, `body` per element (no element loop
        // when empty), `after` once per row after it.
        auto loop = [&](const std::string &row_lines, const std::string &body, const std::string &after) {
            std::string l = indent + "for (int64_t akg_r = 0; akg_r < akg_mv; ++akg_r) {\n";
            l += i1 + "[[maybe_unused]] const int64_t " + im + " = akg_i + akg_r;\n" + row_lines;
            if (!body.empty()) {
                l += i1 + "#pragma omp simd\n" + i1 + "for (int64_t akg_c = 0; akg_c < akg_nv; ++akg_c) {\n";
                l += i2 + "[[maybe_unused]] const int64_t " + jn + " = akg_j + akg_c;\n" + body + i1 + "}\n";
            }
            return l + after + indent + "}\n";
        };
        auto new_array = [&](const std::string &name) {
            decls += indent + "alignas(64) float " + name + "[" + tile_size + "];\n";
            return name;
        };
        // The row-at-a-time store of a statement's tile (in `array`) to output b, where b is
        // float16 and its tile rows are runs (at the product's indices, or a permuted run from
        // `row_start`); "" where the store goes element by element in the loop instead.
        auto row_store = [&](const BufferInfo &b, const std::string &array, const std::string &row_start) -> std::string {
            if (b.dtype != DType::Float16) return "";
            if (!row_start.empty()) return i1 + "akg_f32_to_f16_n(" + row(array) + ", " + b.name + " + " + row_start + ", akg_nv);\n";
            if (blocked(b)) return i1 + "akg_f32_to_f16_n(" + row(array) + ", " + b.name + " + " + blocked_offset(im, "akg_j") + ", akg_nv);\n";
            if (b.shape.size() != nb + 2 || b.shape.back() != p_.n || p_.n == 1) return "";
            return i1 + "{\n" + i1 + "    const int64_t " + jn + " = akg_j;\n" + i1 + "    akg_f32_to_f16_n(" + row(array) + ", " + b.name + " + " +
                   offset_of(b) + ", akg_nv);\n" + i1 + "}\n";
        };
        std::map<std::string, std::string> staged_by_operand;
        StagedRoundings staged([&](const Halide::Expr &x) -> Halide::Expr {
            if (const Variable *v = x.as<Variable>(); v && rounded.count(v->name)) return x;
            std::string key = printer_.print(x);
            auto found = staged_by_operand.find(key);
            if (found == staged_by_operand.end()) {
                std::string var = "akgr" + std::to_string(staged_by_operand.size());
                std::string lets, array = new_array("akg_" + var), v = printed(x, var, i2, lets);
                std::string body = reads(x) + lets + i2 + element(array) + " = " + v + ";\n";
                loops += loop("", body, i1 + "akg_round_f16_n(" + row(array) + ", akg_nv);\n");
                arrays[var] = array;
                rounded.insert(var);
                found = staged_by_operand.emplace(key, var).first;
            }
            return Variable::make(Halide::Float(32), found->second);
        });

        if (round_product) rounded.insert(cv);
        arrays[cv] = "akg_tile";
        if (cb.kind == BufferKind::KernelOutput) {
            std::string rs = row_store(cb, "akg_tile", "");
            std::string body = rs.empty() ? reads(Variable::make(Halide::Float(32), cv)) + i2 + store(cb, "v_" + cv) : "";
            loops += loop("", body, rs);
        }
        tv.names[c.buffer] = cv;
        for (const auto &name : p_.epilogue) {
            const Stage &st = *m_.statement(name).stage;
            const BufferInfo &b = m_.buffer(st.buffer);
            const auto permuted = p_.permuted.find(name);
            const Halide::Expr value = staged.mutate(tv.mutate(statement_value(name)));
            const std::string var = "tile_" + st.buffer;
            tv.names[st.buffer] = var;
            // A value already in an array (a rounding's, the product's copy) is not copied again.
            const Variable *same = value.as<Variable>();
            const bool copy = same && arrays.count(same->name);
            if (copy && b.kind != BufferKind::KernelOutput) {
                arrays[var] = arrays[same->name];
                continue;
            }
            const std::string array = copy ? arrays[same->name] : new_array("akg_" + var);
            std::string row_lines, at, rs;
            if (b.kind == BufferKind::KernelOutput && permuted != p_.permuted.end()) {
                if (permuted->second.rows_contiguous) {
                    row_lines = i1 + "const int64_t v_tile_j0 = akg_j;\n" + row_start(i1, name, permuted->second);
                    at = "akg_o_" + name + " + akg_c";
                    rs = row_store(b, array, "akg_o_" + name);
                } else {
                    at = printer_.print(permuted->second.offset);
                }
            } else if (b.kind == BufferKind::KernelOutput) {
                rs = row_store(b, array, "");
            }
            // A copy stored a row at a time needs no element loop.
            std::string body;
            if (!copy || rs.empty()) {
                std::string lets, v = printed(value, st.buffer, i2, lets);
                body = reads(value) + lets + i2 + "const float v_" + var + " = " + v + ";\n";
                if (!copy) body += i2 + element(array) + " = v_" + var + ";\n";
                if (b.kind == BufferKind::KernelOutput && rs.empty()) body += i2 + store(b, "v_" + var, at);
            }
            loops += loop(row_lines, body, rs);
            arrays[var] = array;
        }
        *roundings = staged_by_operand.size();
        return decls + loops;
    }
};

} // namespace

isl_ast_node *build_contraction_ast(const PolyModel &m) {
    isl_ctx *ctx = m.ctx.get();
    isl_options_set_ast_build_atomic_upper_bound(ctx, 1);
    isl_options_set_ast_build_detect_min_max(ctx, 1);
    isl_ast_build *build = isl_ast_build_alloc(ctx);
    MarkContext mc{&m};
    build = isl_ast_build_set_after_each_mark(build, &annotate_micro_kernel, &mc);
    isl_ast_node *tree = isl_ast_build_node_from_schedule(build, isl_schedule_copy(m.schedule.get()));
    isl_ast_build_free(build);
    if (!tree) throw InternalError("isl's AST generator failed on the GEMM schedule");
    return tree;
}

std::string emit_contraction_cpp(const PolyModel &m, isl_ast_node *ast, const CompositeKernel &kernel, const EmitOptions &o) {
    std::ostringstream os;
    os << "// Auto-generated by akg-gen " << o.generator_version << " from " << o.pattern_file << " for " << o.target_name << ". Do not edit!\n";
    os << "// Kernel " << o.kernel_name << ": " << kernel.inputs.size() << " input(s), " << kernel.outputs.size() << " output(s).\n";
    os << "// Its descriptor and dispatch entry are in akg_catalog.cpp.\n";
    os << "// Regenerate with: meson compile -C build regenerate\n\n";
    os << "#include \"akg_kernel_support.h\"\n#include \"akg_gemm.h\"\n\n";
    os << ContractionEmitter(m, o).emit(ast);
    return os.str();
}

} // namespace akg
