#include "jobs/captured_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/errors.h"
#include "base/fs_util.h"

namespace sandboxd {

uint64_t OutputBudget::Take(uid_t uid, uint64_t wanted) {
  std::lock_guard lock(mutex_);
  uint64_t& held = held_[uid];
  uint64_t granted = std::min(wanted, per_user_max_ > held ? per_user_max_ - held : 0);
  held += granted;
  if (held == 0) held_.erase(uid);
  return granted;
}

void OutputBudget::Give(uid_t uid, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  it->second -= std::min(it->second, bytes);
  if (it->second == 0) held_.erase(it);
}

uint64_t OutputBudget::Held(uid_t uid) const {
  std::lock_guard lock(mutex_);
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second;
}

CapturedOutput::CapturedOutput(const std::string& dir, const std::string& job_id, uid_t owner, std::shared_ptr<OutputBudget> budget,
                               uint64_t job_max)
    : path_(dir + "/" + job_id), owner_(owner), budget_(std::move(budget)), job_max_(job_max) {
  // O_EXCL and O_NOFOLLOW: the directory is root's alone, but a name that is already there is
  // never written through.
  fd_.reset(open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd_) ThrowErrno("cannot create the output file " + path_ + " of job " + job_id);
}

CapturedOutput::~CapturedOutput() {
  unlink(path_.c_str());
  budget_->Give(owner_, size_);
}

bool CapturedOutput::Append(const char* data, size_t size) {
  std::lock_guard lock(mutex_);
  if (!fd_) return false;
  uint64_t room = job_max_ > size_ ? job_max_ - size_ : 0;
  uint64_t granted = budget_->Take(owner_, std::min<uint64_t>(room, size));
  size_t done = 0;
  while (done < granted) {
    ssize_t wrote = pwrite(fd_.get(), data + done, granted - done, static_cast<off_t>(size_ + done));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) break;  // a full disk: what is not written is dropped like what does not fit
    done += static_cast<size_t>(wrote);
  }
  budget_->Give(owner_, granted - done);
  size_ += done;
  if (done < size) truncated_ = true;
  return done > 0;
}

void CapturedOutput::Close() {
  std::lock_guard lock(mutex_);
  fd_.reset();
}

uint64_t CapturedOutput::size() const {
  std::lock_guard lock(mutex_);
  return size_;
}

bool CapturedOutput::truncated() const {
  std::lock_guard lock(mutex_);
  return truncated_;
}

std::string CapturedOutput::Read(uint64_t offset, uint32_t max_bytes) const {
  uint64_t size;
  {
    std::lock_guard lock(mutex_);
    size = size_;
  }
  if (offset >= size) return {};
  // Only what Append wrote and counted is read, even while more is being written.
  std::string data(static_cast<size_t>(std::min<uint64_t>(max_bytes, size - offset)), '\0');
  UniqueFd fd(open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) ThrowErrno("cannot open the output file " + path_);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t got = pread(fd.get(), data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read the output file " + path_);
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  data.resize(done);
  return data;
}

void PrepareOutputDir(const std::string& dir) {
  RemoveTree(dir);
  MakeDirectory(dir, 0700);
}

}  // namespace sandboxd
