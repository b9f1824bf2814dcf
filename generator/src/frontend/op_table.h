// The ops the front end knows: those it compiles, grouped as the README lists them, and those
// it rejects on purpose with the reason (docs/OPS.md has the semantics of each).
#pragma once

#include <string>
#include <vector>

namespace akg {

struct OpGroup {
    const char *title; // "Element-wise arithmetic"
    std::vector<const char *> ops;
};

struct UnsupportedOp {
    const char *name;
    const char *reason; // one sentence: why a CPU kernel library does not compile it
};

const std::vector<OpGroup> &supported_op_groups();
const std::vector<UnsupportedOp> &unsupported_ops();

bool is_supported_op(const std::string &name);
// The reason an op is rejected on purpose, or nullptr for an op nobody has heard of.
const char *unsupported_reason(const std::string &name);

// The text `akg-gen ops` prints (and the README quotes).
std::string op_list_text();

} // namespace akg
