#include "archive/upper_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "base/tree_count.h"

namespace sandboxd {
namespace {

struct ArchiveDeleter {
  void operator()(struct archive* a) const {
    if (a) archive_free(a);  // closes as well
  }
};
using ArchivePtr = std::unique_ptr<struct archive, ArchiveDeleter>;
struct EntryDeleter {
  void operator()(struct archive_entry* e) const {
    if (e) archive_entry_free(e);
  }
};
using EntryPtr = std::unique_ptr<struct archive_entry, EntryDeleter>;
struct ResolverDeleter {
  void operator()(struct archive_entry_linkresolver* r) const {
    if (r) archive_entry_linkresolver_free(r);
  }
};

/// Whether a write failed for want of room: the file system is full for its writer, or the
/// writer's disk quota is.
bool NoRoom(int err) { return err == ENOSPC || err == EDQUOT; }

[[noreturn]] void Fail(struct archive* a, const std::string& what) {
  const char* why = a ? archive_error_string(a) : nullptr;
  std::string message = what + ": " + (why ? why : "libarchive failed");
  if (a && NoRoom(archive_errno(a))) throw Error(Code::kQuotaExceeded, message + " (" + strerror(archive_errno(a)) + ")");
  throw Error(Code::kFailed, message);
}

/// As ThrowErrno, but kQuotaExceeded when errno says there is no room.
[[noreturn]] void ThrowWriteErrno(const std::string& what) {
  int err = errno;
  if (NoRoom(err)) throw Error(Code::kQuotaExceeded, what + ": " + strerror(err));
  ThrowErrno(err, what);
}

void Check(struct archive* a, int status, const std::string& what) {
  // A warning (an attribute the file system could not keep, say) is not a failure of the
  // archive, but an upper layer must come back exactly: treat it as one.
  if (status != ARCHIVE_OK) Fail(a, what);
}

std::string CanonicalDirectory(const std::string& path) {
  char buffer[PATH_MAX];
  if (!realpath(path.c_str(), buffer)) ThrowErrno("cannot resolve " + path);
  return buffer;
}

/// The name an entry has in the archive: relative, no "." or ".." components but for the
/// top directory itself, which is ".". Refused otherwise.
void CheckArchivedName(const std::string& name, const std::string& archive_path) {
  auto bad = [&] { throw Error(Code::kFailed, "archive " + archive_path + " holds an entry named '" + name + "', which sandboxd never writes"); };
  if (name == ".") return;
  if (name.empty() || name.front() == '/') bad();
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") bad();
    start = end + 1;
  }
}

void SyncFile(int fd, const std::string& what) {
  if (fsync(fd) != 0) ThrowWriteErrno("cannot sync " + what);
}

/// A directory of a restored layer whose mode and times are set after everything in it.
struct LaterDirectory {
  std::string path;  ///< relative to the layer, "." for the layer itself
  mode_t mode;
  std::array<timespec, 2> times;  ///< atime, mtime
};

/// libarchive's writer to disk, given each entry by its last name only, with the working
/// directory at the entry's parent: no name it uses is longer than one component, however deep
/// the layer. (Given a path past PATH_MAX, libarchive chdirs down to create the entry, then goes
/// back up and sets the owner, attributes and mode of a directory or symlink by the shortened
/// path, from the wrong directory, through whatever that path means there.) The parent is
/// opened beneath the layer, as OpenBeneath does: never through a symlink, never out of the
/// layer. A writer serves one parent and is closed (its deferred work done, by those names)
/// before the working directory moves on. The working directory is put back when it goes.
class LayerWriter {
 public:
  LayerWriter(int upper_fd, const std::string& upper) : upper_fd_(upper_fd), upper_(upper) {
    start_.reset(open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!start_) ThrowErrno("cannot note the working directory");
  }
  ~LayerWriter() {
    writer_.reset();
    if (fchdir(start_.get()) != 0) {
      // Nothing else to do: the helper ends after this.
    }
  }
  LayerWriter(const LayerWriter&) = delete;
  LayerWriter& operator=(const LayerWriter&) = delete;

  /// The writer for entries in `parent` ("." the layer), which is now the working directory.
  struct archive* At(const std::string& parent, const std::string& what) {
    if (writer_ && parent == parent_) return writer_.get();
    Close(what);
    dir_ = OpenBeneath(upper_fd_, parent, O_RDONLY | O_DIRECTORY);
    if (!dir_) ThrowErrno(what + " (its directory " + parent + " in " + upper_ + ")");
    if (fchdir(dir_.get()) != 0) ThrowErrno(what);
    writer_.reset(archive_write_disk_new());
    if (!writer_) throw Error(Code::kFailed, "cannot start writing " + upper_);
    // Owners and modes exactly as archived (numeric ids: no user lookup); never through a
    // symlink, never above the directory (names are checked besides). Extended attributes are
    // set after each entry (RestoreAttributes), not here.
    Check(writer_.get(),
          archive_write_disk_set_options(writer_.get(), ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_TIME |
                                                            ARCHIVE_EXTRACT_ACL |
                                                            ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT),
          "cannot write " + upper_);
    parent_ = parent;
    return writer_.get();
  }

