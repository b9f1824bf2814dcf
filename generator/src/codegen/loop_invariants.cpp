// Loop-invariant subexpressions: what they depend on (see loop_invariants.h).
#include "codegen/loop_invariants.h"

namespace akg {

using namespace Halide::Internal;

namespace {

bool is_buffer_read(const Call *op) { return op->name.rfind("buf$", 0) == 0; }

class FindCost : public IRVisitor {
public:
    bool found = false;

private:
    using IRVisitor::visit;
    void visit(const Cast *op) override {
        found |= op->type.is_float() && op->type.bits() == 16;
        found |= op->value.type().is_float() && op->value.type().bits() == 16 && op->type.is_float();
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        found |= !is_buffer_read(op) && !op->is_intrinsic();
        IRVisitor::visit(op);
    }
};

class CollectUses : public IRVisitor {
public:
    explicit CollectUses(const std::map<std::string, Halide::Expr> &index_vars) : index_vars_(index_vars) {}
    InvariantUse use{true, {}, {}};

private:
    const std::map<std::string, Halide::Expr> &index_vars_;
    using IRVisitor::visit;

    void iterators_of(const Halide::Expr &e) {
        class Names : public IRVisitor {
        public:
            std::set<std::string> *names;
            using IRVisitor::visit;
            void visit(const Variable *op) override { names->insert(op->name); }
        } names;
        names.names = &use.iterators;
        e.accept(&names);
    }
    void visit(const Variable *op) override {
        auto found = index_vars_.find(op->name);
        if (found == index_vars_.end()) use.hoistable = false;
        else iterators_of(found->second);
    }
    void visit(const Let *) override { use.hoistable = false; }
    void visit(const Call *op) override {
        if (is_buffer_read(op)) {
            InvariantUse::Read read{op->name.substr(4), {}};
            for (const auto &a : op->args) read.index.push_back(substitute(index_vars_, a));
            use.reads.push_back(std::move(read));
        }
        IRVisitor::visit(op);
    }
    void visit(const Cast *op) override {
        if (!op->type.is_float() && op->value.type().is_float()) use.hoistable = false;
        IRVisitor::visit(op);
    }
    void division(const Halide::Type &t, const Halide::Expr &divisor) {
        if (t.is_float()) return;
        const int64_t *c = as_const_int(divisor);
        const uint64_t *u = as_const_uint(divisor);
        if (!(c && *c != 0 && *c != -1) && !(u && *u != 0)) use.hoistable = false;
    }
    void visit(const Div *op) override {
        division(op->type, op->b);
        IRVisitor::visit(op);
    }
    void visit(const Mod *op) override {
        division(op->type, op->b);
        IRVisitor::visit(op);
    }
};

} // namespace

bool worth_hoisting(const Halide::Expr &e) {
    FindCost cost;
    e.accept(&cost);
    return cost.found;
}

InvariantUse analyze_invariant(const Halide::Expr &e, const std::map<std::string, Halide::Expr> &index_vars) {
    CollectUses uses(index_vars);
    e.accept(&uses);
    return uses.use;
}

} // namespace akg
