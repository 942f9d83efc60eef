// Matrices of 2^31 elements or more on the host backends, whose kernels index with 64 bits: a
// transpose, a gemm and a conv2d whose element offsets pass 2^31 in the input and in the output,
// on every variant of serial and openmp; backends whose kernels index with 32 bits (kokkos, GPUs) refuse
// them up front. The matrices are 65537 rows with a leading dimension of 32832 (2^31 + 4 million
// elements, 8.6 GB of address space) but only 64 used columns, so each row touches one page:
// about 270 MB is ever written, and the test takes seconds. It needs the 8.6 GB to be available
// all the same (tilekit's memory guard checks MemAvailable), and exits 77 (skipped) otherwise.
// ctest label: large.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tilekit/ops.hpp"
#include "tilekit/tunings.hpp"

using namespace tilekit;

namespace {

constexpr index_t kRows = 65537, kCols = 64, kLd = 32768 + 64;
static_assert(kRows * kLd > (index_t(1) << 31), "the test is about matrices past 2^31 elements");

int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

float value(index_t i, index_t j) { return float((i * 131 + j * 7) % 1024) - 512.0f; }

void host_backend(Backend& be) {
  for (Variant v : be.variants()) {
    const std::string tag = be.name() + " " + std::string(to_string(v));
    {  // transpose: the input's offsets pass 2^31
      Matrix<float> in(be, kRows, kCols, kLd), out(be, kCols, kRows);
      for (index_t i = 0; i < kRows; ++i)
        for (index_t j = 0; j < kCols; ++j) in.data()[i * kLd + j] = value(i, j);
      transpose(v, in, out);
      index_t bad = 0;
      for (index_t j = 0; j < kCols; ++j)
        for (index_t i = 0; i < kRows; ++i) bad += out.data()[j * kRows + i] != value(i, j);
      check(bad == 0, tag + " transpose of a 65537 x 64 matrix with ld 32832: " + std::to_string(bad) + " wrong");
    }
    {  // transpose: the output's offsets pass 2^31
      Matrix<float> in(be, kCols, kRows), out(be, kRows, kCols, kLd);
      for (index_t i = 0; i < kCols; ++i)
        for (index_t j = 0; j < kRows; ++j) in.data()[i * kRows + j] = value(j, i);
      transpose(v, in, out);
      index_t bad = 0;
      for (index_t i = 0; i < kRows; ++i)
        for (index_t j = 0; j < kCols; ++j) bad += out.data()[i * kLd + j] != value(i, j);
      check(bad == 0, tag + " transpose into a 65537 x 64 matrix with ld 32832: " + std::to_string(bad) + " wrong");
    }
    {  // gemm: A's and C's offsets pass 2^31 (C = A B, B 64 x 8 small integers: exact in float)
      constexpr index_t n = 8;
      Matrix<float> a(be, kRows, kCols, kLd), b(be, kCols, n), c(be, kRows, n, kLd);
      for (index_t i = 0; i < kRows; ++i)
        for (index_t j = 0; j < kCols; ++j) a.data()[i * kLd + j] = float((i + j) % 5) - 2.0f;
      for (index_t p = 0; p < kCols; ++p)
        for (index_t j = 0; j < n; ++j) b.data()[p * n + j] = float((p * 3 + j) % 7) - 3.0f;
      gemm(v, 1.0f, a, b, 0.0f, c);
      index_t bad = 0;
      for (index_t i = 0; i < kRows; ++i)
        for (index_t j = 0; j < n; ++j) {
          double s = 0;
          for (index_t p = 0; p < kCols; ++p) s += double(a.data()[i * kLd + p]) * b.data()[p * n + j];
          bad += double(c.data()[i * kLd + j]) != s;
        }
      check(bad == 0, tag + " gemm with A and C of ld 32832: " + std::to_string(bad) + " wrong");
    }
    {  // conv2d: input and output offsets pass 2^31 (3 x 3 filter of small integers: exact)
      Matrix<float> in(be, kRows, kCols, kLd), out(be, kRows, kCols, kLd), f(be, 3, 3);
      for (index_t i = 0; i < kRows; ++i)
        for (index_t j = 0; j < kCols; ++j) in.data()[i * kLd + j] = float((i * 3 + j) % 9) - 4.0f;
      for (int q = 0; q < 9; ++q) f.data()[q] = float(q % 4) - 1.0f;
      conv2d(v, in, f, out);
      index_t bad = 0;
      for (index_t i = 0; i < kRows; ++i)
        for (index_t j = 0; j < kCols; ++j) {
          double s = 0;
          for (index_t fi = 0; fi < 3; ++fi)
            for (index_t fj = 0; fj < 3; ++fj) {
              const index_t y = i + fi - 1, x = j + fj - 1;
              if (y >= 0 && y < kRows && x >= 0 && x < kCols) s += double(f.data()[fi * 3 + fj]) * in.data()[y * kLd + x];
            }
          bad += double(out.data()[i * kLd + j]) != s;
        }
      check(bad == 0, tag + " conv2d with input and output of ld 32832: " + std::to_string(bad) + " wrong");
    }
    std::printf("%s: transpose, gemm and conv2d past 2^31 elements checked\n", tag.c_str());
  }
}

// 32-bit kernels: the front end refuses before anything runs, naming the backend and the limit.
void refused(Backend& be) {
  Matrix<float> in(be, kRows, kCols, kLd), out(be, kCols, kRows);
  try {
    transpose(Variant::tiled, in, out);
    check(false, be.name() + " ran a transpose of 2^31 or more elements");
  } catch (const Error& e) {
    const std::string msg = e.what();
    check(msg.find("backend '" + be.name() + "' supports fewer than 2^31 per matrix") != std::string::npos,
          "unexpected message: " + msg);
    std::printf("%s refuses: %s\n", be.name().c_str(), msg.c_str());
  }
}

}  // namespace

int main() {
  // Untouched rows stay unbacked: each used row then costs one 4 KiB page, not a 2 MiB one.
  tilekit::set_tuning("host.huge_pages", "off");
  const std::size_t need = std::size_t(kRows * kLd) * sizeof(float) + (std::size_t(1) << 30);
  if (host_memory_available() < need) {
    std::printf("SKIP: %zu bytes available, the test needs %zu\n", host_memory_available(), need);
    return 77;
  }
  try {
    for (const std::string& name : compiled_backends()) {
      Backend* be = find_backend(name);
      if (!be || !be->available()) continue;
      if (be->host_accessible() && be->max_matrix_elements() > kRows * kLd)
        host_backend(*be);
      else if (be->host_accessible())
        refused(*be);  // device memory cannot be filled through data() here
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
