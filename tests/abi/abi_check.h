/* abi_check.h: the checks of the C ABI tests (C99): CHECK(cond, printf-style message) counts a
 * pass or prints the failure with its line and counts it; main returns g_failed != 0. */
#ifndef AKG_TESTS_ABI_CHECK_H
#define AKG_TESTS_ABI_CHECK_H

#include <stdio.h>

static int g_passed = 0;
static int g_failed = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            ++g_passed;                                                                            \
        } else {                                                                                   \
            ++g_failed;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

#endif /* AKG_TESTS_ABI_CHECK_H */
