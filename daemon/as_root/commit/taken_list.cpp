#include "commit/taken_list.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/errors.h"

namespace sandboxd {
namespace {

// Each change: its root, kind, types and modes as fixed-size numbers, then its path with its
// length first (a path may hold any byte but NUL, newlines too).
struct TakenRecord {
  uint32_t root;
  uint8_t kind, old_type, new_type, unused;
  uint32_t old_mode, new_mode, path_size;
};

/// What a failed stream operation on `path` says: with the system's reason where the stream left
/// one (a full store must read "No space left on device", not only "cannot write").
[[noreturn]] void ThrowStreamError(const std::string& what, const std::string& path, int err) {
  throw Error(Code::kFailed, what + " " + path + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()));
}

}  // namespace

TakenListWriter::TakenListWriter(std::string path) : path_(std::move(path)) {
  errno = 0;
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) ThrowStreamError("cannot create", path_, errno);
}

void TakenListWriter::Append(size_t root, const Change& change) {
  TakenRecord record{static_cast<uint32_t>(root),
                     static_cast<uint8_t>(change.kind),
                     static_cast<uint8_t>(change.old_type),
                     static_cast<uint8_t>(change.new_type),
                     0,
                     static_cast<uint32_t>(change.old_mode),
                     static_cast<uint32_t>(change.new_mode),
                     static_cast<uint32_t>(change.path.size())};
  errno = 0;
  out_.write(reinterpret_cast<const char*>(&record), sizeof record);
  out_.write(change.path.data(), static_cast<std::streamsize>(change.path.size()));
  if (!out_) ThrowStreamError("cannot write", path_, errno);
}

void TakenListWriter::Close() {
  errno = 0;
  out_.close();
  if (!out_) ThrowStreamError("cannot write", path_, errno);
}

void ForEachTakenPage(const std::string& path, size_t page, const std::function<void(const std::vector<RootChanges>&)>& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Code::kFailed, "cannot read " + path);
  std::vector<RootChanges> changes;
  size_t in_page = 0;
  TakenRecord record;
  while (in.read(reinterpret_cast<char*>(&record), sizeof record)) {
    Change change;
    change.kind = static_cast<ChangeKind>(record.kind);
    change.old_type = static_cast<EntryType>(record.old_type);
    change.new_type = static_cast<EntryType>(record.new_type);
    change.old_mode = record.old_mode;
    change.new_mode = record.new_mode;
    change.path.resize(record.path_size);
    if (!in.read(change.path.data(), record.path_size)) throw Error(Code::kFailed, path + " is cut short");
    if (changes.empty() || changes.back().root != record.root) changes.push_back({record.root, {}});
    changes.back().changes.push_back(std::move(change));
    if (++in_page == page) {
      visit(changes);
      changes.clear();
      in_page = 0;
    }
  }
  if (in.gcount() != 0) throw Error(Code::kFailed, path + " is cut short");
  if (!changes.empty()) visit(changes);
}

}  // namespace sandboxd
