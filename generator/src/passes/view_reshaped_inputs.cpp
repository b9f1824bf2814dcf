#include "passes/view_reshaped_inputs.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace akg {

using namespace Halide::Internal;

namespace {

// Adds scale * e to `terms` (coefficients by variable) and `constant` when e is affine in
// variables with integer coefficients; false otherwise (a division, a remainder, a min).
bool collect_terms(const Halide::Expr &e, int64_t scale, std::map<std::string, int64_t> &terms, int64_t &constant) {
    if (const IntImm *c = e.as<IntImm>()) {
        constant += scale * c->value;
        return true;
    }
    if (const Variable *v = e.as<Variable>()) {
        terms[v->name] += scale;
        return true;
    }
    if (const Add *a = e.as<Add>()) return collect_terms(a->a, scale, terms, constant) && collect_terms(a->b, scale, terms, constant);
    if (const Sub *s = e.as<Sub>()) return collect_terms(s->a, scale, terms, constant) && collect_terms(s->b, -scale, terms, constant);
    if (const Mul *m = e.as<Mul>()) {
        if (const IntImm *c = m->b.as<IntImm>()) return collect_terms(m->a, scale * c->value, terms, constant);
        if (const IntImm *c = m->a.as<IntImm>()) return collect_terms(m->b, scale * c->value, terms, constant);
    }
    return false;
}

// The extent of each loop variable of a stage: its output dimensions, then its reduced ones.
std::map<std::string, int64_t> variable_extents(const Stage &s) {
    std::map<std::string, int64_t> extents;
    for (size_t d = 0; d < s.shape.size(); ++d) extents[index_var(static_cast<int>(d))] = s.shape[d];
    if (s.kind == StageKind::Reduce)
        for (size_t k = 0; k < s.reduce_extents.size(); ++k) extents[reduce_var(static_cast<int>(k))] = s.reduce_extents[k];
    return extents;
}

struct View {
    Shape shape;
    std::vector<Halide::Expr> index;
};

// The view of a buffer of `elements` elements in which the read at row-major offset `offset`
// (simplified) is a plain index: a dense row-major walk of the stage's loop variables.
std::optional<View> dense_view(const Halide::Expr &offset, const std::map<std::string, int64_t> &extents, int64_t elements) {
    std::map<std::string, int64_t> terms;
    int64_t constant = 0;
    if (!collect_terms(offset, 1, terms, constant) || constant != 0) return std::nullopt;
    std::vector<std::pair<int64_t, std::string>> walk; // (coefficient, variable), outermost first
    for (const auto &[var, coefficient] : terms) {
        if (coefficient == 0) continue;
        if (coefficient < 0 || !extents.count(var)) return std::nullopt;
        if (extents.at(var) > 1) walk.emplace_back(coefficient, var); // a variable of extent 1 is always 0
    }
    if (walk.empty()) return std::nullopt;
    // Equal coefficients cannot both be in a dense walk (the outer one would need an extent of 1).
    std::stable_sort(walk.begin(), walk.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    if (walk.back().first != 1 || elements % walk.front().first != 0) return std::nullopt;
    for (size_t k = 0; k + 1 < walk.size(); ++k)
        if (walk[k].first != walk[k + 1].first * extents.at(walk[k + 1].second)) return std::nullopt;
    View view;
    view.shape.push_back(elements / walk.front().first);
    for (size_t k = 1; k < walk.size(); ++k) view.shape.push_back(extents.at(walk[k].second));
    for (const auto &[coefficient, var] : walk) view.index.push_back(Variable::make(Halide::Int(64), var));
    return view;
}

std::vector<int64_t> row_major_strides(const Shape &shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
    return strides;
}

// Whether `e` lies in [0, n) over the loop bounds.
bool within(const Halide::Expr &e, int64_t n, const Scope<Interval> &bounds) {
    Interval range = bounds_of_expr_in_scope(e, bounds);
    if (!range.has_lower_bound() || !range.has_upper_bound()) return false;
    // as_const_int points into its Expr: keep the simplified bounds alive while reading them.
    const Halide::Expr lower = simplify(range.min), upper = simplify(range.max);
    const int64_t *lo = as_const_int(lower), *hi = as_const_int(upper);
    return lo && hi && *lo >= 0 && *hi < n;
}

// The row-major offset of the read at `index` of a buffer of `shape`. A reshape's read (the
// lowering's read_linear, as materialize leaves it) indexes each dimension d with (L / stride_d)
// % shape_d of one linear position L: when L lies in [0, elements), their offset is L itself,
// which Halide's simplifier would not find from the sum of the terms (it leaves
// (768 r0 + i0) / 98304 undivided). A broadcast inlined below a reshape reads with the same
// pattern a position L that runs past the buffer (x[L % 11] for L in [0, 99)): the remainders
// are not redundant there. Any other index: the sum of index times stride.
Halide::Expr row_major_offset(const std::vector<Halide::Expr> &index, const Shape &shape, const std::vector<int64_t> &strides,
                              const Scope<Interval> &bounds) {
    Halide::Expr linear;
    bool reshape = true;
    for (size_t d = 0; d < index.size() && reshape; ++d) {
        if (shape[d] == 1) {
            reshape = is_const_zero(index[d]);
            continue;
        }
        const Mod *mod = index[d].as<Mod>();
        const Div *div = mod ? mod->a.as<Div>() : nullptr;
        reshape = div && is_const(mod->b, shape[d]) && is_const(div->b, strides[d]) && (!linear.defined() || equal(linear, div->a));
        if (reshape) linear = div->a;
    }
    if (reshape && linear.defined() && within(linear, element_count(shape), bounds)) return linear;
    Halide::Expr offset = Halide::Expr(int64_t{0});
    for (size_t d = 0; d < index.size(); ++d) offset = offset + index[d] * Halide::Expr(strides[d]);
    return offset;
}

// Every read of `name` in a stage's value, by the pointer of its Call node.
class ReadsOf : public IRVisitor {
public:
    explicit ReadsOf(std::string name) : name_(std::move(name)) {}
    std::vector<const Call *> reads;

private:
    using IRVisitor::visit;
    const std::string name_;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->name == name_) reads.push_back(op);
    }
};

