#pragma once
/// UniqueFd: sole owner of one file descriptor, closed on destruction. Move-only, so an fd
/// can never be closed twice or leaked on an error path. Not sdbus::UnixFd, which dups on copy;
/// convert at the D-Bus boundary with release(). Shared: sandboxd, its helpers and sandboxctl.

#include <unistd.h>

#include <utility>

namespace sandboxd {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace sandboxd
