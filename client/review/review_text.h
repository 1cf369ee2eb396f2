#pragma once
/// What the review app's rows and diff show, as text: the same words sandboxctl prints
/// (listed_change.h, quote_path.h, visible_bytes.h), so that a person reading either reads the
/// same. Pure: no widgets, no bus.

#include <string>
#include <string_view>
#include <vector>

#include "listed_change.h"

namespace sandboxd_review {

/// "M run.sh  1.2 KiB [approved]", as `sandboxctl changes` shows the change on a terminal, with
/// its rename, unreadable and conflict notes.
std::string ChangeRowText(const sandboxctl::ListedChange& change);

/// The name a sandbox is shown by: "NAME (ID)", or its id when it has no name.
std::string SandboxTitle(const std::string& id, const std::string& name);

/// Pango markup of one line of a diff (without its newline): every byte that could pass for
/// something else shown visibly and marked, as on the terminal; added lines green, removed red,
/// hunk headers blue.
std::string DiffLineMarkup(std::string_view line);

/// Text escaped for Pango markup.
std::string EscapeMarkup(std::string_view text);

/// Whether the change's decision makes it part of the next commit: approved whole, or hunk by
/// hunk with a hunk or part approved.
bool TakenByCommit(const sandboxctl::ListedChange& change);

/// The diff section header says its content is binary ("Binary files ... differ", or a
/// binary patch).
bool IsBinarySection(std::string_view header);

}  // namespace sandboxd_review
