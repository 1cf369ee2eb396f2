#include "model_ops.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <chrono>
#include <cstdio>
#include <thread>

#include "harness.h"
#include "model_checks.h"
#include "model_names.h"

namespace sandboxd::model {

using it::kAlice;
using it::World;

CtlResult Ctl(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"--no-ask-password"};
  full.insert(full.end(), args.begin(), args.end());
  it::Result r = World().Sandboxctl(kAlice, full, {.timeout = std::chrono::seconds(120)});
  return {r.status, r.out, r.err};
}

namespace {

/// The mounts of the sandbox (for a failure that is about them).
std::string MountsOf(const std::string& id) {
  std::string out, all = World().DaemonMounts();
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find('\n', at);
    if (end == std::string::npos) end = all.size();
    std::string line = all.substr(at, end - at);
    if (line.find(id) != std::string::npos) out += "    " + line.substr(0, 300) + "\n";
    at = end + 1;
  }
  return out.empty() ? "    (no mount of it)\n" : out;
}

std::string Fail(const std::string& what, const CtlResult& r, const std::string& id = "") {
  std::string text = what + " exited " + std::to_string(r.status) + ": " + Printable(r.err, 400);
  if (!id.empty() && r.err.find("mount") != std::string::npos) text += "\n  mounts now:\n" + MountsOf(id);
  return text;
}

/// The owner's own shell, in the live project (umask fixed so the model knows every mode).
void Live(Sequence& seq, const std::string& script) {
  it::Result r = World().RunAs(kAlice, {"sh", "-c", "umask 022; " + script}, {.cwd = seq.project});
  if (r.status != 0) throw Mismatch("live edit `" + Printable(script, 200) + "` failed: " + Printable(r.err, 300));
}

std::string P(const std::string& path) { return ShellWord("./" + path); }

/// 30 numbered lines (text files the test edits hunk by hunk).
std::string Lines(Sequence& seq, const std::string& tag) {
  std::string text;
  for (int i = 1; i <= 30; ++i) text += "L" + std::to_string(i) + " " + tag + "\n";
  (void)seq;
  return text;
}

std::string Tag(Sequence& seq) { return "s" + std::to_string(seq.seed) + "n" + std::to_string(++seq.serial); }

/// A new name: plain, in an existing or new directory, or odd (DESIGN: names are data).
std::string NewName(Sequence& seq) {
  std::string n = std::to_string(++seq.serial);
  std::vector<std::string> odd = {
      "with space " + n + ".txt", "-dash" + n, "new\nline" + n + ".txt", "evil\033[2K\r" + n, "bell\a" + n,
      "quote\"" + n, "back\\slash" + n, "tab\t" + n, "caf\xc3\xa9" + n, "\xe6\x97\xa5\xe6\x9c\xac" + n,
      "cr\r" + n, "del\x7f" + n};
  if (!seq.skips.nonutf8) odd.push_back("bad\xff\xfe" + n);
  switch (seq.Below(6)) {
    case 0: return "sub/f" + n + ".txt";
    case 1: return "nd" + std::to_string(seq.Below(3)) + "/g" + n + ".txt";
    case 2: return odd[seq.Below(odd.size())];
    case 3: return "odd/" + odd[seq.Below(odd.size())];
    default: return "f" + n + ".txt";
  }
}

bool IsText(const Entry& e) { return e.type == 'f' && e.data.find('\0') == std::string::npos; }

std::vector<std::string> Pick(Sequence&, const Tree& tree, const std::function<bool(const std::string&, const Entry&)>& ok) {
  std::vector<std::string> out;
  for (const auto& [p, e] : tree)
    if (ok(p, e)) out.push_back(p);
  return out;
}

std::string One(Sequence& seq, const std::vector<std::string>& from) { return from[seq.Below(from.size())]; }

