#include "model_checks.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "model_names.h"

namespace sandboxd::model {

using it::World;

namespace {

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

char Letter(const std::string& kind) {
  if (kind == "added") return 'A';
  if (kind == "modified") return 'M';
  if (kind == "deleted") return 'D';
  if (kind == "type-changed") return 'T';
  if (kind == "mode-changed") return 'P';
  return '?';
}

std::string Field(const nlohmann::json& entry, const char* key) {
  auto it = entry.find(key);
  return it != entry.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<uint32_t> Numbers(const nlohmann::json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_array()) return {};
  std::vector<uint32_t> out;
  for (const auto& n : *it)
    if (n.is_number()) out.push_back(n.get<uint32_t>());
  return out;
}

bool Truthy(const nlohmann::json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number()) return it->get<double>() != 0;
  if (it->is_string()) return it->get<std::string>() == "true" || it->get<std::string>() == "yes";
  return !it->is_null();
}

std::string Join(const std::vector<uint32_t>& v) {
  std::string out;
  for (auto n : v) out += (out.empty() ? "" : ",") + std::to_string(n);
  return "[" + out + "]";
}

void CheckChangesJson(Sequence& seq) {
  CtlResult r = Ctl({"--json", "changes", seq.id});
  if (r.status != 0) throw Mismatch("`changes --json` exited " + std::to_string(r.status) + ": " + Printable(r.err, 300));
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    throw Mismatch(std::string("`changes --json` is not JSON: ") + e.what());
  }
  auto expected = seq.model.Changes();
  auto holding = seq.model.EffectiveDecisions(expected);
  std::map<std::string, nlohmann::json> actual;
  for (const auto& entry : parsed) actual[Field(entry, "path")] = entry;
  std::string diffs;
  for (const auto& e : expected) {
    auto it = actual.find(WireName(e.path));
    if (it == actual.end()) {
      diffs += "    missing: " + e.kind + " " + GitQuote(e.path) + "\n";
      continue;
    }
    const nlohmann::json entry = it->second;
    actual.erase(it);
    std::string q = GitQuote(e.path);
    if (Field(entry, "kind") != e.kind) diffs += "    " + q + ": kind " + Field(entry, "kind") + ", expected " + e.kind + "\n";
    if (!e.rename_unsure) {
      std::string from = e.renamed_from.empty() ? "" : WireName(e.renamed_from), to = e.renamed_to.empty() ? "" : WireName(e.renamed_to);
      if (Field(entry, "renamed_from") != from)
        diffs += "    " + q + ": renamed_from \"" + Printable(Field(entry, "renamed_from")) + "\", expected \"" + Printable(e.renamed_from) + "\"\n";
      if (Field(entry, "renamed_to") != to)
        diffs += "    " + q + ": renamed_to \"" + Printable(Field(entry, "renamed_to")) + "\", expected \"" + Printable(e.renamed_to) + "\"\n";
    }
    const Decision& decision = holding[e.path];
    if (decision.whole != 'u') {
      std::string review = Field(entry, "review").empty() ? "pending" : Field(entry, "review");
      if (review != decision.Review()) diffs += "    " + q + ": decision " + review + ", expected " + decision.Review() + "\n";
      else if (review == "partial") {
        if (Numbers(entry, "approved_hunks") != decision.HunksIn('a') || Numbers(entry, "rejected_hunks") != decision.HunksIn('r'))
          diffs += "    " + q + ": hunks approved " + Join(Numbers(entry, "approved_hunks")) + " rejected " + Join(Numbers(entry, "rejected_hunks")) +
                   ", expected approved " + Join(decision.HunksIn('a')) + " rejected " + Join(decision.HunksIn('r')) + "\n";
        auto count = entry.find("hunks");
        if (count != entry.end() && count->is_number() && count->get<size_t>() != decision.hunks.size())
          diffs += "    " + q + ": " + std::to_string(count->get<size_t>()) + " hunks, expected " + std::to_string(decision.hunks.size()) + "\n";
      }
    }
    if (!seq.skips.conflicts && !seq.skips.marks && Truthy(entry, "conflict") != e.conflict)
      diffs += "    " + q + (e.conflict ? ": a conflict (the live entry changed after the job read it) is not marked (`conflict` in --json)\n"
                                        : ": marked as a conflict, but the sandbox saw every live change of it\n");
  }
  for (const auto& [p, entry] : actual) diffs += "    unexpected: " + Field(entry, "kind") + " " + Printable(p) + "\n";
  if (!diffs.empty()) throw Mismatch("`changes --json` differs from the model:\n" + diffs);
}

