#pragma once
/// What `git diff --no-index` prints for two files, with the a/P b/P labels sandboxd prints and
/// no index line (GitDiffNoIndex) or with it (GitDiffAsShown): the reference the diff tests
/// compare with.

#include <array>
#include <cstdio>
#include <memory>
#include <string>

namespace sandboxd::testing {

inline std::string GitDiffNoIndex(const std::string& old_path, const std::string& new_path, const std::string& shown) {
  std::string command = "cd / && git -c core.quotepath=off diff --no-index --no-color --no-ext-diff '" + old_path +
                        "' '" + new_path + "' 2>/dev/null";
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), &pclose);
  std::string out;
  std::array<char, 65536> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  std::string result;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    std::string line = out.substr(start, end - start);
    start = end == std::string::npos ? out.size() : end + 1;
    if (line.rfind("index ", 0) == 0) continue;
    if (line.rfind("diff --git ", 0) == 0) line = "diff --git a/" + shown + " b/" + shown;
    else if (line.rfind("--- a/", 0) == 0) line = "--- a/" + shown;
    else if (line.rfind("+++ b/", 0) == 0) line = "+++ b/" + shown;
    result += line + "\n";
  }
  return result;
}

/// What `git diff --no-index FLAGS` prints for `old_path` and `new_path` (either may be
/// /dev/null), index lines kept, with the names sandboxd prints (a/`shown`, b/`shown`) in its
/// "diff --git", ---/+++ and "Binary files" lines.
inline std::string GitDiffAsShown(const std::string& old_path, const std::string& new_path, const std::string& shown,
                                  const std::string& flags = "") {
  std::string command = "cd / && git -c core.quotepath=off diff --no-index --no-color --no-ext-diff " + flags + " '" + old_path +
                        "' '" + new_path + "' 2>/dev/null";
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), &pclose);
  std::string out;
  std::array<char, 65536> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  const std::string old_label = old_path == "/dev/null" ? "/dev/null" : "a/" + shown;
  const std::string new_label = new_path == "/dev/null" ? "/dev/null" : "b/" + shown;
  std::string result;
  for (size_t start = 0; start < out.size();) {
    size_t end = out.find('\n', start);
    std::string line = out.substr(start, end - start);
    start = end == std::string::npos ? out.size() : end + 1;
    if (line.rfind("diff --git ", 0) == 0) line = "diff --git a/" + shown + " b/" + shown;
    else if (line.rfind("--- a/", 0) == 0) line = "--- " + old_label;
    else if (line.rfind("+++ b/", 0) == 0) line = "+++ " + new_label;
    else if (line.rfind("Binary files ", 0) == 0) line = "Binary files " + old_label + " and " + new_label + " differ";
    result += line + "\n";
  }
  return result;
}

}  // namespace sandboxd::testing
