#pragma once
/// Work the daemon does for nobody waiting (the settling after a job: a scan of the whole change
/// set) runs at a lower CPU priority on its thread, so that a caller's next job, its client and
/// the daemon's workers are not slowed by it on a busy machine. Linux gives each thread its own
/// nice value (setpriority(2) with a thread id). Nice 10 still gets about a tenth of a busy
/// CPU, so the work never starves and whoever does wait for it (WaitSettled) is not stuck.

namespace sandboxd {

class BackgroundPriority {
 public:
  BackgroundPriority();
  ~BackgroundPriority();
  BackgroundPriority(const BackgroundPriority&) = delete;
  BackgroundPriority& operator=(const BackgroundPriority&) = delete;

 private:
  int before_ = 0;
  bool lowered_ = false;
};

}  // namespace sandboxd
