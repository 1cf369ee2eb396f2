#include "model_state.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace sandboxd::model {

Skips Skips::FromEnv() {
  Skips skips;
  const char* env = std::getenv("SANDBOXD_MODEL_SKIP");
  std::stringstream list(env ? env : "");
  for (std::string item; std::getline(list, item, ',');) {
    if (item == "conflicts") skips.conflicts = true;
    else if (item == "marks") skips.marks = true;
    else if (item == "hardlinks") skips.hardlinks = true;
    else if (item == "names") skips.names = true;
    else if (item == "hunkdiff") skips.hunkdiff = true;
    else if (item == "decisions") skips.decisions = true;
    else if (item == "options") skips.options = true;
    else if (item == "quota") skips.quota = true;
    else if (item == "nonutf8") skips.nonutf8 = true;
  }
  return skips;
}

std::string Skips::Describe() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(conflicts, "conflicts");
  add(marks, "marks");
  add(hardlinks, "hardlinks");
  add(names, "names");
  add(hunkdiff, "hunkdiff");
  add(decisions, "decisions");
  add(options, "options");
  add(quota, "quota");
  add(nonutf8, "nonutf8");
  return out.empty() ? "none" : out;
}

std::string Decision::Review() const {
  if (whole == 'a') return "approved";
  if (whole == 'r') return "rejected";
  if (whole != 'h') return "pending";
  bool all_a = std::all_of(hunks.begin(), hunks.end(), [](char c) { return c == 'a'; });
  bool all_r = std::all_of(hunks.begin(), hunks.end(), [](char c) { return c == 'r'; });
  bool all_p = std::all_of(hunks.begin(), hunks.end(), [](char c) { return c == 'p'; });
  if (hunks.empty() || all_p) return "pending";
  if (all_a) return "approved";
  if (all_r) return "rejected";
  return "partial";
}

std::vector<uint32_t> Decision::HunksIn(char state) const {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < hunks.size(); ++i)
    if (hunks[i] == state) out.push_back(static_cast<uint32_t>(i + 1));
  return out;
}

std::vector<std::string> Parents(const std::string& path) {
  std::vector<std::string> out;
  for (size_t at = path.find('/'); at != std::string::npos; at = path.find('/', at + 1)) out.push_back(path.substr(0, at));
  return out;
}

std::vector<std::string> Model::GroupOf(const std::string& path) const {
  auto it = view.find(path);
  if (it == view.end() || it->second.type != 'f' || it->second.group == 0) return {path};
  std::vector<std::string> out;
  for (const auto& [p, e] : view)
    if (e.type == 'f' && e.group == it->second.group) out.push_back(p);
  return out;
}

void Model::InvalidateUndo(const std::string& path) {
  for (const auto& record : undo_stack)
    if (record.paths.count(path) || record.left.count(path)) {
      // The sandbox changed a path a commit took live: what undo must then do to the sandbox
      // ("a path the sandbox has changed since keeps its newer version") is beyond this model.
      undo_stack.clear();
      return;
    }
}

void Model::Touch(const std::string& path) {
  // The job copies the entry up (or makes or deletes it): from now on the sandbox holds its own
  // version, and what it saw of the live one is the live version of this moment. Touching one
  // name of a hard-link group copies up the inode, so every name of it. (A rename the job
  // breaks up lapses by itself: EffectiveDecisions compares partners.)
  for (const auto& p : GroupOf(path)) {
    if (touched.insert(p).second) {
      seen[p] = live_version[p];
      if (live.count(p)) seen_absent.erase(p);
      else seen_absent.insert(p);
    }
    decisions.erase(p);  // docs/security.md: a decision lapses once a later job rewrites the file
    InvalidateUndo(p);
  }
  // A new entry in an added directory moves its times: a decision about the directory may
  // lapse with them (docs/security.md: a decision holds for the change as it was), or may not.
  for (const auto& dir : Parents(path))
    if (decisions.count(dir)) Decide(dir, Decision{'u', {}});
}

