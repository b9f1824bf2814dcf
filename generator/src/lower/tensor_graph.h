// The formula IR: every tensor of the kernel as a Halide expression over its loop indices.
//
// A Compute stage's value is an expression over index variables i0..i{rank-1} (Int64).
// A Reduce stage's body is an expression over i0.. (the output dimensions) and r0.. (the
// reduced extents); the stage is the reduction of the body over r.
// Tensor reads are Halide Calls of type PureExtern whose name is the tensor (later: the
// buffer) and whose arguments are the per-dimension indices.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <Halide.h>

#include "frontend/composite_kernel.h"

namespace akg {

enum class ReduceKind { Sum, Max, Min, Prod };

enum class StageKind { Input, Compute, Reduce };

// Where a materialized stage's values live.
enum class BufferKind { KernelInput, KernelOutput, Scratch };

struct Stage {
    std::string tensor; // tensor_name from the JSON (or a synthesized name)
    StageKind kind = StageKind::Compute;
    Shape shape;
    DType dtype = DType::Float32; // declared dtype

    Halide::Expr value; // Compute: the value; Reduce: the body
    ReduceKind reduce_kind = ReduceKind::Sum;
    Shape reduce_extents; // Reduce: extents of r0..
    // Max/Min reductions: a NaN operand cannot change any result, so the ordered max/min may
    // drop it (set by mark_nan_dominated_extrema).
    bool ignores_nan = false;
    // A MatMul/BatchMatMul: a float32 sum over r0 of lhs * rhs, where lhs reads (batch, i_m, r0)
    // and rhs (batch, r0, i_n), i_m and i_n being the last two output dimensions. The GEMM
    // path schedules it (poly/contraction.h); its value is Mul(lhs, rhs).
    bool contraction = false;

    // Set by the materialization pass.
    bool materialized = false;
    BufferKind buffer_kind = BufferKind::Scratch;
    int buffer_index = -1;  // kernel input / output index, or scratch index
    std::string buffer;     // name of the C++ buffer it is stored in
    bool inplace_write = false; // stores into a kernel input (InplaceAssign/Assign)
    // Set by materialize: computed once because later passes over the same elements (after a
    // reduction over them) would each recompute it (see read_again_after_its_reduction).
    bool saved_for_later_passes = false;
};

struct TensorGraph {
    const CompositeKernel *kernel = nullptr;
    std::vector<Stage> stages; // topological order
    std::map<std::string, int> stage_of_tensor;

    Stage &stage(const std::string &tensor) { return stages.at(stage_of_tensor.at(tensor)); }
};

// Names of index variables.
std::string index_var(int d);  // "i<d>"
std::string reduce_var(int d); // "r<d>"
Halide::Expr index_expr(int d);
Halide::Expr reduce_expr(int d);

// Whether reduction `s` reads some buffer with a reduction variable in its innermost index: a
// row reduction (softmax, LayerNorm), whose kept dimensions are outer loops, as opposed to a
// column reduction (bias gradients), whose innermost loop runs over kept elements.
bool reduces_along_rows(const Stage &s);

// The compute type of a storage dtype: float16/float32 → Float(32), int32 → Int(32), bool → Bool.
Halide::Type compute_type(DType t);
// Storage type of a scratch buffer holding a value of the given compute type.
DType scratch_dtype(Halide::Type t);

// A consumer with this many times the elements of a stage reads each element this many times
// on average: a broadcast worth computing once (materialize, and the schedule's broadcast
// operands).
constexpr int64_t kBroadcastReuse = 64;

// The dtype of the buffer a reduction accumulates into: float64 for float data, else the
// compute type's scratch dtype.
DType reduce_accumulator_dtype(const Stage &s);

// A read of tensor `name` (stored as `dtype`) at `index`, converted to its compute type.
Halide::Expr tensor_read(const std::string &name, DType dtype, const std::vector<Halide::Expr> &index);
// Is `call` a tensor read made by tensor_read (as opposed to a math function)?
bool is_tensor_read(const Halide::Internal::Call *call);
// x when `value` is x rounded to float16 (Cast(f32, Cast(f16, x)) with x float32), else undefined.
Halide::Expr float16_rounded_operand(const Halide::Expr &value);
// `e` without the float-to-float casts around it (a read of a float16 or float64 buffer as float32).
Halide::Expr strip_float_casts(Halide::Expr e);
// The range of each of a stage's index variables (i0.. over its shape, r0.. over its reduced
// extents), for Halide's bounds queries and simplifier.
void push_stage_bounds(const Stage &s, Halide::Internal::Scope<Halide::Internal::Interval> &bounds);

// Math functions are PureExtern calls to these names; the emitted code defines them (akg_vmath.h).
bool is_math_function(const std::string &name);
bool is_expensive_math(const std::string &name);

std::string print_expr(const Halide::Expr &e);

} // namespace akg
