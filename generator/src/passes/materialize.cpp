#include "passes/materialize.h"

#include <algorithm>
#include <set>

namespace akg {

using Halide::Expr;
using namespace Halide::Internal;

namespace {

const std::string kPrefix = "T$";

std::string tensor_of(const Call *c) { return c->name.substr(kPrefix.size()); }

// Collects the tensors an expression reads.
class ReadCollector : public IRVisitor {
public:
    std::set<std::string> tensors;
    bool expensive = false;
    bool rounds_to_float16 = false;
    std::set<std::string> widened; // tensors read as float16 and converted to float
    int nodes = 0;

private:
    using IRVisitor::visit;
    void visit(const Cast *op) override {
        rounds_to_float16 |= op->type == Halide::Float(16) && op->value.type() != Halide::Float(16);
        const Call *read = op->value.as<Call>();
        if (op->type == Halide::Float(32) && op->value.type() == Halide::Float(16) && read && is_tensor_read(read)) widened.insert(tensor_of(read));
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (is_tensor_read(op)) tensors.insert(tensor_of(op));
        else if (is_expensive_math(op->name)) expensive = true;
        IRVisitor::visit(op);
    }
    void visit(const Add *op) override { ++nodes; IRVisitor::visit(op); }
    void visit(const Mul *op) override { ++nodes; IRVisitor::visit(op); }
    void visit(const Sub *op) override { ++nodes; IRVisitor::visit(op); }
};

// Replaces reads of inlined stages by their values, and reads of materialized ones by
// reads of their buffers.
class Inliner : public IRMutator {
public:
    Inliner(TensorGraph &graph, const std::set<std::string> &inlined) : graph_(graph), inlined_(inlined) {}

private:
    TensorGraph &graph_;
    const std::set<std::string> &inlined_;
    using IRMutator::visit;

    // The value of an inlined stage at the call's indices, or an undefined Expr.
    Expr inline_value(const Call *call) {
        if (!is_tensor_read(call)) return Expr();
        std::string t = tensor_of(call);
        if (!inlined_.count(t)) return Expr();
        const Stage &s = graph_.stage(t);
        std::map<std::string, Expr> replacements;
        for (size_t d = 0; d < call->args.size(); ++d) replacements[index_var(static_cast<int>(d))] = mutate(call->args[d]);
        return substitute(replacements, s.value);
    }

    Expr visit(const Cast *op) override {
        if (auto *c = op->value.as<Call>()) {
            Expr v = inline_value(c);
            if (v.defined()) return v.type() == op->type ? v : Cast::make(op->type, v);
        }
        return IRMutator::visit(op);
    }
    // A bool tensor's read is `T$x(...) != 0` (see tensor_read): it becomes the inlined bool
    // value. Any other `!=` (int32 `a != b`) is an ordinary comparison.
    Expr visit(const NE *op) override {
        if (auto *c = op->a.as<Call>(); c && c->type == Halide::UInt(8) && is_const_zero(op->b)) {
            Expr v = inline_value(c);
            if (v.defined()) return v.type().is_bool() ? v : NE::make(v, make_zero(v.type()));
        }
        return IRMutator::visit(op);
    }
    Expr visit(const Call *op) override {
        Expr v = inline_value(op);
        if (v.defined()) return v;
        if (is_tensor_read(op)) {
            const Stage &s = graph_.stage(tensor_of(op));
            std::vector<Expr> args;
            for (const auto &a : op->args) args.push_back(mutate(a));
            return Call::make(op->type, "buf$" + s.buffer, args, Call::PureExtern);
        }
        return IRMutator::visit(op);
    }
};

// The index of every call named `name` (a tensor read T$x or a buffer read buf$x) in `value`.
std::vector<std::vector<Expr>> indices_of_calls(const Expr &value, const std::string &name) {
    class Calls : public IRVisitor {
    public:
        std::string name;
        std::vector<std::vector<Expr>> indices;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->name == name) indices.push_back(op->args);
            IRVisitor::visit(op);
        }
    } calls;
    calls.name = name;
    value.accept(&calls);
    return calls.indices;
}

