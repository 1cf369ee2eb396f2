#pragma once
/// D-Bus strings must be valid UTF-8 (the bus drops a message that is not, and sd-bus refuses to
/// build one), but file names are bytes a job chooses. Everything the daemon sends as a string
/// passes through here: messages get their invalid bytes escaped, and names travel as "wire
/// names", which say exactly which bytes they stand for.

#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::api {

/// Whether `text` is UTF-8 that D-Bus accepts: no overlong forms, surrogates, code points past
/// U+10FFFF or noncharacters (sd-bus's rules), and no NUL.
bool IsValidUtf8(std::string_view text);

/// `text` with every byte that is not part of valid UTF-8 written as a three-digit octal escape
/// (\377): for messages meant for people, which may quote a name.
std::string EscapeInvalidUtf8(std::string_view text);

/// `text` (valid UTF-8) if it has at most `max_bytes` bytes, else its first bytes up to a
/// character's end followed by " ... (cut: N bytes in all)", the whole at most `max_bytes` long
/// (`max_bytes` >= 64): a message that names a million paths must still fit a D-Bus message.
std::string CutToBytes(std::string_view text, size_t max_bytes);

/// The name `path` travels as in a D-Bus string: itself when it is valid UTF-8 and does not
/// begin with `"`, otherwise git's quoted form (QuotePath, which then always quotes). A wire
/// name that begins with `"` is therefore always a quoted one, and maps back to one name.
std::string WireName(std::string_view path);

/// A wire name as git prints the name it stands for (QuotePath): what people see of a name
/// that came over the bus.
std::string ShowWireName(std::string_view wire);

/// The name a wire name stands for; nullopt for a quoted token that QuotePath could not have
/// written.
std::optional<std::string> NameFromWire(std::string_view wire);

}  // namespace sandboxd::api
