// The table of contents of the generator: every pass in order. Each step announces itself,
// transforms, and dumps its result when asked (--dump-after=<pass>).
#include "driver/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>

#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/printer.h>

#include "codegen/emit_contraction.h"
#include "codegen/emit_direct.h"
#include "frontend/kernel_parts.h"
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
#include "poly/plan_contraction.h"
#include "poly/plan_reductions.h"
#include "poly/prefetch_next_rows.h"
#include "poly/prefetch_streams.h"
#include "poly/sink_column_loops.h"
#include "poly/stage_float16.h"
#include "poly/stream_outputs.h"
#include "poly/tile_contraction.h"
#include "poly/tile_transposes.h"
#include "poly/whole_line_runs.h"

namespace akg {

const char *const kGeneratorVersion = "0.2.0";

const std::vector<std::string> &pipeline_pass_names() {
    static const std::vector<std::string> names = {"validate", "lower", "materialize", "view-reshapes", "simplify", "math-identities", "compare-float16", "fold-dimensions", "fold-reductions", "nan-dominated-extrema", "poly-model",
                                                   "dependences", "schedule", "fuse-reductions", "join-reductions", "order-loops", "tile-transposes", "parallelize", "split-bands", "sink-columns", "interleave-channels", "pair-rows", "group-rows", "stream-outputs",
                                                   "line-runs", "vectorize", "promote", "stage-float16", "prefetch-rows", "prefetch-streams", "plan-reductions", "plan-contraction", "tile-contraction", "ast", "emit"};
    return names;
}

void PassTimes::add(const std::string &pass, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    seconds_[pass] += seconds;
}

std::string PassTimes::report() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto &[pass, s] : seconds_) {
        rows.push_back({s, pass});
        total += s;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::string out = "time per pass (all kernels):\n";
    char line[128];
    for (const auto &[s, pass] : rows) {
        std::snprintf(line, sizeof line, "  %-22s %8.3f s %5.1f%%\n", pass.c_str(), s, total > 0 ? 100 * s / total : 0.0);
        out += line;
    }
    std::snprintf(line, sizeof line, "  %-22s %8.3f s\n", "total", total);
    return out + line;
}

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