/// One act of a job on the model's view; returns its shell text and appends a compact note.
std::string JobAct(Sequence& seq, std::string& note) {
  Model& m = seq.model;
  auto files = Pick(seq, m.view, [](const std::string&, const Entry& e) { return e.type == 'f'; });
  auto texts = Pick(seq, m.view, [](const std::string&, const Entry& e) { return IsText(e); });
  auto removable = Pick(seq, m.view, [](const std::string&, const Entry& e) { return e.type == 'f' || e.type == 'l'; });
  auto links = Pick(seq, m.view, [](const std::string&, const Entry& e) { return e.type == 'l'; });
  auto add = [&](const std::string& what, const std::string& path) { note += (note.empty() ? "" : "; ") + what + " " + Printable(path, 40); };
  for (int tries = 0; tries < 20; ++tries) {
    switch (seq.Below(12)) {
      case 0:
      case 1: {  // a new text file
        std::string path = NewName(seq);
        if (m.view.count(path)) continue;
        std::string content = Lines(seq, Tag(seq));
        add("add", path);
        std::string dir = path.find('/') == std::string::npos ? "" : "mkdir -p " + ShellWord("./" + path.substr(0, path.rfind('/'))) + " && ";
        m.JobWrite(path, content);
        return dir + "printf " + PrintfFormat(content) + " > " + P(path);
      }
      case 2:
      case 3: {  // edit 1-3 lines far apart (one hunk each), in place
        if (texts.empty()) continue;
        std::string path = One(seq, texts);
        std::string text = m.view[path].data;
        std::vector<std::string> lines;
        for (size_t at = 0; at < text.size();) {
          size_t end = text.find('\n', at);
          if (end == std::string::npos) end = text.size() - 1;
          lines.push_back(text.substr(at, end - at + 1));
          at = end + 1;
        }
        if (lines.empty()) continue;
        int edits = 1 + static_cast<int>(seq.Below(3));
        std::string tag = Tag(seq);
        for (int k = 0; k < edits; ++k) {
          size_t at = (static_cast<size_t>(k) * 12 + seq.Below(4)) % lines.size();
          lines[at] = "E" + std::to_string(at + 1) + " " + tag + "\n";
        }
        std::string content;
        for (auto& l : lines) content += l;
        add("edit", path);
        m.JobWrite(path, content);
        return "printf " + PrintfFormat(content) + " > " + P(path);
      }
      case 4: {  // append (through one name of a hard link, too)
        if (texts.empty()) continue;
        std::string path = One(seq, texts);
        std::string line = "A " + Tag(seq) + "\n";
        add("append", path);
        m.JobAppend(path, line);
        return "printf " + PrintfFormat(line) + " >> " + P(path);
      }
      case 5: {  // delete
        if (removable.empty()) continue;
        std::string path = One(seq, removable);
        add("rm", path);
        m.JobDelete(path);
        return "rm -f " + P(path);
      }
      case 6: {  // rename to a new name
        if (removable.empty()) continue;
        std::string from = One(seq, removable), to = NewName(seq);
        if (m.view.count(to) || to.rfind(from + "/", 0) == 0) continue;
        add("mv", from + " -> " + to);
        std::string dir = to.find('/') == std::string::npos ? "" : "mkdir -p " + ShellWord("./" + to.substr(0, to.rfind('/'))) + " && ";
        m.JobRename(from, to);
        return dir + "mv " + P(from) + " " + P(to);
      }
      case 7: {  // chmod
        if (files.empty()) continue;
        std::string path = One(seq, files);
        static const unsigned kModes[] = {0600, 0644, 0664, 0700, 0755, 0640};
        unsigned mode = kModes[seq.Below(6)];
        if (mode == m.view[path].mode) continue;
        char text[8];
        std::snprintf(text, sizeof text, "%o", mode);
        add(std::string("chmod ") + text, path);
        m.JobChmod(path, mode);
        return std::string("chmod ") + text + " " + P(path);
      }
      case 8: {  // a new symlink, or one pointed elsewhere
        std::string path = !links.empty() && seq.Chance(40) ? One(seq, links) : NewName(seq);
        std::string target = files.empty() ? "nowhere" : One(seq, files);
        if (m.view.count(path) && m.view[path].type != 'l') continue;
        add("ln -s", path + " -> " + target);
        std::string dir = path.find('/') == std::string::npos ? "" : "mkdir -p " + ShellWord("./" + path.substr(0, path.rfind('/'))) + " && ";
        m.JobSymlink(path, target);
        return dir + "ln -sfn -- " + ShellWord(target) + " " + P(path);
      }
      case 9: {  // two names of one new file
        if (seq.skips.hardlinks) continue;
        std::string a = NewName(seq), b = NewName(seq);
        if (m.view.count(a) || m.view.count(b)) continue;
        std::string content = Lines(seq, Tag(seq));
        add("hardlink", a + " = " + b);
        std::string dirs;
        for (const auto& p : {a, b})
          if (p.find('/') != std::string::npos) dirs += "mkdir -p " + ShellWord("./" + p.substr(0, p.rfind('/'))) + " && ";
        m.JobWrite(a, content);
        m.JobHardlink(a, b);
        return dirs + "printf " + PrintfFormat(content) + " > " + P(a) + " && ln " + P(a) + " " + P(b);
      }
      case 10: {  // binary content, new or over a file
        std::string path = !files.empty() && seq.Chance(50) ? One(seq, files) : NewName(seq);
        if (m.view.count(path) && m.view[path].type != 'f') continue;
        std::string content = std::string("\x01\x02", 2) + std::string(1, '\0') + "bin " + Tag(seq) + std::string(1, '\0') + "\n";
        add("binary", path);
        std::string dir = path.find('/') == std::string::npos ? "" : "mkdir -p " + ShellWord("./" + path.substr(0, path.rfind('/'))) + " && ";
        m.JobWrite(path, content);
        return dir + "printf " + PrintfFormat(content) + " > " + P(path);
      }
      case 11: {  // a file becomes a symlink (type change)
        if (files.empty()) continue;
        std::string path = One(seq, files);
        if (m.GroupOf(path).size() > 1) continue;
        add("file->symlink", path);
        m.JobDelete(path);
        m.JobSymlink(path, "t1.txt");
        return "rm -f " + P(path) + " && ln -s t1.txt " + P(path);
      }
    }
  }
  note += (note.empty() ? "" : "; ") + std::string("nothing");
  return "true";
}

