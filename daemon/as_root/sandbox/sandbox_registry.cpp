#include "sandbox/sandbox_registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "base/errors.h"
#include "runtime/file_clock.h"
#include "runtime/file_handle.h"
#include "base/fs_util.h"
#include "base/overlay.h"
#include "sandbox/storage_area.h"

namespace sandboxd {
namespace {

std::string Canonical(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (!resolved) return path;
  std::string result(resolved);
  free(resolved);
  return result;
}

std::string NameFromRoot(const std::string& root) {
  std::string base = root.substr(root.find_last_of('/') + 1);
  std::string name;
  for (char c : base) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    name += ok ? c : '_';
  }
  while (!name.empty() && (name[0] == '-' || name[0] == '.')) name.erase(0, 1);
  if (name.size() > 56) name.resize(56);
  return name.empty() ? "sandbox" : name;
}

}  // namespace

void CheckSandboxName(const std::string& name) {
  if (name.empty() || name.size() > 64)
    throw Error(Code::kInvalidArgument, "sandbox name '" + name + "' must be 1 to 64 characters long");
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) throw Error(Code::kInvalidArgument, "sandbox name '" + name + "' may only contain letters, digits, '.', '_' and '-'");
  }
  if (name[0] == '-' || name[0] == '.')
    throw Error(Code::kInvalidArgument, "sandbox name '" + name + "' must not start with '-' or '.'");
  if (LooksLikeId(name)) throw Error(Code::kInvalidArgument, "sandbox name '" + name + "' looks like a sandbox id; choose another");
}

SandboxRegistry::SandboxRegistry(const Layout& layout, Store& store)
    : layout_(layout), store_(store), forbidden_{Canonical(layout.state_dir()), Canonical(layout.run_dir())} {}

std::shared_ptr<Sandbox> SandboxRegistry::MakeSandbox(const SandboxRecord& record) const {
  auto sandbox = std::make_shared<Sandbox>(record, layout_);
  sandbox->SetLinkedUp(linked_up_);
  return sandbox;
}

