// Data movement: streamed and converted output blocks, grouped blocks, side statements' blocks.
#include "codegen/emitter.h"

namespace akg::codegen {

bool Emitter::kernel_writes_blocks() const {
    for (const auto &b : m_.buffers)
        if (b.streamed || b.converted_per_block) return true;
    return false;
}

// The block array element the statement stores to, or "" when it stores to memory.
std::string Emitter::streamed_block_access(const PolyStatement &st) {
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

// The statements directly in `body` (a statement or a block of them), or nothing when there
// is anything else (a condition, a loop).
std::vector<UserCall> Emitter::body_statements(isl_ast_node *body) {
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
void Emitter::find_grouped_blocks(isl_ast_node *body, GroupedLoop &loop) {
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
std::string Emitter::grouped_block_access(const PolyStatement &st) {
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

std::string Emitter::with_grouped_blocks(const GroupedLoop &loop, int depth, const std::string &loop_code) {
    std::string before, after;
    for (const auto &[buffer, block] : loop.blocks) {
        std::string n = std::to_string(loop.trip * block.group);
        before += pad(depth) + "alignas(64) float " + block.array + "[" + n + "];\n";
        after += pad(depth) + "akg_f32_to_f16_n(" + block.array + ", " + buffer + " + (" + printer_.print(block.base) + "), " + n + ");\n";
    }
    return before + loop_code + after;
}

// Around a vector loop: the block arrays before it, the streaming stores after it.
std::string Emitter::with_streamed_blocks(const StreamedLoop &loop, int depth, const std::string &loop_code) {
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

// A loop `for (it = lo; it <= hi; it += 1)` with constant bounds: fills `loop` (the block
// arrays of streamed outputs need a constant size).
bool Emitter::constant_unit_loop(isl_ast_node *node, const std::string &it, StreamedLoop &loop) {
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

std::string Emitter::begin_side_blocks(const std::vector<isl_ast_node *> &sides, const std::string &it, const std::string &first,
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

} // namespace akg::codegen