namespace {

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

namespace {

// The text of a part's variant (a whole file, as run_pipeline makes it) as a static function
// of the kernel's file: its banner and includes dropped, its entry point renamed.
std::string part_function(const std::string &source, const std::string &symbol, const std::string &name) {
    std::string text = source;
    size_t body = text.find("#include \"akg_kernel_support.h\"\n");
    if (body == std::string::npos) throw InternalError("a part's source has no frame");
    text = text.substr(body + std::string("#include \"akg_kernel_support.h\"\n").size());
    if (text.rfind("#include \"akg_gemm.h\"\n", 0) == 0) text = text.substr(std::string("#include \"akg_gemm.h\"\n").size());
    const std::string entry = "extern \"C\" int akg_kernel_fn_" + symbol + "(";
    size_t at = text.find(entry);
    if (at == std::string::npos) throw InternalError("a part's source has no entry point");
    return text.replace(at, entry.size(), "static int " + name + "(");
}

std::string call_part(const std::string &name, const std::vector<std::string> &args) {
    std::string s = "    {\n        void *const akg_args[] = {";
    for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
    return s + "};\n        akg_status = " + name + "(akg_args);\n        if (akg_status != AKG_STATUS_OK) goto done;\n    }\n";
}

const OpDesc &contraction_of(const KernelPart &gemm) {
    for (const auto &op : gemm.kernel.ops)
        if (is_contraction_op(op.name)) return op;
    throw InternalError("a GEMM part without its contraction");
}

// The rows of the product of a GEMM part (m).
int64_t row_count(const KernelPart &gemm) {
    const Shape &s = contraction_of(gemm).outputs[0].shape;
    return s[s.size() - 2];
}

// Elements per step of each batch index and of the row of the product, for a tensor of the
// row part (right-aligned to the product, broadcast where its extent is 1).
std::vector<int64_t> row_strides(const Shape &tensor, const Shape &product) {
    const size_t p = product.size(), r = tensor.size();
    std::vector<int64_t> strides(p - 1, 0);
    int64_t stride = 1;
    for (size_t d = r; d-- > 0;) {
        const size_t at = d + (p - r);
        if (at + 1 < p && tensor[d] != 1) strides[at] = stride;
        stride *= tensor[d];
    }
    return strides;
}

// The row epilogue of GEMM part k for the row part k + 1, but its functions and where its
// extra arguments start: the GEMM part's outputs that nothing but the row part reads are
// kept per block.
RowEpilogue row_epilogue_of(const CompositeKernel &kernel, const KernelParts &parts, size_t k) {
    const KernelPart &gemm = parts.parts[k], &rows = parts.parts[k + 1];
    const Shape &product = contraction_of(gemm).outputs[0].shape;
    std::set<std::string> kernel_outputs, read_later;
    for (const auto &t : kernel.outputs) kernel_outputs.insert(t.name);
    for (size_t j = k + 2; j < parts.parts.size(); ++j)
        for (const auto &t : parts.parts[j].kernel.inputs) read_later.insert(t.name);
    RowEpilogue re;
    std::map<std::string, std::string> own; // tensor -> the GEMM part's buffer
    for (size_t j = 0; j < gemm.kernel.outputs.size(); ++j) {
        const TensorDesc &t = gemm.kernel.outputs[j];
        own[t.name] = "out" + std::to_string(j);
        if (!kernel_outputs.count(t.name) && !read_later.count(t.name)) re.blocked.insert(own[t.name]);
    }
    int extra = 0;
    auto arg = [&](const TensorDesc &t, bool input) {
        RowEpilogue::Arg a;
        a.dtype = t.dtype;
        a.row_strides = row_strides(t.shape, product);
        if (auto o = own.find(t.name); input && o != own.end()) a.buffer = o->second;
        else a.extra = extra++;
        re.args.push_back(a);
    };
    for (const auto &t : rows.kernel.inputs) arg(t, true);
    for (const auto &t : rows.kernel.outputs) arg(t, false);
    return re;
}

// The row part over `n_rows` rows of one batch element: the product's row dimensions of its
// tensors become 1 but the rows' (n_rows where the tensor has them).
CompositeKernel rows_of(const CompositeKernel &rows, const KernelPart &gemm, int64_t n_rows) {
    const Shape &product = contraction_of(gemm).outputs[0].shape;
    const size_t p = product.size();
    auto resize = [&](TensorDesc &t) {
        if (t.shape.size() != p) return; // broadcast over every row dimension
        for (size_t d = 0; d + 1 < p; ++d) t.shape[d] = d + 2 == p && t.shape[d] != 1 ? n_rows : 1;
    };
    CompositeKernel k = rows;
    for (auto &t : k.inputs) resize(t);
    for (auto &t : k.outputs) resize(t);
    for (auto &op : k.ops) {
        for (auto &g : op.inputs)
            for (auto &t : g)
                if (!t.value) resize(t);
        for (auto &t : op.outputs) resize(t);
    }
    return k;
}

// The bytes of a kernel's inputs and outputs.
int64_t tensor_bytes(const CompositeKernel &k) {
    int64_t bytes = 0;
    for (const auto *list : {&k.inputs, &k.outputs})
        for (const auto &t : *list) bytes += element_count(t.shape) * dtype_bytes(t.dtype);
    return bytes;
}

// A row part runs a slice of its rows at a time, inside its GEMM: the choices made by size
// (outputs streamed past the caches, inputs prefetched) are the whole part's, so the slice sees
// the thresholds scaled by its share of the part's bytes.
void scale_size_thresholds(ScheduleOptions &o, int64_t slice_bytes, int64_t whole_bytes) {
    if (slice_bytes <= 0 || whole_bytes <= slice_bytes) return;
    auto scaled = [&](int64_t &threshold) {
        threshold = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(threshold) * static_cast<double>(slice_bytes) /
                                                              static_cast<double>(whole_bytes)));
    };
    scaled(o.stream_outputs_above_bytes);
    scaled(o.stream_read_back_above_bytes);
    scaled(o.stream_min_output_bytes);
    scaled(o.prefetch_streams_from_bytes);
    scaled(o.prefetch_row_streams_from_bytes);
}

std::string run_kernel(const CompositeKernel &kernel, const PipelineOptions &options);

