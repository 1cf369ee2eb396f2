#include "runtime/background_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace sandboxd {
namespace {

constexpr int kBackgroundNice = 10;

id_t ThisThread() { return static_cast<id_t>(syscall(SYS_gettid)); }

}  // namespace

BackgroundPriority::BackgroundPriority() {
  errno = 0;
  before_ = getpriority(PRIO_PROCESS, ThisThread());
  if (errno != 0 || before_ >= kBackgroundNice) return;
  lowered_ = setpriority(PRIO_PROCESS, ThisThread(), kBackgroundNice) == 0;
}

BackgroundPriority::~BackgroundPriority() {
  // Back up again (root may raise it): the thread may go on with work someone waits for.
  if (lowered_) setpriority(PRIO_PROCESS, ThisThread(), before_);
}

}  // namespace sandboxd
