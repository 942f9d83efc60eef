// The README's example: C = A * B on the best backend this build has, checked against the
// double-precision reference.
#include <cstdio>

#include <tilekit/tilekit.hpp>
#include <tilekit/verify.hpp>

int main() {
  tilekit::Backend& be = tilekit::best_backend();  // or tilekit::backend("cuda")
  const tilekit::index_t m = 300, n = 200, k = 100;

  tilekit::Matrix<float> a(be, m, k), b(be, k, n), c(be, m, n);  // memory owned by the backend
  const auto ha = tilekit::verify::random_values<float>(m * k, 1);
  const auto hb = tilekit::verify::random_values<float>(k * n, 2);
  a.upload(ha);
  b.upload(hb);

  // Tiled variant, tile chosen from the device (shared memory per block, or the CPU caches).
  tilekit::gemm(tilekit::Variant::tiled, 1.0f, a, b, 0.0f, c);
  const std::vector<float> hc = c.download();  // waits for the device

  const auto ref = tilekit::verify::gemm<float>(m, n, k, 1.0f, ha, k, hb, n, 0.0f, {}, n);
  const auto check = tilekit::verify::compare<float>(ref, hc, n);
  std::printf("%s tiled gemm %ldx%ldx%ld: relative error %.2e (%s)\n", be.name().c_str(), long(m), long(n), long(k),
              check.rel_error, check.ok ? "ok" : check.message.c_str());
  return check.ok ? 0 : 1;
}
