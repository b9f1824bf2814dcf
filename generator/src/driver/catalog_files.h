#pragma once
#include <string>
#include <vector>

#include "frontend/composite_kernel.h"

namespace akg {

struct CatalogEntry {
    std::string name;   // registered kernel name
    std::string symbol; // C identifier used in symbols
    CompositeKernel kernel;
};

// generated/akg_catalog.cpp: the table `<table_name>_kernels[]` / `<table_name>_kernel_count`, and, when
// `typed_entry_points`, one typed C entry point per kernel (declared in akg_catalog.h).
std::string emit_catalog_cpp(const std::vector<CatalogEntry> &entries, const std::string &table_name,
                             bool typed_entry_points);
std::string emit_catalog_header(const std::vector<CatalogEntry> &entries);

// Writes `content` to `path` unless the file already holds exactly that (so that unchanged
// kernels are not recompiled); writes a temporary file and renames it, so that an interrupted
// run never leaves a half-written file. Returns true when the file changed.
bool write_if_changed(const std::string &path, const std::string &content);

std::string sanitize_identifier(const std::string &name);

} // namespace akg