class ReplaceReads : public IRMutator {
public:
    ReplaceReads(std::string name, const std::map<const Call *, std::vector<Halide::Expr>> &index) : name_(std::move(name)), index_(index) {}

private:
    using IRMutator::visit;
    const std::string name_;
    const std::map<const Call *, std::vector<Halide::Expr>> &index_;
    Halide::Expr visit(const Call *op) override {
        if (op->name == name_) {
            auto found = index_.find(op);
            if (found != index_.end()) return Call::make(op->type, op->name, found->second, op->call_type);
        }
        return IRMutator::visit(op);
    }
};

void view_input(TensorGraph &graph, Stage &input) {
    const std::string call = "buf$" + input.buffer;
    const int64_t elements = element_count(input.shape);
    const std::vector<int64_t> strides = row_major_strides(input.shape);
    std::optional<Shape> agreed;
    std::map<const Stage *, std::map<const Call *, std::vector<Halide::Expr>>> rewrites;
    for (const auto &s : graph.stages) {
        if (s.kind == StageKind::Input || !s.value.defined()) continue; // inlined stages too: the dumps show them
        if (s.inplace_write && s.buffer == input.buffer) return; // written in place: its writes keep the shape
        ReadsOf reads(call);
        s.value.accept(&reads);
        if (reads.reads.empty()) continue;
        Scope<Interval> bounds;
        push_stage_bounds(s, bounds);
        const auto extents = variable_extents(s);
        for (const Call *read : reads.reads) {
            if (read->args.size() != input.shape.size()) return;
            std::optional<View> view = dense_view(simplify(row_major_offset(read->args, input.shape, strides, bounds), true, bounds), extents, elements);
            if (!view || (agreed && *agreed != view->shape)) return;
            agreed = view->shape;
            rewrites[&s][read] = view->index;
        }
    }
    if (!agreed || *agreed == input.shape) return;
    for (auto &s : graph.stages)
        if (auto found = rewrites.find(&s); found != rewrites.end()) s.value = ReplaceReads(call, found->second).mutate(s.value);
    input.shape = *agreed;
}

// A kernel output whose value only copies another buffer through a reshape (a [16000, 39, 80]
// product returned a second time as [16000, 3120]) reads that buffer with the reshape's
// divisions and remainders; isl fused the copy with its producer under a skewed schedule whose
// loops did not vectorize (5 GB/s). When nothing reads the copy, it iterates over the source's
// shape instead and reads it at the same indices: its buffer is written in the same row-major
// order, viewed with that shape.
void copy_in_source_shape(TensorGraph &graph, Stage &copy) {
    if (copy.kind != StageKind::Compute || !copy.materialized || copy.buffer_kind != BufferKind::KernelOutput || copy.inplace_write ||
        !copy.value.defined())
        return;
    Halide::Expr inner = copy.value;
    while (const Cast *cast = inner.as<Cast>()) inner = cast->value;
    const Call *read = inner.as<Call>();
    if (!read || read->name.rfind("buf$", 0) != 0) return;
    const std::string source_buffer = read->name.substr(4);
    const Stage *source = nullptr;
    for (const auto &s : graph.stages)
        if (s.materialized && s.buffer == source_buffer) source = &s;
    if (!source || source == &copy || source->shape == copy.shape || read->args.size() != source->shape.size() ||
        element_count(source->shape) != element_count(copy.shape))
        return;
    Scope<Interval> bounds;
    push_stage_bounds(copy, bounds);
    std::optional<View> walk = dense_view(simplify(row_major_offset(read->args, source->shape, row_major_strides(source->shape), bounds), true, bounds),
                                          variable_extents(copy), element_count(copy.shape));
    if (!walk || walk->shape != copy.shape) return; // not the copy's own row-major walk
    for (size_t d = 0; d < walk->index.size(); ++d)
        if (!equal(walk->index[d], index_expr(static_cast<int>(d)))) return;
    for (const auto &s : graph.stages) {
        if (&s == &copy || !s.value.defined()) continue;
        ReadsOf reads_of_copy("buf$" + copy.buffer);
        s.value.accept(&reads_of_copy);
        if (!reads_of_copy.reads.empty()) return;
    }
    std::vector<Halide::Expr> same_element;
    for (size_t d = 0; d < source->shape.size(); ++d) same_element.push_back(index_expr(static_cast<int>(d)));
    const std::map<const Call *, std::vector<Halide::Expr>> rewrite = {{read, same_element}};
    copy.value = ReplaceReads(read->name, rewrite).mutate(copy.value);
    copy.shape = source->shape;
}

} // namespace

void view_reshaped_inputs(TensorGraph &graph) {
    for (auto &s : graph.stages)
        if (s.kind == StageKind::Input && s.materialized && s.buffer_kind == BufferKind::KernelInput) view_input(graph, s);
    for (auto &s : graph.stages) copy_in_source_shape(graph, s);
}

} // namespace akg
