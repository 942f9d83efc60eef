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
#include "tilekit/tunings.hpp"
#include "tilekit/types.hpp"

namespace {

using tilekit::test::ProgramResult;

// The program with extra environment variables (`env` keeps this process's own untouched: the
// registry reads the environment once per process).
ProgramResult run_with_env(const std::string& env, const std::string& args, bool with_stderr = true) {
  const std::string cmd = "env " + env + " " + TILEKIT_PROGRAM + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
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
}

TEST(Tunings, SetCheckedAndReadBack) {
  const std::string before = tilekit::tuning("openmp.gemm.profile");
  tilekit::set_tuning("openmp.gemm.profile", "on");
  EXPECT_EQ(tilekit::tuning("openmp.gemm.profile"), "on");
  tilekit::set_tuning("openmp.gemm.profile=off");
  EXPECT_EQ(tilekit::tuning("openmp.gemm.profile"), "off");
  tilekit::set_tuning("openmp.gemm.profile", before);
  // Every value it accepts is listed in the error for one it does not.
  try {
    tilekit::set_tuning("openmp.gemm.profile", "maybe");
    FAIL() << "accepted a value outside the list";
  } catch (const tilekit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("openmp.gemm.profile"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("off or on"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tilekit::set_tuning("no.such.tuning", "1"), tilekit::Error);
  EXPECT_THROW(tilekit::set_tuning("openmp.gemm.profile"), tilekit::Error);  // not NAME=VALUE
  EXPECT_THROW(tilekit::set_tuning("=on"), tilekit::Error);
  EXPECT_EQ(tilekit::tuning("openmp.gemm.profile"), before);  // a refused value changes nothing
}

TEST(Tunings, PatternValues) {
  tilekit::set_tuning("openmp.gemm.grid", "2x1");
  EXPECT_EQ(tilekit::tuning("openmp.gemm.grid"), "2x1");
  EXPECT_THROW(tilekit::set_tuning("openmp.gemm.grid", "2x"), tilekit::Error);
  EXPECT_THROW(tilekit::set_tuning("openmp.gemm.grid", "0x4"), tilekit::Error);
  tilekit::set_tuning("openmp.gemm.grid", "auto");
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
  auto r = run_with_env("TILEKIT_OPENMP_GEMM_PROFILE=off",
                        "run gemm --backend serial --size 8 --reps 1 --json --tune openmp.gemm.pack=static", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("tunings"));
  EXPECT_EQ(j["tunings"].size(), tilekit::tunings().size());
  EXPECT_EQ(j["tunings"]["openmp.gemm.pack"], "static");
  EXPECT_EQ(j["tunings"]["openmp.gemm.profile"], "off");
  EXPECT_EQ(j["tunings"]["cuda.sgemm.kernel"], tilekit::find_tuning("cuda.sgemm.kernel").default_value);

  const std::string file = testing::TempDir() + "tilekit_tunings_compare.json";
  auto c = tilekit::test::run_program(
      "compare transpose --backends serial --size 16 --reps 1 --no-roofline --tune kokkos.align=4096 --json " + file, false);
  ASSERT_EQ(c.code, 0) << c.out;
  FILE* f = fopen(file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  const auto cj = nlohmann::json::parse(f);
  fclose(f);
  EXPECT_EQ(cj["context"]["tunings"]["kokkos.align"], "4096");
}

}  // namespace
