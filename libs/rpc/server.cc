#include "libs/rpc/server.h"

#include <fcntl.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <poll.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.pb.h"
#include "libs/common/logging.h"
#include "libs/common/slot_limiter.h"
#include "libs/common/thread_pool.h"
#include "libs/rpc/call_registry.h"
#include "libs/rpc/cert_expiry.h"
#include "libs/rpc/interceptor.h"
#include "libs/rpc/internal/service_names.h"
#include "libs/rpc/metrics.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/rpc/process_metrics.h"
#include "libs/rpc/signals.h"

namespace gpuaas::rpc {
namespace {

constexpr absl::Duration kDrainTimeout = absl::Seconds(10);
// How often a server pings each peer, and how long it waits for the answer.
constexpr int kKeepaliveMs = 10'000;
// How long a server that clients watch keeps taking calls after it reported NOT_SERVING: the
// calls a client sent before the news reached it (a round trip) still arrive, and gRPC's
// server, once shut down, cancels a call that arrives unanswered: the client sees CANCELLED and
// cannot tell whether it ran (without the grace, 2 of 6 rolling restart drills lost a call so:
// bench/RESULTS.md "Rolling restart").
constexpr absl::Duration kWatchedGrace = absl::Milliseconds(500);
constexpr std::string_view kHealthWatch = "/grpc.health.v1.Health/Watch";

// Stands in when a server has no authenticator, so Handler::Run fails closed.
class RejectAllAuthenticator final : public authz::Authenticator {
 public:
  absl::StatusOr<authz::Principal> Authenticate(std::string_view) override {
    return absl::UnauthenticatedError("this server accepts no bearer tokens");
  }
};

// gRPC's built-in health service is written on upb and carries no C++ descriptors, so
// reflection lists grpc.health.v1.Health yet answers "Symbol not found" when a client such as
// grpcurl asks for its proto. Naming a generated health message here makes the linker keep
// health.pb.o from its static library (an unreferenced object is dropped), and that object's
// static initializer registers health.proto in the generated pool that reflection serves.
void RegisterHealthProtoForReflection() { grpc::health::v1::HealthCheckRequest::descriptor(); }

std::string_view TransportName(const TlsOptions& tls) {
  if (tls.cert_file.empty()) {
    return "plaintext";
  }
  return tls.require_client_cert ? "mutual TLS" : "TLS";
}

}  // namespace

struct Server::Impl {
  Impl(ServerOptions opts, std::unique_ptr<authz::Authenticator> auth)
      : options(std::move(opts)),
        authenticator(auth ? std::move(auth) : std::make_unique<RejectAllAuthenticator>()),
        logger(Logger(options.name.empty() ? "rpc" : options.name)),
        pool(std::make_unique<ThreadPool>(
            std::max(options.worker_threads, 1),
            static_cast<size_t>(std::max(options.max_queued_calls, 1)))),
        cpu_pool(std::make_unique<ThreadPool>(
            options.cpu_threads > 0
                ? options.cpu_threads
                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
            static_cast<size_t>(std::max(options.cpu_max_queued_calls, 1)))),
        handler(*authenticator, *pool, &calls),
        cpu_handler(*authenticator, *cpu_pool, &calls) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      wake_read = fds[0];
      wake_write = fds[1];
    }
  }

  ~Impl() {
    if (wake_read >= 0) {
      close(wake_read);
      close(wake_write);
    }
  }

  const ServerOptions options;
  std::unique_ptr<authz::Authenticator> authenticator;
  std::shared_ptr<spdlog::logger> logger;
  CallRegistry calls;
  SlotLimiter public_streams{
      std::max(options.max_public_streams, 1), std::max(options.max_public_streams_per_client, 1),
      "unauthenticated streams (Health/Watch, reflection)", "client address"};
  // Shared: prometheus-cpp's exposer holds its collectables by (weak) shared pointer.
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  RpcMetrics metrics{*registry};
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<ThreadPool> cpu_pool;
  Handler handler;
  Handler cpu_handler;
  std::vector<grpc::Service*> services;
  std::vector<std::string> service_names;  // filled while the server is built
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint;
  int port = 0;
  int metrics_port = 0;
  int signal_read = -1;
  // Shutdown() writes one byte here to wake Wait().
  int wake_read = -1;
  int wake_write = -1;
  std::once_flag shutdown_once;
  std::atomic<bool> shut_down{false};
};

