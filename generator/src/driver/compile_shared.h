#pragma once
#include "target/target.h"
#include <string>
#include <vector>

#include "driver/catalog_files.h"

namespace akg {

// Where the C ABI's headers and runtime live, and how kernels are compiled: the same flags as
// libakgkernels (set at build time; AKG_KERNELLIB_DIR, CXX, CC and AKG_KERNEL_CXXFLAGS in the
// environment override them).
struct Toolchain {
    std::string cxx = "c++";
    std::string cc = "cc";
    std::string kernellib_dir;
    std::string kernel_flags;
    int jobs = 2;
    static Toolchain from_environment();
};

// A set of generated kernels with their dispatch table, compiled and linked into one shared
// object that exports the library's C ABI over just these kernels. `sources` are (file name,
// content) pairs written into `work_dir`. Writes `output` through a temporary file and a
// rename, so a failure never leaves a half-written library. Throws UserError with the
// compiler's message on failure.
void compile_shared_object(const std::vector<std::pair<std::string, std::string>> &sources, const std::string &work_dir,
                           const std::string &output, const Toolchain &toolchain, const Target &target);

} // namespace akg