void OpJob(Sequence& seq) {
  std::string note, script = "umask 022";
  int acts = 1 + static_cast<int>(seq.Below(3));
  for (int i = 0; i < acts; ++i) script += " && " + JobAct(seq, note);
  seq.history.back() += "job[" + note + "]";
  Job(seq, script);
}

void OpLive(Sequence& seq) {
  Model& m = seq.model;
  auto files = Pick(seq, m.live, [](const std::string&, const Entry& e) { return e.type == 'f'; });
  auto texts = Pick(seq, m.live, [](const std::string&, const Entry& e) { return IsText(e); });
  // Prefer what the sandbox changed too: that is where conflicts are.
  auto both = Pick(seq, m.live, [&](const std::string& p, const Entry& e) { return IsText(e) && m.touched.count(p); });
  std::string& h = seq.history.back();
  switch (seq.Below(5)) {
    case 0:
    case 1: {
      auto& from = !both.empty() && seq.Chance(60) ? both : texts;
      if (from.empty()) break;
      std::string path = One(seq, from);
      std::string content = m.live[path].data + "live " + Tag(seq) + "\n";
      h += "live-edit " + Printable(path, 40);
      m.LiveWrite(path, content);
      Live(seq, "printf " + PrintfFormat(content) + " > " + P(path));
      return;
    }
    case 2: {
      auto& from = !both.empty() && seq.Chance(60) ? both : files;
      if (from.empty()) break;
      std::string path = One(seq, from);
      h += "live-rm " + Printable(path, 40);
      m.LiveDelete(path);
      Live(seq, "rm -f " + P(path));
      return;
    }
    case 3: {  // a new live file, sometimes where the sandbox made one
      auto added = Pick(seq, m.view, [&](const std::string& p, const Entry& e) {
        if (e.type != 'f' || m.live.count(p)) return false;
        for (const auto& dir : Parents(p))
          if (!m.live.count(dir)) return false;
        return true;
      });
      std::string path = !added.empty() && seq.Chance(50) ? One(seq, added) : "live" + std::to_string(++seq.serial) + ".txt";
      std::string content = Lines(seq, Tag(seq));
      h += "live-add " + Printable(path, 40);
      m.LiveWrite(path, content);
      Live(seq, "printf " + PrintfFormat(content) + " > " + P(path));
      return;
    }
    case 4: {
      if (files.empty()) break;
      std::string path = One(seq, files);
      unsigned mode = m.live[path].mode == 0644 ? 0600 : 0644;
      h += std::string("live-chmod ") + (mode == 0600 ? "600 " : "644 ") + Printable(path, 40);
      m.LiveChmod(path, mode);
      Live(seq, std::string("chmod ") + (mode == 0600 ? "600 " : "644 ") + P(path));
      return;
    }
  }
  h += "live-nothing";
}

/// Changes a person can name on the command line (by their wire names): files and symlinks,
/// not one of several rename candidates.
std::vector<ExpectedChange> Nameable(Sequence& seq) {
  std::vector<ExpectedChange> out;
  for (auto& c : seq.model.Changes())
    if (c.type != 'd' && !c.rename_unsure && c.path.find(':') == std::string::npos) out.push_back(c);
  return out;
}

