// Checked parsing of the program's options and its output files: every value is checked
// before any work starts, and every failure is a tilekit::Error naming the option and value.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "tilekit/types.hpp"

namespace tilekit::cli {

// Exit codes of the tilekit program (the README's table lists them).
inline constexpr int kExitOk = 0, kExitVerifyFailed = 1, kExitUsage = 2, kExitResources = 3, kExitInternal = 4;

// A decimal integer in [lo, hi]; throws "OPTION: 'TEXT' is not an integer" / "is out of range (LO to HI)"
// (empty strings, signs where lo >= 0, trailing characters and overflow included).
index_t parse_int(std::string_view option, const std::string& text, index_t lo, index_t hi);
std::uint64_t parse_u64(std::string_view option, const std::string& text);

// A file the program writes its results to. The constructor checks, before any work starts,
// that the file can be created (its directory exists and is writable, it is not a directory),
// by creating a temporary file beside it; commit() writes the content there and renames it
// over the target, so a reader never sees half a file. A failed write, flush, close or rename
// throws with the system's reason. Destroyed without commit(), it removes the temporary.
class OutputFile {
 public:
  OutputFile(std::string option, std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void commit(const std::string& content);
  const std::string& path() const { return path_; }

 private:
  std::string option_, path_, tmp_;
  std::FILE* f_ = nullptr;
};

}  // namespace tilekit::cli