std::string Model::LiveStamp(const std::string& path) const {
  if (!live.count(path)) return "-";
  auto v = live_version.find(path);
  return "v" + std::to_string(v == live_version.end() ? 0 : v->second);
}

void Model::Decide(const std::string& path, Decision decision) { Decide(path, std::move(decision), Changes()); }

void Model::Decide(const std::string& path, Decision decision, const std::vector<ExpectedChange>& changes) {
  decision.partner.clear();
  decision.unsure_group.clear();
  for (const auto& c : changes)
    if (c.path == path) {
      decision.partner = !c.renamed_from.empty() ? c.renamed_from : c.renamed_to;
      decision.unsure_group = c.rename_unsure ? c.rename_group : "";
    }
  decision.live_stamp = LiveStamp(path);
  decisions[path] = std::move(decision);
}

std::map<std::string, Decision> Model::EffectiveDecisions(const std::vector<ExpectedChange>& changes) const {
  // As the daemon reads its decisions: one made on other live content lapses; then the halves
  // of a rename that disagree are both pending; then one made with another partner lapses.
  auto stamped = [&](const std::string& path) {
    auto it = decisions.find(path);
    if (it == decisions.end() || (it->second.whole != 'u' && it->second.live_stamp != LiveStamp(path))) return Decision{};
    return it->second;
  };
  std::map<std::string, Decision> out;
  for (const auto& c : changes) {
    Decision d = stamped(c.path);
    std::string partner = !c.renamed_from.empty() ? c.renamed_from : c.renamed_to;
    if (c.rename_unsure || !d.unsure_group.empty()) {
      // Paired or not, and with which, is the daemon's choice: a decision made on the same
      // choice holds (the daemon pairs the same candidates the same way); any other may hold
      // or lapse.
      bool same_choice = c.rename_unsure && d.unsure_group == c.rename_group;
      if (!same_choice && (d.Review() != "pending" || d.whole == 'u')) d = Decision{'u', {}};
    } else if (d.whole != 'u') {
      if (!partner.empty() && !d.SameVerdicts(stamped(partner))) d = Decision{};
      if (d.partner != partner) d = Decision{};
    }
    out[c.path] = d;
  }
  return out;
}

void Model::ForgetLapsed() {
  auto changes = Changes();
  auto holding = EffectiveDecisions(changes);
  for (const auto& c : changes) {
    auto it = decisions.find(c.path);
    const Decision& now = holding[c.path];
    if (it != decisions.end() && it->second.whole != 'u' && now.whole == 'p') decisions.erase(it);
  }
}

Decision Model::EffectiveDecision(const std::string& path) const {
  auto all = EffectiveDecisions(Changes());
  auto it = all.find(path);
  return it == all.end() ? Decision{} : it->second;
}

void Model::JobMkdirs(const std::string& path) {
  for (const auto& dir : Parents(path))
    if (!view.count(dir)) view[dir] = Entry{'d', "", 0755, 0};
}

void Model::JobWrite(const std::string& path, const std::string& content) {
  auto it = view.find(path);
  if (it != view.end() && it->second.type == 'f') {
    Touch(path);
    for (const auto& p : GroupOf(path)) view[p].data = content;
    return;
  }
  JobMkdirs(path);
  Touch(path);
  view[path] = Entry{'f', content, 0644, 0};
}

void Model::JobAppend(const std::string& path, const std::string& text) { JobWrite(path, view[path].data + text); }

void Model::JobDelete(const std::string& path) {
  // Removing one name of a hard-link group copies the inode up (overlayfs keeps its link count
  // in the copy): the other names show the copy from then on, and no longer follow the live tree.
  Touch(path);
  view.erase(path);
}

void Model::JobRename(const std::string& from, const std::string& to) {
  Touch(from);
  Entry entry = view[from];
  view.erase(from);
  JobMkdirs(to);
  Touch(to);
  view[to] = entry;
}

void Model::JobChmod(const std::string& path, unsigned mode) {
  Touch(path);
  for (const auto& p : GroupOf(path)) view[p].mode = mode;
}

