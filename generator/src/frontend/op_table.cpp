#include "frontend/op_table.h"

#include <sstream>

namespace akg {

const std::vector<OpGroup> &supported_op_groups() {
    static const std::vector<OpGroup> groups = {
        {"Arithmetic", {"Add", "TensorAdd", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Mod", "FloorMod", "Neg", "Abs", "Sign",
                        "Reciprocal", "Maximum", "Minimum", "AddN", "AddMinValue", "Round", "Floor", "ZerosLike"}},
        {"Math functions", {"Exp", "Expm1", "Log", "Sqrt", "Rsqrt", "Pow", "Tanh", "Erf", "Sin", "Cos", "Asin", "ACos", "Atan",
                            "Atan2", "Asinh", "Acosh", "FastGeLU"}},
        {"Comparisons and logic", {"Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual", "IsNan", "IsInf", "IsFinite",
                                   "LogicalAnd", "LogicalOr", "LogicalNot", "Select", "SelectGE", "SelectGT", "SelectLE", "SelectLT",
                                   "Cast"}},
        {"Reductions and scans", {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "Argmax", "Argmin", "ElemAny", "ElemAll",
                                  "CumSum", "CumProd"}},
        {"Layout and shape", {"Reshape", "ExpandDims", "Transpose", "BroadcastTo", "Tile", "StridedSlice", "Concat", "PadAkg",
                              "UnPadAkg", "OneHot", "EquivFormat", "TransData"}},
        {"Data-dependent indexing", {"Gather", "GatherNd", "TensorScatterAdd", "UnsortedSegmentSum"}},
        {"Pooling", {"Pool2D", "GlobalPool2D"}},
        {"Contractions", {"MatMul", "BatchMatMul"}},
        {"In-place updates", {"InplaceAssign", "Assign"}},
    };
    return groups;
}

const std::vector<UnsupportedOp> &unsupported_ops() {
    static const std::vector<UnsupportedOp> ops = {
        {"Conv2D", "planned next, on the MatMul micro-kernels"},
        {"Custom", "runs user Python (hybrid or ir_builder) inside AKG, not a composite op a C++ generator can compile"},
        {"CSRDiv", "sparse CSR tensors are outside a dense kernel library"},
        {"CSRMul", "sparse CSR tensors are outside a dense kernel library"},
        {"CSRMV", "sparse CSR tensors are outside a dense kernel library"},
        {"CSRMM", "sparse CSR tensors are outside a dense kernel library"},
        {"CSRReduceSum", "sparse CSR tensors are outside a dense kernel library"},
        {"CSRGather", "sparse CSR tensors are outside a dense kernel library"},
        {"CSR2COO", "sparse CSR tensors are outside a dense kernel library"},
        {"COO2CSR", "sparse CSR tensors are outside a dense kernel library"},
        {"Complex", "complex dtypes are not supported"},
        {"CReal", "complex dtypes are not supported"},
        {"CImag", "complex dtypes are not supported"},
        {"StandardNormal", "random ops need generator state and cannot be checked against a reference"},
        {"UniformReal", "random ops need generator state and cannot be checked against a reference"},
        {"UniformInt", "random ops need generator state and cannot be checked against a reference"},
        {"RandomChoiceWithMask", "random ops need generator state and cannot be checked against a reference"},
        {"LayoutTransform", "converts to Ascend or NCHWc blocked layouts, which the CPU kernels do not use"},
        {"CudaBatchMatMul", "a CUDA tensor-core variant; write BatchMatMul"},
    };
    return ops;
}

bool is_supported_op(const std::string &name) {
    for (const auto &g : supported_op_groups())
        for (const char *op : g.ops)
            if (name == op) return true;
    return false;
}

const char *unsupported_reason(const std::string &name) {
    for (const auto &u : unsupported_ops())
        if (name == u.name) return u.reason;
    return nullptr;
}

std::string op_list_text() {
    std::ostringstream os;
    os << "Supported ops (semantics: docs/OPS.md and ../shared/docs/MISSION.md):\n";
    for (const auto &g : supported_op_groups()) {
        os << "  " << g.title << ":";
        for (const char *op : g.ops) os << " " << op;
        os << "\n";
    }
    os << "Rejected with a reason:\n";
    const auto &rejected = unsupported_ops();
    for (size_t i = 0; i < rejected.size();) {
        size_t j = i;
        os << "  ";
        for (; j < rejected.size() && std::string(rejected[j].reason) == rejected[i].reason; ++j) os << (j > i ? ", " : "") << rejected[j].name;
        os << ": " << rejected[i].reason << "\n";
        i = j;
    }
    return os.str();
}

} // namespace akg
