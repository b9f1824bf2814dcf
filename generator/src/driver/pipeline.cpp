// The table of contents of the generator: every pass in order. Each step announces itself,
// transforms, and dumps its result when asked (--dump-after=<pass>).
#include "driver/pipeline.h"

#include <functional>
#include <sstream>

#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/printer.h>

#include "lower/lower_to_halide.h"
#include "passes/compare_rounded_float16.h"
#include "passes/fold_dimensions.h"
#include "passes/view_reshaped_inputs.h"
#include "passes/materialize.h"
#include "passes/fold_reduction_dimensions.h"
#include "passes/math_identities.h"
#include "passes/nan_dominated_extrema.h"
#include "passes/simplify_stages.h"
#include "poly/schedule_transforms.h"
#include "poly/fuse_sibling_reductions.h"
#include "poly/join_reduction_inputs.h"
#include "poly/interleave_channel_blocks.h"
#include "poly/order_band_members.h"
#include "poly/group_short_rows.h"
#include "poly/pair_row_passes.h"
#include "poly/plan_reductions.h"
#include "poly/prefetch_next_rows.h"
#include "poly/prefetch_streams.h"
#include "poly/sink_column_loops.h"
#include "poly/stage_float16.h"
#include "poly/stream_outputs.h"
#include "poly/tile_transposes.h"
#include "poly/whole_line_runs.h"

