#pragma once
/// One random sequence against the real daemon: its sandbox, its random source, the model, and
/// the operations (each a real act through sandboxctl, a job, the live tree or the daemon's
/// life) that move both the real system and the model one step.

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model_state.h"

namespace sandboxd::model {

/// The real system disagrees with the model (or with DESIGN): the message says how.
struct Mismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Sequence {
  uint64_t seed = 0;
  std::mt19937_64 rng;
  Skips skips;
  Model model;
  std::string base;     ///< the sequence's directory in alice's home
  std::string project;  ///< the sandbox's root
  std::string id, name;
  std::string hidden;   ///< a `create --hide` directory ("" if none) with key.txt in it
  uint64_t ttl_sec = 0, quota_bytes = 0;
  std::vector<std::string> history;  ///< one compact line per step
  int step = 0;
  int serial = 0;  ///< makes every new name and every content unique

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng() % n; }
  bool Chance(int percent) { return static_cast<int>(Below(100)) < percent; }
};

/// Makes the sequence's project (as alice), the model of it, and the sandbox with random
/// create options.
void StartSequence(Sequence& seq);
/// One random operation, done for real and in the model; appends to the history.
void RandomStep(Sequence& seq);
/// Destroys the sandbox and removes the project.
void EndSequence(Sequence& seq);

/// sandboxctl as alice; a job as alice in the sandbox (fails unless it exits 0).
struct CtlResult {
  int status;
  std::string out, err;
};
CtlResult Ctl(const std::vector<std::string>& args);
void Job(Sequence& seq, const std::string& script);

}  // namespace sandboxd::model