bool LineFor(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0 && (l.size() == prefix.size() || l[prefix.size()] == ' ')) return true;
  return false;
}

void CheckChangesHuman(Sequence& seq) {
  if (seq.skips.names) return;
  CtlResult r = Ctl({"changes", seq.id});
  if (r.status != 0) throw Mismatch("`changes` exited " + std::to_string(r.status) + ": " + Printable(r.err, 300));
  if (HasRawControlBytes(r.out)) throw Mismatch("`changes` prints raw control bytes from names: \"" + Printable(r.out, 600) + "\"");
  auto expected = seq.model.Changes();
  auto lines = LinesOf(r.out);
  std::string diffs;
  if (lines.size() != expected.size())
    diffs += "    " + std::to_string(lines.size()) + " lines for " + std::to_string(expected.size()) + " changes\n";
  for (const auto& e : expected) {
    std::string a = std::string(1, Letter(e.kind)) + " " + GitQuote(e.path), b = std::string(1, Letter(e.kind)) + " " + GitQuote(e.path, true);
    if (!LineFor(lines, a) && !LineFor(lines, b)) diffs += "    no line \"" + Printable(a) + "\"\n";
  }
  if (!diffs.empty()) throw Mismatch("`changes` (human) differs: names must be quoted as git does:\n" + diffs + "  output: \"" + Printable(r.out, 800) + "\"");
}

void CheckDiff(Sequence& seq) {
  CtlResult r = Ctl({"diff", seq.id});
  if (r.status != 0) throw Mismatch("`diff` exited " + std::to_string(r.status) + ": " + Printable(r.err, 300));
  if (seq.skips.names) return;
  auto lines = LinesOf(r.out);
  // Content lines (in a hunk: ' ', '+', '-', '\\') hold what the files hold, raw as git prints
  // them; no other line may hold a raw control byte.
  bool in_hunk = false;
  for (const auto& l : lines) {
    if (l.rfind("diff --git ", 0) == 0) in_hunk = false;
    else if (l.rfind("@@", 0) == 0) in_hunk = true;
    bool content = in_hunk && !l.empty() && (l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\');
    if (!content && HasRawControlBytes(l)) throw Mismatch("`diff` prints raw control bytes outside content: \"" + Printable(l, 300) + "\"");
  }
  std::string diffs;
  for (const auto& e : seq.model.Changes()) {
    if (e.type == 'd' || !e.renamed_from.empty() || !e.renamed_to.empty() || e.rename_unsure) continue;
    bool found = false;
    for (bool high : {false, true}) {
      std::string header = "diff --git " + GitQuote("a/" + e.path, high) + " " + GitQuote("b/" + e.path, high);
      for (const auto& l : lines) found = found || l == header;
    }
    if (!found) diffs += "    no header \"diff --git " + Printable(GitQuote("a/" + e.path)) + " " + Printable(GitQuote("b/" + e.path)) + "\"\n";
  }
  if (!diffs.empty()) throw Mismatch("`diff` headers must name each change as git quotes it:\n" + diffs);
}

}  // namespace

