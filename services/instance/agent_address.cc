#include "services/instance/agent_address.h"

#include "absl/strings/ascii.h"

namespace gpuaas::instance {
namespace {

bool IsIpLiteral(std::string_view host) {
  if (host.empty()) return false;
  for (char c : host) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != '.' && c != ':') return false;
  }
  return true;
}

}  // namespace

std::string AgentAddressAt(std::string_view peer_host, std::string_view reported) {
  const size_t colon = reported.rfind(':');
  if (reported.empty() || colon == std::string_view::npos || colon + 1 == reported.size()) {
    return "";
  }
  if (!IsIpLiteral(peer_host)) return std::string(reported);
  const std::string_view port = reported.substr(colon + 1);
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return "";
  }
  const std::string host(peer_host);
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::string(port);
  return host + ":" + std::string(port);
}

}  // namespace gpuaas::instance
