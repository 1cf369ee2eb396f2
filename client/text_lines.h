#pragma once
/// Small text tools the verbs share: cutting a stream read in pieces into its lines, and
/// padding a table's columns.

#include <functional>
#include <string>
#include <string_view>

namespace sandboxctl {

/// Lines out of a stream that arrives in pieces cut anywhere: each complete line (without its
/// newline) goes to the callback as soon as its newline arrives.
class LineAssembler {
 public:
  using LineCallback = std::function<void(std::string_view line)>;
  void Add(std::string_view data, const LineCallback& line) {
    for (size_t newline; (newline = data.find('\n')) != std::string_view::npos; data.remove_prefix(newline + 1)) {
      if (partial_.empty()) {
        line(data.substr(0, newline));
      } else {
        partial_.append(data.substr(0, newline));
        line(partial_);
        partial_.clear();
      }
    }
    partial_.append(data);
  }
  /// What came after the last newline ("" when the stream ended with one).
  const std::string& partial() const { return partial_; }
  void clear() { partial_.clear(); }

 private:
  std::string partial_;
};

/// `text` padded with spaces to `width` columns (as is, when longer).
inline std::string PadRight(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

/// The same, spaces first: numbers line up on their last digit.
inline std::string PadLeft(const std::string& text, size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

}  // namespace sandboxctl
