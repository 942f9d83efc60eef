// One plan per call: the front end asks the backend for exactly one plan per operation and hands
// that very plan to the kernel (no second plan, no re-planning in between), and a plan made once
// with tilekit::plan runs any number of calls without another. Checked on a backend that counts
// its plans and records the plan each kernel received.
#include <cstdlib>
#include <iterator>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "tilekit/tilekit.hpp"

namespace tilekit::test {
namespace {

class CountingBackend final : public Backend {
 public:
  std::string name() const override { return "counting"; }
  const DeviceInfo& info() const override { return info_; }
  int priority() const override { return 0; }
  void* allocate(std::size_t bytes) override { return std::malloc(bytes == 0 ? 1 : bytes); }
  void deallocate(void* p) noexcept override { std::free(p); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void device_copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }

  // Each plan carries its serial number.
  Plan plan(Variant v, const Problem&, const TileConfig& requested) const override {
    Plan pl;
    pl.tile = v == Variant::naive ? TileConfig{} : requested.is_auto() ? TileConfig{8, 8, 8} : requested;
    pl.detail = std::make_shared<const int>(++plans);
    return pl;
  }
  std::string describe_launch(const Plan& pl) const override { return "plan " + std::to_string(*pl.get<int>()); }

  void gemm(const Plan& pl, const GemmArgs<float>&) override { ran(pl, Op::gemm); }
  void gemm(const Plan& pl, const GemmArgs<double>&) override { ran(pl, Op::gemm); }
  void transpose(const Plan& pl, const TransposeArgs<float>&) override { ran(pl, Op::transpose); }
  void transpose(const Plan& pl, const TransposeArgs<double>&) override { ran(pl, Op::transpose); }
  void conv2d(const Plan& pl, const Conv2dArgs<float>&) override { ran(pl, Op::conv2d); }
  void conv2d(const Plan& pl, const Conv2dArgs<double>&) override { ran(pl, Op::conv2d); }

  mutable int plans = 0;
  std::vector<int> kernel_plans;  // the serial number of the plan each kernel call received
  std::vector<const void*> kernel_details;

 private:
  void ran(const Plan& pl, Op op) {
    EXPECT_EQ(pl.backend, this);
    EXPECT_EQ(pl.problem.op, op);
    kernel_plans.push_back(*pl.get<int>());
    kernel_details.push_back(pl.detail.get());
  }
  DeviceInfo info_;
};

TEST(OnePlanPerCall, EachOperationPlansOnceAndRunsThatPlan) {
  CountingBackend be;
  Matrix<float> a(be, 12, 7), b(be, 7, 9), c(be, 12, 9), t(be, 7, 12), f(be, 3, 3), o(be, 12, 7);
  for (Variant v : kAllVariants) {
    SCOPED_TRACE(std::string(to_string(v)));
    const int before = be.plans;
    gemm<float>(v, 1.0f, a, b, 0.0f, c);
    EXPECT_EQ(be.plans, before + 1);
    EXPECT_EQ(be.kernel_plans.back(), be.plans);  // the plan made for this call, not another
    transpose<float>(v, o, t, v == Variant::naive ? TileConfig{} : TileConfig{4, 4, 0});
    EXPECT_EQ(be.plans, before + 2);
    EXPECT_EQ(be.kernel_plans.back(), be.plans);
    Matrix<float> co(be, 12, 7);
    conv2d<float>(v, o, f, co);
    EXPECT_EQ(be.plans, before + 3);
    EXPECT_EQ(be.kernel_plans.back(), be.plans);
    // alpha == 0 (k passed as 0) and tilekit::resolve_tile: still one plan each.
    gemm<float>(v, 0.0f, a, b, 1.0f, c);
    EXPECT_EQ(be.plans, before + 4);
    EXPECT_EQ(be.kernel_plans.back(), be.plans);
    resolve_tile(be, v, Problem{Op::gemm, DType::f32, 12, 9, 7}, {});
    EXPECT_EQ(be.plans, before + 5);
  }
  EXPECT_EQ(be.kernel_plans.size(), 4 * std::size(kAllVariants));
}

TEST(OnePlanPerCall, APlanMadeOnceRunsEveryCall) {
  CountingBackend be;
  Matrix<double> a(be, 5, 6), b(be, 6, 7), c(be, 5, 7);
  const Plan pl = plan(be, Variant::optimized, Problem{Op::gemm, DType::f64, 5, 7, 6});
  EXPECT_EQ(be.plans, 1);
  EXPECT_EQ(pl.backend, &be);
  EXPECT_EQ(pl.variant, Variant::optimized);
  EXPECT_EQ(be.describe_launch(pl), "plan 1");
  for (int i = 0; i < 5; ++i) gemm<double>(pl, 1.0, a, b, 0.0, c);
  EXPECT_EQ(be.plans, 1);
  ASSERT_EQ(be.kernel_details.size(), 5u);
  for (const void* d : be.kernel_details) EXPECT_EQ(d, pl.detail.get());
}

TEST(OnePlanPerCall, APlanForAnotherProblemIsRefusedBeforeTheKernel) {
  CountingBackend be, other;
  Matrix<float> a(be, 5, 6), b(be, 6, 7), c(be, 5, 7), in(be, 6, 5), out(be, 5, 6);
  const Plan for_8 = plan(be, Variant::tiled, Problem{Op::gemm, DType::f32, 5, 8, 6});
  const Plan for_double = plan(be, Variant::tiled, Problem{Op::gemm, DType::f64, 5, 7, 6});
  const Plan elsewhere = plan(other, Variant::tiled, Problem{Op::gemm, DType::f32, 5, 7, 6});
  const Plan a_transpose = plan(be, Variant::tiled, Problem{Op::transpose, DType::f32, 5, 6, 0});
  expect_error([&] { gemm<float>(for_8, 1.0f, a, b, 0.0f, c); }, {"5x8x6", "5x7x6"});
  expect_error([&] { gemm<float>(for_double, 1.0f, a, b, 0.0f, c); }, {"double", "float"});
  expect_error([&] { gemm<float>(elsewhere, 1.0f, a, b, 0.0f, c); }, {"counting"});
  expect_error([&] { gemm<float>(a_transpose, 1.0f, a, b, 0.0f, c); }, {"transpose", "gemm"});
  expect_error([&] { transpose<float>(a_transpose, in, out); }, {"5x6x0", "6x5x0"});
  EXPECT_TRUE(be.kernel_plans.empty());
  // The plan's own problem runs.
  transpose<float>(plan(be, Variant::naive, Problem{Op::transpose, DType::f32, 6, 5, 0}), in, out);
  EXPECT_EQ(be.kernel_plans.size(), 1u);
}

// The plan-taking operations check their operands as the others do.
TEST(OnePlanPerCall, PlanTakingOperationsValidateTheirOperands) {
  CountingBackend be;
  Matrix<float> a(be, 5, 6), b(be, 6, 7), c(be, 5, 7);
  const Plan pl = plan(be, Variant::tiled, Problem{Op::gemm, DType::f32, 5, 7, 6});
  expect_error([&] { gemm<float>(pl, 1.0f, a, a, 0.0f, c); }, {"shapes do not match"});
  expect_error([&] { gemm<float>(pl, 1.0f, a, b, 0.0f, a); }, {"shapes do not match"});
  expect_error([&] { plan(be, Variant::tiled, Problem{Op::gemm, DType::f32, 5, 7, 6}, {-1, 4, 4}); }, {"non-negative"});
  EXPECT_TRUE(be.kernel_plans.empty());
}

}  // namespace
}  // namespace tilekit::test
