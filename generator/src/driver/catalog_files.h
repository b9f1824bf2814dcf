#pragma once
#include <string>
#include <vector>

#include "frontend/composite_kernel.h"
#include "target/target.h"

namespace akg {

struct CatalogEntry {
    std::string name;   // registered kernel name
    std::string symbol; // C identifier used in symbols
    CompositeKernel kernel;
};

// The C identifier of one variant of a kernel: its function is akg_kernel_fn_<variant symbol>.
std::string variant_symbol(const std::string &symbol, const Target &target);

// generated/akg_catalog.cpp: each kernel's descriptor (its tensors and its variants, one per
// target, best first, each under `#if defined(AKG_HAS_VARIANT_<SUFFIX>)` so that one file
// serves every set of variants a build compiles), the table `<table_name>_kernels[]` /
// `<table_name>_kernel_count`, and, when `typed_entry_points`, one typed C entry point per
// kernel (declared in akg_catalog.h).
std::string emit_catalog_cpp(const std::vector<CatalogEntry> &entries, const std::string &table_name,
                             bool typed_entry_points, const std::vector<const Target *> &targets);
std::string emit_catalog_header(const std::vector<CatalogEntry> &entries);
// The macro a build defines when it compiles the variants of `target` (AKG_HAS_VARIANT_X86_64_V4).
std::string variant_macro(const Target &target);
// generated/targets.txt: one line per target, `name arch symbol-suffix flag...`, read by
// kernellib/meson.build, so that the compiler flags of a variant are stated only in target.cpp.
std::string emit_targets_list(const std::vector<const Target *> &targets);

// Writes `content` to `path` unless the file already holds exactly that (so that unchanged
// kernels are not recompiled); writes a temporary file and renames it, so that an interrupted
// run never leaves a half-written file. Returns true when the file changed.
bool write_if_changed(const std::string &path, const std::string &content);

// Writes a set of files, all or nothing: every file whose content changes is first written to
// its own temporary file next to it; only when all of them are written is each renamed over its
// target (rename is atomic, so a reader sees the old or the new file, never a mix). Any failure
// before the renames removes the temporary files and throws UserError with every target as it
// was. Temporary names are unique per process and call (<path>.tmp.<pid>.<n>), so that several
// generators writing the same folder at once each leave complete files (identical inputs give
// identical results); SIGINT/SIGTERM/SIGHUP remove this process's temporary files. Returns the
// number of files that changed.
size_t write_files_if_changed(const std::vector<std::pair<std::string, std::string>> &files);

// A fresh temporary name next to `path` (<path>.tmp.<pid>.<n>), registered for removal when the
// process is interrupted by SIGINT/SIGTERM/SIGHUP; release_temp_name() after renaming/removing it.
std::string make_temp_name(const std::string &path);
void release_temp_name(const std::string &temp);

std::string sanitize_identifier(const std::string &name);

} // namespace akg
