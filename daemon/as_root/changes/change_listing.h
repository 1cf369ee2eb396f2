#pragma once
/// One change as sandboxd lists it to its clients: root index, path (a wire name, utf8.h),
/// kind and details. ListChanges writes each as one line of JSON; GetChanges sends the same
/// keys, the details as a{sv}. One definition (ForEachListedField), so that both say the same.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "changes/reviewed_change.h"

namespace sandboxd {

/// A listed value: a string, a number, a size, true, or a list of hunk numbers.
struct ListedValue {
  enum class Type { kString, kNumber, kSize, kTrue, kNumbers } type;
  std::string_view text;
  uint64_t number = 0;  ///< a kNumber fits 32 bits (D-Bus "u"), a kSize takes 64 ("t")
  const std::vector<uint32_t>* numbers = nullptr;
};

/// Hands `field(key, value)` each key of the change in the order of the keys' bytes:
/// "root", "path", "kind", then the details: "type", "old_mode"/"old_size"/"old_type",
/// "new_mode"/"new_size"/"new_type" (the sizes of a file's or symlink's sides only), "review", for a change decided hunk by hunk "hunks",
/// "approved_hunks", "rejected_hunks", for a rename half "renamed_from" or "renamed_to", and
/// with a `conflict` reason "conflict" (true) and "conflict_reason". `prefix` is the root's
/// path prefix ("1/" with several roots, else ""). (Sorted as a JSON object of nlohmann keeps its
/// keys, so a line written field by field is the object's dump, byte for byte.)
void ForEachListedField(const ReviewedChange& item, const std::string& prefix, const std::string* conflict,
                        const std::function<void(std::string_view key, const ListedValue& value)>& field);

/// The change as a JSON object (GetChanges, tests).
nlohmann::json ListedChange(const ReviewedChange& item, const std::string& prefix, const std::string* conflict);

/// Appends the change as one line of JSON and its newline to `out`: ListedChange(...).dump()
/// without building the object (ListChanges writes a million of them).
void AppendListedLine(std::string& out, const ReviewedChange& item, const std::string& prefix, const std::string* conflict);

/// At least the bytes `listed` takes in a D-Bus message as one (ussa{sv}) element (alignment
/// and signatures included): what keeps a reply under the bus's message limit.
size_t MarshalledBound(const nlohmann::json& listed);

}  // namespace sandboxd