/// Decides whole changes: each named one with the rest of its hard-link group and its rename
/// partner (docs/security.md: they go live together), as one sandboxctl call.
void Decide(Sequence& seq, const std::vector<std::string>& paths, bool approve) {
  Model& m = seq.model;
  std::set<std::string> all;
  for (const auto& p : paths) {
    all.insert(p);
    auto c = m.ChangeAt(p);
    if (c && !c->renamed_from.empty()) all.insert(c->renamed_from);
    if (c && !c->renamed_to.empty()) all.insert(c->renamed_to);
    for (const auto& g : m.GroupOf(p))
      if (m.ChangeAt(g)) all.insert(g);
  }
  std::vector<std::string> args = {approve ? "approve" : "reject", seq.id, "--"};
  for (const auto& p : all) args.push_back(WireName(p));
  CtlResult r = Ctl(args);
  if (r.status != 0) throw Mismatch(Fail(args[0] + " " + Printable(args.back()), r));
  m.ForgetLapsed();
  auto changes = m.Changes();
  for (const auto& p : all) m.Decide(p, Decision{approve ? 'a' : 'r', {}}, changes);
}

void OpDecideFiles(Sequence& seq) {
  auto changes = Nameable(seq);
  if (changes.empty()) {
    seq.history.back() += "decide-nothing";
    return;
  }
  std::vector<std::string> chosen;
  size_t k = 1 + seq.Below(std::min<size_t>(3, changes.size()));
  for (size_t i = 0; i < k; ++i) chosen.push_back(changes[seq.Below(changes.size())].path);
  bool approve = seq.Chance(65);
  std::string note;
  for (const auto& p : chosen) note += " " + Printable(p, 30);
  seq.history.back() += std::string(approve ? "approve" : "reject") + note;
  Decide(seq, chosen, approve);
}

void OpApproveAll(Sequence& seq) {
  seq.history.back() += "approve --all";
  CtlResult r = Ctl({"approve", seq.id, "--all"});
  if (r.status != 0) throw Mismatch(Fail("approve --all", r));
  seq.model.ForgetLapsed();
  // Every change, rejected ones too: the owner said "all" (the daemon's reading; DESIGN does
  // not say, and `commit --all`, which approves pending ones only, is another verb).
  auto changes = seq.model.Changes();
  for (const auto& c : changes) seq.model.Decide(c.path, Decision{'a', {}}, changes);
}

void OpDecideHunks(Sequence& seq) {
  Model& m = seq.model;
  std::vector<std::string> candidates;
  auto holding = m.EffectiveDecisions(m.Changes());
  for (const auto& c : Nameable(seq))
    if (c.kind == "modified" && IsText(m.view[c.path]) && IsText(m.live[c.path]) && m.GroupOf(c.path).size() == 1 &&
        holding[c.path].whole != 'u')
      candidates.push_back(c.path);
  if (candidates.empty()) {
    seq.history.back() += "hunks-nothing";
    return;
  }
  std::string path = One(seq, candidates);
  std::vector<Hunk> hunks = HunksOf(seq, path);
  size_t n = hunks.size();
  Decision d = holding[path];
  if (d.whole != 'h') d.hunks.assign(n, d.whole == 'a' ? 'a' : d.whole == 'r' ? 'r' : 'p');
  d.whole = 'h';
  if (d.hunks.size() != n) throw Mismatch("the model holds " + std::to_string(d.hunks.size()) + " hunk decisions for " + path + ", the diff has " + std::to_string(n));
  std::vector<std::string> approve = {"approve", seq.id, "--"}, reject = {"reject", seq.id, "--"};
  std::string note = "hunks " + Printable(path, 30) + " ";
  for (size_t i = 0; i < n; ++i) {
    int r = static_cast<int>(seq.Below(3));
    if (r == 2) continue;
    (r == 0 ? approve : reject).push_back(WireName(path) + ":" + std::to_string(i + 1));
    d.hunks[i] = r == 0 ? 'a' : 'r';
    note += std::to_string(i + 1) + (r == 0 ? "a" : "r");
  }
  seq.history.back() += note + "/" + std::to_string(n);
  for (auto* args : {&approve, &reject}) {
    if (args->size() == 3) continue;
    CtlResult r = Ctl(*args);
    if (r.status != 0) throw Mismatch(Fail((*args)[0] + " " + Printable(args->back()), r));
    m.ForgetLapsed();
  }
  m.Decide(path, d);
  if (seq.skips.hunkdiff) return;
  // `diff SANDBOX PATH:N` shows hunk N alone; a hunk that does not exist is an error (exit 1)
  // naming it (issue 17, defect 6).
  size_t k = seq.Below(n);
  CtlResult one = Ctl({"diff", seq.id, "--", WireName(path) + ":" + std::to_string(k + 1)});
  auto shown = ParseHunks(one.out);
  if (one.status != 0 || shown.size() != 1 || shown[0].text != hunks[k].text)
    throw Mismatch("`diff " + Printable(path) + ":" + std::to_string(k + 1) + "` must show that hunk alone: exit " +
                   std::to_string(one.status) + ", " + std::to_string(shown.size()) + " hunks shown of " + std::to_string(n));
  std::string missing = WireName(path) + ":" + std::to_string(n + 1);
  CtlResult none = Ctl({"diff", seq.id, "--", missing});
  if (none.status != 1 || none.err.find(":" + std::to_string(n + 1)) == std::string::npos)
    throw Mismatch("`diff " + Printable(missing) + "` (hunk " + std::to_string(n + 1) + " of " + std::to_string(n) +
                   ") must fail with exit 1 naming it: exit " + std::to_string(none.status) + ", stderr " + Printable(none.err, 200));
}

