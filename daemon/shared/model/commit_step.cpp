#include "model/commit_step.h"

#include <cstring>

#include "base/errors.h"
#include "base/name_table.h"

namespace sandboxd {
namespace {

constexpr std::pair<StepAction, std::string_view> kActionNames[] = {
    {StepAction::kPlace, "place"},
    {StepAction::kMakeDirectory, "mkdir"},
    {StepAction::kRemove, "remove"},
    {StepAction::kChmod, "chmod"},
    {StepAction::kMove, "move"},
};

constexpr std::pair<StepDirection, std::string_view> kDirectionNames[] = {
    {StepDirection::kForward, "forward"},
    {StepDirection::kBack, "back"},
};

}  // namespace

std::string_view ToString(StepDirection direction) { return NameOf(kDirectionNames, direction, "unknown"); }

std::optional<StepDirection> StepDirectionFromString(std::string_view text) {
  return ValueOf<StepDirection>(kDirectionNames, text);
}

std::string_view ToString(StepAction action) { return NameOf(kActionNames, action, "unknown"); }

std::optional<StepAction> StepActionFromString(std::string_view text) { return ValueOf<StepAction>(kActionNames, text); }

InodesByRoot InodesNamedBy(const std::vector<CommitStep>& steps) {
  InodesByRoot inodes;
  for (const auto& step : steps)
    if (step.old_ino != 0) inodes[step.root].insert(step.old_ino);
  return inodes;
}

namespace {

template <typename Integer>
void PutInteger(std::string& out, Integer value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void PutBytes(std::string& out, const std::string& bytes) {
  PutInteger(out, static_cast<uint32_t>(bytes.size()));
  out += bytes;
}

/// Reads fields off the front of packed steps, refusing to read past their end.
class StepReader {
 public:
  explicit StepReader(std::string_view packed) : rest_(packed) {}
  bool done() const { return rest_.empty(); }

  template <typename Integer>
  Integer Take() {
    Integer value;
    std::memcpy(&value, Front(sizeof value).data(), sizeof value);
    return value;
  }
  std::string TakeBytes() { return std::string(Front(Take<uint32_t>())); }

 private:
  std::string_view Front(size_t size) {
    if (rest_.size() < size) throw Error(Code::kInvalidArgument, "malformed commit steps: they end inside a step");
    std::string_view front = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return front;
  }
  std::string_view rest_;
};

}  // namespace

std::string PackSteps(const std::vector<CommitStep>& steps) {
  std::string out;
  for (const auto& step : steps) {
    PutInteger(out, static_cast<uint64_t>(step.seq));
    PutInteger(out, static_cast<uint64_t>(step.root));
    PutInteger(out, static_cast<uint8_t>(step.action));
    PutInteger(out, static_cast<uint64_t>(step.old_ino));
    PutInteger(out, static_cast<uint64_t>(step.new_ino));
    PutInteger(out, static_cast<uint32_t>(step.old_mode));
    PutInteger(out, static_cast<uint32_t>(step.new_mode));
    PutBytes(out, step.path);
    PutBytes(out, step.from);
  }
  return out;
}

std::vector<CommitStep> UnpackSteps(std::string_view packed) {
  std::vector<CommitStep> steps;
  StepReader reader(packed);
  while (!reader.done()) {
    CommitStep step;
    step.seq = reader.Take<uint64_t>();
    step.root = reader.Take<uint64_t>();
    auto action = reader.Take<uint8_t>();
    if (action > static_cast<uint8_t>(StepAction::kMove))
      throw Error(Code::kInvalidArgument, "malformed commit steps: step " + std::to_string(step.seq) + " has no known action");
    step.action = static_cast<StepAction>(action);
    step.old_ino = reader.Take<uint64_t>();
    step.new_ino = reader.Take<uint64_t>();
    step.old_mode = reader.Take<uint32_t>();
    step.new_mode = reader.Take<uint32_t>();
    step.path = reader.TakeBytes();
    step.from = reader.TakeBytes();
    if (step.action == StepAction::kMove && step.from.empty())
      throw Error(Code::kInvalidArgument, "malformed commit steps: move step " + std::to_string(step.seq) + " has no source");
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace sandboxd
