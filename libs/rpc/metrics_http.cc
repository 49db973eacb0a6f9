#include "libs/rpc/metrics_http.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::rpc {
namespace {

constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";
// Scrapes are rare and cheap; httplib would otherwise start a thread per core or eight.
constexpr size_t kHttpThreads = 2;

}  // namespace

struct MetricsHttpServer::Impl {
  std::function<std::string()> render;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
};

MetricsHttpServer::MetricsHttpServer(std::function<std::string()> render)
    : impl_(std::make_unique<Impl>()) {
  impl_->render = std::move(render);
}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

absl::StatusOr<int> MetricsHttpServer::Start(const std::string& address) {
  absl::StatusOr<std::pair<std::string, int>> host_port = SplitHostPort(address);
  if (!host_port.ok()) {
    return host_port.status();
  }
  auto& [host, port] = *host_port;
  Impl& impl = *impl_;
  impl.http.new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
  // httplib's default adds SO_REUSEPORT, which would let a second instance share the port
  // silently; SO_REUSEADDR alone still allows a quick restart.
  impl.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  impl.http.Get("/metrics", [&impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl.render(), std::string(kContentType).c_str());
  });
  int bound = port;
  if (port == 0) {
    bound = impl.http.bind_to_any_port(host);
  } else if (!impl.http.bind_to_port(host, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot bind ", address));
  }
  impl.thread = std::thread([&impl] {
    impl.http.listen_after_bind();
    impl.listen_returned = true;
  });
  // httplib's stop() is a no-op until the accept loop runs, so Stop() right after Start()
  // would hang; wait (briefly) for the loop to be up.
  while (!impl.http.is_running() && !impl.listen_returned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

void MetricsHttpServer::Stop() {
  if (impl_->thread.joinable()) {
    impl_->http.stop();
    impl_->thread.join();
  }
}

absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address) {
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("address needs host:port: ", address));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) {
    host = "0.0.0.0";
  }
  return std::make_pair(host, port);
}

}  // namespace gpuaas::rpc