// Does `consumer` read `tensor` only at its own index (i0, i1, ... in order)?
bool reads_at_own_index(const Stage &consumer, const std::string &tensor) {
    for (const auto &index : indices_of_calls(consumer.value, kPrefix + tensor))
        for (size_t d = 0; d < index.size(); ++d) {
            const Variable *v = index[d].as<Variable>();
            if (!v || v->name != index_var(static_cast<int>(d))) return false;
        }
    return true;
}

// Does `writer` read `buffer` (the target it writes in place) only at the element it writes?
// Indices are compared after simplification within the writer's bounds (a reshape's flattened
// index of the same layout is the element itself); what cannot be proved counts as another
// element.
bool reads_only_own_elements(const Stage &writer, const std::string &buffer) {
    Scope<Interval> bounds;
    for (size_t d = 0; d < writer.shape.size(); ++d)
        bounds.push(index_var(static_cast<int>(d)), Interval(Expr(int64_t(0)), Expr(writer.shape[d] - 1)));
    for (const auto &index : indices_of_calls(writer.value, "buf$" + buffer)) {
        if (index.size() != writer.shape.size()) return false;
        for (size_t d = 0; d < index.size(); ++d)
            if (!is_const_zero(simplify(index[d] - index_expr(static_cast<int>(d)), true, bounds))) return false;
    }
    return true;
}

using Consumers = std::map<std::string, std::vector<const Stage *>>;

// materialize_and_inline: a value read again after a reduction over it is saved when computing
// it reads this many buffers of its size.
constexpr int kSavedValueMinBuffers = 3;
// ... or when it converts a float16 tensor of its size to float and the reduction has this many
// terms (shorter rows are converted once per row anyway: stage-float16 stages them whole).
constexpr int64_t kSavedFloat16RowMinTerms = 256;

// The stage where every use of `s` meets when its value flows there element by element: each
// stage on the way is an unmaterialized compute stage of s's shape that reads its producer only
// at its own index, and so is the meeting stage. GeLU's backward uses tanh(u) in two terms that
// meet in one product; inlined there, tanh is computed once per element of the product (CSE
// shares the copies), where materializing it stores it and reads it back. Null if there is none.
const Stage *elementwise_meeting_point(const TensorGraph &graph, const Stage &s, const Consumers &consumers) {
    std::set<int> pending; // stage positions, topological order
    auto add_consumers = [&](const Stage &producer) {
        auto it = consumers.find(producer.tensor);
        if (it == consumers.end()) return false;
        for (const Stage *c : it->second) {
            if (c->kind != StageKind::Compute || c->shape != s.shape || !reads_at_own_index(*c, producer.tensor)) return false;
            pending.insert(graph.stage_of_tensor.at(c->tensor));
        }
        return true;
    };
    if (!add_consumers(s)) return nullptr;
    while (pending.size() > 1) {
        const Stage &on_the_way = graph.stages[static_cast<size_t>(*pending.begin())];
        pending.erase(pending.begin());
        if (on_the_way.materialized || !add_consumers(on_the_way)) return nullptr;
    }
    return pending.empty() ? nullptr : &graph.stages[static_cast<size_t>(*pending.begin())];
}

using Producers = std::map<std::string, std::set<std::string>>;

// Calls `visit` once for every tensor that `start` reads, directly or through the tensors it
// reads; `visit` returns whether to follow that tensor's own reads.
template <typename Visit> void walk_reads(const Producers &producers, const std::string &start, Visit visit) {
    std::set<std::string> seen;
    std::vector<std::string> todo{start};
    while (!todo.empty()) {
        auto it = producers.find(todo.back());
        todo.pop_back();
        if (it == producers.end()) continue;
        for (const auto &p : it->second)
            if (seen.insert(p).second && visit(p)) todo.push_back(p);
    }
}

// Does `stage` read `ancestor`, directly or through the stages it reads?
bool reads_transitively(const Producers &producers, const std::string &stage, const std::string &ancestor) {
    bool found = false;
    walk_reads(producers, stage, [&](const std::string &p) {
        found |= p == ancestor;
        return !found;
    });
    return found;
}