void Model::JobSymlink(const std::string& path, const std::string& target) {
  JobMkdirs(path);
  Touch(path);
  view[path] = Entry{'l', target, 0777, 0};
}

void Model::JobHardlink(const std::string& existing, const std::string& name) {
  Touch(existing);
  JobMkdirs(name);
  Entry& e = view[existing];
  if (e.group == 0) e.group = next_group++;
  Touch(name);
  view[name] = e;
}

void Model::LiveChanged(const std::string& path) {
  live_version[path] = ++clock;  // docs/security.md: a decision lapses once the live file moves on (LiveStamp)
  // A live edit makes every commit before it impossible to undo (the test does not predict
  // undo's refusals): forget them.
  undo_stack.clear();
  if (touched.count(path)) return;
  // Not copied up: the sandbox still shows the live entry.
  auto it = live.find(path);
  if (it == live.end()) view.erase(path);
  else view[path] = it->second;
}

void Model::LiveWrite(const std::string& path, const std::string& content) {
  auto it = live.find(path);
  if (it != live.end() && it->second.type == 'f') {
    // In place: every live name of the inode changes.
    long group = it->second.group;
    std::vector<std::string> names = {path};
    if (group != 0)
      for (const auto& [p, e] : live)
        if (p != path && e.type == 'f' && e.group == group) names.push_back(p);
    for (const auto& p : names) live[p].data = content;
    for (const auto& p : names) LiveChanged(p);
    return;
  }
  live[path] = Entry{'f', content, 0644, 0};
  LiveChanged(path);
}

void Model::LiveDelete(const std::string& path) {
  // Unlinking one name of a hard-link group changes the inode (its link count, so its ctime):
  // the other names moved on too, as the daemon sees them.
  std::vector<std::string> others;
  auto it = live.find(path);
  if (it != live.end() && it->second.type == 'f' && it->second.group != 0)
    for (const auto& [p, e] : live)
      if (p != path && e.type == 'f' && e.group == it->second.group) others.push_back(p);
  live.erase(path);
  LiveChanged(path);
  for (const auto& p : others) LiveChanged(p);
}

void Model::LiveChmod(const std::string& path, unsigned mode) {
  long group = live[path].group;
  std::vector<std::string> names = {path};
  if (group != 0)
    for (const auto& [p, e] : live)
      if (p != path && e.type == 'f' && e.group == group) names.push_back(p);
  for (const auto& p : names) live[p].mode = mode;
  for (const auto& p : names) LiveChanged(p);
}

bool Model::Conflict(const std::string& path) const {
  // DESIGN: a conflict is a change of the live tree the sandbox did not see. The test's rule:
  // the live version of the path now differs from the one the sandbox copied up (`seen`).
  // Directories conflict only when they stop being directories (docs/security.md), which no operation
  // here does.
  auto s = seen.find(path);
  if (s == seen.end()) return false;
  if (seen_absent.count(path) && !live.count(path)) return false;
  auto v = live_version.find(path);
  uint64_t now = v == live_version.end() ? 0 : v->second;
  return now != s->second;
}