std::shared_ptr<Sandbox> SandboxRegistry::Create(const CreateRequest& request, const UserCredentials& owner,
                                                 const Authorize& authorize) {
  if (request.roots.empty()) throw Error(Code::kInvalidArgument, "a sandbox needs at least one root directory");
  if (request.roots.size() > max_roots_per_sandbox_)
    throw Error(Code::kInvalidArgument, "a sandbox may have at most " + std::to_string(max_roots_per_sandbox_) +
                                            " roots ([Limits] MaxRootsPerSandbox=" + std::to_string(max_roots_per_sandbox_) + "), not " +
                                            std::to_string(request.roots.size()));
  if (!request.name.empty()) CheckSandboxName(request.name);
  // Each root is opened once, as the owner; its canonical path comes from that descriptor and
  // its overlay is mounted from it (root_validation.h).
  std::vector<OpenedRoot> opened;
  std::vector<std::string> roots;
  for (const auto& root : request.roots) {
    opened.push_back(OpenRoot(root, owner, forbidden_));
    roots.push_back(opened.back().canonical);
  }
  std::vector<int> opened_fds;
  for (const auto& root : opened) opened_fds.push_back(root.fd.get());
  CheckRootsDisjoint(roots);
  if (request.scratch_home) {
    // Each job mounts its own overlays in user mode; the home's would be one more there.
    if (layout_.user_mode()) throw Error(Code::kInvalidArgument, "a scratch home is not available in user mode (sandboxd --user)");
    // Its layer is not counted in a quota: a sandbox bound by one would not be bound by it.
    if (request.quota_bytes != 0)
      throw Error(Code::kInvalidArgument, "a scratch home is not counted in a sandbox's quota yet, and this one would have a quota of " +
                                              std::to_string(request.quota_bytes) + " bytes (--quota, or [Storage] DefaultQuota=/MaxQuota=): make it without either");
    // The owner's own home, opened and checked as a root is (the owner may write it).
    OpenedRoot home = OpenRoot(owner.home, owner, forbidden_);
    for (const auto& root : roots)
      if (PathHolds(root, home.canonical))
        throw Error(Code::kInvalidArgument, "root " + root + " holds the home " + home.canonical +
                                                ": what jobs write there is a change of the sandbox already; a scratch home is for a home outside the roots");
  }
  // A root on another file system than the state directory keeps its layers on its own file
  // system where that is safe, so that its commits are renames (storage_area.h).
  std::vector<std::string> stores;
  for (const auto& root : roots) {
    // In user mode every layer stays in STATE: an area at the top of a file system is not the
    // user's to make.
    stores.push_back(layout_.user_mode() ? std::string() : ChooseStore(root, layout_.state_dir()).store);
    if (!stores.back().empty()) store_.RememberArea(stores.back());
  }

  std::shared_ptr<Sandbox> sandbox;
  int64_t made_from_ns = 0;
  {
    std::lock_guard lock(mutex_);
    if (owner.uid != 0) {
      size_t held = 0;
      for (const auto* known : {&sandboxes_, &creating_})
        for (const auto& [id, other] : *known) held += other->owner() == owner.uid;
      if (held >= max_sandboxes_per_user_)
        throw Error(Code::kQuotaExceeded, "uid " + std::to_string(owner.uid) + " has " + std::to_string(held) +
                                              " sandboxes, the most [Limits] MaxSandboxesPerUser=" +
                                              std::to_string(max_sandboxes_per_user_) + " allows; destroy one first");
    }
    CheckOverlap(roots, request.shared, owner.uid);
    SandboxRecord record;
    record.id = RandomId();
    while (sandboxes_.count(record.id) || creating_.count(record.id)) record.id = RandomId();
    if (!request.name.empty()) {
      for (const auto* known : {&sandboxes_, &creating_})
        for (const auto& [id, other] : *known)
          if (other->owner() == owner.uid && other->name() == request.name)
            throw Error(Code::kInvalidArgument, "you already have a sandbox named '" + request.name + "' (" + id + ")");
      record.name = request.name;
    } else {
      record.name = UniqueName(NameFromRoot(roots.front()), owner.uid);
    }
    record.owner = owner.uid;
    record.state = SandboxState::kActive;
    // For now the fine clock's "now" when the call came in; made a tick of the file clock past
    // it once the set-up below is done (never a wait here, under the registry's lock).
    made_from_ns = request.asked_ns != 0 ? std::min(request.asked_ns, FileClockFineNowNs()) : FileClockFineNowNs();
    record.created_usec = made_from_ns / 1000;
    record.roots = roots;
    record.stores = stores;
    // What each root is, from the descriptor its owner opened and was checked on.
    for (int fd : opened_fds) record.root_handles.push_back(FileHandleText(fd));
    record.network = request.network;
    record.shared = request.shared;
    record.made_by_try = request.made_by_try;
    record.scratch_home = request.scratch_home;
    record.quota_bytes = request.quota_bytes;
    record.hard_quota = hard_quotas_ && request.quota_bytes != 0 && !layout_.user_mode();
    record.ttl_sec = request.ttl_sec;
    record.hide = request.hide;
    record.allow_sockets = request.allow_sockets;
    record.allow_hosts = request.allow_hosts;
    record.last_used_usec = record.created_usec;
    sandbox = MakeSandbox(record);
    // Reserved before authorization and the slow set-up, so that a concurrent create over the
    // same roots or with the same name is refused; listed only once it exists.
    creating_[record.id] = sandbox;
  }
  auto remove_remains = [this](Sandbox& made) {
    try {
      made.Unmount();
      for (const auto& dir : made.paths().StorageDirs()) RemoveTree(dir);
      made.RemoveQuotaLayer();
      RemoveTree(layout_.RunSandboxDir(made.id()));
    } catch (...) {
    }
  };
  try {
    authorize(sandbox->roots());
    try {
      sandbox->SetUp(opened_fds);
    } catch (const Error&) {
      if (std::all_of(stores.begin(), stores.end(), [](const std::string& store) { return store.empty(); })) throw;
      // The root's file system cannot hold an upper layer (overlayfs needs xattrs and
      // whiteouts there): the layers go to the state directory, as across file systems.
      remove_remains(*sandbox);
      SandboxRecord record = sandbox->record();
      record.stores.assign(roots.size(), std::string());
      auto fallback = MakeSandbox(record);
      {
        std::lock_guard lock(mutex_);
        creating_[record.id] = fallback;
      }
      sandbox = fallback;
      sandbox->SetUp(opened_fds);
    }
    // Made on a tick of the file clock past the create's start: a live change from then on is
    // after the sandbox was made, one before the create before it, and one made while it was
    // set up (before anything could read the live tree through it) either, rightly. The set-up
    // (polkit, the mount) takes longer than a tick as a rule, so this seldom waits.
    WaitForFileClockPast(made_from_ns);
    sandbox->SetCreatedUsec(FileClockNowNs() / 1000);
    // The record that was built and set up, whole: never rebuilt field by field.
    store_.Insert(sandbox->record());
  } catch (...) {
    remove_remains(*sandbox);
    std::lock_guard lock(mutex_);
    creating_.erase(sandbox->id());
    throw;
  }
  std::lock_guard lock(mutex_);
  creating_.erase(sandbox->id());
  sandboxes_[sandbox->id()] = sandbox;
  return sandbox;
}

