#pragma once
/// Showing a diff to a person: when stdout is a terminal, through the pager, in git's colours
/// and with every control byte of content shown visibly (visible_bytes.h); otherwise the exact
/// bytes, for git apply and scripts.

#include <cstdio>
#include <string>
#include <string_view>

namespace sandboxctl {

class DiffOutput {
 public:
  enum class Paging { kPager, kNone };
  /// Starts the pager ($SANDBOXCTL_PAGER, $PAGER or "less", with LESS=FRX) when stdout is a tty,
  /// unless told not to (a review shows one hunk at a time between questions).
  explicit DiffOutput(Paging paging = Paging::kPager);
  ~DiffOutput();
  DiffOutput(const DiffOutput&) = delete;
  DiffOutput& operator=(const DiffOutput&) = delete;

  /// Writes `data` (any chunking; lines are coloured whole).
  void Write(const char* data, size_t size);
  /// Flushes and waits for the pager.
  void Finish();

 private:
  void WriteLine(const std::string& line);
  /// git's colour for `line` (without its newline), nullptr for none; follows the headers.
  const char* ColorOf(std::string_view line);
  bool terminal_ = false;
  bool color_ = false;
  FILE* out_ = stdout;
  FILE* pager_ = nullptr;
  std::string partial_;
  bool in_header_ = false;
};

}  // namespace sandboxctl
