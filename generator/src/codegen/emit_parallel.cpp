// Parallel regions: OpenMP loops over outlined bodies, run serially when small or single-threaded.
#include "codegen/emitter.h"

namespace akg::codegen {

// The float array of a float16 tensor staged for a parallel body. Where the body has lane
// reductions (emit_lane_reduction), a tensor copied in is then read through a __restrict
// pointer: GCC keeps the lanes in registers only when it can tell that the loop's reads do
// not touch them, and reads of another local array directly defeat that (LayerNorm f16's
// lanes went through memory on every block: its variance loop was latency-bound). Elsewhere
// arrays stay plain arrays, which GCC knows more about (alignment, stores it may forward):
// through __restrict pointers the elementwise ReLU gradient was 1.3x slower.
std::string Emitter::staging_array(const Float16Staging &st, bool read_by_lane_reductions) {
    std::string name = "s_" + st.buffer, n = std::to_string(element_count(st.box));
    if (st.output || !read_by_lane_reductions) return "    float " + name + "[" + n + "];\n";
    return "    float " + name + "_data[" + n + "];\n    float *__restrict " + name + " = " + name + "_data;\n";
}

// The loops of a parallel band (up to `members` perfectly nested, non-degenerate loops)
// run under one `omp parallel for collapse`; their body becomes a function of its own.
// `stagings`: float16 tensors converted once per iteration (declared, copied in, out here).
std::string Emitter::emit_parallel(isl_ast_node *for_node, int depth, int members, const std::vector<Float16Staging> *stagings,
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
bool Emitter::runs_serially(isl_ast_node *node) const {
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
std::string Emitter::emit_function_body(isl_ast_node *node, bool &streams, bool &reduces) {
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
std::string Emitter::parallel_for_code(const std::vector<std::string> &headers, const std::string &call, bool streams, bool serial, int depth) const {
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
std::string Emitter::parallel_region_code(const std::vector<std::string> &headers, const std::string &call, bool streams, int depth) const {
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

// A helper function's slot and name for a chunk of rows (emit_row_chunks).
std::string Emitter::reserve_row_chunk_helper(int &id) {
    id = static_cast<int>(helpers_.size());
    helpers_.push_back("");
    return "akg_" + o_.symbol + "_row_chunk_" + std::to_string(id);
}

// The declarations of the promoted buffers named in `local`, for a helper's body.
std::string Emitter::local_declarations(const std::set<std::string> &local) const {
    std::string out;
    for (const auto &b : m_.buffers)
        if (b.promoted && local.count(b.name)) out += local_buffer_declaration(b, "    ");
    return out;
}

} // namespace akg::codegen