void SandboxRegistry::CheckOverlap(const std::vector<std::string>& roots, bool shared, uid_t caller) const {
  for (const auto* known : {&sandboxes_, &creating_})
    for (const auto& [id, other] : *known) {
      if (shared && other->shared()) continue;
      for (const auto& mine : roots)
        for (const auto& theirs : other->roots())
          if (PathsOverlap(mine, theirs))
            // Another user's sandbox is named to no one but root, whose List and Find show
            // every sandbox anyway (DescribeOverlap).
            throw Error(Code::kOverlap,
                        DescribeOverlap(mine, shared, {id, theirs, other->shared(), caller == 0 || other->owner() == caller}));
    }
}

std::string SandboxRegistry::UniqueName(const std::string& wanted, uid_t owner) const {
  auto taken = [&](const std::string& name) {
    for (const auto* known : {&sandboxes_, &creating_})
      for (const auto& [id, other] : *known)
        if (other->owner() == owner && other->name() == name) return true;
    return false;
  };
  std::string name = wanted;
  try {
    CheckSandboxName(name);
  } catch (const Error&) {
    name = "sandbox";
  }
  std::string base = name;
  for (int n = 2; taken(name); ++n) name = base + "-" + std::to_string(n);
  return name;
}

std::shared_ptr<Sandbox> SandboxRegistry::Find(const std::string& id_or_name, uid_t uid) const {
  std::lock_guard lock(mutex_);
  auto it = sandboxes_.find(id_or_name);
  if (it != sandboxes_.end() && (uid == 0 || it->second->owner() == uid)) return it->second;
  std::shared_ptr<Sandbox> found;
  for (const auto& [id, sandbox] : sandboxes_) {
    if (sandbox->name() != id_or_name) continue;
    if (sandbox->owner() == uid) return sandbox;
    if (uid == 0) found = sandbox;  // root: any owner's, when the name is unambiguous enough
  }
  return found;
}

std::shared_ptr<Sandbox> SandboxRegistry::FindById(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto it = sandboxes_.find(id);
  return it == sandboxes_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Sandbox>> SandboxRegistry::List(uid_t uid) const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Sandbox>> result;
  for (const auto& [id, sandbox] : sandboxes_)
    if (uid == 0 || sandbox->owner() == uid) result.push_back(sandbox);
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
    return a->created_usec() != b->created_usec() ? a->created_usec() < b->created_usec() : a->id() < b->id();
  });
  return result;
}

void SandboxRegistry::Forget(const std::string& id) {
  store_.Remove(id);
  std::lock_guard lock(mutex_);
  sandboxes_.erase(id);
}

void SandboxRegistry::RemoveFiles(const std::string& id, const std::vector<std::string>& stores) {
  // A rename is instant; the deletion of what may be many files happens in EmptyTrash.
  for (const auto& store : stores) {
    MakeDirectory(layout_.TrashDirIn(store), 0700);
    std::string from = layout_.SandboxDirIn(store, id);
    std::string to = layout_.TrashDirIn(store) + "/" + id;
    if (rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT) RemoveTree(from);
  }
  RemoveTree(layout_.RunSandboxDir(id));
}