/// Before a commit: changes whose decision the model does not know are decided again, so that
/// what must go live is known.
void ResolveUnknown(Sequence& seq) {
  std::vector<std::string> approve, reject;
  auto changes = seq.model.Changes();
  auto holding = seq.model.EffectiveDecisions(changes);
  for (const auto& c : changes) {
    if (holding[c.path].whole != 'u' || c.type == 'd' || c.rename_unsure) continue;
    (seq.Chance(60) ? approve : reject).push_back(c.path);
  }
  if (!approve.empty()) Decide(seq, approve, true);
  if (!reject.empty()) Decide(seq, reject, false);
  // Unknown decisions that cannot be named (non-UTF-8 names): the directory that holds them
  // decides them, as sandboxctl's PATH selector does.
  changes = seq.model.Changes();
  holding = seq.model.EffectiveDecisions(changes);
  for (const auto& c : changes) {
    if (holding[c.path].whole != 'u' || c.type == 'd') continue;
    // Give up on knowing (an unnameable name, a rename of the daemon's pairing): decide every
    // change with --all, which approves each one, rejected ones too (OpApproveAll).
    CtlResult r = Ctl({"approve", seq.id, "--all"});
    if (r.status != 0) throw Mismatch(Fail("approve --all", r));
    for (const auto& e : changes) seq.model.Decide(e.path, Decision{'a', {}}, changes);
    seq.history.back() += " (approve --all for undecidable unknowns)";
    break;
  }
}

/// After a `commit --all` that was refused or cut off: whether it recorded the approvals it
/// gave the pending changes is left open (DESIGN does not say), so every change not approved
/// already may be either.
void ForgetUnapproved(Sequence& seq) {
  auto changes = seq.model.Changes();
  auto holding = seq.model.EffectiveDecisions(changes);
  for (const auto& c : changes)
    if (holding[c.path].Review() != "approved") seq.model.Decide(c.path, Decision{'u', {}}, changes);
}

std::map<std::string, std::vector<Hunk>> CurrentHunks(Sequence& seq) {
  std::map<std::string, std::vector<Hunk>> out;
  for (const auto& [p, d] : seq.model.EffectiveDecisions(seq.model.Changes()))
    if (d.whole == 'h') out[p] = HunksOf(seq, p);
  return out;
}

void SyncOptionalDirs(Sequence& seq, const Model::CommitPlan& plan) {
  if (plan.optional_dirs.empty()) return;
  Tree real = ReadTree(seq.project);
  for (const auto& d : plan.optional_dirs)
    if (real.count(d)) {
      seq.model.live[d] = seq.model.view[d];
      seq.model.decisions.erase(d);
    }
}

/// The model's change set with the decisions that hold, one line each: for a mismatch report.
std::string DescribeChanges(const Model& m) {
  auto changes = m.Changes();
  auto holding = m.EffectiveDecisions(changes);
  std::string out;
  for (const auto& c : changes) {
    const Decision& d = holding[c.path];
    out += "    " + Printable(c.path, 60) + " " + c.kind + " " + (d.whole == 'u' ? "unknown" : d.Review()) + (c.conflict ? " conflict" : "");
    if (!c.renamed_from.empty()) out += " from " + Printable(c.renamed_from, 60);
    if (!c.renamed_to.empty()) out += " to " + Printable(c.renamed_to, 60);
    if (c.rename_unsure) out += " rename-unsure";
    if (m.GroupOf(c.path).size() > 1) out += " hard-linked";
    out += "\n";
  }
  return out;
}

