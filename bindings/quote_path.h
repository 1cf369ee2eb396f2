#pragma once
/// Names are data (DESIGN, "Data safety"): a path a job chose is printed for people quoted as
/// git quotes it (core.quotePath=true): a name with a control byte, `"`, `\` or a byte that is
/// not ASCII is written in double quotes, with C escapes (\a \b \t \n \v \f \r \" \\) and
/// three-digit octal for every other such byte; any other name is written as it is. So no name
/// can move the cursor, erase a line or end a line of a diff early, and `git apply` reads the
/// diff headers back. Shared by the daemon (diff headers) and sandboxctl (its listings).

#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::api {

/// `path` as git prints it: itself, or quoted.
std::string QuotePath(std::string_view path);

/// The name a quoted token stands for ("\"a\\nb\"" → "a\nb"), nullopt when it is not one
/// QuotePath could have written; a token without quotes stands for itself.
std::optional<std::string> UnquotePath(std::string_view token);

/// Any text for a terminal (an error message that may hold a name): control bytes other than
/// newline and tab become octal escapes; everything else stays.
std::string EscapeControlBytes(std::string_view text);

}  // namespace sandboxd::api