Server::Server(ServerOptions options, std::unique_ptr<authz::Authenticator> authenticator)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(authenticator))) {
#ifdef NDEBUG
  // Debian builds abseil without NDEBUG, so every absl::Mutex (gRPC's included) keeps a
  // lock-order graph: ~1 % of a service's CPU (bench/RESULTS.md). Debug and sanitizer builds
  // keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

Server::~Server() {
  Shutdown();
  // Workers may still be unwinding the last handlers; join them before the server goes.
  impl_->pool.reset();
  impl_->cpu_pool.reset();
  impl_->server.reset();
}

prometheus::Registry& Server::metrics_registry() { return *impl_->registry; }

Handler& Server::handler() { return impl_->handler; }

Handler& Server::cpu_handler() { return impl_->cpu_handler; }

void Server::AddService(grpc::Service* service) { impl_->services.push_back(service); }

absl::Status Server::Start() {
  Impl& impl = *impl_;
  if (impl.server != nullptr || impl.shut_down) {
    return absl::FailedPreconditionError("server already started or shut down");
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
      MakeServerCredentials(impl.options.tls);
  if (!creds.ok()) {
    return creds.status();
  }
  // The credentials read the same file: it is there and a certificate.
  if (!impl.options.tls.cert_file.empty()) {
    if (absl::Status s = ExportCertificateExpiry(impl.options.tls.cert_file, *impl.registry);
        !s.ok()) {
      return s;
    }
  }

  // Both are process-wide switches read when the builder is created.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  RegisterHealthProtoForReflection();

  grpc::ServerBuilder builder;
  builder.AddListeningPort(impl.options.listen_address, *creds, &impl.port);
  // gRPC sets SO_REUSEPORT by default: a second instance would share the port and take half
  // the traffic instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A peer gone without closing (a node cut off the network: no FIN, no RST) would hold its
  // streams open for hours, and a node whose workload stream is open counts as seen: pinging
  // every peer finds out within 20 s, and its streams end. Peers may ping every 5 s or slower
  // (the clients' keepalive, libs/client/channel.cc, is 10 s).
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveMs);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kKeepaliveMs / 2);
  grpc::ResourceQuota quota(absl::StrCat(impl.options.name, " server"));
  quota.SetMaxThreads(std::max(impl.options.max_sync_threads, 2));
  builder.SetResourceQuota(quota);
  for (grpc::Service* service : impl.services) {
    builder.RegisterService(service);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(
      NewCallLogInterceptorFactory(impl.calls, impl.metrics, impl.public_streams, impl.logger));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.SetOption(internal::CollectServiceNames(&impl.service_names));

  impl.server = builder.BuildAndStart();
  if (impl.server == nullptr || impl.port == 0) {
    impl.server.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on ", impl.options.listen_address));
  }

  grpc::HealthCheckServiceInterface* health = impl.server->GetHealthCheckService();
  health->SetServingStatus("", true);
  for (const std::string& name : impl.service_names) {
    health->SetServingStatus(name, true);
  }

  if (!impl.options.metrics_address.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint = MetricsEndpoint::Start(
        impl.options.metrics_address, {impl.registry, std::make_shared<ProcessMetrics>()});
    if (!endpoint.ok()) {
      impl.server->Shutdown();
      impl.server.reset();
      return endpoint.status();
    }
    impl.metrics_endpoint = *std::move(endpoint);
    impl.metrics_port = impl.metrics_endpoint->port();
  }

  impl.signal_read = InstallTerminationSignalPipe();
  impl.logger->info("serving {} on port {} ({}), metrics port {}, services: {}", impl.options.name,
                    impl.port, TransportName(impl.options.tls), impl.metrics_port,
                    absl::StrJoin(impl.service_names, ", "));
  return absl::OkStatus();
}

int Server::port() const { return impl_->port; }

int Server::metrics_port() const { return impl_->metrics_port; }

void Server::Wait() {
  Impl& impl = *impl_;
  if (impl.server == nullptr) {
    return;
  }
  pollfd fds[2] = {{impl.wake_read, POLLIN, 0}, {impl.signal_read, POLLIN, 0}};
  while (true) {
    int n = poll(fds, impl.signal_read >= 0 ? 2 : 1, -1);
    if (n > 0) {
      break;
    }
    if (n < 0 && errno != EINTR) {
      impl.logger->error("wait: poll failed (errno {}); shutting down", errno);
      break;
    }
  }
  if (impl.signal_read >= 0 && (fds[1].revents & POLLIN) != 0) {
    DrainSignalPipe(impl.signal_read);
    impl.logger->info("termination signal: draining in-flight calls");
  }
  Shutdown();
}

void Server::Shutdown() {
  Impl& impl = *impl_;
  // call_once also makes a concurrent caller (Wait) block until the drain is complete.
  std::call_once(impl.shutdown_once, [&impl] {
    impl.shut_down = true;
    if (impl.server != nullptr) {
      // Load balancers polling health, and the replica channels watching it (libs/client),
      // stop routing here before the listener closes.
      impl.server->GetHealthCheckService()->Shutdown();
      if (impl.calls.Open(kHealthWatch) > 0) {
        absl::SleepFor(kWatchedGrace);
      }
      // Streams stay open as long as their clients run, so the drain would only time out on
      // them; ending them now sends their clients to reconnect elsewhere at once.
      const absl::Status shutting_down = absl::UnavailableError("server shutting down");
      impl.handler.EndStreams(shutting_down);
      impl.cpu_handler.EndStreams(shutting_down);
      impl.server->Shutdown(absl::ToChronoTime(absl::Now() + kDrainTimeout));
      impl.logger->info("{} stopped", impl.options.name);
    }
    impl.metrics_endpoint.reset();
    if (impl.wake_write >= 0) {
      char byte = 1;
      [[maybe_unused]] ssize_t n = write(impl.wake_write, &byte, 1);
    }
  });
}

}  // namespace gpuaas::rpc
