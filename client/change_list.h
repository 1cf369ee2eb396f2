#pragma once
/// The change set of a sandbox as ListChanges writes it: one JSON object per change, of any
/// number (GetChanges answers in one D-Bus message, which holds 10,000 changes at most).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "context.h"
#include "listed_change.h"

namespace sandboxctl {

/// Calls `each` with every change of the sandbox at `sandbox_path`, in the daemon's order, as
/// they come (never all held at once), read and as the line it came as; returns how many.
/// Throws the call's sdbus::Error; a list the daemon says had more changes than came is an
/// error too.
size_t ForEachChange(Context& ctx, const std::string& sandbox_path,
                     const std::function<void(const ListedChange& change, std::string_view line)>& each);

}  // namespace sandboxctl
