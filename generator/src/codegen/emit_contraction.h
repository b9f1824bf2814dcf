#pragma once
#include <isl/ast.h>

#include "codegen/emit_cpp.h"

namespace akg {

// isl's AST of a GEMM part's schedule (tile-contraction), each micro_kernel mark annotated
// with the first and last product of its tile.
isl_ast_node *build_contraction_ast(const PolyModel &model);

// The C++ of a GEMM part's variant (emit_contraction.cpp): the same frame and entry point
// as emit_kernel_cpp's.
std::string emit_contraction_cpp(const PolyModel &model, isl_ast_node *ast, const CompositeKernel &kernel, const EmitOptions &options);

} // namespace akg
