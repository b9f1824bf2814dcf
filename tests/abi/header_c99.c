/* header_c99.c: the public header, alone, must compile as strict C99
 * (built with -std=c99 -pedantic -Werror -Wall -Wextra). */
#include <akg/akgkernels.h>

/* Use each type and macro so that the compiler has to look at all of them. */
typedef char akg_check_version[(AKG_VERSION == AKG_VERSION_MAJOR * 10000 + AKG_VERSION_MINOR * 100 +
                                AKG_VERSION_PATCH) ? 1 : -1];

int main(void) {
    akg_tensor t;
    akg_tensor_info info;
    akg_status st = AKG_STATUS_OK;
    akg_dtype dt = AKG_DTYPE_FLOAT16;
    t.data = 0;
    t.dtype = dt;
    t.rank = 0;
    t.shape = 0;
    t.strides = 0;
    info.name = "x";
    info.dtype = t.dtype;
    info.rank = t.rank;
    info.shape = t.shape;
    info.updated_in_place = 0;
    (void)sizeof(akg_check_version);
    return (st == AKG_STATUS_OK && info.rank == 0 && sizeof(akg_kernel *) != 0) ? 0 : 1;
}
