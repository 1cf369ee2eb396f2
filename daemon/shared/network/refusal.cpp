#include "network/refusal.h"

#include <nlohmann/json.hpp>

#include "quote_path.h"

namespace sandboxd::network {
namespace {

constexpr size_t kMaxField = 300;

bool Printable(std::string_view text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

std::string RefusalLine(const Refusal& refusal) {
  nlohmann::json line = {{"host", refusal.host}, {"port", refusal.port}, {"reason", refusal.reason}};
  return line.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<Refusal> ReadRefusalLine(std::string_view line) {
  if (line.size() > kMaxRefusalLine) return std::nullopt;
  auto json = nlohmann::json::parse(line, nullptr, false);
  if (!json.is_object()) return std::nullopt;
  auto host = json.find("host"), port = json.find("port"), reason = json.find("reason");
  if (host == json.end() || !host->is_string() || port == json.end() || !port->is_number_unsigned() || reason == json.end() ||
      !reason->is_string())
    return std::nullopt;
  Refusal refusal{host->get<std::string>(), 0, reason->get<std::string>()};
  uint64_t number = port->get<uint64_t>();
  if (number > 65535 || refusal.host.empty() || refusal.host.size() > kMaxField || refusal.reason.empty() ||
      refusal.reason.size() > kMaxField || !Printable(refusal.host) || !Printable(refusal.reason))
    return std::nullopt;
  refusal.port = static_cast<uint16_t>(number);
  return refusal;
}

std::string DescribeRefusal(const Refusal& refusal) {
  std::string host = api::QuotePath(refusal.host);
  return (refusal.port == 0 ? host + " (lookup)" : host + ":" + std::to_string(refusal.port)) + ": " + refusal.reason;
}

}  // namespace sandboxd::network