namespace akg {

const char *const kGeneratorVersion = "0.2.0";

const std::vector<std::string> &pipeline_pass_names() {
    static const std::vector<std::string> names = {"validate", "lower", "materialize", "view-reshapes", "simplify", "math-identities", "compare-float16", "fold-dimensions", "fold-reductions", "nan-dominated-extrema", "poly-model",
                                                   "dependences", "schedule", "fuse-reductions", "join-reductions", "order-loops", "tile-transposes", "parallelize", "split-bands", "sink-columns", "interleave-channels", "pair-rows", "group-rows", "stream-outputs",
                                                   "line-runs", "vectorize", "promote", "stage-float16", "prefetch-rows", "prefetch-streams", "plan-reductions", "ast", "emit"};
    return names;
}

namespace {

std::string dump_graph(const TensorGraph &g) {
    std::ostringstream os;
    for (const auto &s : g.stages) {
        if (s.kind == StageKind::Input) {
            os << "input  " << s.tensor << shape_string(s.shape) << " " << dtype_name(s.dtype) << "\n";
            continue;
        }
        os << (s.materialized ? "[" + s.buffer + "] " : "(inline) ") << s.tensor << shape_string(s.shape);
        if (s.kind == StageKind::Reduce) {
            const char *k[] = {"sum", "max", "min", "prod"};
            os << " = " << k[static_cast<int>(s.reduce_kind)] << (s.ignores_nan ? " (ignoring NaN)" : "") << " over r" << shape_string(s.reduce_extents) << " of ";
        } else os << " = ";
        os << s.value << "\n";
    }
    return os.str();
}

template <typename T> std::string str(const T &obj) {
    std::ostringstream os;
    os << obj;
    return os.str();
}

std::string isl_text(isl_printer *p) {
    char *s = isl_printer_get_str(p);
    std::string text = s ? s : "";
    free(s);
    isl_printer_free(p);
    return text;
}

std::string dump_schedule(const PolyModel &m) {
    isl_printer *p = isl_printer_to_str(m.ctx.get());
    p = isl_printer_set_yaml_style(p, ISL_YAML_STYLE_BLOCK);
    p = isl_printer_print_schedule(p, m.schedule.get());
    return isl_text(p) + "\n";
}

std::string dump_model(const PolyModel &m) {
    std::ostringstream os;
    os << "domain: " << str(m.domain) << "\nreads: " << str(m.reads) << "\nwrites: " << str(m.writes) << "\n";
    for (const auto &st : m.statements)
        os << st.name << ": " << (st.role == StatementRole::Assign ? "assign " : st.role == StatementRole::ReduceInit ? "init " : "update ")
           << st.stage->buffer << "\n";
    return os.str();
}

std::string dump_promotion(const PolyModel &m) {
    std::ostringstream os;
    for (const auto &b : m.buffers) {
        if (b.kind != BufferKind::Scratch) continue;
        os << b.name << shape_string(b.shape) << ": ";
        if (b.promoted) {
            os << "local " << shape_string(b.local_shape) << " at offset (";
            for (size_t d = 0; d < b.local_offset_c.size(); ++d) os << (d ? ", " : "") << b.local_offset_c[d];
            os << ")\n";
        } else os << "kernel-wide scratch\n";
    }
    return os.str();
}

std::string dump_streamed_outputs(const PolyModel &m) {
    std::ostringstream os;
    for (const auto &b : m.buffers)
        if (b.streamed) os << b.name << shape_string(b.shape) << ": non-temporal stores\n";
    return os.str();
}

std::string dump_prefetched_streams(const PolyModel &m) {
    std::ostringstream os;
    for (const auto &b : m.buffers)
        if (b.prefetched_ahead)
            os << b.name << shape_string(b.shape) << ": prefetched ahead of its lane reductions" << (b.prefetched_in_rows ? " and of column sums over its rows" : "")
               << "\n";
    return os.str();
}

std::string dump_float16_stagings(const PolyModel &m) {
    std::ostringstream os;
    for (size_t k = 0; k < m.float16_stagings.size(); ++k)
        for (const auto &s : m.float16_stagings[k]) {
            os << "@" << k << ": " << s.buffer << (s.output ? " copied out from" : " copied in to") << " float " << shape_string(s.box)
               << " at offset (";
            for (size_t d = 0; d < s.offset_c.size(); ++d) os << (d ? ", " : "") << s.offset_c[d];
            os << ")" << (s.contiguous ? ", one run inside the tensor" : ", clamped to the tensor") << (s.streamed ? ", streamed" : "") << "\n";
        }
    return os.str();
}

std::string dump_row_prefetches(const PolyModel &m) {
    std::ostringstream os;
    for (size_t k = 0; k < m.row_prefetches.size(); ++k)
        for (const auto &p : m.row_prefetches[k]) {
            os << "@" << k << ": " << p.buffer << " " << shape_string(p.box) << " of the next iteration, at (";
            for (size_t d = 0; d < p.next_offset_c.size(); ++d) os << (d ? ", " : "") << p.next_offset_c[d];
            os << ")\n";
        }
    return os.str();
}

class ContextGuard {
public:
    ContextGuard() : ctx_(isl_ctx_alloc()) {
        // No setter exists for this option in isl 0.25 (STACK-NOTES): parametric shifts merge
        // column loops in ways that defeat fusion of row kernels.
        const char *argv[] = {"akg-gen", "--no-schedule-parametric"};
        isl_ctx_parse_options(ctx_, 2, const_cast<char **>(argv), ISL_ARG_ALL);
        isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
    }
    ~ContextGuard() { isl_ctx_free(ctx_); }
    isl_ctx *get() const { return ctx_; }

private:
    isl_ctx *ctx_;
};

} // namespace

std::string run_pipeline(const CompositeKernel &kernel, const PipelineOptions &options) {
    auto dump = [&](const std::string &pass, const std::function<std::string()> &text) {
        if (!options.dump || (options.dump_after != pass && options.dump_after != "all")) return;
        *options.dump << "// ---- after " << pass << " ----\n" << text();
    };

    validate_composite(kernel);
    dump("validate", [&] { return kernel.name + ": " + std::to_string(kernel.ops.size()) + " ops, valid\n"; });

    TensorGraph graph = lower_to_halide(kernel);
    dump("lower", [&] { return dump_graph(graph); });

    // Normalization: after inlining, every stage that remains has a buffer; simplification
    // with loop bounds then cancels reshape index maps. CSE runs at emission, per statement.
    materialize_and_inline(graph, options.schedule.fuse);
    dump("materialize", [&] { return dump_graph(graph); });
    view_reshaped_inputs(graph);
    dump("view-reshapes", [&] { return dump_graph(graph); });
    simplify_stages(graph);
    dump("simplify", [&] { return dump_graph(graph); });
    rewrite_math_identities(graph);
    dump("math-identities", [&] { return dump_graph(graph); });
    compare_rounded_float16(graph);
    dump("compare-float16", [&] { return dump_graph(graph); });
    fold_dimensions(graph);
    dump("fold-dimensions", [&] { return dump_graph(graph); });
    fold_reduction_dimensions(graph);
    dump("fold-reductions", [&] { return dump_graph(graph); });
    mark_nan_dominated_extrema(graph);
    dump("nan-dominated-extrema", [&] { return dump_graph(graph); });

    ContextGuard ctx;
    std::string source;
    {
        PolyModel model = build_poly_model(ctx.get(), graph);
        dump("poly-model", [&] { return dump_model(model); });
        compute_dependences(model);
        dump("dependences", [&] { return "flow: " + str(model.dep_flow) + "\nfalse: " + str(model.dep_false) + "\n"; });
        compute_schedule(model, options.schedule);
        dump("schedule", [&] { return dump_schedule(model); });
        fuse_sibling_reductions(model);
        dump("fuse-reductions", [&] { return dump_schedule(model); });
        join_reduction_inputs(model);
        dump("join-reductions", [&] { return dump_schedule(model); });
        order_band_members(model, options.schedule);
        dump("order-loops", [&] { return dump_schedule(model); });
        tile_transposes(model, options.schedule);
        dump("tile-transposes", [&] { return dump_schedule(model); });
        // Parallel marks first: vectorization must not split the outer band that is run in parallel.
        mark_parallel_loops(model, options.schedule);
        dump("parallelize", [&] { return dump_schedule(model); });
        split_bands_by_dimensionality(model);
        dump("split-bands", [&] { return dump_schedule(model); });
        sink_column_loops(model, options.schedule);
        dump("sink-columns", [&] { return dump_schedule(model); });
        interleave_channel_blocks(model, options.schedule);
        dump("interleave-channels", [&] { return dump_schedule(model); });
        pair_row_passes(model, options.schedule);
        dump("pair-rows", [&] { return dump_schedule(model); });
        group_short_rows(model);
        dump("group-rows", [&] { return dump_schedule(model); });
        // Before vectorize and promote: they see the blocks line-runs makes.
        stream_large_outputs(model, options.schedule);
        dump("stream-outputs", [&] { return dump_streamed_outputs(model); });
        give_iterations_whole_lines(model, options.schedule);
        dump("line-runs", [&] { return dump_schedule(model); });
        vectorize_inner_loops(model, options.schedule);
        dump("vectorize", [&] { return dump_schedule(model); });
        promote_to_local_buffers(model, options.schedule);
        dump("promote", [&] { return dump_schedule(model) + dump_promotion(model); });
        stage_float16_buffers(model, options.schedule);
        dump("stage-float16", [&] { return dump_schedule(model) + dump_float16_stagings(model); });
        prefetch_next_rows(model, options.schedule);
        dump("prefetch-rows", [&] { return dump_schedule(model) + dump_row_prefetches(model); });
        prefetch_input_streams(model, options.schedule);
        dump("prefetch-streams", [&] { return dump_prefetched_streams(model); });
        plan_reductions(model, options.schedule);
        dump("plan-reductions", [&] { return reduction_plans_text(model); });
        isl_ast_node *ast = build_ast(model);
        dump("ast", [&] {
            isl_printer *p = isl_printer_to_str(model.ctx.get());
            p = isl_printer_set_output_format(p, ISL_FORMAT_C);
            p = isl_printer_print_ast_node(p, ast);
            return isl_text(p);
        });
        try {
            source = emit_kernel_cpp(model, ast, kernel, options.emit);
        } catch (...) {
            isl_ast_node_free(ast);
            throw;
        }
        isl_ast_node_free(ast);
        dump("emit", [&] { return source; });
    }
    return source;
}

} // namespace akg
