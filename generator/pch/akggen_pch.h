// Precompiled for every source of libakggen: Halide.h alone takes about 6 s to parse, longer
// than most of the sources that include it.
#include <Halide.h>
