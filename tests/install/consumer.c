/* A program outside the project: includes the installed headers, links the installed
 * libakgkernels.a through pkg-config, and runs a catalog kernel through its typed entry point. */
#include <akg/akg_catalog.h>
#include <akg/akgkernels.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    if (akg_version() != AKG_VERSION) return 1;
    const akg_kernel *k = akg_kernel_lookup("add_relu_f32");
    if (!k || akg_kernel_count() < 20) return 2;
    size_t n = 32 * 512 * 28 * 28;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *y = malloc(n * sizeof *y);
    if (!a || !b || !y) return 3;
    for (size_t i = 0; i < n; ++i) {
        a[i] = (float)(i % 7) - 3.0f;
        b[i] = 1.0f;
    }
    akg_status s = akg_add_relu_f32(a, b, y);
    int bad = s != AKG_STATUS_OK;
    for (size_t i = 0; i < n && !bad; ++i) {
        float want = a[i] + 1.0f > 0.0f ? a[i] + 1.0f : 0.0f;
        bad = y[i] != want;
    }
    printf("installed library: %zu kernels, add_relu_f32 %s\n", akg_kernel_count(), bad ? "WRONG" : "ok");
    free(a);
    free(b);
    free(y);
    return bad;
}
