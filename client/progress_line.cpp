#include "progress_line.h"

#include <algorithm>

#include "units.h"

namespace sandboxctl {

std::string Grouped(uint64_t number) {
  std::string digits = std::to_string(number);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

std::string ProgressLine(const ProgressReport& report, size_t width) {
  // The fraction done: of the bytes where they are counted (the better measure of time), else
  // of the entries; none without a total.
  double fraction = -1;
  if (report.bytes_total) fraction = static_cast<double>(report.bytes_done) / static_cast<double>(report.bytes_total);
  else if (report.entries_total) fraction = static_cast<double>(report.entries_done) / static_cast<double>(report.entries_total);
  fraction = std::min(fraction, 1.0);

  std::string figures = Grouped(report.entries_done);
  if (report.entries_total) figures += "/" + Grouped(report.entries_total);
  figures += " entries";
  if (report.bytes_total)
    figures += ", " + sandboxd::units::HumanBytes(report.bytes_done) + "/" + sandboxd::units::HumanBytes(report.bytes_total);

  std::string head = report.operation + ": " + report.phase;
  std::string line;
  if (fraction < 0) {
    line = head + " " + figures;
  } else {
    std::string percent = std::to_string(static_cast<int>(fraction * 100)) + "%";
    percent.insert(0, 4 - std::min<size_t>(4, percent.size()), ' ');
    // The bar takes what the rest leaves, between 10 and 30 columns.
    size_t rest = head.size() + 4 + percent.size() + 2 + figures.size();
    size_t bar = width > rest ? std::clamp<size_t>(width - rest, 10, 30) : 10;
    size_t filled = static_cast<size_t>(fraction * static_cast<double>(bar));
    line = head + " [" + std::string(filled, '#') + std::string(bar - filled, ' ') + "] " + percent + "  " + figures;
  }
  if (line.size() > width) line.resize(width);
  return line;
}

}  // namespace sandboxctl
