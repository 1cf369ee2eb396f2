#include "helper_request.h"

#include <iostream>
#include <iterator>

#include "change_json.h"
#include "errors.h"

namespace sandboxd {

std::vector<RootRequest> ParseRoots(const nlohmann::json& request) {
  std::vector<RootRequest> roots;
  for (const auto& root : request.at("roots")) {
    RootRequest r;
    r.live_fd = root.at("live_fd").get<int>();
    r.upper_fd = root.at("upper_fd").get<int>();
    r.prefix = root.at("prefix").get<std::string>();
    for (const auto& change : root.at("changes")) r.changes.push_back(ChangeFromJson(change));
    for (const auto& pair : root.value("renames", nlohmann::json::array()))
      r.renames.push_back({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
    r.only_hunks = root.value("only_hunks", std::map<std::string, std::set<int>>{});
    roots.push_back(std::move(r));
  }
  return roots;
}

namespace {

void WriteHelperMessage(const nlohmann::json& message) {
  std::string bytes = HelperMessageBytes(message);
  std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::cout.flush();
}

}  // namespace

std::string HelperMessageBytes(const nlohmann::json& message) {
  std::vector<uint8_t> bytes = nlohmann::json::to_cbor(message);
  return std::string(bytes.begin(), bytes.end());
}

nlohmann::json ReadHelperMessage(const std::string& bytes) {
  return nlohmann::json::from_cbor(bytes.begin(), bytes.end(), true, false);
}

int ServeHelperRequest(int argc, char** argv, const std::map<std::string, HelperOperation>& operations) {
  if (argc != 2 || !operations.count(argv[1])) {
    std::string names;
    for (const auto& [name, operation] : operations) names += (names.empty() ? "" : "|") + name;
    std::cerr << "usage: " << (argc > 0 ? argv[0] : "helper") << " " << names
              << " < request.cbor (started by sandboxd only)\n";
    return 2;
  }
  try {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    WriteHelperMessage(operations.at(argv[1])(ReadHelperMessage(input)));
    return 0;
  } catch (const Error& e) {
    WriteHelperMessage({{"error", {{"name", DBusErrorName(e.code())}, {"message", e.what()}}}});
  } catch (const std::exception& e) {
    WriteHelperMessage({{"error", {{"name", "org.freedesktop.DBus.Error.Failed"}, {"message", e.what()}}}});
  }
  return 1;
}

}  // namespace sandboxd
