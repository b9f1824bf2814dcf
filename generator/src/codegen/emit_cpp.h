#pragma once
#include <isl/ast.h>

#include "poly/poly_model.h"

namespace akg {

struct EmitOptions {
    std::string kernel_name;   // registered name (the pattern's file stem or the JSON op)
    std::string symbol;        // C identifier of this variant: akg_kernel_fn_<symbol>, akg_<symbol>_*
    std::string target_name;   // the target this variant is generated for (the banner)
    std::string pattern_file;  // for the banner and the descriptor, relative to the project
    std::string generator_version;
};

// Prints C++ for one variant of the kernel from isl's AST: the kernel function and one static
// function per parallel loop body (GCC drops __restrict when it outlines an OpenMP region, so
// the body gets its own __restrict parameters). The descriptor is the catalog's.
std::string emit_kernel_cpp(const PolyModel &model, isl_ast_node *ast, const CompositeKernel &kernel,
                            const EmitOptions &options);

// A Halide expression as C++ (used by the emitter and by IR dumps).
std::string expr_to_cpp(const Halide::Expr &e, const PolyModel *model);

isl_ast_node *build_ast(const PolyModel &model);

} // namespace akg
