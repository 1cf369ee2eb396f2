#include "model/change.h"

#include <sys/stat.h>

#include <array>
#include <utility>

#include "base/name_table.h"

namespace sandboxd {
namespace {

constexpr std::array<std::pair<ChangeKind, std::string_view>, 5> kKindNames{{
    {ChangeKind::kAdded, "added"},
    {ChangeKind::kModified, "modified"},
    {ChangeKind::kDeleted, "deleted"},
    {ChangeKind::kTypeChanged, "type-changed"},
    {ChangeKind::kModeChanged, "mode-changed"},
}};

constexpr std::array<std::pair<EntryType, std::string_view>, 8> kTypeNames{{
    {EntryType::kNone, "none"},
    {EntryType::kFile, "file"},
    {EntryType::kDirectory, "directory"},
    {EntryType::kSymlink, "symlink"},
    {EntryType::kFifo, "fifo"},
    {EntryType::kSocket, "socket"},
    {EntryType::kCharDevice, "char-device"},
    {EntryType::kBlockDevice, "block-device"},
}};

}  // namespace

std::string_view ToString(ChangeKind kind) { return NameOf(kKindNames, kind, "unknown"); }

std::optional<ChangeKind> ChangeKindFromString(std::string_view text) { return ValueOf<ChangeKind>(kKindNames, text); }

char ToLetter(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded: return 'A';
    case ChangeKind::kModified: return 'M';
    case ChangeKind::kDeleted: return 'D';
    case ChangeKind::kTypeChanged: return 'T';
    case ChangeKind::kModeChanged: return 'P';
  }
  return '?';
}

std::string_view ToString(EntryType type) { return NameOf(kTypeNames, type, "unknown"); }

std::optional<EntryType> EntryTypeFromString(std::string_view text) { return ValueOf<EntryType>(kTypeNames, text); }

EntryType EntryTypeFromMode(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return EntryType::kFile;
    case S_IFDIR: return EntryType::kDirectory;
    case S_IFLNK: return EntryType::kSymlink;
    case S_IFIFO: return EntryType::kFifo;
    case S_IFSOCK: return EntryType::kSocket;
    case S_IFCHR: return EntryType::kCharDevice;
    case S_IFBLK: return EntryType::kBlockDevice;
    default: return EntryType::kNone;
  }
}

}  // namespace sandboxd