std::vector<ExpectedChange> Model::Changes() const {
  std::vector<ExpectedChange> out;
  std::set<std::string> paths;
  for (const auto& [p, e] : view) paths.insert(p);
  for (const auto& [p, e] : live) paths.insert(p);
  for (const auto& p : paths) {
    auto v = view.find(p), l = live.find(p);
    ExpectedChange change;
    change.path = p;
    if (l == live.end()) {
      change.kind = "added";
      change.type = v->second.type;
    } else if (v == view.end()) {
      change.kind = "deleted";
      change.type = l->second.type;
    } else if (v->second.type != l->second.type) {
      change.kind = "type-changed";
      change.type = v->second.type;
    } else {
      change.type = v->second.type;
      if (v->second.type != 'd' && v->second.data != l->second.data) change.kind = "modified";
      else if (v->second.type != 'l' && v->second.mode != l->second.mode) change.kind = "mode-changed";
      else continue;
    }
    change.conflict = change.type != 'd' && Conflict(p);
    out.push_back(change);
  }
  // Renames (docs/security.md): a deleted file or symlink and an added one of the same type and the same
  // non-empty content. Where one side has several candidates the pairing is the daemon's.
  std::vector<ExpectedChange*> deleted, added;
  for (auto& c : out) {
    if (c.type == 'd') continue;
    if (c.kind == "deleted") deleted.push_back(&c);
    if (c.kind == "added") added.push_back(&c);
  }
  for (auto* d : deleted) {
    const Entry& old = live.at(d->path);
    if (old.data.empty()) continue;
    std::vector<ExpectedChange*> candidates;
    for (auto* a : added) {
      const Entry& now = view.at(a->path);
      if (now.type == old.type && now.data == old.data) candidates.push_back(a);
    }
    if (candidates.empty()) continue;
    if (candidates.size() > 1) {
      d->rename_unsure = true;
      for (auto* a : candidates) a->rename_unsure = true;
      continue;
    }
    ExpectedChange* a = candidates.front();
    int rivals = 0;
    for (auto* other : deleted) {
      const Entry& e = live.at(other->path);
      if (e.type == old.type && e.data == old.data) ++rivals;
    }
    if (rivals > 1 || a->rename_unsure) {
      d->rename_unsure = a->rename_unsure = true;
      continue;
    }
    d->renamed_to = a->path;
    a->renamed_from = d->path;
  }
  auto content = [&](const ExpectedChange& c) -> const Entry& { return c.kind == "deleted" ? live.at(c.path) : view.at(c.path); };
  for (auto& c : out) {
    if (!c.rename_unsure) continue;
    for (const auto* group : {&deleted, &added})
      for (const auto* other : *group)
        if (content(*other).type == content(c).type && content(*other).data == content(c).data)
          c.rename_group += other->kind + ":" + other->path + "\n";
  }
  return out;
}

std::optional<ExpectedChange> Model::ChangeAt(const std::string& path) const {
  for (auto& c : Changes())
    if (c.path == path) return c;
  return std::nullopt;
}

