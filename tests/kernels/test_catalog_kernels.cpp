// Every catalog kernel, at its real shapes and as its odd-shape twin (tests/patterns_small/),
// against the double-precision reference evaluator on several random seeds.
#include <gtest/gtest.h>

#include <fstream>

#include "kernel_check.h"

extern "C" {
extern const akg_kernel *const akg_test_small_kernels[];
extern const size_t akg_test_small_kernel_count;
}

namespace {

std::string source_path(const std::string &relative) { return std::string(AKG_SOURCE_ROOT) + "/" + relative; }

akg::reference::KernelCheck check_kernel_against_reference(const akg_kernel *kernel, const std::string &json_path,
                                                           uint64_t seed) {
    std::ifstream in(json_path);
    if (!in) return {false, "cannot open " + json_path, 0};
    return akg::reference::check_kernel(kernel, nlohmann::json::parse(in), seed, akg_run);
}

std::vector<std::string> names(const akg_kernel *const *table, size_t count) {
    std::vector<std::string> out;
    for (size_t k = 0; k < count; ++k) out.push_back(table[k]->name);
    return out;
}

const akg_kernel *find(const akg_kernel *const *table, size_t count, const std::string &name) {
    for (size_t k = 0; k < count; ++k)
        if (name == table[k]->name) return table[k];
    return nullptr;
}

class CatalogKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogKernel, MatchesReferenceAtRealShapes) {
    const akg_kernel *k = akg_kernel_lookup(GetParam().c_str());
    ASSERT_NE(k, nullptr);
    for (uint64_t seed : {1u, 2u}) {
        auto r = check_kernel_against_reference(k, source_path(k->pattern_file), seed);
        EXPECT_TRUE(r.ok) << GetParam() << " seed " << seed << ":\n" << r.message;
    }
}

TEST_P(CatalogKernel, MatchesReferenceAtOddShapes) {
    const akg_kernel *k = find(akg_test_small_kernels, akg_test_small_kernel_count, GetParam());
    ASSERT_NE(k, nullptr) << "no odd-shape twin tests/patterns_small/" << GetParam() << ".json";
    for (uint64_t seed : {1u, 2u, 3u, 4u}) {
        auto r = check_kernel_against_reference(k, source_path(k->pattern_file), seed);
        EXPECT_TRUE(r.ok) << GetParam() << " (odd shapes) seed " << seed << ":\n" << r.message;
    }
}

std::vector<std::string> catalog_names() {
    std::vector<std::string> out;
    for (size_t k = 0; k < akg_kernel_count(); ++k) out.push_back(akg_kernel_name(akg_kernel_at(k)));
    return out;
}

INSTANTIATE_TEST_SUITE_P(All, CatalogKernel, ::testing::ValuesIn(catalog_names()),
                         [](const auto &info) { return info.param; });

TEST(Catalog, EveryKernelHasAnOddShapeTwin) {
    EXPECT_EQ(catalog_names(), names(akg_test_small_kernels, akg_test_small_kernel_count));
    EXPECT_GE(akg_kernel_count(), 20u);
}

} // namespace