std::vector<std::string> SandboxRegistry::Stores() {
  std::vector<std::string> stores{""};
  for (auto& area : store_.Areas()) stores.push_back(std::move(area));
  return stores;
}

std::vector<std::string> SandboxRegistry::SweepOrphans() {
  std::vector<std::string> swept;
  // A record this daemon could not read is someone's sandbox still: its remains are not
  // orphans.
  auto known = [this](const std::string& id) {
    std::lock_guard lock(mutex_);
    return sandboxes_.count(id) > 0 || unreadable_.count(id) > 0;
  };
  // Mounts and directories of sandboxes without a record: a destroy whose reply went out
  // before the daemon died, or a create that died before its record was written.
  for (const auto& id : ListDirectory(layout_.run_dir())) {
    if (!LooksLikeId(id) || known(id)) continue;
    for (const auto& root : ListDirectory(layout_.RunSandboxDir(id))) layout_.mounts().Detach(layout_.RunSandboxDir(id) + "/" + root);
    RemoveTree(layout_.RunSandboxDir(id));
    swept.push_back(id);
  }
  // Hard quotas' file systems: <id>.img, mounted at <id> (and <id>.img.new, one cut off while
  // it was made).
  for (const auto& name : ListDirectory(layout_.QuotaDir())) {
    std::string id = name.substr(0, name.find('.'));
    if (!LooksLikeId(id) || known(id)) continue;
    QuotaLayer(layout_.QuotaImage(id), layout_.QuotaMount(id), 0).Remove();
    if (std::find(swept.begin(), swept.end(), id) == swept.end()) swept.push_back(id);
  }
  for (const auto& store : Stores()) {
    for (const auto& id : ListDirectory(layout_.StoreDir(store) + "/sandboxes")) {
      if (!LooksLikeId(id) || known(id)) continue;
      RemoveFiles(id, {store});
      if (std::find(swept.begin(), swept.end(), id) == swept.end()) swept.push_back(id);
    }
  }
  return swept;
}

std::vector<std::pair<std::string, std::string>> SandboxRegistry::Recover(const std::function<void(Sandbox&)>& before_setup) {
  std::vector<std::pair<std::string, std::string>> failures;
  // A record this daemon cannot read keeps its sandbox down, left as it is, and no other.
  std::vector<std::pair<std::string, std::string>> refused;
  auto records = store_.LoadAll(refused);
  for (auto& [id, why] : refused) {
    {
      std::lock_guard lock(mutex_);
      unreadable_.insert(id);
    }
    failures.emplace_back(id, why + "; it is left as it is");
  }
  for (auto& record : records) {
    auto sandbox = MakeSandbox(record);
    {
      std::lock_guard lock(mutex_);
      sandboxes_[record.id] = sandbox;
    }
    try {
      // A hard quota's layers are in a file system of their own: mounted before anything
      // settles what was cut off in them. A suspended sandbox has none mounted.
      if (sandbox->gate().state() != SandboxState::kSuspended) sandbox->MountLayers();
      if (before_setup) before_setup(*sandbox);
      if (sandbox->gate().active()) sandbox->SetUp();  // a suspended one stays unmounted, its layers archived
      if (sandbox->gate().active() && sandbox->FillMissingRootHandles()) store_.SetRootHandles(record.id, sandbox->record().root_handles);
    } catch (const std::exception& e) {
      failures.emplace_back(record.id, e.what());
    }
  }
  return failures;
}

void SandboxRegistry::EmptyTrash() {
  // One emptying at a time: two at once (two destroys in a row) would remove the same trees
  // together, and the trash directory itself is kept, so that a destroy's rename into it never
  // meets it gone. What lands while one runs is taken by the next (each destroy asks for one).
  std::lock_guard emptying(trash_mutex_);
  for (const auto& store : Stores()) {
    std::string trash = layout_.TrashDirIn(store);
    struct stat st;
    if (lstat(trash.c_str(), &st) != 0) continue;
    for (const auto& entry : ListDirectory(trash)) RemoveTree(trash + "/" + entry);
  }
  // The database's part of what was destroyed goes too.
  store_.GiveBackSpace();
}

size_t SandboxRegistry::size() const {
  std::lock_guard lock(mutex_);
  return sandboxes_.size();
}

}  // namespace sandboxd