Model::CommitPlan Model::Commit(bool all, bool force, const std::map<std::string, std::vector<Hunk>>& hunks, std::string& problem) {
  CommitPlan plan;
  auto changes = Changes();
  auto holding = EffectiveDecisions(changes);
  std::map<std::string, Decision> effective;
  for (const auto& c : changes) {
    Decision d = holding[c.path];
    if (all) {
      if (d.whole == 'p') d.whole = 'a';
      for (char& h : d.hunks)
        if (h == 'p') h = 'a';
    }
    effective[c.path] = d;
  }
  std::set<std::string> whole, partial;
  for (const auto& c : changes) {
    const Decision& d = effective[c.path];
    if (d.Review() == "approved") whole.insert(c.path);
    else if (d.whole == 'h' && !d.HunksIn('a').empty()) partial.insert(c.path);
  }
  // A new directory goes along with an approved change inside it (docs/security.md).
  for (const auto& p : std::set<std::string>(whole.begin(), whole.end()))
    for (const auto& dir : Parents(p))
      if (!live.count(dir) && view.count(dir)) whole.insert(dir);
  for (const auto& p : partial)
    for (const auto& dir : Parents(p))
      if (!live.count(dir) && view.count(dir)) whole.insert(dir);
  for (const auto& p : whole)
    if (Conflict(p)) plan.conflicts.push_back(p);
  for (const auto& p : partial)
    if (Conflict(p)) plan.conflicts.push_back(p);
  auto refuse = [&] {
    plan.refused = true;
    // DESIGN leaves open whether the approvals `--all` made stay after a refusal.
    if (all)
      for (const auto& c : changes)
        if (holding[c.path].Review() == "pending" || holding[c.path].whole == 'h') Decide(c.path, Decision{'u', {}});
    return plan;
  };
  if (!plan.conflicts.empty() && !force) return refuse();
  // docs/security.md: two names of one file go live together, whole, or not at all (a name left behind
  // would share the inode with the live one).
  std::set<std::string> changed;
  for (const auto& c : changes) changed.insert(c.path);
  for (const auto* taken : {&whole, &partial})
    for (const auto& p : *taken)
      for (const auto& other : GroupOf(p))
        if (other != p && changed.count(other) && (!whole.count(other) || partial.count(p) || partial.count(other))) {
          plan.split_links = {p, other};
          return refuse();
        }
  if (plan.conflicts.empty()) force = false;  // a --force that went over nothing is a plain commit
  if (force) undo_stack.clear();              // docs/security.md: undo stops at a forced commit's predecessor
  CommitRecord record{live, {}, {}};
  const Tree before_view = view;
  for (const auto& p : whole) {
    auto v = view.find(p);
    if (v == view.end()) live.erase(p);
    else live[p] = v->second;
    live_version[p] = ++clock;
    touched.erase(p);
    seen.erase(p);
    seen_absent.erase(p);
    decisions.erase(p);
    record.paths.insert(p);
  }
  // The names of one of the sandbox's files that went live are one new live inode: no longer
  // one with the live names of the inode it was copied from that stayed. Not where a rename
  // went live as a move of the live file (docs/security.md), which keeps its inode (and where the
  // daemon's pairing is its choice, the model does not know).
  std::set<std::string> placed;
  for (const auto& c : changes) {
    if (!record.paths.count(c.path)) continue;
    if (c.rename_unsure) record.moved.insert(c.path);
    if (c.renamed_from.size() && whole.count(c.renamed_from)) {
      record.moved.insert({c.path, c.renamed_from});
      // The live file itself moved: it keeps its inode, so its hard links.
      auto from = record.live_before.find(c.renamed_from);
      if (from != record.live_before.end() && from->second.type == 'f' && live.count(c.path)) {
        live[c.path].group = from->second.group;
        if (view.count(c.path)) view[c.path].group = from->second.group;
      }
    }
  }
  // Nor where only the mode went live: the live file is changed in place (a chmod), keeping its
  // inode, so its hard links (say with a moved name of the same file).
  std::set<std::string> chmodded;
  for (const auto& c : changes)
    if (c.kind == "mode-changed") chmodded.insert(c.path);
  for (const auto& p : record.paths)
    if (!record.moved.count(p) && !chmodded.count(p)) placed.insert(p);
  SplitGroups(live, placed, &view);
  // The sandbox's other names of a file that went live, which it held unchanged (linked up
  // beside a name a job removed or moved), leave it with the file: they show the live tree
  // again (docs/security.md).
  std::set<std::string> changed_paths;
  for (const auto& c : changes) changed_paths.insert(c.path);
  for (const auto& p : whole) {
    auto v = before_view.find(p);
    if (v == before_view.end() || v->second.type != 'f' || v->second.group == 0) continue;
    for (const auto& [q, e] : before_view)
      if (q != p && e.type == 'f' && e.group == v->second.group && !changed_paths.count(q) && touched.count(q)) {
        record.left.emplace(q, p);
        touched.erase(q);
        seen.erase(q);
        seen_absent.erase(q);
        if (auto l = live.find(q); l != live.end()) view[q] = l->second;
      }
  }
  for (const auto& p : partial) {
    auto h = hunks.find(p);
    const Decision& d = effective[p];
    if (h == hunks.end() || h->second.size() != d.hunks.size()) {
      problem = "the diff of " + p + " has " + std::to_string(h == hunks.end() ? 0 : h->second.size()) + " hunks, the model " +
                std::to_string(d.hunks.size());
      return plan;
    }
    std::vector<bool> take;
    for (char c : d.hunks) take.push_back(c == 'a');
    bool ok = true;
    std::string merged = ApplyHunks(live[p].data, h->second, take, ok);
    if (!ok) {
      problem = "the hunks of " + p + " do not fit its live text";
      return plan;
    }
    live[p].data = merged;
    live_version[p] = ++clock;
    seen[p] = live_version[p];  // the sandbox wrote it: it has seen this version
    seen_absent.erase(p);
    Decision left{'h', {}};
    for (char c : d.hunks)
      if (c != 'a') left.hunks.push_back(c);
    Decide(p, left);
    record.paths.insert(p);
  }
  // A pending empty new directory goes live only with --all; one a job changed after it was
  // approved may have lapsed: either outcome is accepted and the model then follows it.
  for (const auto& c : changes)
    if (c.type == 'd' && c.kind == "added" && !whole.count(c.path) && effective[c.path].whole == 'u')
      plan.optional_dirs.insert(c.path);
  plan.paths = record.paths;
  // A commit that takes every change, whole, on the layers' own file system hands the upper
  // layer over as its backups: the sandbox starts afresh, and what jobs had copied up without
  // changing it (a hard link's other name, frozen when a job removed one) follows the live tree
  // again. Any other commit leaves such copies in the sandbox.
  if (partial.empty() && !layers_elsewhere && Changes().empty()) {
    record.whole_upper = true;
    touched.clear();
    seen.clear();
    seen_absent.clear();
  }
  if (!record.paths.empty()) undo_stack.push_back(std::move(record));
  return plan;
}

