// The tilekit program's contract: exit codes (0 verified, 1 verification failed, 2 bad usage)
// and exactly one JSON object from `run --json`.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "harness.hpp"
#include <nlohmann/json.hpp>

namespace {

using Result = tilekit::test::ProgramResult;
Result run(const std::string& args) { return tilekit::test::run_program(args, false); }

TEST(Cli, RunVerifiesAndPrintsOneJsonObject) {
  auto r = run("run gemm --backend serial --variant tiled --m 37 --n 29 --k 41 --reps 2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);  // throws if there is anything but one object
  for (const char* key : {"op", "backend", "variant", "dtype", "m", "n", "k", "seconds", "gflops", "gbps",
                          "verified", "rel_error"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["m"], 37);
  EXPECT_EQ(j["k"], 41);
  EXPECT_EQ(j["verified"], true);
  EXPECT_GT(j["gflops"].get<double>(), 0);
}

TEST(Cli, EveryOperationRunsWithDoubles) {
  EXPECT_EQ(run("run transpose --backend serial --variant naive --m 31 --n 17 --dtype double --reps 1").code, 0);
  EXPECT_EQ(run("run conv2d --backend serial --variant tiled --size 45 --k 7 --reps 1").code, 0);
}

TEST(Cli, BadUsageExitsWithTwo) {
  EXPECT_EQ(run("run gemm --backend nosuch --size 8").code, 2);
  EXPECT_EQ(run("run gemm --backend serial --variant fastest --size 8").code, 2);
  EXPECT_EQ(run("run gemm --backend serial --variant optimized --size 8").code, 2);
  EXPECT_EQ(run("run gemm --backend serial --m -3 --n 4 --k 5").code, 2);
  EXPECT_EQ(run("run gemm --backend serial --m 3").code, 2);
  EXPECT_EQ(run("run gemm --backend serial --variant tiled --size 8 --tile 9000,9000,9000").code, 2);
  EXPECT_EQ(run("run conv2d --backend serial --size 8 --k 4").code, 2);
  EXPECT_EQ(run("run nosuchop --size 8").code, 2);
  EXPECT_EQ(run("frobnicate").code, 2);
}

TEST(Cli, InfoListsSerial) {
  auto r = run("info");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("[serial]"), std::string::npos);
  EXPECT_EQ(r.out.find("roofline ceilings"), std::string::npos);  // measured only when asked: --roofline
}

TEST(Cli, CompareWithoutRooflineLeavesTheRoofEmpty) {
  const std::string file = testing::TempDir() + "tilekit_compare_noroof.json";
  auto r = run("compare transpose --backends serial --size 32 --reps 1 --no-roofline --json " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  FILE* f = fopen(file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  const auto j = nlohmann::json::parse(f);
  fclose(f);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["verified"], true);
    EXPECT_TRUE(row["roof_fraction"].is_null());
  }
  EXPECT_TRUE(j["context"]["backends"][0]["ceilings"].is_null());
  EXPECT_EQ(run("compare transpose --backends serial --size 8 --no-roofline --plot /tmp/x.svg").code, 2);
}

TEST(Cli, CompareWritesJsonRowsForEveryVariantAndPeer) {
  const std::string file = testing::TempDir() + "tilekit_compare.json";
  auto r = run("compare transpose --backends serial --size 64 --reps 1 --json " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("vs naive"), std::string::npos);
  FILE* f = fopen(file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), f)) text.append(buf.data(), n);
  fclose(f);
  const auto j = nlohmann::json::parse(text)["rows"];
  ASSERT_EQ(j.size(), 3u);  // naive, tiled, and the memcpy peer
  for (const auto& row : j) EXPECT_EQ(row["verified"], true);
}

}  // namespace
