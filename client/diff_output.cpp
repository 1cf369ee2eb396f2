#include "diff_output.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace sandboxctl {
namespace {

constexpr const char* kReset = "\033[m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kCyan = "\033[36m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

DiffOutput::DiffOutput(Paging paging) {
  if (!isatty(STDOUT_FILENO)) return;
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

void DiffOutput::WriteLine(const std::string& line) {
  if (!color_) {
    fwrite(line.data(), 1, line.size(), out_);
    return;
  }
  std::string body = line.substr(0, line.size() - (line.back() == '\n' ? 1 : 0));
  const char* color = nullptr;
  if (StartsWith(body, "diff --git ")) {
    in_header_ = true;
    color = kBold;
  } else if (StartsWith(body, "@@")) {
    in_header_ = false;
    color = kCyan;
  } else if (in_header_) {
    color = kBold;
  } else if (StartsWith(body, "+")) {
    color = kGreen;
  } else if (StartsWith(body, "-")) {
    color = kRed;
  }
  if (color) fprintf(out_, "%s%s%s\n", color, body.c_str(), kReset);
  else fprintf(out_, "%s\n", body.c_str());
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
