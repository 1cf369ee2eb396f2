#pragma once
/// One change as sandboxd lists it to its clients: root index, path (a wire name, utf8.h),
/// kind and details. ListChanges writes each as one line of JSON; GetChanges sends the same
/// keys, the details as a{sv}. One definition, so that both say the same.

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "review.h"

namespace sandboxd {

/// {"root", "path", "kind", then the details: "type", "old_type"/"old_mode",
/// "new_type"/"new_mode", "review", for a change decided hunk by hunk "hunks",
/// "approved_hunks", "rejected_hunks", for a rename half "renamed_from" or "renamed_to", and
/// with a `conflict` reason "conflict" (true) and "conflict_reason"}. `prefix` is the root's
/// path prefix ("1/" with several roots, else "").
nlohmann::json ListedChange(const ReviewedChange& item, const std::string& prefix, const std::string* conflict);

/// At least the bytes `listed` takes in a D-Bus message as one (ussa{sv}) element (alignment
/// and signatures included): what keeps a reply under the bus's message limit.
size_t MarshalledBound(const nlohmann::json& listed);

}  // namespace sandboxd
