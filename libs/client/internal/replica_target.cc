#include "libs/client/internal/replica_target.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuaas::client::internal {
namespace {

struct Resolved {
  std::optional<std::string> ipv4;  // "127.0.0.1:17051"
  std::optional<std::string> ipv6;  // "[::1]:17051"
};

struct AddrInfoFree {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};

// "host:port" or "[v6]:port" split at the last colon; the brackets are dropped.
bool SplitHostPort(std::string_view entry, std::string& host, std::string& port) {
  size_t colon = entry.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == entry.size()) {
    return false;
  }
  std::string_view h = entry.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  }
  host = std::string(h);
  port = std::string(entry.substr(colon + 1));
  return true;
}

std::optional<Resolved> Resolve(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* raw = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &raw) != 0) {
    return std::nullopt;
  }
  std::unique_ptr<addrinfo, AddrInfoFree> infos(raw);
  Resolved out;
  for (addrinfo* ai = infos.get(); ai != nullptr; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (ai->ai_family == AF_INET && !out.ipv4) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, text,
                sizeof(text));
      out.ipv4 = absl::StrCat(text, ":", port);
    } else if (ai->ai_family == AF_INET6 && !out.ipv6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, text,
                sizeof(text));
      out.ipv6 = absl::StrCat("[", text, "]:", port);
    }
  }
  return out;
}

}  // namespace

bool IsReplicaList(std::string_view address) { return address.find(',') != std::string_view::npos; }

absl::StatusOr<ReplicaTarget> ResolveReplicaList(std::string_view list_std, bool one_server_name) {
  const absl::string_view list(list_std.data(), list_std.size());  // Debian's abseil has its own
  std::vector<Resolved> resolved;
  std::string first_host;
  bool all_ipv4 = true;
  bool all_ipv6 = true;
  for (absl::string_view entry : absl::StrSplit(list, ',')) {
    std::string host;
    std::string port;
    if (!SplitHostPort(std::string_view(entry.data(), entry.size()), host, port)) {
      return absl::InvalidArgumentError(
          absl::StrCat("address: replica \"", entry, "\" is not host:port (in \"", list, "\")"));
    }
    if (resolved.empty()) {
      first_host = host;
    } else if (one_server_name && host != first_host) {
      return absl::InvalidArgumentError(
          absl::StrCat("address: replica \"", entry, "\" is on another host than \"", first_host,
                       "\": over TLS the replicas of one address must share a host name"));
    }
    std::optional<Resolved> r = Resolve(host, port);
    if (!r || (!r->ipv4 && !r->ipv6)) {
      return absl::InvalidArgumentError(
          absl::StrCat("address: replica \"", entry, "\" does not resolve"));
    }
    all_ipv4 = all_ipv4 && r->ipv4.has_value();
    all_ipv6 = all_ipv6 && r->ipv6.has_value();
    resolved.push_back(*std::move(r));
  }
  if (!all_ipv4 && !all_ipv6) {
    return absl::InvalidArgumentError(absl::StrCat("address: the replicas of \"", list,
                                                   "\" share no address family (IPv4 or IPv6)"));
  }
  std::vector<std::string> addresses;
  for (const Resolved& r : resolved) {
    addresses.push_back(all_ipv4 ? *r.ipv4 : *r.ipv6);
  }
  return ReplicaTarget{
      .target = absl::StrCat(all_ipv4 ? "ipv4:" : "ipv6:", absl::StrJoin(addresses, ",")),
      .authority = std::string(list.substr(0, list.find(','))),
  };
}

}  // namespace gpuaas::client::internal
