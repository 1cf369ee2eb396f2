#pragma once
/// The file tools of `sandboxctl mcp` (read_file, write_file, edit_file, list_dir) at work: this
/// code runs inside a job of the sandbox, as its owner, started as `sandboxctl
/// --mcp-file-helper OP ROOT PATH`. So it sees exactly what a job sees (the sandbox's view, hidden
/// paths hidden), its writes land in the upper like any job's and are listed, settled and
/// announced as a job's are, and it can do nothing a job could not. Every path is opened
/// beneath its root (openat2 RESOLVE_BENEATH): a symlink that leads out of the root is refused,
/// not followed; write_file and edit_file never write through a symlink at all.
///
/// Protocol: what a write or edit needs comes as one JSON object on stdin; the answer is one
/// line of JSON on stdout ({"error": "sentence"} or the operation's fields), followed, for a
/// read, by the text read.

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sandboxctl::file_helper {

/// The first argument that makes sandboxctl this helper rather than the CLI.
inline constexpr const char* kArgument = "--mcp-file-helper";

/// What read_file answers with at most, and the most write_file and edit_file write.
inline constexpr size_t kReadBytes = 256u << 10;
inline constexpr size_t kWriteBytes = 16u << 20;
/// How many entries list_dir answers with at most.
inline constexpr size_t kListedEntries = 2000;

/// A refusal, as one sentence naming the path.
struct Refusal {
  std::string message;
};

struct ReadAnswer {
  std::string text;          ///< the lines asked for, at most kReadBytes
  uint64_t size = 0;         ///< the file's size in bytes
  uint64_t total_lines = 0;  ///< lines in the whole file
  uint64_t first_line = 1;   ///< the number of text's first line
  uint64_t lines = 0;        ///< lines in text
  bool cut = false;          ///< text stops short of what was asked (kReadBytes)
};

/// The file at `path` beneath `root_fd`, lines [first_line, first_line + max_lines) (all when
/// `max_lines` is none). Refuses what is not a regular file or not text (a NUL byte or bytes
/// that are not UTF-8).
ReadAnswer ReadText(int root_fd, const std::string& path, uint64_t first_line, std::optional<uint64_t> max_lines);

struct WriteAnswer {
  uint64_t bytes = 0;
  bool created = false;  ///< no file was there before
};

/// Writes `content` to `path` beneath `root_fd` as a whole (a new file next to it, renamed over
/// it: a reader never sees half), making missing parent directories; an existing file keeps its
/// permission bits. Refuses a symlink, a directory or any other non-file at `path`.
WriteAnswer WriteWhole(int root_fd, const std::string& path, const std::string& content);

struct EditAnswer {
  uint64_t line = 0;  ///< the line where the replaced text began
  uint64_t bytes = 0;
};

/// Replaces the one occurrence of `old_text` in the text file at `path` with `new_text`, written
/// as WriteWhole writes. Refuses when `old_text` is empty, occurs no time or more than once.
EditAnswer EditOnce(int root_fd, const std::string& path, const std::string& old_text, const std::string& new_text);

/// The entries of the directory at `path` beneath `root_fd`, sorted by name, at most
/// kListedEntries: {"entries": [{"name", "type": file|directory|symlink|other, "size"
/// (files), "target" (symlinks)}], "total"}.
nlohmann::json ListDirectory(int root_fd, const std::string& path);

/// The helper's main: argv after kArgument is OP ROOT PATH; reads stdin, answers on stdout.
/// Returns the exit status (0 whenever an answer was written, a refusal included).
int Main(int argc, char** argv);

}  // namespace sandboxctl::file_helper
