// The tuning registry: names, values and their checks, the environment form, and what the
// program does with them (`tilekit tunings`, `--tune`, the tunings recorded in every result).
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "tilekit/tilekit.hpp"
#include "tilekit/tunings.hpp"
#include "tilekit/types.hpp"
#include "tilekit/verify.hpp"

namespace {

using tilekit::test::ProgramResult;

ProgramResult run_with_env(const std::string& env, const std::string& args, bool with_stderr = true) {
  return tilekit::test::run_program(env, args, with_stderr);
}

TEST(Tunings, TableIsSortedUniqueAndDefaultsAreAllowed) {
  const auto& all = tilekit::tunings();
  ASSERT_FALSE(all.empty());
  std::set<std::string> names, envs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& t = all[i];
    if (i > 0) {
      EXPECT_LT(all[i - 1].name, t.name);
    }
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_TRUE(envs.insert(t.env()).second) << t.env();  // no two names map to one variable
    EXPECT_FALSE(t.backend.empty()) << t.name;
    EXPECT_FALSE(t.doc.empty()) << t.name;
    EXPECT_EQ(t.env().rfind("TILEKIT_", 0), 0u);
    if (t.values.empty()) {
      EXPECT_LE(t.min, t.max) << t.name;
    } else {
      EXPECT_NE(std::find(t.values.begin(), t.values.end(), t.default_value), t.values.end()) << t.name;
      for (const auto& s : t.sweep_values)
        EXPECT_NE(std::find(t.values.begin(), t.values.end(), s), t.values.end()) << t.name << " sweep " << s;
      // The default is never sweep-only: every build runs its defaults.
      EXPECT_EQ(std::find(t.sweep_values.begin(), t.sweep_values.end(), t.default_value), t.sweep_values.end());
    }
  }
}

TEST(Tunings, EnvironmentNameFollowsTheRule) {
  EXPECT_EQ(tilekit::find_tuning("cuda.sgemm.kernel").env(), "TILEKIT_CUDA_SGEMM_KERNEL");
  EXPECT_EQ(tilekit::find_tuning("openmp.gemm.pack_a").env(), "TILEKIT_OPENMP_GEMM_PACK_A");
  EXPECT_EQ(tilekit::find_tuning("host.huge_pages").env(), "TILEKIT_HOST_HUGE_PAGES");
}

