#include "services/proxy/access_host.h"

#include <algorithm>
#include <cctype>

namespace gpuaas::proxy {
namespace {

// Debian's abseil has its own string_view type, so these few helpers stay on std's.
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A decimal port: digits only, no leading zero, 1..65535; 0 for anything else.
int32_t ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.front() == '0' ||
      !std::all_of(text.begin(), text.end(), IsDigit)) {
    return 0;
  }
  int32_t n = 0;
  for (char c : text) n = n * 10 + (c - '0');
  return n <= 65535 ? n : 0;
}

// [a-z0-9-], 1 to 63 characters, starting with a letter, not ending with '-' (Instance's rule).
bool ValidInstanceId(std::string_view id) {
  if (id.empty() || id.size() > 63 || !IsLower(id.front()) || id.back() == '-') {
    return false;
  }
  for (char c : id) {
    if (!IsLower(c) && !IsDigit(c) && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string HostWithoutPort(std::string_view host) {
  host = Trim(host);
  if (host.empty()) {
    return "";
  }
  if (host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string_view::npos ? "" : Lower(host.substr(0, close + 1));
  }
  const size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon + 1);
    // "host:" and "host:x" are not Hosts; a second ':' is not either. Port 0 and leading
    // zeros are tolerated here: the Host's port is ignored anyway.
    if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), IsDigit) ||
        std::stoi(std::string(port)) > 65535) {
      return "";
    }
    host = host.substr(0, colon);
  }
  return Lower(host);
}

std::optional<AccessHost> ParseAccessHost(std::string_view host_header,
                                          std::string_view access_domain) {
  std::string host = HostWithoutPort(host_header);
  if (!host.empty() && host.back() == '.') {
    host.pop_back();
  }
  std::string domain = Lower(access_domain);
  if (host.empty() || domain.empty() || host.size() <= domain.size() + 1) {
    return std::nullopt;
  }
  const size_t label_end = host.size() - domain.size() - 1;
  if (host.compare(label_end + 1, std::string::npos, domain) != 0 || host[label_end] != '.') {
    return std::nullopt;
  }
  const std::string_view label = std::string_view(host).substr(0, label_end);
  const size_t dash = label.rfind('-');
  if (label.find('.') != std::string_view::npos || dash == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view id = label.substr(0, dash);
  const std::string_view port_text = label.substr(dash + 1);
  // Digits only: "+80", "080" or " 80" would give one port several hosts (and cookies).
  const int32_t port = ParsePort(port_text);
  if (port == 0 || !ValidInstanceId(id)) {
    return std::nullopt;
  }
  return AccessHost{.instance_id = std::string(id), .port = port};
}

}  // namespace gpuaas::proxy