void OpCommit(Sequence& seq, bool all, bool force) {
  ResolveUnknown(seq);
  auto hunks = CurrentHunks(seq);
  Model before = seq.model;
  std::string problem;
  Model::CommitPlan plan = seq.model.Commit(all, force, hunks, problem);
  if (!problem.empty()) throw Mismatch(problem);
  std::vector<std::string> args = {"commit", seq.id};
  if (all) args.push_back("--all");
  if (force) args.push_back("--force");
  seq.history.back() += "commit" + std::string(all ? " --all" : "") + (force ? " --force" : "") + " (" +
                        std::to_string(plan.paths.size()) + " paths" + (!plan.refused ? "" : plan.split_links.empty() ? ", conflicts expected" : ", names of one file apart") + ")";
  CtlResult r = Ctl(args);
  if (seq.skips.conflicts) {
    // Conflicts unchecked: follow the daemon's view of them, whatever it is.
    bool refused = r.status == 1 && r.err.find("onflict") != std::string::npos;
    if (refused) {
      seq.model = before;
      if (all) ForgetUnapproved(seq);
      return;
    }
    if (plan.refused) {
      seq.model = before;
      plan = seq.model.Commit(all, true, hunks, problem);
    }
  }
  if (plan.refused && !plan.split_links.empty()) {
    if (r.status != 1 || r.err.find("two names of one file") == std::string::npos)
      throw Mismatch(Fail("commit must be refused: " + Printable(plan.split_links[0]) + " and " + Printable(plan.split_links[1]) +
                              " are two names of one file, not taken together;", r, seq.id));
    CheckLive(seq, before.live, "after a commit refused for names of one file taken apart");
    return;
  }
  if (plan.refused) {
    if (r.status != 1) throw Mismatch("commit must be refused for conflicts on " + Printable(plan.conflicts.front()) + ": exit " + std::to_string(r.status));
    for (const auto& p : plan.conflicts)
      if (r.err.find(p) == std::string::npos && r.err.find(GitQuote(p)) == std::string::npos && r.err.find(GitQuote(p, true)) == std::string::npos)
        throw Mismatch("the conflict refusal does not name " + Printable(p) + ": " + Printable(r.err, 300));
    CheckLive(seq, before.live, "after a commit refused for conflicts");
    return;
  }
  if (r.status != 0) {
    std::string planned;
    for (const auto& p : plan.paths) planned += " " + Printable(p, 60);
    throw Mismatch(Fail("commit (model: no conflict)", r, seq.id) + "\n  the model's changes before it:\n" + DescribeChanges(before) +
                   "  it expected to commit:" + planned);
  }
  SyncOptionalDirs(seq, plan);
}

void OpUndo(Sequence& seq) {
  if (seq.model.undo_stack.empty()) {
    seq.history.back() += "undo-nothing";
    return;
  }
  seq.history.back() += "undo";
  CtlResult r = Ctl({"undo", seq.id});
  if (r.status != 0) throw Mismatch(Fail("undo (of the last commit, nothing changed since)", r));
  seq.model.Undo();
  CheckLive(seq, seq.model.live, "after undo: the live tree must be as before the last commit");
}

void OpDiscard(Sequence& seq) {
  seq.history.back() += "discard";
  CtlResult r = Ctl({"discard", seq.id});
  if (r.status != 0) throw Mismatch(Fail("discard", r));
  seq.model.Discard();
}

/// After a way the daemon keeps state (suspend/resume, restart, kill), where decisions are not
/// checked by request: forget them in the model.
void ForgetDecisionsIfSkipped(Sequence& seq) {
  if (!seq.skips.decisions) return;
  auto changes = seq.model.Changes();
  for (const auto& c : changes) seq.model.Decide(c.path, Decision{'u', {}}, changes);
}

void OpSuspendResume(Sequence& seq) {
  seq.history.back() += "suspend+resume";
  CtlResult s = Ctl({"suspend", seq.id});
  if (s.status != 0) throw Mismatch(Fail("suspend", s));
  CtlResult r = Ctl({"resume", seq.id});
  if (r.status != 0) throw Mismatch(Fail("resume", r));
  ForgetDecisionsIfSkipped(seq);
}

void OpRestart(Sequence& seq, bool kill) {
  seq.history.back() += kill ? "kill -9 daemon" : "restart daemon";
  if (kill) World().KillDaemon();
  else World().StopDaemon();
  if (!World().StartDaemon()) throw Mismatch("sandboxd did not start again");
  CheckOptions(seq);
}

