// The op graphs of tests/ops/ compiled into a library of their own (cross builds, run under the
// emulator), each against the reference evaluator on two seeds.
#include <gtest/gtest.h>

#include <fstream>

#include "kernel_check.h"

extern "C" {
extern const akg_kernel *const akg_test_ops_kernels[];
extern const size_t akg_test_ops_kernel_count;
}

namespace {

TEST(OpKernels, EveryOpGraphMatchesTheReference) {
    ASSERT_GT(akg_test_ops_kernel_count, 0u);
    for (size_t i = 0; i < akg_test_ops_kernel_count; ++i) {
        const akg_kernel *k = akg_test_ops_kernels[i];
        std::ifstream in(std::string(AKG_SOURCE_ROOT) + "/" + k->pattern_file);
        ASSERT_TRUE(in) << k->pattern_file;
        const nlohmann::json graph = nlohmann::json::parse(in);
        for (uint64_t seed : {1u, 2u}) {
            auto r = akg::reference::check_kernel(k, graph, seed, akg_run);
            EXPECT_TRUE(r.ok) << k->name << " seed " << seed << ":\n" << r.message;
        }
    }
    std::printf("checked %zu op graphs\n", akg_test_ops_kernel_count);
}

} // namespace