// A kernel split around its contractions (kernel_parts.h): each part a static function, the
// entry point allocating the tensors passed between parts and calling the parts in order.
std::string run_parts(const CompositeKernel &kernel, const KernelParts &parts, const PipelineOptions &options) {
    std::ostringstream os;
    os << "// Auto-generated by akg-gen " << options.emit.generator_version << " from " << options.emit.pattern_file << " for "
       << options.emit.target_name << ". Do not edit!\n";
    os << "// Kernel " << options.emit.kernel_name << ": " << kernel.inputs.size() << " input(s), " << kernel.outputs.size()
       << " output(s), run as " << parts.parts.size() << " parts around its MatMul, scatter, scan or pooling ops.\n";
    os << "// Its descriptor and dispatch entry are in akg_catalog.cpp.\n";
    os << "// Regenerate with: meson compile -C build regenerate\n\n";
    os << "#include \"akg_kernel_support.h\"\n#include \"akg_gemm.h\"\n";
    std::map<std::string, std::string> where; // tensor -> C expression of its buffer
    for (size_t k = 0; k < kernel.inputs.size(); ++k) where[kernel.inputs[k].name] = "buffers[" + std::to_string(k) + "]";
    for (size_t k = kernel.outputs.size(); k-- > 0;)
        where[kernel.outputs[k].name] = "buffers[" + std::to_string(kernel.inputs.size() + k) + "]";
    for (size_t k = 0; k < parts.intermediates.size(); ++k) where[parts.intermediates[k].name] = "akg_mid" + std::to_string(k);
    // An input that a part assigns in place (InplaceAssign, Assign) and a later part reads: every
    // op reads the input's value before the kernel, so the other parts read a copy taken first.
    std::map<std::string, size_t> writer; // input -> the part assigning it
    for (size_t k = 0; k < parts.parts.size(); ++k)
        for (const auto &op : parts.parts[k].kernel.ops)
            if ((op.name == "InplaceAssign" || op.name == "Assign") && !op.inputs.empty() && !op.inputs[0].empty())
                writer[op.inputs[0][0].name] = k;
    std::vector<std::pair<std::string, size_t>> snapshots; // input, its index among the kernel's inputs
    for (const auto &assigned : writer) {
        const std::string &name = assigned.first; // a plain variable: lambdas may not capture bindings before C++20
        for (size_t j = assigned.second + 1; j < parts.parts.size(); ++j) {
            const auto &ins = parts.parts[j].kernel.inputs;
            if (std::none_of(ins.begin(), ins.end(), [&](const TensorDesc &t) { return t.name == name; })) continue;
            for (size_t i = 0; i < kernel.inputs.size(); ++i)
                if (kernel.inputs[i].name == name) snapshots.push_back({name, i});
            break;
        }
    }
    auto operand = [&](const std::string &name, size_t part) {
        for (size_t n = 0; n < snapshots.size(); ++n)
            if (snapshots[n].first == name && writer.at(name) != part) return "akg_before" + std::to_string(n);
        return where.at(name);
    };
    // B of the kernel's only GEMM part can be packed ahead of time when it is a kernel input that
    // no other part reads (the part's own plan says whether the GEMM can read it so).
    size_t gemm_parts = 0;
    for (const auto &part : parts.parts) gemm_parts += part.contraction ? 1 : 0;
    auto kernel_input_packable = [&](const KernelPart &gemm, const PackableB &found) {
        if (!found.packable || gemm_parts != 1) return -1;
        const std::string &name = gemm.kernel.inputs[static_cast<size_t>(found.input)].name;
        for (const auto &other : parts.parts)
            if (&other != &gemm)
                for (const auto &t : other.kernel.inputs)
                    if (t.name == name) return -1;
        for (size_t i = 0; i < kernel.inputs.size(); ++i)
            if (kernel.inputs[i].name == name && operand(name, static_cast<size_t>(&gemm - parts.parts.data())) == "buffers[" + std::to_string(i) + "]")
                return static_cast<int>(i);
        return -1;
    };
    // The packed twin calls the first run's functions for the parts that do not read its B.
    const bool twin = !options.parts_of.empty();
    const std::string &first_run = twin ? options.parts_of : options.emit.symbol;
    std::string calls;
    std::set<std::string> unallocated; // intermediates a GEMM keeps per block for its row part
    for (size_t k = 0; k < parts.parts.size(); ++k) {
        const KernelPart &part = parts.parts[k];
        PipelineOptions sub = options;
        PackableB part_b;
        sub.packable_b = part.contraction ? &part_b : nullptr;
        // The kernel learns of its GEMM part's B once that part is planned.
        auto report_b = [&] {
            const int input = kernel_input_packable(part, part_b);
            if (!options.packable_b || input < 0) return;
            *options.packable_b = part_b;
            options.packable_b->input = input;
        };
        sub.emit.symbol = options.emit.symbol + "_part" + std::to_string(k);
        const bool reused = twin && !part.contraction;
        std::string name = "akg_part" + std::to_string(k) + "_" + (reused ? first_run : options.emit.symbol);
        std::vector<std::string> args;
        for (const auto &t : part.kernel.inputs) args.push_back(operand(t.name, k));
        for (const auto &t : part.kernel.outputs) args.push_back(where.at(t.name));
        const bool rows_next = options.row_epilogues && part.contraction && k + 1 < parts.parts.size() && parts.parts[k + 1].row_part;
        if (reused) {
            calls += call_part(name, args);
            continue;
        }
        if (!rows_next) {
            os << "\n" << part_function(run_kernel(part.kernel, sub), sub.emit.symbol, name);
            report_b();
        } else {
            // The row part after it runs inside it, on each panel of rows: its arguments follow
            // the GEMM part's own.
            const KernelPart &rows = parts.parts[k + 1];
            RowEpilogue re = row_epilogue_of(kernel, parts, k);
            re.first_extra = static_cast<int>(args.size());
            re.full_rows = "akg_part" + std::to_string(k + 1) + "_rows_" + first_run;
            re.last_rows = "akg_part" + std::to_string(k + 1) + "_last_rows_" + first_run;
            std::vector<std::string> extras;
            for (size_t a = 0; a < re.args.size(); ++a) {
                if (re.args[a].extra < 0) continue;
                const size_t ni = rows.kernel.inputs.size();
                extras.push_back(a < ni ? operand(rows.kernel.inputs[a].name, k + 1) : where.at(rows.kernel.outputs[a - ni].name));
            }
            PipelineOptions::RowEpilogueTaken taken;
            sub.row_epilogue = &re;
            sub.row_epilogue_taken = &taken;
            std::string gemm = run_kernel(part.kernel, sub);
            report_b();
            const int mr = taken.rows;
            if (mr > 0) {
                // Its variants over mr rows and over the last panel's, each on the calling thread.
                const int64_t m = row_count(parts.parts[k]);
                for (int64_t n_rows : {int64_t{mr}, m % mr}) {
                    if (n_rows == 0 || twin) continue;
                    const CompositeKernel slice = rows_of(rows.kernel, parts.parts[k], n_rows);
                    PipelineOptions rsub = options;
                    rsub.packable_b = nullptr;
                    rsub.schedule.parallel = false;
                    scale_size_thresholds(rsub.schedule, tensor_bytes(slice), tensor_bytes(rows.kernel));
                    // The GEMM decided: streamed whatever the kernel's size, or not at all.
                    if (taken.streams_outputs) rsub.schedule.stream_outputs_above_bytes = 0;
                    else rsub.schedule.non_temporal_stores = false;
                    rsub.emit.symbol = options.emit.symbol + "_part" + std::to_string(k + 1) + (n_rows == mr ? "_rows" : "_last_rows");
                    const std::string fn = n_rows == mr ? re.full_rows : re.last_rows;
                    os << "\n" << part_function(run_kernel(slice, rsub), rsub.emit.symbol, fn);
                }
                for (size_t j = 0; j < part.kernel.outputs.size(); ++j)
                    if (re.blocked.count("out" + std::to_string(j))) {
                        args[part.kernel.inputs.size() + j] = "nullptr";
                        unallocated.insert(part.kernel.outputs[j].name);
                    }
                args.insert(args.end(), extras.begin(), extras.end());
                os << "\n" << part_function(gemm, sub.emit.symbol, name);
                calls += call_part(name, args);
                ++k; // the row part ran inside it
                continue;
            }
            os << "\n" << part_function(gemm, sub.emit.symbol, name);
        }
        calls += call_part(name, args);
    }
    os << "\nextern \"C\" int akg_kernel_fn_" << options.emit.symbol << "(void *const *buffers) {\n    int akg_status = AKG_STATUS_OK;\n";
    for (size_t k = 0; k < parts.intermediates.size(); ++k) {
        const TensorDesc &t = parts.intermediates[k];
        if (unallocated.count(t.name)) os << "    void *akg_mid" << k << " = nullptr;\n";
        else os << "    void *akg_mid" << k << " = malloc(" << std::max<int64_t>(1, element_count(t.shape)) * dtype_bytes(t.dtype) << ");\n";
    }
    for (size_t n = 0; n < snapshots.size(); ++n) {
        const TensorDesc &t = kernel.inputs[snapshots[n].second];
        os << "    void *akg_before" << n << " = malloc(" << std::max<int64_t>(1, element_count(t.shape)) * dtype_bytes(t.dtype) << ");\n";
    }
    if (!parts.intermediates.empty() || !snapshots.empty()) {
        os << "    if (";
        bool any = false;
        for (size_t k = 0; k < parts.intermediates.size(); ++k)
            if (!unallocated.count(parts.intermediates[k].name)) os << (any ? " || " : "") << "!akg_mid" << k, any = true;
        for (size_t n = 0; n < snapshots.size(); ++n) os << (any ? " || " : "") << "!akg_before" << n, any = true;
        if (!any) os << "false";
        os << ") {\n        akg_status = AKG_STATUS_OUT_OF_MEMORY;\n        goto done;\n    }\n";
    }
    for (size_t n = 0; n < snapshots.size(); ++n) {
        const TensorDesc &t = kernel.inputs[snapshots[n].second];
        os << "    memcpy(akg_before" << n << ", buffers[" << snapshots[n].second << "], " << element_count(t.shape) * dtype_bytes(t.dtype) << ");\n";
    }
    os << calls;
    // An output listed twice gets the values of its first listing.
    for (size_t k = 0; k < kernel.outputs.size(); ++k)
        for (size_t j = 0; j < k; ++j)
            if (kernel.outputs[j].name == kernel.outputs[k].name) {
                os << "    memcpy(buffers[" << kernel.inputs.size() + k << "], buffers[" << kernel.inputs.size() + j << "], "
                   << element_count(kernel.outputs[k].shape) * dtype_bytes(kernel.outputs[k].dtype) << ");\n";
                break;
            }
    os << "done:\n";
    for (size_t k = 0; k < parts.intermediates.size(); ++k) os << "    free(akg_mid" << k << ");\n";
    for (size_t n = 0; n < snapshots.size(); ++n) os << "    free(akg_before" << n << ");\n";
    os << "    return akg_status;\n}\n";
    return os.str();
}