/// A commit of many files with the daemon killed under it: afterwards the live tree is wholly
/// before or wholly after the commit (DESIGN, Data safety).
void OpKillMidCommit(Sequence& seq) {
  std::string dir = "bulk" + std::to_string(++seq.serial);
  int count = 150 + static_cast<int>(seq.Below(250));
  std::string tag = Tag(seq);
  for (int i = 0; i < count; ++i) seq.model.JobWrite(dir + "/b" + std::to_string(i), "bulk " + tag + " " + std::to_string(i) + "\n");
  Job(seq, "umask 022; mkdir " + dir + " && cd " + dir + " && i=0; while [ $i -lt " + std::to_string(count) + " ]; do echo \"bulk " + tag +
               " $i\" > b$i; i=$((i+1)); done");
  ResolveUnknown(seq);
  auto hunks = CurrentHunks(seq);
  Model before = seq.model;
  std::string problem;
  Model::CommitPlan plan = seq.model.Commit(true, false, hunks, problem);
  if (!problem.empty()) throw Mismatch(problem);
  int delay_ms = static_cast<int>(seq.Below(400));
  seq.history.back() += "job[" + std::to_string(count) + " files in " + dir + "]; commit --all & kill -9 after " +
                        std::to_string(delay_ms) + "ms";
  pid_t client = it::StartSandboxctl(kAlice, {"commit", seq.id, "--all"});
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  World().KillDaemon();
  waitpid(client, nullptr, 0);
  if (!World().StartDaemon()) throw Mismatch("sandboxd did not start again after a kill mid-commit");
  Tree real = ReadTree(seq.project);
  SyncOptionalDirs(seq, plan);
  if (plan.refused) {
    // A commit that should have been refused but went through: as a forced one would.
    Model forced = before;
    std::string ignored;
    forced.Commit(true, true, hunks, ignored);
    if (CompareTrees(forced.live, real, !seq.skips.hardlinks).empty() && !CompareTrees(before.live, real, !seq.skips.hardlinks).empty()) {
      if (!seq.skips.conflicts)
        throw Mismatch("`commit --all` went over the conflict on " + Printable(plan.conflicts.front()) +
                       " (the live entry changed after the job read it): the live tree is as a forced commit leaves it");
      seq.model = forced;
      seq.history.back() += " (after, over conflicts)";
      return;
    }
  }
  bool after = !plan.refused && CompareTrees(seq.model.live, real, !seq.skips.hardlinks).empty();
  bool untouched = CompareTrees(before.live, real, !seq.skips.hardlinks).empty();
  if (!after && !untouched)
    throw Mismatch("after a kill mid-commit the live tree is neither before nor after the commit:\n  vs after:\n" +
                   CompareTrees(seq.model.live, real, !seq.skips.hardlinks) + "  vs before:\n" + CompareTrees(before.live, real, !seq.skips.hardlinks) +
                   "  the model's changes before it:\n" + DescribeChanges(before));
  if (!after) {
    seq.model = before;
    // Whether --all's approvals were recorded before the kill is the daemon's business.
    ForgetUnapproved(seq);
    seq.history.back() += " (before)";
  } else {
    seq.history.back() += " (after)";
  }
}

/// DESIGN/docs/security.md: a quota is a hard limit where the storage allows it: a write past it fails
/// inside the job (ENOSPC) and the job goes on. The probe writes past it and removes its file.
void OpQuotaProbe(Sequence& seq) {
  uint64_t mib = seq.quota_bytes / (1 << 20) + 8;
  seq.history.back() += "quota probe (" + std::to_string(mib) + "M)";
  it::Result r = World().Sandboxctl(kAlice, {"--no-ask-password", "run", seq.id, "--", "sh", "-c",
                                             "head -c " + std::to_string(mib) + "M /dev/zero > ./qprobe; s=$?; rm -f ./qprobe; exit $s"});
  if (r.status == 0)
    throw Mismatch("a job wrote " + std::to_string(mib) + " MiB in a sandbox with --quota " + std::to_string(seq.quota_bytes >> 20) +
                   "M and its write did not fail (issue 17, defect 8)");
  if (r.status >= 128)
    throw Mismatch("the quota probe was killed (exit " + std::to_string(r.status) + "), not refused its write with ENOSPC: " + Printable(r.err, 200));
}

}  // namespace

void Job(Sequence& seq, const std::string& script) {
  CtlResult r = Ctl({"run", seq.id, "--", "sh", "-c", script});
  if (r.status != 0) throw Mismatch("job `" + Printable(script, 300) + "` exited " + std::to_string(r.status) + ": " + Printable(r.err, 300));
}

