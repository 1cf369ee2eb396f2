#include "text/binary_patch.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// git's alphabet (base85.c): not RFC 1924's order, git's.
constexpr char kBase85[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
/// The most bytes one line carries.
constexpr size_t kLineBytes = 52;
/// What is read of the content, and deflated, at a time.
constexpr size_t kReadPiece = 64 * 1024;

/// A zlib deflate stream, ended however we leave.
class Deflater {
 public:
  Deflater() {
    // git's level: zlib_compression_level is Z_BEST_SPEED unless core.compression says otherwise.
    if (deflateInit(&stream_, Z_BEST_SPEED) != Z_OK) throw Error(Code::kFailed, "cannot start zlib's deflate");
  }
  ~Deflater() { deflateEnd(&stream_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  /// Deflates `input` (the last of it when `last`), appending what comes out to `out`.
  void Add(const char* input, size_t length, bool last, std::string& out) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input));
    stream_.avail_in = static_cast<uInt>(length);
    unsigned char buffer[kReadPiece];
    do {
      stream_.next_out = buffer;
      stream_.avail_out = sizeof buffer;
      int status = deflate(&stream_, last ? Z_FINISH : Z_NO_FLUSH);
      if (status == Z_STREAM_ERROR) throw Error(Code::kFailed, "zlib's deflate failed");
      out.append(reinterpret_cast<const char*>(buffer), sizeof buffer - stream_.avail_out);
    } while (stream_.avail_out == 0);
  }

 private:
  z_stream stream_{};
};

}  // namespace

std::string Base85(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() + 3) / 4 * 5);
  for (size_t at = 0; at < bytes.size(); at += 4) {
    uint32_t group = 0;
    for (size_t i = 0; i < 4; ++i)
      group = group << 8 | (at + i < bytes.size() ? static_cast<unsigned char>(bytes[at + i]) : 0u);
    char digits[5];
    for (int i = 4; i >= 0; --i) {
      digits[i] = kBase85[group % 85];
      group /= 85;
    }
    text.append(digits, 5);
  }
  return text;
}

std::string BinaryPatchLine(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > kLineBytes)
    throw Error(Code::kFailed, "a binary patch line holds 1 to 52 bytes, not " + std::to_string(bytes.size()));
  char count = bytes.size() <= 26 ? static_cast<char>('A' + bytes.size() - 1) : static_cast<char>('a' + bytes.size() - 27);
  return count + Base85(bytes) + "\n";
}

void WriteLiteral(const TextSource& content, const PatchSink& out) {
  const uint64_t size = content.size();
  out("literal " + std::to_string(size) + "\n");
  Deflater deflater;
  std::vector<char> piece(static_cast<size_t>(std::min<uint64_t>(size, kReadPiece)));
  std::string deflated, lines;
  uint64_t offset = 0;
  bool last = false;
  while (!last) {
    size_t length = static_cast<size_t>(std::min<uint64_t>(size - offset, piece.size()));
    content.Read(offset, length, piece.data());
    offset += length;
    last = offset == size;
    deflater.Add(piece.data(), length, last, deflated);
    // Whole lines as they fill; the rest waits for more (or, at the end, makes the last line).
    size_t used = 0;
    while (deflated.size() - used >= kLineBytes || (last && used < deflated.size())) {
      size_t take = std::min(kLineBytes, deflated.size() - used);
      lines += BinaryPatchLine(std::string_view(deflated).substr(used, take));
      used += take;
    }
    deflated.erase(0, used);
    if (!lines.empty()) out(lines);
    lines.clear();
  }
  out("\n");
}

void WriteBinaryPatch(const TextSource& old_content, const TextSource& new_content, const PatchSink& out) {
  out("GIT binary patch\n");
  WriteLiteral(new_content, out);
  // The way back, as git writes it: `git apply -R` takes it, `git apply` skips it.
  WriteLiteral(old_content, out);
}

}  // namespace sandboxd
