// Hostile input to the tilekit program (issue 14's table and more of the kind): every case
// must end with its documented exit code and a message that names the problem, quickly and
// before any work (no case here may allocate more than a few bytes or run a kernel).
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness.hpp"
#include <nlohmann/json.hpp>

namespace {

using Result = tilekit::test::ProgramResult;
Result program(const std::string& args) { return tilekit::test::run_program(args, true); }

struct Case {
  const char* args;
  int code;
  std::vector<const char*> needles;  // each must appear in the output
};

void expect_case(const Case& c) {
  const Result r = program(c.args);
  EXPECT_EQ(r.code, c.code) << "tilekit " << c.args << "\n" << r.out;
  for (const char* n : c.needles)
    EXPECT_NE(r.out.find(n), std::string::npos) << "tilekit " << c.args << ": no '" << n << "' in\n" << r.out;
}

constexpr int kUsage = 2, kResources = 3;

TEST(Hostile, SizesOutOfRangeAreUsageErrors) {
  for (const Case& c : std::vector<Case>{
           {"run transpose --backend serial --m 4294967296 --n 4294967296", kUsage, {"--m", "4294967296", "out of range"}},
           {"run gemm --backend serial --size 99999999999999999999", kUsage, {"--size", "99999999999999999999", "out of range"}},
           {"run gemm --backend serial --m 3037000500 --n 3037000500 --k 1", kUsage, {"--m", "out of range"}},
           {"run transpose --backend serial --m 1 --n 3000000000", kUsage, {"--n", "3000000000", "out of range"}},
           {"run gemm --backend serial --m 99999999999999999999 --n 0 --k 0", kUsage, {"--m", "out of range"}},
           {"run conv2d --backend serial --size 8 --k 99999999999999999999", kUsage, {"--k", "99999999999999999999", "out of range"}},
           {"run gemm --backend serial --size 8 --reps 99999999999999999999", kUsage, {"--reps", "out of range"}},
           {"run gemm --backend serial --size 8 --seed 99999999999999999999", kUsage, {"--seed", "out of range"}},
           {"run gemm --backend serial --size 8 --tile 99999999999,4,4", kUsage, {"--tile", "out of range"}},
       })
    expect_case(c);
}

TEST(Hostile, NegativeZeroEmptyAndMalformedValuesAreNamed) {
  for (const Case& c : std::vector<Case>{
           {"run conv2d --backend serial --size 8 --k -3", kUsage, {"--k", "-3"}},
           {"compare conv2d --backends serial --size 8 --filter -3", kUsage, {"--filter", "-3"}},
           {"run gemm --backend serial --size 4 --m -5", kUsage, {"--m", "-5"}},
           {"compare --backends serial --size -1", kUsage, {"--size", "-1"}},
           {"compare --backends serial --size 8 --reps -1", kUsage, {"--reps", "-1"}},
           {"run gemm --backend serial --size 8 --reps 0", kUsage, {"--reps", "0"}},
           {"run gemm --backend serial --size ''", kUsage, {"--size", "empty"}},
           {"run gemm --backend '' --size 8", kUsage, {"--backend", "empty"}},
           {"compare --backends '' --size 8", kUsage, {"--backends", "empty"}},
           {"run gemm --backend serial --size 12abc", kUsage, {"--size", "12abc", "not an integer"}},
           {"run gemm --backend serial --size 1e3", kUsage, {"--size", "not an integer"}},
           {"run gemm --backend serial --size 8 --seed -1", kUsage, {"--seed", "-1"}},
           {"run gemm --backend serial --size 8 --tile 4,x,4", kUsage, {"--tile", "not an integer"}},
           {"run gemm --backend serial --size 8 --tile 4", kUsage, {"--tile", "ROWS,COLS"}},
           {"run conv2d --backend serial --size 8 --filter 4", kUsage, {"--filter", "odd"}},
           {"run conv2d --backend serial --size 8 --filter 33", kUsage, {"--filter", "out of range"}},
           {"run conv2d --backend serial --size 8 --filter 3 --k 5", kUsage, {"--filter", "--k", "disagree"}},
           {"run gemm --backend serial --size 8 --dtype half", kUsage, {"dtype", "half"}},
           {"run gemm --backend serial --size 8 --variant ''", kUsage, {"variant"}},
           {"run gemm --backend serial --m 3", kUsage, {"needs --size"}},
       })
    expect_case(c);
}

TEST(Hostile, OneRuleForSizeZeroInRunAndCompare) {
  expect_case({"run gemm --backend serial --size 0", kUsage, {"--size", "'0'", "out of range (1 to"}});
  expect_case({"compare gemm --backends serial --size 0", kUsage, {"--size", "'0'", "out of range (1 to"}});
  expect_case({"run transpose --backend serial --m 0 --n 5", kUsage, {"--m", "'0'"}});
}

TEST(Hostile, OptionsAVariantCannotUseAreRejected) {
  expect_case({"run gemm --backend serial --variant naive --size 8 --tile 4,4,4", kUsage, {"--tile", "naive"}});
  expect_case({"run transpose --backend serial --peer --size 8 --tile 4,4", kUsage, {"--tile", "--peer"}});
  expect_case({"run gemm --backend serial --size 8 --filter 3", kUsage, {"--filter", "conv2d only"}});
  expect_case({"run transpose --backend serial --size 8 --k 3", kUsage, {"--k", "transpose"}});
  expect_case({"run gemm --backend serial --size 8 --peer", kUsage, {"no peer"}});
}

TEST(Hostile, DuplicateOperationsAndBackendsAreRejected) {
  expect_case({"compare gemm gemm --backends serial --size 8", kUsage, {"'gemm'", "twice"}});
  expect_case({"compare gemm --backends serial,serial --size 8", kUsage, {"'serial'", "twice"}});
}

TEST(Hostile, MemoryThatCannotBeHadIsRefusedUpFront) {
  // Far beyond any machine: refused with what it needs and what there is, before allocating.
  for (const char* args : {"run gemm --backend serial --size 1000000", "run transpose --backend serial --m 2000000 --n 2000000",
                           "run conv2d --backend serial --size 2000000 --dtype double",
                           "compare gemm --backends serial --size 1000000"}) {
    const Result r = program(args);
    EXPECT_EQ(r.code, kResources) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("not enough memory"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bytes are available"), std::string::npos) << r.out;
  }
}

TEST(Hostile, OverOneMatrixLimitIsAUsageError) {
  // Fits in memory nowhere near as an allocation, but the element limit is the rule here:
  // 65536 x 32769 floats need about 8 GiB of host memory in doubles; on machines with less
  // the memory guard refuses first (exit 3). Either way: refused at once, named.
  const Result r = program("run transpose --backend serial --m 65536 --n 32769");
  EXPECT_TRUE(r.code == kUsage || r.code == kResources) << r.out;
  EXPECT_TRUE(r.out.find("2^31") != std::string::npos || r.out.find("not enough memory") != std::string::npos) << r.out;
}

TEST(Hostile, OutputFilesAreCheckedBeforeTheWork) {
  const std::string base = "compare transpose --backends serial --size 8 --reps 1 --no-roofline --json ";
  expect_case({(base + "/proc/version").c_str(), kUsage, {"--json", "/proc/version", "cannot write"}});
  expect_case({(base + "''").c_str(), kUsage, {"--json", "empty"}});
  expect_case({(base + "no/such/dir/r.json").c_str(), kUsage, {"--json", "No such file or directory"}});
  expect_case({(base + "/tmp").c_str(), kUsage, {"--json", "directory"}});
  // Checked first: a size far beyond memory would be refused (3) if the file check came later.
  expect_case({"compare gemm --backends serial --size 1000000 --json no/such/dir/r.json", kUsage, {"--json"}});
  struct stat st;
  if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {  // a failed write: an error with the system's reason
    const Result r = program("compare transpose --backends serial --size 8 --reps 1 --no-roofline --json /dev/full");
    EXPECT_EQ(r.code, kResources) << r.out;
    EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "a device written to must stay a device";
  }
}

TEST(Hostile, OutputFileAppearsWholeAndNoTemporaryRemains) {
  const std::string dir = testing::TempDir() + "tilekit_hostile_out";
  mkdir(dir.c_str(), 0755);
  const std::string file = dir + "/r.json";
  std::remove(file.c_str());
  const Result r = program("compare transpose --backends serial --size 8 --reps 1 --no-roofline --json " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(file);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Whole: the object ({"context", "rows"}) closes, and a JSON parser reads it.
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '{');
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");
  nlohmann::json parsed;
  EXPECT_NO_THROW(parsed = nlohmann::json::parse(text));
  EXPECT_TRUE(parsed.contains("rows") && parsed.contains("context"));
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  while (const dirent* e = readdir(d)) EXPECT_EQ(std::string(e->d_name).find(".tmp."), std::string::npos) << e->d_name;
  closedir(d);
}

TEST(Hostile, VersionHelpAndExitCodes) {
  const Result v = program("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("tilekit ", 0), 0u) << v.out;
  const Result h = program("--help");
  EXPECT_EQ(h.code, 0);
  for (const char* n : {"OMP_NUM_THREADS", "Exit codes", "README"}) EXPECT_NE(h.out.find(n), std::string::npos) << n;
  const Result rh = program("run --help");
  for (const char* n : {"--filter", "-r", "--k"}) EXPECT_NE(rh.out.find(n), std::string::npos) << n;
  const Result ch = program("compare --help");
  for (const char* n : {"--filter", "-r"}) EXPECT_NE(ch.out.find(n), std::string::npos) << n;
  expect_case({"frobnicate", kUsage, {}});
  expect_case({"run gemm --backend serial --size 8 --no-such-option", kUsage, {"--no-such-option"}});
}

TEST(Hostile, FilterHasOneNameInRunAndCompare) {
  expect_case({"run conv2d --backend serial --size 17 --filter 3 --reps 1", 0, {"k=3"}});
  expect_case({"run conv2d --backend serial --size 17 -r 7 --reps 1", 0, {"k=7"}});
  expect_case({"run conv2d --backend serial --size 17 --k 5 --reps 1", 0, {"k=5"}});  // the documented alias
  expect_case({"compare conv2d --backends serial --size 17 -r 3 --reps 1 --no-peers --no-roofline", 0, {"r3"}});
}

}  // namespace
