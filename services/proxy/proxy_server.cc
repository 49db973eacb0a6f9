#include "services/proxy/proxy_server.h"

#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "libs/common/logging.h"
#include "libs/common/slot_limiter.h"
#include "services/proxy/internal/session.h"

namespace gpuaas::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using internal::kAwait;
using internal::TcpStream;
// A client connection's socket, bound to the event loop it was accepted onto.
using Socket = asio::basic_stream_socket<tcp, internal::Executor>;

struct ProxyServer::Impl {
  Impl(ProxyOptions o, ProxyDeps d)
      : options(std::move(o)),
        deps(d),
        blocking(2),
        rechecks(options.grant_recheck),
        shared{.options = options, .deps = deps, .blocking = blocking, .rechecks = rechecks},
        limits(options.connection_limits.max_connections,
               options.connection_limits.max_connections_per_client, "connections",
               "client address"),
        ios(MakeLoops(options.io_threads)),
        acceptor(*ios.front()) {}

  // One event loop per I/O thread, each connection on one loop for its life: no strands, no
  // handler hand-offs between threads (a strand per connection on a shared loop spent more
  // CPU on executor bookkeeping and thread wake-ups than on HTTP).
  static std::vector<std::unique_ptr<asio::io_context>> MakeLoops(int n) {
    std::vector<std::unique_ptr<asio::io_context>> loops;
    for (int i = 0; i < std::max(1, n); ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
    }
    return loops;
  }

  ProxyOptions options;
  ProxyDeps deps;
  asio::thread_pool blocking;
  GrantRechecks rechecks;
  internal::SessionShared shared;
  SlotLimiter limits;
  // After `limits`: destroying a loop destroys its connections, which give their slots back.
  std::vector<std::unique_ptr<asio::io_context>> ios;
  size_t next_loop = 0;
  std::optional<ssl::context> tls;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  int port = 0;

  // `slot` is held until the connection ends.
  internal::Task<void> Serve(Socket socket, SlotLimiter::Slot slot) {
    deps.metrics.connections().Increment();
    beast::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);
    if (tls) {
      beast::ssl_stream<TcpStream> stream(std::move(socket), *tls);
      beast::get_lowest_layer(stream).expires_after(internal::Chrono(options.header_timeout));
      co_await stream.async_handshake(ssl::stream_base::server, asio::redirect_error(kAwait, ec));
      if (!ec) {
        internal::Session<beast::ssl_stream<TcpStream>> session(stream, shared);
        co_await session.Run();
      }
      beast::get_lowest_layer(stream).socket().close(ec);
    } else {
      TcpStream stream(std::move(socket));
      internal::Session<TcpStream> session(stream, shared);
      co_await session.Run();
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      stream.socket().close(ec);
    }
    deps.metrics.connections().Decrement();
  }

  // Beyond a connection cap: a plain-HTTP client reads why (one write into an empty send
  // buffer, never waiting), a TLS one sees the connection close.
  void Refuse(Socket& socket) {
    deps.metrics.CountRefusedConnection();
    beast::error_code ec;
    if (!tls) {
      constexpr std::string_view kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
          "Content-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";
      socket.non_blocking(true, ec);
      socket.write_some(asio::buffer(kBusy.data(), kBusy.size()), ec);
      deps.metrics.CountResponse(503);
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  asio::awaitable<void> Accept() {
    for (;;) {
      beast::error_code ec;
      asio::io_context& loop = *ios[next_loop++ % ios.size()];
      Socket socket =
          co_await acceptor.async_accept(loop, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted) {
        co_return;
      }
      if (ec) {
        // Out of file descriptors and the like: keep serving the connections we have.
        Logger("proxy")->warn("accept: {}", ec.message());
        asio::steady_timer pause(*ios.front(), std::chrono::milliseconds(100));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      const auto remote = socket.remote_endpoint(ec);
      absl::StatusOr<SlotLimiter::Slot> slot =
          limits.Acquire(ec ? "" : remote.address().to_string());
      if (!slot.ok()) {
        Refuse(socket);
        continue;
      }
      auto executor = socket.get_executor();
      asio::co_spawn(executor, Serve(std::move(socket), *std::move(slot)),
                     [](std::exception_ptr e) {
                       if (e) {
                         try {
                           std::rethrow_exception(e);
                         } catch (const std::exception& ex) {
                           Logger("proxy")->error("connection: {}", ex.what());
                         }
                       }
                     });
    }
  }
};

ProxyServer::ProxyServer(ProxyOptions options, ProxyDeps deps)
    : impl_(std::make_unique<Impl>(std::move(options), deps)) {}

ProxyServer::~ProxyServer() { Stop(); }

absl::Status ProxyServer::Start() {
  Impl& s = *impl_;
  const std::string& address = s.options.listen_address;
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError("--listen: want host:port, got '" + address + "'");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  beast::error_code ec;
  const auto ip = asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) {
    return absl::InvalidArgumentError("--listen: '" + host + "' is not an IP address");
  }
  if (!s.options.tls_cert_file.empty()) {
    s.tls.emplace(ssl::context::tls_server);
    s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    s.tls->use_certificate_chain_file(s.options.tls_cert_file, ec);
    if (!ec) {
      s.tls->use_private_key_file(s.options.tls_key_file, ssl::context::pem, ec);
    }
    if (ec) {
      return absl::InvalidArgumentError("--tls-cert/--tls-key: " + ec.message());
    }
    s.shared.tls = true;
  }
  const tcp::endpoint endpoint(ip, static_cast<uint16_t>(port));
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError("--listen " + address + ": " + ec.message());
  }
  s.port = s.acceptor.local_endpoint().port();
  asio::co_spawn(*s.ios.front(), s.Accept(), asio::detached);
  for (auto& loop : s.ios) {
    // Kept running between connections (a loop with none would return at once).
    s.threads.emplace_back([&s, io = loop.get()] {
      auto work = asio::make_work_guard(*io);
      io->run();
    });
  }
  return absl::OkStatus();
}

int ProxyServer::port() const { return impl_->port; }

void ProxyServer::Stop() {
  Impl& s = *impl_;
  if (s.threads.empty()) {
    return;
  }
  // Closing the acceptor ends Accept; stopping the loops abandons open connections, whose
  // coroutine frames are destroyed with them.
  asio::post(*s.ios.front(), [&s] {
    beast::error_code ec;
    s.acceptor.close(ec);
  });
  for (auto& loop : s.ios) {
    loop->stop();
  }
  for (std::thread& t : s.threads) {
    t.join();
  }
  s.threads.clear();
  s.blocking.join();
}

}  // namespace gpuaas::proxy
