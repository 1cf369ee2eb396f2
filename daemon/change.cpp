#include "change.h"

#include <sys/stat.h>

#include <array>
#include <utility>

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

std::string_view ToString(ChangeKind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "unknown";
}

std::optional<ChangeKind> ChangeKindFromString(std::string_view text) {
  for (const auto& [k, name] : kKindNames)
    if (name == text) return k;
  return std::nullopt;
}

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

std::string_view ToString(EntryType type) {
  for (const auto& [t, name] : kTypeNames)
    if (t == type) return name;
  return "unknown";
}

std::optional<EntryType> EntryTypeFromString(std::string_view text) {
  for (const auto& [t, name] : kTypeNames)
    if (name == text) return t;
  return std::nullopt;
}

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