  /// A hard link `leaf` in the current parent to `target` (relative to the layer), made here:
  /// libarchive would take the target as one path.
  void Link(const std::string& target, const std::string& leaf, const std::string& what) {
    auto [target_parent, target_leaf] = SplitParent(target);
    UniqueFd from = OpenBeneath(upper_fd_, target_parent, O_PATH | O_DIRECTORY);
    if (!from) ThrowErrno(what + " (its link's directory " + target_parent + ")");
    // Without AT_SYMLINK_FOLLOW: a symlink named as the target is linked itself, never followed.
    if (linkat(from.get(), target_leaf.c_str(), dir_.get(), leaf.c_str(), 0) != 0) ThrowWriteErrno(what);
  }

  /// Closes the writer (libarchive then does what it deferred, in the working directory).
  void Close(const std::string& what) {
    if (!writer_) return;
    Check(writer_.get(), archive_write_close(writer_.get()), what);
    writer_.reset();
  }

 private:
  int upper_fd_;
  std::string upper_;
  UniqueFd start_;
  UniqueFd dir_;  ///< the working directory: the current parent
  std::string parent_;
  ArchivePtr writer_;
};

/// Sets the extended attributes (trusted.overlay.*, user.*, security.*) of an entry just
/// restored as `leaf` in the working directory (its parent), once libarchive has given it its
/// owner and mode (a chown drops security.capability). Set here rather than by libarchive, which
/// reports a failed attribute without its errno: a full file system (an attribute that needs a
/// block of its own) must be told from a refused attribute. Never follows a symlink.
void RestoreAttributes(struct archive_entry* entry, const std::string& leaf, const std::string& name) {
  const char* key;
  const void* value;
  size_t size;
  for (int count = archive_entry_xattr_reset(entry); count > 0; --count) {
    archive_entry_xattr_next(entry, &key, &value, &size);
    if (key == nullptr) continue;
    std::string attribute = key;
    // ACLs come back as ACLs (ARCHIVE_EXTRACT_ACL), as libarchive itself skips them here.
    if (attribute == "system.posix_acl_access" || attribute == "system.posix_acl_default") continue;
    if (lsetxattr(leaf.c_str(), key, value, size, 0) != 0) ThrowWriteErrno("cannot restore attribute " + attribute + " of " + name);
  }
}

}  // namespace