using DumpFn = std::function<void(const std::string &, const std::function<std::string()> &)>;

// The passes "ast" and "emit": the C++ of `ast` (taken) by `emit`.
std::string emit_from_ast(const PolyModel &model, isl_ast_node *ast, const DumpFn &dump, const std::function<std::string(isl_ast_node *)> &emit) {
    dump("ast", [&] {
        isl_printer *p = isl_printer_to_str(model.ctx.get());
        p = isl_printer_set_output_format(p, ISL_FORMAT_C);
        p = isl_printer_print_ast_node(p, ast);
        return isl_text(p);
    });
    std::string source;
    try {
        source = emit(ast);
    } catch (...) {
        isl_ast_node_free(ast);
        throw;
    }
    isl_ast_node_free(ast);
    dump("emit", [&] { return source; });
    return source;
}

// The GEMM path of a part with a contraction: its model, plan, BLIS tree and emission.
std::string run_contraction(const TensorGraph &graph, const CompositeKernel &kernel, const PipelineOptions &options, const DumpFn &dump) {
    ContextGuard ctx;
    PolyModel model = build_poly_model(ctx.get(), graph);
    dump("poly-model", [&] { return dump_model(model); });
    compute_dependences(model);
    dump("dependences", [&] { return "flow: " + str(model.dep_flow) + "\nfalse: " + str(model.dep_false) + "\n"; });
    plan_contraction(model, options.schedule, options.row_epilogue);
    if (options.packable_b && model.contraction->b_packable) {
        const ContractionPlan &p = *model.contraction;
        options.packable_b->packable = true;
        options.packable_b->input = std::stoi(p.b_plain->buffer.substr(2));
        options.packable_b->bytes = p.n_tiles() * p.blocking.nr * p.k * 4;
        options.packable_b->pack_function = "akg_pack_fn_" + options.emit.symbol;
    }
    if (options.row_epilogue_taken && model.contraction->row_epilogue)
        *options.row_epilogue_taken = {model.contraction->blocking.mr, model.contraction->row_epilogue->streams_outputs};
    dump("plan-contraction", [&] { return contraction_plan_text(model); });
    stream_contraction_outputs(model, options.schedule);
    dump("stream-outputs", [&] {
        std::string text = dump_streamed_outputs(model);
        for (const auto &name : model.contraction->tile_write_prefetches) text += name + ": prefetched for writing, tile by tile\n";
        return text;
    });
    tile_contraction(model, options.schedule);
    dump("tile-contraction", [&] { return dump_schedule(model); });
    return emit_from_ast(model, build_contraction_ast(model), dump,
                         [&](isl_ast_node *ast) { return emit_contraction_cpp(model, ast, kernel, options.emit); });
}