void Model::SplitGroups(Tree& tree, const std::set<std::string>& paths, Tree* follower) {
  std::map<long, long> fresh;  // old group → the new one of the names in `paths`
  for (const auto& p : paths) {
    auto it = tree.find(p);
    if (it == tree.end() || it->second.type != 'f' || it->second.group == 0) continue;
    long group = it->second.group;
    bool others = false;
    for (const auto& [q, e] : tree) others |= !paths.count(q) && e.type == 'f' && e.group == group;
    if (!others) continue;
    auto [at, added] = fresh.try_emplace(group, next_group);
    if (added) ++next_group;
    it->second.group = at->second;
    if (follower && follower->count(p)) (*follower)[p].group = at->second;
  }
}

void Model::Undo() {
  CommitRecord record = undo_stack.back();
  undo_stack.pop_back();
  live = record.live_before;
  // Across file systems an undo puts copies of the backups back (docs/security.md, landing area): the
  // names it restores are no longer one inode with the names the commit had left alone.
  if (layers_elsewhere) {
    std::set<std::string> restored;
    for (const auto& p : record.paths)
      if (!record.moved.count(p)) restored.insert(p);
    SplitGroups(live, restored, nullptr);
  }
  // The undone changes are in the sandbox again, as their own copies: the names of the same
  // file the commit had let go (they showed the live file since) stay apart from them.
  Tree unused;
  SplitGroups(view, record.paths, &unused);
  // The names that left the sandbox with a file come back with it where the commit kept the
  // sandbox's own file (the upper it took whole, the stage's original across file systems, the
  // copy it kept of a file that went live as a move of the live one): one file again. A file
  // placed live on the layers' file system was the sandbox's own inode: its other names were
  // let go (docs/security.md).
  for (const auto& [q, p] : record.left) {
    auto v = view.find(p);
    if (v == view.end() || v->second.type != 'f' || touched.count(q)) continue;
    if (!record.whole_upper && !layers_elsewhere && !record.moved.count(p)) continue;
    view[q] = v->second;
    touched.insert(q);
    seen[q] = live_version[q];
    seen_absent.erase(q);
  }
  for (const auto& p : record.paths) {
    live_version[p] = ++clock;
    // docs/security.md: the undone changes are in the sandbox again, and for these paths "changed
    // since" counts from the undo. What decisions they then carry DESIGN does not say.
    auto v = view.find(p);
    if (v == view.end() || v->second.type != 'd') {
      touched.insert(p);
      seen[p] = live_version[p];
      if (live.count(p)) seen_absent.erase(p);
      else seen_absent.insert(p);
    }
    Decide(p, Decision{'u', {}});
  }
}

void Model::Discard() {
  view = live;
  touched.clear();
  seen.clear();
  seen_absent.clear();
  decisions.clear();
}

}  // namespace sandboxd::model
