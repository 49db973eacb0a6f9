#include "libs/rpc/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/common/periodic_task.h"

namespace gpuaas::rpc {
namespace {

// Scrapes are rare and cheap; two threads let one slow scraper not block another.
constexpr size_t kHttpThreads = 2;

struct ListenAddress {
  std::string civetweb;    // civetweb's listening_ports syntax: "127.0.0.1:9101"
  std::string local_host;  // where a connect() from this process reaches it
};

// civetweb would also read commas (several ports), suffixes ("9101s" = TLS) and host names it
// cannot resolve, so everything but one IPv4 literal and a plain port is refused here, with
// a clear error. Debian builds civetweb without IPv6 (mg_check_feature(8) is 0).
absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("metrics address needs host:port: ", address));
  }
  std::string host = address.substr(0, colon);
  if (host.empty()) {
    host = "0.0.0.0";
  }
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics address host must be an IPv4 literal (civetweb has no IPv6 here): ", address));
  }
  return ListenAddress{.civetweb = absl::StrCat(host, ":", port),
                       .local_host = v4.s_addr == htonl(INADDR_ANY) ? "127.0.0.1" : host};
}

// Connects and hangs up at once; failures do not matter, the connection only wakes the
// listener's poll().
void Knock(const std::string& host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  close(fd);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  absl::StatusOr<ListenAddress> listen = ParseListenAddress(address);
  if (!listen.ok()) {
    return listen.status();
  }
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(listen->civetweb, kHttpThreads);
  } catch (const std::exception& e) {
    // CivetServer throws when civetweb cannot start, in practice when the port is taken.
    return absl::UnavailableError(absl::StrCat("metrics: cannot bind ", address, ": ", e.what()));
  }
  // civetweb reads the bound port back from the socket, so port 0 reports the real one.
  std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.size() != 1 || ports[0] <= 0) {
    return absl::UnavailableError(absl::StrCat("metrics: no listening port for ", address));
  }
  for (const std::shared_ptr<prometheus::Collectable>& collectable : collectables) {
    exposer->RegisterCollectable(collectable);
  }
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(
      std::move(exposer), ports[0], listen->local_host, std::move(collectables)));
}

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer, int port,
                                 std::string local_host,
                                 std::vector<std::shared_ptr<prometheus::Collectable>> collectables)
    : collectables_(std::move(collectables)),
      exposer_(std::move(exposer)),
      port_(port),
      local_host_(std::move(local_host)) {}

MetricsEndpoint::~MetricsEndpoint() {
  // civetweb's accept loop polls in 2 s slices and looks at its stop flag only between them,
  // so ~Exposer alone takes up to 2 s, in every Server::Shutdown. A connection ends the
  // slice at once; as the flag is set inside ~Exposer, knock until it has returned. A knock
  // accepted before the flag is set is an empty request that civetweb drops.
  PeriodicTask knocker({.interval = absl::Milliseconds(1), .run_immediately = true},
                       [this] { Knock(local_host_, port_); });
  exposer_.reset();
  knocker.Join();
}

}  // namespace gpuaas::rpc