ArchiveStats WriteUpperArchive(const std::string& upper_path, const std::string& archive_path, int level,
                               const ArchiveProgressSink& progress) {
  const std::string upper = CanonicalDirectory(upper_path);
  ArchiveStats stats;
  ArchiveProgress done;
  if (progress) {
    TreeCount count = CountTree(upper);  // the totals
    done.entries_total = count.entries;
    done.bytes_total = count.bytes;
  }
  ArchivePtr disk(archive_read_disk_new());
  if (!disk) throw Error(Code::kFailed, "cannot start reading " + upper);
  // Physical: a symlink in the layer is archived as a symlink, never followed.
  archive_read_disk_set_symlink_physical(disk.get());
  // Holes stay holes: each file's map of data and holes (SEEK_DATA/SEEK_HOLE) goes into its
  // entry and the pax writer keeps only the data (GNU sparse 1.0), which extraction writes at
  // its offsets. Read with holes filled, a 1 GiB file of one block came back as 1 GiB of blocks
  // written by root, past the quota and root's reserve.
  Check(disk.get(), archive_read_disk_set_behavior(disk.get(), ARCHIVE_READDISK_NO_TRAVERSE_MOUNTS), "cannot read " + upper);
  Check(disk.get(), archive_read_disk_open(disk.get(), upper.c_str()), "cannot read " + upper);

  ArchivePtr out(archive_write_new());
  if (!out) throw Error(Code::kFailed, "cannot start writing " + archive_path);
  Check(out.get(), archive_write_add_filter_zstd(out.get()), "cannot compress " + archive_path + " with zstd");
  Check(out.get(), archive_write_set_filter_option(out.get(), "zstd", "compression-level", std::to_string(level).c_str()),
        "cannot set zstd level " + std::to_string(level));
  // pax, and not its "restricted" flavour: every entry gets its extended header, so times keep
  // their nanoseconds; extended attributes (trusted.overlay.*) and long names travel there too.
  Check(out.get(), archive_write_set_format_pax(out.get()), "cannot write pax to " + archive_path);
  // Names are bytes a job chose. pax would translate them from the locale's charset (ASCII in
  // the daemon's C locale) to UTF-8, and refuses any name outside ASCII; BINARY keeps the bytes
  // as they are, and says so in each header so that reading does not translate them either.
  Check(out.get(), archive_write_set_format_option(out.get(), "pax", "hdrcharset", "BINARY"),
        "cannot keep names as bytes in " + archive_path);
  UniqueFd file(open(archive_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) ThrowWriteErrno("cannot create archive " + archive_path);
  // A failure from here on leaves no half archive behind to refuse the next attempt.
  struct RemoveUnlessKept {
    const std::string& path;
    bool keep = false;
    ~RemoveUnlessKept() {
      if (!keep) unlink(path.c_str());
    }
  } partial{archive_path};
  Check(out.get(), archive_write_open_fd(out.get(), file.get()), "cannot write " + archive_path);
  std::unique_ptr<struct archive_entry_linkresolver, ResolverDeleter> resolver(archive_entry_linkresolver_new());
  archive_entry_linkresolver_set_strategy(resolver.get(), archive_format(out.get()));

  auto write_entry = [&](struct archive_entry* entry, bool with_data) {
    Check(out.get(), archive_write_header(out.get(), entry), "cannot archive " + std::string(archive_entry_pathname(entry)));
    ++stats.entries;
    struct Told {
      const ArchiveProgressSink& progress;
      ArchiveProgress& done;
      uint64_t bytes;
      ~Told() {
        ++done.entries_done;
        done.bytes_done += bytes;
        if (progress) progress(done);
      }
    } told{progress, done, with_data && archive_entry_filetype(entry) == AE_IFREG ? static_cast<uint64_t>(archive_entry_size(entry)) : 0};
    if (!with_data || archive_entry_filetype(entry) != AE_IFREG || archive_entry_size(entry) == 0) return;
    // Streamed block by block from the file: never a whole file in memory.
    const void* block;
    size_t size;
    la_int64_t offset;
    la_int64_t written = 0;
    static const char kZeros[65536] = {};
    auto put = [&](const void* data, size_t length) {
      if (archive_write_data(out.get(), data, length) != static_cast<la_ssize_t>(length))
        Fail(out.get(), "cannot archive " + std::string(archive_entry_pathname(entry)));
      written += static_cast<la_int64_t>(length);
    };
    for (;;) {
      int r = archive_read_data_block(disk.get(), &block, &size, &offset);
      if (r == ARCHIVE_EOF) break;
      Check(disk.get(), r, "cannot read " + std::string(archive_entry_pathname(entry)));
      // A hole's zeros too: the pax writer takes the logical bytes in order and drops those of
      // the entry's holes (tried without: the data landed at the wrong offsets).
      while (written < offset) put(kZeros, static_cast<size_t>(std::min<la_int64_t>(offset - written, sizeof kZeros)));
      put(block, size);
    }
  };

  for (;;) {
    EntryPtr entry(archive_entry_new());
    int r = archive_read_next_header2(disk.get(), entry.get());
    if (r == ARCHIVE_EOF) break;
    Check(disk.get(), r, "cannot read " + upper);
    std::string path = archive_entry_pathname(entry.get());
    if (archive_read_disk_can_descend(disk.get())) Check(disk.get(), archive_read_disk_descend(disk.get()), "cannot read " + path);
    // Names relative to the layer; the layer's own directory (its mode is the sandbox's root's)
    // is ".".
    std::string name = path == upper ? "." : path.substr(upper.size() + 1);
    archive_entry_set_pathname(entry.get(), name.c_str());
    struct archive_entry* linked = entry.release();
    struct archive_entry* sparse = nullptr;
    // A later name of an inode archived already becomes a hard link to it (no data).
    archive_entry_linkify(resolver.get(), &linked, &sparse);
    EntryPtr owned(linked), owned_sparse(sparse);
    if (owned) write_entry(owned.get(), archive_entry_hardlink(owned.get()) == nullptr);
    if (owned_sparse) write_entry(owned_sparse.get(), false);
  }
  for (;;) {
    struct archive_entry* left = nullptr;
    struct archive_entry* sparse = nullptr;
    archive_entry_linkify(resolver.get(), &left, &sparse);
    if (!left) break;
    EntryPtr owned(left);
    write_entry(owned.get(), false);
  }
  Check(out.get(), archive_write_close(out.get()), "cannot finish " + archive_path);
  SyncFile(file.get(), archive_path);
  partial.keep = true;
  struct stat st;
  if (fstat(file.get(), &st) == 0) stats.bytes = static_cast<uint64_t>(st.st_size);
  return stats;
}

ArchiveStats ExtractUpperArchive(const std::string& archive_path, const std::string& upper_path, const ArchiveProgressSink& progress) {
  const std::string upper = CanonicalDirectory(upper_path);
  ArchiveStats stats;
  UniqueFd file(open(archive_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file) ThrowErrno("cannot open archive " + archive_path);
  struct stat st;
  if (fstat(file.get(), &st) == 0) stats.bytes = static_cast<uint64_t>(st.st_size);
  ArchiveProgress done;
  done.bytes_total = stats.bytes;
  ArchivePtr in(archive_read_new());
  if (!in) throw Error(Code::kFailed, "cannot start reading " + archive_path);
  archive_read_support_filter_zstd(in.get());
  archive_read_support_format_tar(in.get());
  Check(in.get(), archive_read_open_fd(in.get(), file.get(), 1 << 16), "cannot read archive " + archive_path);

  UniqueFd upper_fd(open(upper.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!upper_fd) ThrowErrno("cannot open " + upper);
  LayerWriter disk(upper_fd.get(), upper);
  // Directories get their modes and times once everything is in them (children move a
  // directory's times, and a read-only one would refuse them to an unprivileged helper).
  std::vector<LaterDirectory> directories;

  struct archive_entry* entry = nullptr;
  for (;;) {
    int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    Check(in.get(), r, "cannot read archive " + archive_path);
    std::string name = archive_entry_pathname(entry);
    while (name.size() > 1 && name.back() == '/') name.pop_back();  // tar marks directories so
    CheckArchivedName(name, archive_path);
    // The layer's own directory: anything else there (a symlink to the host) would become the
    // overlay's upper.
    if (name == "." && archive_entry_filetype(entry) != AE_IFDIR)
      throw Error(Code::kFailed, "archive " + archive_path + " holds a top entry that is not a directory");
    auto [parent, leaf] = name == "." ? std::pair<std::string, std::string>{".", "."} : SplitParent(name);
    struct archive* writer = disk.At(parent, "cannot restore " + name);
    if (const char* link = archive_entry_hardlink(entry)) {
      std::string target = link;
      CheckArchivedName(target, archive_path);
      if (target == ".") throw Error(Code::kFailed, "archive " + archive_path + " links a file to its top directory");
      if (archive_entry_size(entry) > 0)
        throw Error(Code::kFailed, "archive " + archive_path + " holds data with hard link " + name + ", which sandboxd never writes");
      disk.Link(target, leaf, "cannot restore " + name);
    } else {
      if (archive_entry_filetype(entry) == AE_IFDIR) {
        directories.push_back({name, static_cast<mode_t>(archive_entry_perm(entry)),
                               {timespec{archive_entry_atime(entry), archive_entry_atime_nsec(entry)},
                                timespec{archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)}}});
        archive_entry_set_perm(entry, archive_entry_perm(entry) | 0700);
        archive_entry_unset_atime(entry);
        archive_entry_unset_mtime(entry);
      }
      // By its last name, in its parent (the working directory now): never a long path.
      archive_entry_set_pathname(entry, name == "." ? "." : leaf.c_str());
      Check(writer, archive_write_header(writer, entry), "cannot restore " + name);
      const void* block;
      size_t size;
      la_int64_t offset;
      for (;;) {
        int d = archive_read_data_block(in.get(), &block, &size, &offset);
        if (d == ARCHIVE_EOF) break;
        Check(in.get(), d, "cannot read " + name + " from " + archive_path);
        if (archive_write_data_block(writer, block, size, offset) < 0) Fail(writer, "cannot restore " + name);
      }
      Check(writer, archive_write_finish_entry(writer), "cannot restore " + name);
      RestoreAttributes(entry, name == "." ? "." : leaf, name);
    }
    ++stats.entries;
    if (progress) {
      ++done.entries_done;
      done.bytes_done = static_cast<uint64_t>(std::max<la_int64_t>(0, archive_filter_bytes(in.get(), -1)));
      progress(done);
    }
  }
  disk.Close("cannot finish restoring " + upper);
  // Children before their parents: a parent's mode may close it to an unprivileged helper.
  for (auto it = directories.rbegin(); it != directories.rend(); ++it) {
    UniqueFd dir = OpenBeneath(upper_fd.get(), it->path, O_RDONLY | O_DIRECTORY);
    if (!dir) ThrowErrno("cannot open restored directory " + it->path);
    if (fchmod(dir.get(), it->mode) != 0) ThrowErrno("cannot set the mode of restored directory " + it->path);
    if (futimens(dir.get(), it->times.data()) != 0) ThrowErrno("cannot set the times of restored directory " + it->path);
  }
  if (syncfs(upper_fd.get()) != 0) ThrowWriteErrno("cannot sync " + upper);
  return stats;
}

}  // namespace sandboxd