// Is `s` read by a stage that also needs the result of a reduction over s? That reduction and
// that reader run as separate passes over s's elements (LayerNorm's mean, then the centered
// values), and an inlined s is recomputed in each. Returns the number of terms of the longest
// such reduction (0: none).
int64_t read_again_after_its_reduction(const TensorGraph &graph, const Stage &s, const Consumers &consumers, const Producers &producers) {
    auto it = consumers.find(s.tensor);
    int64_t terms = 0;
    if (it == consumers.end()) return terms;
    for (const Stage &r : graph.stages) {
        if (r.kind != StageKind::Reduce || !reads_transitively(producers, r.tensor, s.tensor)) continue;
        for (const Stage *c : it->second)
            if (c->tensor != r.tensor && reads_transitively(producers, c->tensor, r.tensor))
                terms = std::max(terms, element_count(r.reduce_extents));
    }
    return terms;
}

// The buffers of s's size (kernel inputs and materialized stages) that computing s reads,
// through the stages inlined into it.
int full_size_buffers_read(const TensorGraph &graph, const Stage &s, const std::set<std::string> &inlined, const Producers &producers) {
    int buffers = 0;
    walk_reads(producers, s.tensor, [&](const std::string &p) {
        auto it = graph.stage_of_tensor.find(p);
        if (it == graph.stage_of_tensor.end()) return false;
        if (inlined.count(p)) return true;
        if (element_count(graph.stages[static_cast<size_t>(it->second)].shape) == element_count(s.shape)) ++buffers;
        return false;
    });
    return buffers;
}

void reindex(TensorGraph &graph) {
    graph.stage_of_tensor.clear();
    for (size_t k = 0; k < graph.stages.size(); ++k) graph.stage_of_tensor[graph.stages[k].tensor] = static_cast<int>(k);
}

} // namespace