std::string run_kernel(const CompositeKernel &kernel, const PipelineOptions &options) {
    auto last = std::chrono::steady_clock::now();
    auto dump = [&](const std::string &pass, const std::function<std::string()> &text) {
        if (options.times) options.times->add(pass, std::chrono::duration<double>(std::chrono::steady_clock::now() - last).count());
        if (options.dump && (options.dump_after == pass || options.dump_after == "all"))
            *options.dump << "// ---- after " << pass << " ----\n" << text();
        last = std::chrono::steady_clock::now(); // a dump's own time is nobody's
    };

    validate_composite(kernel);
    dump("validate", [&] { return kernel.name + ": " + std::to_string(kernel.ops.size()) + " ops, valid\n"; });
    if (needs_parts(kernel)) {
        KernelParts parts = split_kernel_parts(kernel);
        if (parts.parts.size() > 1 || (!parts.parts[0].contraction && !parts.parts[0].direct)) return run_parts(kernel, parts, options);
        if (parts.parts[0].direct) {
            std::string source = emit_direct_cpp(kernel, options.emit);
            dump("emit", [&] { return source; });
            return source;
        }
    }

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
    if (graph_has_contraction(graph)) return run_contraction(graph, kernel, options, dump);
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
        dump("schedule", [&] {
            std::string notes;
            for (const auto &n : model.schedule_notes) notes += "# " + n + "\n";
            return notes + dump_schedule(model);
        });
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
        source = emit_from_ast(model, build_ast(model), dump, [&](isl_ast_node *ast) { return emit_kernel_cpp(model, ast, kernel, options.emit); });
    }
    return source;
}

} // namespace