void CheckLive(Sequence& seq, const Tree& expected, const std::string& what) {
  std::string diffs = CompareTrees(expected, ReadTree(seq.project), !seq.skips.hardlinks);
  if (!diffs.empty()) throw Mismatch("live tree " + what + " differs from the model:\n" + diffs);
}

std::vector<Hunk> HunksOf(Sequence& seq, const std::string& path) {
  CtlResult r = Ctl({"diff", seq.id, "--", WireName(path)});
  if (r.status != 0) throw Mismatch("`diff " + Printable(path) + "` exited " + std::to_string(r.status) + ": " + Printable(r.err, 200));
  auto hunks = ParseHunks(r.out);
  bool ok = true;
  std::vector<bool> every(hunks.size(), true);
  std::string rebuilt = ApplyHunks(seq.model.live[path].data, hunks, every, ok);
  if (!ok || rebuilt != seq.model.view[path].data)
    throw Mismatch("the hunks of `diff " + Printable(path) + "` applied to the live text do not give the sandbox's text:\n" + Printable(r.out, 800));
  return hunks;
}

void CheckOptions(Sequence& seq) {
  if (seq.skips.options) return;
  CtlResult r = Ctl({"--json", "show", seq.id});
  if (r.status != 0) throw Mismatch("`show --json` exited " + std::to_string(r.status) + ": " + Printable(r.err, 200));
  std::string diffs;
  try {
    auto info = nlohmann::json::parse(r.out);
    if (info.value("name", "") != seq.name) diffs += "    name \"" + info.value("name", "") + "\", expected \"" + seq.name + "\"\n";
    if (info.value("ttl_sec", uint64_t{0}) != seq.ttl_sec)
      diffs += "    ttl_sec " + std::to_string(info.value("ttl_sec", uint64_t{0})) + ", expected " + std::to_string(seq.ttl_sec) + "\n";
    if (info.value("quota_bytes", uint64_t{0}) != seq.quota_bytes)
      diffs += "    quota_bytes " + std::to_string(info.value("quota_bytes", uint64_t{0})) + ", expected " + std::to_string(seq.quota_bytes) + "\n";
    auto hide = info.value("hide", std::vector<std::string>{});
    if (!seq.hidden.empty() && std::find(hide.begin(), hide.end(), seq.hidden) == hide.end())
      diffs += "    hide does not hold " + seq.hidden + "\n";
  } catch (const std::exception& e) {
    diffs += std::string("    not JSON: ") + e.what() + "\n";
  }
  if (!seq.hidden.empty()) {
    CtlResult job = Ctl({"run", seq.id, "--", "sh", "-c", "cat '" + seq.hidden + "/key.txt' 2>/dev/null"});
    if (job.status == 0) diffs += "    the `create --hide` path " + seq.hidden + " is readable in a job\n";
  }
  if (!diffs.empty()) throw Mismatch("create options after the daemon's restart (DESIGN: every create option survives):\n" + diffs);
}

void CheckAll(Sequence& seq, bool with_diff) {
  CheckLive(seq, seq.model.live, "");
  std::string merged = World().MergedView(seq.id);
  // SANDBOXD_MODEL_NO_VIEW=1 leaves the merged view unread (to tell whether reading it matters).
  static const bool read_view = !std::getenv("SANDBOXD_MODEL_NO_VIEW");
  if (!read_view) merged = "";
  std::string view = merged.empty() ? "" : CompareTrees(seq.model.view, ReadTree(merged), !seq.skips.hardlinks);
  if (!view.empty()) {
    std::string mounts, all = World().DaemonMounts();
    for (size_t at = all.find(seq.id); at != std::string::npos; at = all.find(seq.id, at + 1)) mounts = "mounted";
    throw Mismatch("the sandbox's view (" + merged + (mounts.empty() ? ", not mounted" : "") + ") differs from the model:\n" + view);
  }
  CheckChangesJson(seq);
  CheckChangesHuman(seq);
  if (with_diff) CheckDiff(seq);
}

}  // namespace sandboxd::model
