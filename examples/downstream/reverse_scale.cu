// The tile kernel compiled by nvcc, for tilekit's cuda backend: built when the installed
// tilekit has cuda and this project has a CUDA compiler (CMakeLists.txt), with the GPU
// architectures and flags tilekit's config gives.
#include "tile_kernel.hpp"

bool reverse_scale_cuda_ok(tilekit::Backend& be) { return reverse_scale_ok(be); }
