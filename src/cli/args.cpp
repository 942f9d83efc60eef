#include "args.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace tilekit::cli {
namespace {
template <class I>
I parse_number(std::string_view option, const std::string& text, I lo, I hi) {
  if (text.empty()) throw Error(fmt::format("{}: empty value, expected an integer from {} to {}", option, lo, hi));
  I v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range)
    throw Error(fmt::format("{}: '{}' is out of range ({} to {})", option, text, lo, hi));
  if (ec != std::errc() || ptr != end) {
    // from_chars takes no sign for unsigned types: "-1" is out of range, not malformed.
    if (text[0] == '-' && text.size() > 1 && std::strspn(text.c_str() + 1, "0123456789") == text.size() - 1)
      throw Error(fmt::format("{}: '{}' is out of range ({} to {})", option, text, lo, hi));
    throw Error(fmt::format("{}: '{}' is not an integer", option, text));
  }
  if (v < lo || v > hi) throw Error(fmt::format("{}: '{}' is out of range ({} to {})", option, text, lo, hi));
  return v;
}
}  // namespace

index_t parse_int(std::string_view option, const std::string& text, index_t lo, index_t hi) {
  return parse_number<index_t>(option, text, lo, hi);
}

std::uint64_t parse_u64(std::string_view option, const std::string& text) {
  return parse_number<std::uint64_t>(option, text, 0, UINT64_MAX);
}

OutputFile::OutputFile(std::string option, std::string path) : option_(std::move(option)), path_(std::move(path)) {
  if (path_.empty()) throw Error(fmt::format("{}: empty file name", option_));
  struct stat st;
  const bool exists = stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: '{}' is a directory, not a file", option_, path_));
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, pipe or socket (/dev/stdout, a FIFO) is written in place: renaming over it
    // would replace it.
    f_ = std::fopen(path_.c_str(), "w");
    if (!f_) throw Error(fmt::format("{}: cannot write '{}': {}", option_, path_, std::strerror(errno)));
    return;
  }
  tmp_ = fmt::format("{}.tmp.{}", path_, getpid());
  f_ = std::fopen(tmp_.c_str(), "wx");
  if (!f_)
    throw Error(fmt::format("{}: cannot write '{}' (creating '{}' beside it failed: {})", option_, path_, tmp_,
                            std::strerror(errno)));
}

OutputFile::~OutputFile() {
  if (f_) {
    std::fclose(f_);
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
}

void OutputFile::commit(const std::string& content) {
  std::FILE* f = std::exchange(f_, nullptr);
  auto fail = [&](const char* what, int err) {
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    throw ResourceError(fmt::format("{}: {} '{}' failed: {}", option_, what, path_, std::strerror(err)));
  };
  errno = 0;
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size() && std::fflush(f) == 0;
  const int write_err = errno;
  if (!written) {
    std::fclose(f);
    fail("writing", write_err ? write_err : EIO);
  }
  if (!tmp_.empty() && fsync(fileno(f)) != 0) {
    const int err = errno;
    std::fclose(f);
    fail("writing", err);
  }
  if (std::fclose(f) != 0) fail("closing", errno);
  if (!tmp_.empty() && std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("renaming the finished file to", errno);
}

}  // namespace tilekit::cli
