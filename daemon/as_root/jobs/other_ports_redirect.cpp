#include "jobs/other_ports_redirect.h"

#include <nftables/libnftables.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "base/errors.h"

namespace sandboxd {

std::string OtherPortsRuleset(const std::vector<uint16_t>& allowed_ports, uint16_t refusing_port) {
  std::string ports;
  for (uint16_t port : allowed_ports) ports += (ports.empty() ? "" : ", ") + std::to_string(port);
  std::string rule = "ip daddr != 127.0.0.0/8 ";
  if (!ports.empty()) rule += "tcp dport != { " + ports + " } ";
  else rule += "meta l4proto tcp ";
  rule += "redirect to :" + std::to_string(refusing_port);
  // A redirect needs connection tracking, which a nat chain turns on for the whole namespace:
  // every connection of the job would be tracked, a kernel entry each (a job's own loopback
  // server opening thousands) and work on every packet of a download. Only the connections
  // sent to the refusing socket need it: the rest (loopback, the allowed ports both ways) are
  // left untracked, before conntrack sees them (priority raw, -300).
  std::string untracked = "    ip daddr 127.0.0.0/8 notrack\n";
  if (!ports.empty()) untracked += "    tcp dport { " + ports + " } notrack\n    tcp sport { " + ports + " } notrack\n";
  // Priority dstnat (-100) of the output hook: before the route to the local address is used.
  return "table ip sandboxd_job {\n"
         "  chain untracked {\n"
         "    type filter hook output priority -300; policy accept;\n" +
         untracked +
         "  }\n"
         "  chain other_ports {\n"
         "    type nat hook output priority -100; policy accept;\n"
         "    " + rule + "\n"
         "  }\n"
         "}\n";
}

uint16_t RefusingPortFor(const std::vector<uint16_t>& allowed_ports) {
  uint16_t port = 1;
  while (std::find(allowed_ports.begin(), allowed_ports.end(), port) != allowed_ports.end()) ++port;
  return port;  // at most 256 rules: always below 1024
}

void RedirectOtherPorts(const std::vector<uint16_t>& allowed_ports, uint16_t refusing_port) {
  // libnftables does not document whether contexts may be used on several threads at once;
  // one job's set-up at a time costs little (a namespace's whole set-up, rule included, took
  // about 3 ms in the unit test).
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  // Made here, on the thread in the job's namespace: the context's netlink socket is opened in
  // the namespace of the thread that makes it.
  std::unique_ptr<nft_ctx, decltype(&nft_ctx_free)> context(nft_ctx_new(NFT_CTX_DEFAULT), nft_ctx_free);
  if (!context) throw Error(Code::kFailed, "cannot start netfilter's library for the job's port rule");
  nft_ctx_buffer_output(context.get());
  nft_ctx_buffer_error(context.get());
  if (nft_run_cmd_from_buffer(context.get(), OtherPortsRuleset(allowed_ports, refusing_port).c_str()) != 0) {
    std::string why = nft_ctx_get_error_buffer(context.get());
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    throw Error(Code::kFailed, "cannot add the job's port rule to its network namespace: " + (why.empty() ? "netfilter refused it" : why));
  }
}

}  // namespace sandboxd
