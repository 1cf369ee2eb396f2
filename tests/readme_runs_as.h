#pragma once
/// The README's table "What runs as root, and why", as the tests that hold the build and the
/// running programs to it read it (tests/unit/wings_test.cpp, tests/integration/program_uid_test.cpp):
/// each program the table names, and the words it gives for the uid that program runs as.

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace sandboxd {

inline std::map<std::string, std::string> ReadmeRunsAsTable(const std::string& readme_path) {
  std::ifstream file(readme_path);
  std::stringstream text;
  text << file.rdbuf();
  std::map<std::string, std::string> runs_as;
  std::string line;
  bool in_table = false;
  static const std::regex kRow(R"(^\|([^|]*)\|\s*([^|]*?)\s*\|)");
  static const std::regex kName("`([a-z][a-z-]*)`");
  while (std::getline(text, line)) {
    if (line.rfind("| program | runs as |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("| ---", 0) == 0) continue;
    std::smatch row;
    if (!std::regex_search(line, row, kRow)) break;
    const std::string programs = row[1];
    for (std::sregex_iterator it(programs.begin(), programs.end(), kName), end; it != end; ++it)
      runs_as[(*it)[1]] = row[2];
  }
  return runs_as;
}

}  // namespace sandboxd
