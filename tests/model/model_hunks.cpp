#include "model_hunks.h"

#include <cstdio>
#include <sstream>

namespace sandboxd::model {
namespace {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size() - 1;
    lines.push_back(text.substr(start, end - start + 1));
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::vector<Hunk> ParseHunks(const std::string& diff) {
  std::vector<Hunk> hunks;
  Hunk* current = nullptr;
  for (const auto& raw : SplitLines(diff)) {
    std::string line = raw;
    if (line.rfind("@@ ", 0) == 0) {
      hunks.emplace_back();
      current = &hunks.back();
      int os = 0, oc = 1, ns = 0, nc = 1;
      if (std::sscanf(line.c_str(), "@@ -%d,%d +%d,%d @@", &os, &oc, &ns, &nc) != 4) {
        // "-N +M,K", "-N,K +M" or "-N +M": a count of one left out.
        oc = nc = 1;
        if (std::sscanf(line.c_str(), "@@ -%d,%d +%d @@", &os, &oc, &ns) == 3) nc = 1;
        else if (std::sscanf(line.c_str(), "@@ -%d +%d,%d @@", &os, &ns, &nc) == 3) oc = 1;
        else std::sscanf(line.c_str(), "@@ -%d +%d @@", &os, &ns);
      }
      current->old_start = os;
      current->old_count = oc;
      current->new_start = ns;
      current->new_count = nc;
      current->text = line;
      continue;
    }
    if (!current) continue;
    if (!line.empty() && (line[0] == ' ' || line[0] == '-' || line[0] == '+' || line[0] == '\\')) {
      current->lines.push_back(line);
      current->text += line;
    } else {
      current = nullptr;  // the next file's header
    }
  }
  return hunks;
}

std::string ApplyHunks(const std::string& old_text, const std::vector<Hunk>& hunks, const std::vector<bool>& take, bool& ok) {
  ok = true;
  std::vector<std::string> old = SplitLines(old_text);
  std::string out;
  size_t at = 0;  // next old line (0-based) not yet copied
  for (size_t i = 0; i < hunks.size(); ++i) {
    const Hunk& h = hunks[i];
    size_t start = h.old_count == 0 ? static_cast<size_t>(h.old_start) : static_cast<size_t>(h.old_start - 1);
    if (start < at || start > old.size()) {
      ok = false;
      return "";
    }
    for (; at < start; ++at) out += old[at];
    bool apply = i < take.size() && take[i];
    for (const auto& line : h.lines) {
      char op = line[0];
      std::string body = line.substr(1);
      if (op == '\\') continue;  // "\ No newline at end of file": the generator always ends lines
      if (op == ' ' || op == '-') {
        if (at >= old.size() || old[at] != body) {
          ok = false;
          return "";
        }
        ++at;
        if (op == ' ' || !apply) out += body;
      } else if (op == '+' && apply) {
        out += body;
      }
    }
  }
  for (; at < old.size(); ++at) out += old[at];
  return out;
}

}  // namespace sandboxd::model
