#include "diff_output.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "visible_bytes.h"

namespace sandboxctl {
namespace {

constexpr const char* kReset = "\033[m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kCyan = "\033[36m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";

}  // namespace

DiffOutput::DiffOutput(Paging paging) {
  if (!isatty(STDOUT_FILENO)) return;
  terminal_ = true;
  color_ = getenv("NO_COLOR") == nullptr;
  if (paging == Paging::kNone) return;
  const char* pager = getenv("SANDBOXCTL_PAGER");
  if (!pager) pager = getenv("PAGER");
  if (!pager || !*pager) pager = "less";
  if (std::string(pager) == "cat") return;
  setenv("LESS", "FRX", 0);
  signal(SIGPIPE, SIG_IGN);  // quitting the pager early is not an error
  pager_ = popen(pager, "w");
  if (pager_) out_ = pager_;
}

DiffOutput::~DiffOutput() { Finish(); }

void DiffOutput::Write(const char* data, size_t size) {
  partial_.append(data, size);
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
    WriteLine(partial_.substr(start, nl + 1 - start));
  partial_.erase(0, start);
}

const char* DiffOutput::ColorOf(std::string_view line) {
  if (line.starts_with("diff --git ")) {
    in_header_ = true;
    return kBold;
  }
  if (line.starts_with("@@")) {
    in_header_ = false;
    return kCyan;
  }
  if (in_header_) return kBold;
  if (line.starts_with("+")) return kGreen;
  if (line.starts_with("-")) return kRed;
  return nullptr;
}

void DiffOutput::WriteLine(const std::string& line) {
  if (!terminal_) {
    fwrite(line.data(), 1, line.size(), out_);  // a pipe gets the exact bytes
    return;
  }
  std::string_view body(line);
  if (body.back() == '\n') body.remove_suffix(1);
  const char* color = color_ ? ColorOf(body) : nullptr;
  // The job chose these bytes: a NUL, CR or escape sequence must not end, rewrite or move what
  // the person approves (visible_bytes.h), and the pager (less -R) would pass escapes through.
  // Written with its length: a NUL in it ends nothing.
  std::string shown = color ? color : "";
  shown += VisibleBytes(body);
  if (color) shown += kReset;
  shown += '\n';
  fwrite(shown.data(), 1, shown.size(), out_);
}

void DiffOutput::Finish() {
  if (!partial_.empty()) {
    WriteLine(partial_);
    partial_.clear();
  }
  fflush(out_);
  if (pager_) {
    pclose(pager_);
    pager_ = nullptr;
    out_ = stdout;
  }
}

}  // namespace sandboxctl
