// What a user can set for libtilekit_blas. Every setting has a name (blas.backend) and an
// environment form (TILEKIT_BLAS_BACKEND); settings() reads them once, at the first BLAS call
// (or at exit, for the summary line), and is the only place that reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilekit::blas {

struct Settings {
  // blas.backend (TILEKIT_BLAS_BACKEND): auto, serial, openmp, kokkos, cuda or hip. auto takes
  // the available backend of highest priority (a GPU where there is one).
  std::string backend = "auto";
  // blas.verbose (TILEKIT_BLAS_VERBOSE): 0 silent, 1 one summary line at exit, 2 also a line
  // per call. Lines go to stderr and start with "tilekit-blas:".
  int verbose = 0;
  // blas.gpu_min (TILEKIT_BLAS_GPU_MIN): a call runs on a GPU backend only when each of m, n
  // and k is at least this (its operands are copied to the device and back: small calls are
  // faster on the CPU); below, on the best CPU backend. 0 sends every call to the GPU.
  std::int64_t gpu_min = kDefaultGpuMin;
  // blas.system (TILEKIT_BLAS_SYSTEM): the BLAS library (a file name or path dlopen accepts)
  // that the routines tilekit does not implement are taken from, when no library loaded after
  // libtilekit_blas provides them. Empty: the build's list (OpenBLAS, then the reference BLAS).
  std::string system;
  // blas.stage (TILEKIT_BLAS_STAGE): auto copies the operands into backend matrices only where
  // the backend's memory is not host memory (GPUs); always copies them on host backends too, as
  // a GPU call would (to measure the copies, and to check that path where there is no GPU).
  bool stage_always = false;
  // blas.devices (TILEKIT_BLAS_DEVICES): the GPUs one call from host memory is spread over
  // (runtime ordinals, after CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES); empty: all.
  std::vector<int> devices;
  // blas.gpu_tile (TILEKIT_BLAS_GPU_TILE): the edge of the tiles of C a GPU call is computed
  // in; 0: chosen from the sizes (at most 4096, at least two tiles a side above 1024).
  std::int64_t gpu_tile = 0;

  // Where the GPU path from host memory overtakes every core of the host (bench/blas_bench.sh
  // crossover): float from 512 with one H200 and a 16-core Xeon host, from 1536 with two H200s and a
  // 32-core host (double: 384 and 1024). The default sits between; a host with fewer cores crosses
  // lower, one with more higher (docs/blas.md).
  static constexpr std::int64_t kDefaultGpuMin = 1024;
};

// The settings, read from the environment on first use. A value that is not valid ends the
// process (exit status 2) after a message naming the variable and the values it accepts: a BLAS
// routine has no error channel, and running on something the user did not ask for is worse.
const Settings& settings();

// For the summary line at exit: settings() when a call has read them; otherwise read now, with
// invalid values taken as their defaults (a program that never called a BLAS routine must not
// fail at exit over a variable it never used).
Settings settings_at_exit();

}  // namespace tilekit::blas