void StartSequence(Sequence& seq) {
  seq.rng.seed(seq.seed);
  seq.base = "/home/" + std::string(kAlice) + "/model-" + std::to_string(seq.seed) + "-" + std::to_string(getpid());
  seq.project = seq.base + "/proj";
  std::string lines;
  for (int i = 1; i <= 30; ++i) lines += "L" + std::to_string(i) + " base\\n";
  std::string script = "set -e; umask 022; rm -rf '" + seq.base + "'; mkdir -p '" + seq.project + "/sub/deep' '" + seq.project + "/odd' '" +
                       seq.base + "/secret'; cd '" + seq.project + "'; echo key > ../secret/key.txt; "
                       "for f in t1.txt t2.txt t3.txt t4.txt sub/s1.txt sub/deep/d1.txt odd/plain.txt h1; do printf '" + lines +
                       "' | sed \"s|base|$f|\" > $f; done; " + std::string(seq.skips.hardlinks ? "cp h1 sub/h2" : "ln h1 sub/h2") + "; ln -s t1.txt link; printf '\\001\\000bin\\n' > bin.dat; "
                       "printf '#!/bin/sh\\n' > x.sh; chmod 755 x.sh";
  it::Result made = World().RunAs(kAlice, {"sh", "-c", script});
  if (made.status != 0) throw Mismatch("could not make the project: " + made.err);
  seq.model.live = ReadTree(seq.project);
  seq.model.view = seq.model.live;
  seq.name = "model-" + std::to_string(seq.seed);
  std::vector<std::string> args = {"create", "--name", seq.name};
  if (seq.Chance(50)) {
    seq.ttl_sec = 86400 * (1 + seq.Below(30));
    args.insert(args.end(), {"--ttl", std::to_string(seq.ttl_sec)});
  }
  if (seq.Chance(40)) {
    seq.quota_bytes = (16 + seq.Below(16)) << 20;
    seq.model.layers_elsewhere = true;
    args.insert(args.end(), {"--quota", std::to_string(seq.quota_bytes >> 20) + "M"});
  }
  if (seq.Chance(50)) {
    seq.hidden = seq.base + "/secret";
    args.insert(args.end(), {"--hide", seq.hidden});
  }
  args.push_back(seq.project);
  CtlResult created = Ctl(args);
  if (created.status != 0) throw Mismatch(Fail("create", created));
  seq.id = it::Trim(created.out);
  std::string note = "create";
  for (size_t i = 1; i + 1 < args.size(); ++i) note += " " + args[i];
  seq.history.push_back(note);
}

void EndSequence(Sequence& seq) {
  World().EnsureDaemon();
  if (!seq.id.empty()) Ctl({"destroy", seq.id});
  World().RunAs(kAlice, {"rm", "-rf", seq.base});
}

void RandomStep(Sequence& seq) {
  ++seq.step;
  seq.history.push_back(std::to_string(seq.step) + " ");
  struct Op {
    int weight;
    std::function<void()> run;
    bool deep;  // worth a diff check afterwards
  };
  std::vector<Op> ops = {
      {30, [&] { OpJob(seq); }, true},
      {9, [&] { OpLive(seq); }, false},
      {9, [&] { OpDecideFiles(seq); }, false},
      {3, [&] { OpApproveAll(seq); }, false},
      {6, [&] { OpDecideHunks(seq); }, false},
      {6, [&] { OpCommit(seq, false, false); }, true},
      {5, [&] { OpCommit(seq, true, false); }, true},
      {2, [&] { OpCommit(seq, seq.Chance(50), true); }, true},
      {5, [&] { OpUndo(seq); }, true},
      {1, [&] { OpDiscard(seq); }, false},
      {4, [&] { OpSuspendResume(seq); }, true},
      {3, [&] { OpRestart(seq, false); }, false},
      {3, [&] { OpRestart(seq, true); }, false},
      {2, [&] { OpKillMidCommit(seq); }, true},
      {seq.quota_bytes && !seq.skips.quota ? 1 : 0, [&] { OpQuotaProbe(seq); }, false},
  };
  int total = 0;
  for (auto& op : ops) total += op.weight;
  int pick = static_cast<int>(seq.Below(static_cast<uint64_t>(total)));
  for (auto& op : ops) {
    if (pick >= op.weight) {
      pick -= op.weight;
      continue;
    }
    op.run();
    CheckAll(seq, op.deep);
    return;
  }
}

}  // namespace sandboxd::model