void materialize_and_inline(TensorGraph &graph, bool save_for_later_passes) {
    const CompositeKernel &kernel = *graph.kernel;
    // 1. Bind outputs. A stage that is output once writes the output buffer directly; inputs
    //    passed through, tensors listed twice and in-place values get a store stage.
    std::vector<Stage> stores;
    for (size_t k = 0; k < kernel.outputs.size(); ++k) {
        Stage &x = graph.stage(kernel.outputs[k].name);
        // Only when the output stores the value exactly: a float16 output rounds, and its
        // consumers must see the unrounded value (x^-0.5 cubed from a rounded x^-0.5 is three
        // float16 ulps off), so it gets a store stage and the value keeps float32.
        DType value_dtype = x.kind == StageKind::Reduce ? reduce_accumulator_dtype(x)
                            : scratch_dtype(x.value.defined() ? x.value.type() : compute_type(x.dtype));
        bool exact = value_dtype == kernel.outputs[k].dtype;
        if (x.kind != StageKind::Input && x.buffer_kind != BufferKind::KernelOutput && !x.inplace_write && exact) {
            x.materialized = true;
            x.buffer_kind = BufferKind::KernelOutput;
            x.buffer_index = static_cast<int>(k);
            continue;
        }
        Stage s;
        s.tensor = "output$" + std::to_string(k);
        s.kind = StageKind::Compute;
        s.shape = kernel.outputs[k].shape;
        s.dtype = kernel.outputs[k].dtype;
        std::vector<Expr> idx;
        Expr linear = Expr(int64_t(0));
        int64_t stride = 1;
        for (int d = static_cast<int>(s.shape.size()) - 1; d >= 0; --d) {
            linear = linear + index_expr(d) * Expr(stride);
            stride *= s.shape[d];
        }
        std::vector<Expr> args(x.shape.size());
        stride = 1;
        for (int d = static_cast<int>(x.shape.size()) - 1; d >= 0; --d) {
            args[d] = (linear / Expr(stride)) % Expr(x.shape[d]);
            stride *= x.shape[d];
        }
        s.value = tensor_read(x.tensor, x.dtype, args);
        s.materialized = true;
        s.buffer_kind = BufferKind::KernelOutput;
        s.buffer_index = static_cast<int>(k);
        stores.push_back(std::move(s));
    }
    // Stores read the tensors' values as the graph defines them, so they come before the
    // in-place writes, which are last.
    auto first_write = std::find_if(graph.stages.begin(), graph.stages.end(), [](const Stage &s) { return s.inplace_write; });
    graph.stages.insert(first_write, std::make_move_iterator(stores.begin()), std::make_move_iterator(stores.end()));
    reindex(graph);

    // 2. Consumers of each stage.
    Consumers consumers;
    std::map<std::string, bool> expensive, rounds;
    std::map<std::string, std::set<std::string>> widened;
    Producers producers;
    for (const auto &s : graph.stages) {
        if (s.kind == StageKind::Input) continue;
        ReadCollector rc;
        s.value.accept(&rc);
        expensive[s.tensor] = rc.expensive;
        rounds[s.tensor] = rc.rounds_to_float16;
        widened[s.tensor] = rc.widened;
        producers[s.tensor] = rc.tensors;
        for (const auto &t : rc.tensors) consumers[t].push_back(&s);
    }

    // 3. Decide.
    std::set<std::string> inlined;
    int scratch = 0;
    for (auto &s : graph.stages) {
        if (s.kind != StageKind::Compute) continue;
        // Expensive too when it will contain an expensive producer once that is inlined
        // (a cheap scale around an rsqrt must not carry the rsqrt into every element).
        for (const auto &p : producers[s.tensor]) {
            if (inlined.count(p) && expensive[p]) expensive[s.tensor] = true;
            if (inlined.count(p) && rounds[p]) rounds[s.tensor] = true;
        }
        const auto &cons = consumers[s.tensor];
        bool bigger_consumer = false, broadcast = !cons.empty();
        for (const Stage *c : cons) {
            int64_t domain = element_count(c->shape) * element_count(c->reduce_extents);
            if (domain > element_count(s.shape)) bigger_consumer = true;
            if (domain < kBroadcastReuse * element_count(s.shape)) broadcast = false;
        }
        // A rounding to float16 costs some ten vector operations per element (akg_round_f16):
        // a float32 parameter cast to float16 and broadcast over a much larger tensor (a bias
        // added to every row) is rounded once, into a float scratch buffer, instead of at every
        // element it meets.
        bool reused_expensive = expensive[s.tensor] && (cons.size() > 1 || bigger_consumer);
        if (reused_expensive && !bigger_consumer && !s.materialized && elementwise_meeting_point(graph, s, consumers)) reused_expensive = false;
        bool keep_for_reuse = reused_expensive || (rounds[s.tensor] && broadcast);
        // A value of three or more buffers of its size, read by a reduction and again by the
        // passes that need the reduction's result (a float16 residual sum feeding a LayerNorm:
        // three tensors, three float16 conversions, a dropout mask and three adds, in each of
        // three passes), is computed once into float scratch; promote makes that a buffer of
        // one row. Recomputing reads the tensors again in every pass, the buffer one row from
        // L1. Measured: three tensors 1.15x faster; two (the softmax gradient's dropout product)
        // 2% slower, so they are recomputed, as is a value of one such tensor and per-row or
        // per-column values (LayerNorm's centered x - mean: one subtraction). A value bound to an
        // output that stores it exactly is read back from the output instead (below).
        bool reads_several = producers[s.tensor].size() >= 2;
        if (!s.materialized && save_for_later_passes) {
            // The cheap tests first: the reduction's is a walk of the graph for each reduction.
            bool many_buffers = full_size_buffers_read(graph, s, inlined, producers) >= kSavedValueMinBuffers;
            bool converts_input = std::any_of(widened[s.tensor].begin(), widened[s.tensor].end(), [&](const std::string &t) {
                const Stage &read = graph.stage(t);
                return read.kind == StageKind::Input && element_count(read.shape) == element_count(s.shape);
            });
            int64_t terms = many_buffers || converts_input ? read_again_after_its_reduction(graph, s, consumers, producers) : 0;
            if ((many_buffers && terms > 0) || (converts_input && terms >= kSavedFloat16RowMinTerms))
                keep_for_reuse = s.saved_for_later_passes = true;
        }
        if (s.materialized) {
            // Bound to an output (which stores the value exactly): consumers recompute it when
            // it is cheap and reads at most one tensor, and read it back otherwise; a residual
            // sum of three tensors feeding a LayerNorm is read back from its output instead of
            // being recomputed from all three in each of the LayerNorm's passes.
            if (!keep_for_reuse && !reads_several && !s.inplace_write) inlined.insert(s.tensor);
            continue;
        }
        if (keep_for_reuse) {
            s.materialized = true;
            s.buffer_kind = BufferKind::Scratch;
            s.buffer_index = scratch++;
        } else {
            inlined.insert(s.tensor);
        }
    }
    for (auto &s : graph.stages) {
        if (s.kind == StageKind::Reduce) {
            s.buffer_kind = s.buffer_kind == BufferKind::KernelOutput ? s.buffer_kind : BufferKind::Scratch;
            if (s.buffer_kind == BufferKind::Scratch) s.buffer_index = scratch++;
        }
        if (!s.materialized) continue;
        switch (s.buffer_kind) {
        case BufferKind::KernelInput: s.buffer = "in" + std::to_string(s.buffer_index); break;
        case BufferKind::KernelOutput: s.buffer = "out" + std::to_string(s.buffer_index); break;
        case BufferKind::Scratch: s.buffer = "t" + std::to_string(s.buffer_index); break;
        }
    }

    // 4. Inline, in topological order so that producers are final before consumers use them.
    //    Inlined stages are rewritten too, since later consumers substitute their values.
    Inliner inliner(graph, inlined);
    for (auto &s : graph.stages)
        if (s.kind != StageKind::Input) s.value = inliner.mutate(s.value);

    // 5. Every read of a kernel input means its value on entry. An in-place write must
    //    therefore follow every statement that reads its target: order the writes so that a
    //    write reading input X precedes the write into X.
    std::vector<Stage> writes;
    while (!graph.stages.empty() && graph.stages.back().inplace_write) {
        writes.insert(writes.begin(), std::move(graph.stages.back()));
        graph.stages.pop_back();
    }
    auto reads_buffer = [](const Stage &s, const std::string &buffer) { return !indices_of_calls(s.value, "buf$" + buffer).empty(); };
    // A value computed into scratch before any write; the write then copies it.
    auto save_first = [&](Stage &w) {
        Stage saved;
        saved.tensor = "saved$" + w.tensor;
        saved.kind = StageKind::Compute;
        saved.shape = w.shape;
        saved.dtype = scratch_dtype(w.value.type());
        saved.value = w.value;
        saved.materialized = true;
        saved.buffer_kind = BufferKind::Scratch;
        saved.buffer_index = scratch++;
        saved.buffer = "t" + std::to_string(saved.buffer_index);
        std::vector<Expr> args;
        for (size_t d = 0; d < w.shape.size(); ++d) args.push_back(index_expr(static_cast<int>(d)));
        w.value = Call::make(w.value.type(), "buf$" + saved.buffer, args, Call::PureExtern);
        graph.stages.push_back(std::move(saved));
    };
    // A write that reads its own target at other elements (x = transpose(x) in place) would
    // overwrite elements it has yet to read: its value goes through scratch. Reading each
    // element where it writes it (x = x * m + g) is safe.
    for (Stage &w : writes)
        if (!reads_only_own_elements(w, w.buffer)) save_first(w);
    while (!writes.empty()) {
        size_t pick = writes.size();
        for (size_t a = 0; a < writes.size() && pick == writes.size(); ++a) {
            bool blocked = false;
            for (size_t b = 0; b < writes.size(); ++b)
                if (b != a && reads_buffer(writes[b], writes[a].buffer)) blocked = true;
            if (!blocked) pick = a;
        }
        if (pick == writes.size()) {
            // A cycle (momentum: the weight update reads the old accumulator, the accumulator
            // update reads the old weight): compute one value into scratch before any write.
            save_first(writes.front());
            continue;
        }
        graph.stages.push_back(std::move(writes[pick]));
        writes.erase(writes.begin() + static_cast<long>(pick));
    }
    reindex(graph);
}

std::vector<const Stage *> materialized_stages(const TensorGraph &graph) {
    std::vector<const Stage *> out;
    for (const auto &s : graph.stages)
        if (s.materialized && s.kind != StageKind::Input) out.push_back(&s);
    return out;
}

} // namespace akg
