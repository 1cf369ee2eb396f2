#pragma once
/// Names as data: the odd names jobs make, how a shell script spells any byte string, and how
/// DESIGN says a name must look in human output (git's quoting).

#include <string>

namespace sandboxd::model {

/// A word for `sh -c` that expands to exactly `bytes` (any byte but NUL; no trailing newline):
/// "$(printf '\ooo...')", so the script itself stays ASCII (D-Bus strings must be UTF-8).
std::string ShellWord(const std::string& bytes);

/// A printf format (single-quoted, every unusual byte as \ooo) that prints exactly `bytes`,
/// NULs and trailing newlines included: for file contents.
std::string PrintfFormat(const std::string& bytes);

/// Whether `bytes` is valid UTF-8.
bool IsUtf8(const std::string& bytes);

/// Name quoting per DESIGN "Names are data" (git core.quotePath): a name with a control
/// character, '"', '\' or a byte that is not part of valid UTF-8 is printed inside double
/// quotes with those escaped (\a\b\t\n\v\f\r, \", \\, octal otherwise); valid UTF-8 stays as
/// it is. `octal_high` also escapes every byte >= 0x80 (git's default quotePath=true), which
/// the test accepts as well.
std::string GitQuote(const std::string& name, bool octal_high = false);

/// How a name travels over the bus, in `--json` and in selectors (docs/security.md, "Names are data"):
/// itself when it is UTF-8 and does not begin with '"', otherwise quoted as git quotes it.
std::string WireName(const std::string& name);

/// Whether `text` holds a control byte other than '\n' and '\t' (ESC, CR, BEL, ...).
bool HasRawControlBytes(const std::string& text);

/// A printable rendering of any bytes for failure messages (C-style escapes).
std::string Printable(const std::string& bytes, size_t limit = 120);

}  // namespace sandboxd::model
