#pragma once
/// Showing a diff to a person: through the pager and in git's colours when stdout is a
/// terminal, plain otherwise.

#include <cstdio>
#include <string>

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
  bool color_ = false;
  FILE* out_ = stdout;
  FILE* pager_ = nullptr;
  std::string partial_;
  bool in_header_ = false;
};

}  // namespace sandboxctl
