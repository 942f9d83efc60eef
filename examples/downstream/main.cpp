// A downstream program: tiled GEMM on every backend the installed tilekit has and can run here,
// each checked against tilekit's double-precision reference. Lists the backends that cannot run
// (a GPU plugin without its runtime) with the reason. Exit status 0 when every run verified.
#include <cstdio>

#include <tilekit/config.hpp>
#include <tilekit/tilekit.hpp>
#include <tilekit/verify.hpp>

#include "tile_kernel.hpp"

#ifdef DOWNSTREAM_CUDA_KERNEL
bool reverse_scale_cuda_ok(tilekit::Backend& be);  // reverse_scale.cu
#endif
#ifdef DOWNSTREAM_KOKKOS_KERNEL
bool reverse_scale_kokkos_ok(tilekit::Backend& be);  // kokkos_kernel.cpp
#endif

int main() {
#ifndef TILEKIT_HAS_SERIAL
#error "tilekit/config.hpp must define TILEKIT_HAS_SERIAL: serial is always built"
#endif
  std::printf("tilekit %s, backends %s (plugins: %s)\n", tilekit::kVersion, TILEKIT_BACKENDS, TILEKIT_PLUGIN_BACKENDS);
  const tilekit::index_t m = 67, n = 45, k = 33;
  const auto ha = tilekit::verify::random_values<double>(m * k, 1);
  const auto hb = tilekit::verify::random_values<double>(k * n, 2);
  const auto ref = tilekit::verify::gemm<double>(m, n, k, 1.0, ha, k, hb, n, 0.0, {}, n);
  int failures = 0, ran = 0;
  for (const auto& name : tilekit::compiled_backends()) {
    tilekit::Backend* be = tilekit::find_backend(name);
    if (!be->available()) {
      std::printf("%-8s unavailable: %s\n", name.c_str(), be->unavailable_reason().c_str());
      continue;
    }
    tilekit::Matrix<double> a(*be, m, k), b(*be, k, n), c(*be, m, n);
    a.upload(ha);
    b.upload(hb);
    tilekit::gemm(tilekit::Variant::tiled, 1.0, a, b, 0.0, c);
    const auto check = tilekit::verify::compare<double>(ref, c.download(), n);
    std::printf("%-8s tiled dgemm %ldx%ldx%ld: %s (relative error %.1e)\n", name.c_str(), long(m), long(n), long(k),
                check.ok ? "ok" : check.message.c_str(), check.rel_error);
    failures += !check.ok;
    ++ran;
  }
  // This project's own tile kernel: on the host backends (any C++ compiler), on kokkos where
  // tilekit::tile_kokkos compiled it, on cuda where nvcc did.
  for (const auto& name : tilekit::compiled_backends()) {
    if (name != "serial" && name != "openmp") continue;
    const bool host_tile_ok = reverse_scale_ok(tilekit::backend(name));
    std::printf("%-8s own tile kernel: %s\n", name.c_str(), host_tile_ok ? "ok" : "WRONG");
    failures += !host_tile_ok;
  }
#ifdef DOWNSTREAM_KOKKOS_KERNEL
  {
    const bool ok = reverse_scale_kokkos_ok(tilekit::backend("kokkos"));
    std::printf("kokkos   own tile kernel (tilekit::tile_kokkos): %s\n", ok ? "ok" : "WRONG");
    failures += !ok;
  }
#endif
#ifdef DOWNSTREAM_CUDA_KERNEL
  if (tilekit::Backend* cuda = tilekit::find_backend("cuda"); cuda && cuda->available()) {
    const bool ok = reverse_scale_cuda_ok(*cuda);
    std::printf("cuda     own tile kernel (nvcc): %s\n", ok ? "ok" : "WRONG");
    failures += !ok;
  } else {
    std::printf("cuda     own tile kernel (nvcc): compiled; not run, cuda is unavailable here\n");
  }
#endif
  try {  // errors are tilekit::Error, whichever part of tilekit throws them
    tilekit::backend("no-such-backend");
    ++failures;
  } catch (const tilekit::Error& e) {
    std::printf("expected error: %s\n", e.what());
  }
  return failures == 0 && ran > 0 ? 0 : 1;
}