TEST(Tunings, SetCheckedAndReadBack) {
  const std::string before = tilekit::tuning("kokkos.timer");
  tilekit::set_tuning("kokkos.timer", "host");
  EXPECT_EQ(tilekit::tuning("kokkos.timer"), "host");
  tilekit::set_tuning("kokkos.timer=events");
  EXPECT_EQ(tilekit::tuning("kokkos.timer"), "events");
  tilekit::set_tuning("kokkos.timer", before);
  // Every value it accepts is listed in the error for one it does not.
  try {
    tilekit::set_tuning("kokkos.timer", "sundial");
    FAIL() << "accepted a value outside the list";
  } catch (const tilekit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kokkos.timer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("events or host"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tilekit::set_tuning("no.such.tuning", "1"), tilekit::Error);
  EXPECT_THROW(tilekit::set_tuning("kokkos.timer"), tilekit::Error);  // not NAME=VALUE
  EXPECT_THROW(tilekit::set_tuning("=host"), tilekit::Error);
  EXPECT_EQ(tilekit::tuning("kokkos.timer"), before);  // a refused value changes nothing
}

// A measured alternative is a sweep value: a default build refuses it, saying how to get it; a
// sweep build takes it. Patterns (openmp.gemm.grid's RxC) are sweep values too.
TEST(Tunings, SweepValuesOnlyInSweepBuilds) {
  const auto& sweep = tilekit::find_tuning("cuda.sgemm.kernel").sweep_values;
  ASSERT_NE(std::find(sweep.begin(), sweep.end(), "cub3efzb"), sweep.end());
  for (const auto& [name, value] : {std::pair{"cuda.sgemm.kernel", "cub3efzb"}, std::pair{"openmp.gemm.grid", "2x1"},
                                    std::pair{"kokkos.barrier", "team"}, std::pair{"gpu.conv2d.optimized", "aligned64-tma"}}) {
    SCOPED_TRACE(std::string(name) + "=" + value);
    const std::string before = tilekit::tuning(name);
    if (tilekit::sweeps_built()) {
      tilekit::set_tuning(name, value);
      EXPECT_EQ(tilekit::tuning(name), value);
      tilekit::set_tuning(name, before);
    } else {
      try {
        tilekit::set_tuning(name, value);
        ADD_FAILURE() << "a sweep value accepted in a default build";
      } catch (const tilekit::Error& e) {
        EXPECT_NE(std::string(e.what()).find("-DTILEKIT_BUILD_SWEEPS=ON"), std::string::npos) << e.what();
      }
      EXPECT_EQ(tilekit::tuning(name), before);
    }
  }
  // The user-facing tunings have no sweep values; every other value of a measured choice is one.
  for (const char* name : {"host.huge_pages", "openmp.simd", "kokkos.timer"})
    EXPECT_TRUE(tilekit::find_tuning(name).sweep_values.empty()) << name;
  for (const auto& t : tilekit::tunings())
    if (!t.sweep_values.empty()) {
      EXPECT_EQ(t.sweep_values.size() + 1, t.values.size()) << t.name;
    }
}

TEST(Tunings, PatternValues) {
  EXPECT_THROW(tilekit::set_tuning("openmp.gemm.grid", "2x"), tilekit::Error);
  EXPECT_THROW(tilekit::set_tuning("openmp.gemm.grid", "0x4"), tilekit::Error);
  EXPECT_NE(tilekit::find_tuning("openmp.gemm.grid").allowed().find("auto or RxC"), std::string::npos);
  if (!tilekit::sweeps_built()) return;
  tilekit::set_tuning("openmp.gemm.grid", "2x1");
  EXPECT_EQ(tilekit::tuning("openmp.gemm.grid"), "2x1");
  tilekit::set_tuning("openmp.gemm.grid", "auto");
}

// Every value a build accepts is one the code that reads it handles (tuning_choice throws on a
// value it does not map): each is set in turn and every operation, variant and element type run
// on every available backend, checked against the reference.
TEST(Tunings, EveryAcceptedValueIsHandled) {
  std::vector<tilekit::Backend*> backends;
  for (const auto& name : tilekit::compiled_backends())
    if (tilekit::Backend* be = tilekit::find_backend(name); be && be->available()) backends.push_back(be);
  for (const auto& t : tilekit::tunings()) {
    if (t.name == "openmp.simd") continue;  // read once, when the backend is made (its own test covers it)
    for (const auto& value : t.values) {
      const bool sweep = std::find(t.sweep_values.begin(), t.sweep_values.end(), value) != t.sweep_values.end();
      if (sweep && !tilekit::sweeps_built()) continue;
      SCOPED_TRACE(t.name + "=" + value);
      tilekit::test::TuningScope scope(t.name, value);
      for (tilekit::Backend* be : backends)
        for (tilekit::Variant v : be->variants()) {
          SCOPED_TRACE(be->name() + " " + std::string(tilekit::to_string(v)));
          tilekit::Matrix<float> a(*be, 37, 29), b(*be, 29, 41), c(*be, 37, 41);
          a.upload(tilekit::verify::random_values<float>(37 * 29, 1));
          b.upload(tilekit::verify::random_values<float>(29 * 41, 2));
          EXPECT_NO_THROW(tilekit::gemm<float>(v, 1.0f, a, b, 0.0f, c));
          const auto ref = tilekit::verify::gemm<float>(37, 41, 29, 1.0f, a.download(), 29, b.download(), 41, 0.0f, {}, 41);
          EXPECT_TRUE(tilekit::verify::compare<float>(ref, c.download(), 41).ok);
          tilekit::Matrix<double> in(*be, 33, 70), out(*be, 70, 33), f(*be, 5, 5), o2(*be, 33, 70);
          in.upload(tilekit::verify::random_values<double>(33 * 70, 3));
          f.upload(tilekit::verify::random_values<double>(25, 4));
          EXPECT_NO_THROW(tilekit::transpose<double>(v, in, out));
          EXPECT_NO_THROW(tilekit::conv2d<double>(v, in, f, o2));
          EXPECT_TRUE(tilekit::verify::compare<double>(tilekit::verify::transpose<double>(33, 70, in.download(), 70),
                                                       out.download(), 33)
                          .ok);
          EXPECT_TRUE(tilekit::verify::compare<double>(
                          tilekit::verify::conv2d<double>(33, 70, in.download(), 70, f.download(), 5), o2.download(), 70)
                          .ok);
        }
    }
  }
}

TEST(Tunings, EveryValueIsRecorded) {
  const auto values = tilekit::tuning_values();
  EXPECT_EQ(values.size(), tilekit::tunings().size());
}

TEST(TuningsCli, ListsEveryTuningAsJson) {
  auto r = tilekit::test::run_program("tunings --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j.size(), tilekit::tunings().size());
  for (const auto& t : j)
    for (const char* key : {"name", "backend", "values", "default", "doc", "env", "value"})
      EXPECT_TRUE(t.contains(key)) << key;
  auto text = tilekit::test::run_program("tunings", false);
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("cuda.sgemm.kernel"), std::string::npos);
}

TEST(TuningsCli, BadTuningIsUsageErrorWhateverTheBackend) {
  // A cuda tuning is checked on a serial run, and on a machine without CUDA.
  auto r = tilekit::test::run_program("run gemm --backend serial --size 8 --tune cuda.sgemm.kernel=fastest", true);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cuda.sgemm.kernel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dual3efzs"), std::string::npos) << r.out;  // the allowed values are named
  EXPECT_EQ(tilekit::test::run_program("run gemm --backend serial --size 8 --tune no.such=1", false).code, 2);
  EXPECT_EQ(tilekit::test::run_program("compare gemm --backends serial --size 8 --tune nonsense", false).code, 2);
  auto e = run_with_env("TILEKIT_CUDA_SGEMM_KERNEL=fastest", "run gemm --backend serial --size 8");
  EXPECT_EQ(e.code, 2) << e.out;
  EXPECT_NE(e.out.find("TILEKIT_CUDA_SGEMM_KERNEL"), std::string::npos) << e.out;
  auto u = run_with_env("TILEKIT_NO_SUCH_KNOB=1", "info");
  EXPECT_EQ(u.code, 2) << u.out;
  EXPECT_NE(u.out.find("TILEKIT_NO_SUCH_KNOB"), std::string::npos) << u.out;
}

TEST(TuningsCli, ResultsRecordTheTuningsInEffect) {
  auto r = run_with_env("TILEKIT_KOKKOS_TIMER=host",
                        "run gemm --backend serial --size 8 --reps 1 --json --tune host.huge_pages=off", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("tunings"));
  EXPECT_EQ(j["tunings"].size(), tilekit::tunings().size());
  EXPECT_EQ(j["tunings"]["host.huge_pages"], "off");
  EXPECT_EQ(j["tunings"]["kokkos.timer"], "host");
  EXPECT_EQ(j["tunings"]["cuda.sgemm.kernel"], tilekit::find_tuning("cuda.sgemm.kernel").default_value);

  const std::string file = testing::TempDir() + "tilekit_tunings_compare.json";
  auto c = tilekit::test::run_program(
      "compare transpose --backends serial --size 16 --reps 1 --no-roofline --tune kokkos.timer=host --json " + file, false);
  ASSERT_EQ(c.code, 0) << c.out;
  FILE* f = fopen(file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  const auto cj = nlohmann::json::parse(f);
  fclose(f);
  EXPECT_EQ(cj["context"]["tunings"]["kokkos.timer"], "host");
}

TEST(TuningsCli, SweepValueInADefaultBuildIsUsageError) {
  if (tilekit::sweeps_built()) GTEST_SKIP() << "a sweep build takes sweep values";
  auto r = tilekit::test::run_program("run gemm --backend serial --size 8 --tune cuda.sgemm.kernel=cub3efzb", true);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("-DTILEKIT_BUILD_SWEEPS=ON"), std::string::npos) << r.out;
  auto e = run_with_env("TILEKIT_OPENMP_GEMM_PREFETCH_A=on", "run gemm --backend serial --size 8");
  EXPECT_EQ(e.code, 2) << e.out;
  EXPECT_NE(e.out.find("TILEKIT_OPENMP_GEMM_PREFETCH_A"), std::string::npos) << e.out;
}

}  // namespace
