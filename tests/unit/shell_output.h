#pragma once
/// What a shell command prints on stdout (stderr dropped), for tests that compare with what
/// real git makes of the same bytes.

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace sandboxd::testing {

inline std::string ShellOutput(const std::string& command) {
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen((command + " 2>/dev/null").c_str(), "r"), &pclose);
  std::string out;
  if (!pipe) return out;
  std::array<char, 65536> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  return out;
}

/// Bytes that look like no text and compress only so far: a fixed pseudo-random sequence, every
/// seventh byte a NUL.
inline std::string SomeBinary(size_t size, uint32_t seed = 1) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    seed = seed * 1103515245u + 12345u;
    bytes[i] = i % 7 == 0 ? '\0' : static_cast<char>((seed >> 16) & (i % 3 == 0 ? 0xff : 0x0f));
  }
  return bytes;
}

}  // namespace sandboxd::testing
