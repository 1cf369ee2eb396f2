#include "runtime/file_handle.h"

#include <fcntl.h>

namespace sandboxd {

std::string FileHandle::ToText() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = std::to_string(type) + ":";
  for (unsigned char c : bytes) {
    text += kHex[c >> 4];
    text += kHex[c & 15];
  }
  return text;
}

std::optional<FileHandle> FileHandleOf(int fd) {
  alignas(struct file_handle) unsigned char storage[sizeof(struct file_handle) + MAX_HANDLE_SZ];
  auto* header = reinterpret_cast<struct file_handle*>(storage);
  header->handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (name_to_handle_at(fd, "", header, &mount_id, AT_EMPTY_PATH) != 0) return std::nullopt;
  return FileHandle{header->handle_type, std::string(reinterpret_cast<const char*>(header->f_handle), header->handle_bytes)};
}

std::string FileHandleText(int fd) {
  auto handle = FileHandleOf(fd);
  return handle ? handle->ToText() : std::string();
}

}  // namespace sandboxd