std::string run_pipeline(const CompositeKernel &kernel, const PipelineOptions &options, PackableB *packable) {
    PackableB found;
    PipelineOptions o = options;
    o.packable_b = &found;
    std::string source = run_kernel(kernel, o);
    if (packable) *packable = found;
    const std::string def = "\nextern \"C\" const akg_prepack_def akg_prepack_" + options.emit.symbol + " = ";
    if (!found.packable) return source + def + "{-1, 0, nullptr, nullptr};\n";
    PipelineOptions packed = options;
    packed.schedule.prepacked_b = true;
    packed.emit.symbol = options.emit.symbol + "_prepacked";
    packed.dump = nullptr; // the dumps show the kernel as akg_run runs it
    packed.parts_of = options.emit.symbol;
    PackableB again;
    packed.packable_b = &again;
    std::string text = run_kernel(kernel, packed);
    if (!again.packable || again.input != found.input || again.bytes != found.bytes)
        throw InternalError("the kernel with its B packed ahead of time packs it otherwise");
    const std::string frame = "#include \"akg_gemm.h\"\n";
    const size_t body = text.find(frame);
    if (body == std::string::npos) throw InternalError("a prepacked kernel's source has no frame");
    return source + "\n// The same kernel with its input " + std::to_string(found.input) + " packed ahead of time (akg_pack_input).\n" +
           text.substr(body + frame.size()) + def + "{" + std::to_string(found.input) + ", " + std::to_string(found.bytes) +
           ", akg_kernel_fn_" + packed.emit.symbol + ", " + again.pack_function + "};\n";
}

} // namespace akg
