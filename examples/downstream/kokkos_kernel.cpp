// The tile kernel compiled with Kokkos, for tilekit's kokkos backend: built when the installed
// tilekit has a built-in kokkos backend (CMakeLists.txt links tilekit::tile_kokkos).
#include "tile_kernel.hpp"

bool reverse_scale_kokkos_ok(tilekit::Backend& be) { return reverse_scale_ok(be); }
