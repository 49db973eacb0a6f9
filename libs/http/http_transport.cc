#include "libs/http/http_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "libs/http/body_pace.h"

namespace gpuaas::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// Idle time between requests on one connection; every write's bound.
constexpr int kKeepAliveMs = 10'000;
constexpr int kWriteTimeoutSeconds = 60;
constexpr int kMaxRequestsPerConnection = 1000;
constexpr size_t kBodyPiece = 64 * 1024;
// S3 allows 8 KiB of request headers; user metadata and long presigned URLs stay well inside.
constexpr uint32_t kHeaderLimit = 64 * 1024;
constexpr int kListenBacklog = 512;
constexpr int kPollSliceMs = 100;
// What clients were told since the endpoint began (cpp-httplib's defaults); none acts on it.
constexpr std::string_view kKeepAliveHeader = "timeout=5, max=5";

// A connection's socket as Beast's synchronous reads and writes want it, plain or TLS. The
// socket blocks, with SO_RCVTIMEO and SO_SNDTIMEO bounding every call.
class SocketStream final {
 public:
  SocketStream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    ec = {};
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
         ++it) {
      asio::mutable_buffer b = *it;
      if (b.size() > 0) {
        return Receive(static_cast<char*>(b.data()), b.size(), ec);
      }
    }
    return 0;
  }

  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, beast::error_code& ec) {
    ec = {};
    iovec iov[16];
    size_t count = 0;
    for (auto it = asio::buffer_sequence_begin(buffers);
         it != asio::buffer_sequence_end(buffers) && count < std::size(iov); ++it) {
      asio::const_buffer b = *it;
      if (b.size() > 0) {
        iov[count++] = {const_cast<void*>(b.data()), b.size()};
      }
    }
    return count == 0 ? 0 : Send(iov, count, ec);
  }

  // The throwing forms Beast's stream concepts also ask for (we call only the others).
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    return OrThrow([&](beast::error_code& ec) { return read_some(buffers, ec); });
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    return OrThrow([&](beast::error_code& ec) { return write_some(buffers, ec); });
  }

  int fd() const { return fd_; }
  // Bytes TLS decrypted and holds (a pipelined request's start).
  bool HasPending() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }
  // While set, every read waits at most what `pace` allows and is counted against it.
  void set_pace(BodyPace* pace) { pace_ = pace; }
  // A read ran out of time (the body's pace or its idle bound).
  bool timed_out() const { return timed_out_; }

 private:
  template <class Io>
  static size_t OrThrow(Io io) {
    beast::error_code ec;
    size_t n = io(ec);
    if (ec) {
      throw beast::system_error(ec);
    }
    return n;
  }

  size_t Receive(char* out, size_t size, beast::error_code& ec) {
    if (pace_ == nullptr) {
      return ReceiveNow(out, size, ec);
    }
    const absl::Duration wait = pace_->NextWait();
    if (wait <= absl::ZeroDuration()) {
      timed_out_ = true;
      ec = asio::error::timed_out;
      return 0;
    }
    // SO_RCVTIMEO rounds to the clock tick: at least a millisecond, never "forever" (0).
    timeval tv = absl::ToTimeval(std::max(wait, absl::Milliseconds(1)));
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const auto start = std::chrono::steady_clock::now();
    errno = 0;
    const size_t n = ReceiveNow(out, size, ec);
    const int read_errno = errno;
    pace_->Record(absl::FromChrono(std::chrono::steady_clock::now() - start), n);
    if (n == 0 && (read_errno == EAGAIN || read_errno == EWOULDBLOCK)) {
      timed_out_ = true;
    }
    return n;
  }

  size_t ReceiveNow(char* out, size_t size, beast::error_code& ec) {
    if (ssl_ != nullptr) {
      int n = SSL_read(ssl_, out, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      if (n > 0) {
        return static_cast<size_t>(n);
      }
      ec = SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN
               ? beast::error_code(asio::error::eof)
               : beast::error_code(asio::error::connection_reset);
      return 0;
    }
    ssize_t n;
    do {
      n = ::recv(fd_, out, size, 0);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      return static_cast<size_t>(n);
    }
    ec = n == 0 ? beast::error_code(asio::error::eof)
                : beast::error_code(errno, boost::system::system_category());
    return 0;
  }

  size_t Send(iovec* iov, size_t count, beast::error_code& ec) {
    if (ssl_ != nullptr) {
      // Without partial writes SSL_write sends all of a piece or fails.
      int n = SSL_write(ssl_, iov[0].iov_base,
                        static_cast<int>(std::min<size_t>(iov[0].iov_len, 1 << 30)));
      if (n > 0) {
        return static_cast<size_t>(n);
      }
      ec = asio::error::connection_reset;
      return 0;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    ssize_t n;
    do {
      n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n >= 0) {
      return static_cast<size_t>(n);
    }
    ec = beast::error_code(errno, boost::system::system_category());
    return 0;
  }

  int fd_;
  SSL* ssl_;
  BodyPace* pace_ = nullptr;
  bool timed_out_ = false;
};

std::string_view Sv(beast::string_view s) { return {s.data(), s.size()}; }

bool IsBodyMethod(std::string_view method) {
  // As S3 clients send them: a body may come with these, never with GET, HEAD or OPTIONS.
  return method == "PUT" || method == "POST" || method == "DELETE" || method == "PATCH";
}

// The headers every answer carries, as the endpoint has always sent them.
void CompleteHeaders(const HttpRequest& req, HttpResponse& res, bool close) {
  if (close) {
    if (!res.has_header("Connection")) {
      res.set_header("Connection", "close");
    }
  } else {
    res.set_header("Keep-Alive", std::string(kKeepAliveHeader));
  }
  const bool has_provider = res.content_provider || res.chunked_content_provider;
  if (!res.has_header("Content-Type") &&
      (!res.body.empty() || res.content_length > 0 || has_provider)) {
    res.set_header("Content-Type", "text/plain");
  }
  if (!res.has_header("Content-Length")) {
    if (!res.body.empty()) {
      res.set_header("Content-Length", std::to_string(res.body.size()));
    } else if (res.content_provider && res.content_length > 0) {
      res.set_header("Content-Length", std::to_string(res.content_length));
    } else if (!has_provider) {
      res.set_header("Content-Length", "0");
    }
  }
  if (!res.has_header("Accept-Ranges") && req.method == "HEAD") {
    res.set_header("Accept-Ranges", "bytes");
  }
}

// Writes the response; false when the connection failed or the body was cut short.
bool WriteResponse(SocketStream& stream, const HttpRequest& req, HttpResponse& res, bool close,
                   const std::atomic<bool>& stopping) {
  if (res.status == -1) {
    res.status = 200;
  }
  CompleteHeaders(req, res, close);
  bhttp::response<bhttp::buffer_body> msg;
  msg.version(11);
  msg.result(static_cast<unsigned>(res.status));
  for (const auto& [name, value] : res.headers) {
    msg.insert(name, value);
  }
  const bool head = req.method == "HEAD";
  const bool chunked = !head && res.chunked_content_provider != nullptr;
  if (chunked) {
    msg.chunked(true);
  }
  bhttp::response_serializer<bhttp::buffer_body> serializer(msg);
  beast::error_code ec;
  if (head || !(res.content_provider || chunked)) {
    msg.body().data = (head || res.body.empty()) ? nullptr : res.body.data();
    msg.body().size = head ? 0 : res.body.size();
    msg.body().more = false;
    bhttp::write(stream, serializer, ec);
    return !ec;
  }

  msg.body().data = nullptr;
  msg.body().more = true;
  bhttp::write_header(stream, serializer, ec);
  bool ok = !ec;
  size_t offset = 0;
  bool more = true;
  DataSink sink;
  sink.write = [&](const char* data, size_t size) {
    if (ok && size > 0) {
      msg.body().data = const_cast<char*>(data);
      msg.body().size = size;
      msg.body().more = true;
      bhttp::write(stream, serializer, ec);
      ok = !ec || ec == bhttp::error::need_buffer;
      offset += size;
    }
    return ok;
  };
  sink.done = [&more] { more = false; };
  const size_t length = res.content_length;
  while (ok && !stopping.load() && (chunked ? more : offset < length)) {
    bool provided = chunked ? res.chunked_content_provider(offset, sink)
                            : res.content_provider(offset, length - offset, sink);
    ok = ok && provided;
  }
  if (!ok || (chunked ? more : offset < length)) {
    return false;
  }
  msg.body().data = nullptr;
  msg.body().size = 0;
  msg.body().more = false;
  bhttp::write(stream, serializer, ec);
  res.provider_succeeded = !ec;
  return !ec;
}

// What a client whose body was cut for being too slow is told, when it can still hear it.
void AnswerBodyTooSlow(HttpResponse& res) {
  res.status = 408;
  res.headers.clear();
  res.body = "Request body too slow\n";
  res.content_length = 0;
  res.content_provider = nullptr;
  res.chunked_content_provider = nullptr;
  res.set_header("Connection", "close");
}

// Serves one request; false when the connection must close after it.
// The connection after a 101, for the upgrade handler: what the head's read left in `buffer`
// first, then the socket (or its TLS).
class Upgraded final : public UpgradedConnection {
 public:
  Upgraded(SocketStream& stream, beast::flat_buffer& buffer) : stream_(stream), buffer_(buffer) {}

  int fd() const override { return stream_.fd(); }
  bool Buffered() const override { return buffer_.size() > 0 || stream_.HasPending(); }
  size_t Read(char* out, size_t size) override {
    if (buffer_.size() > 0) {
      const size_t n = std::min(size, buffer_.size());
      std::memcpy(out, buffer_.data().data(), n);
      buffer_.consume(n);
      return n;
    }
    beast::error_code ec;
    const size_t n = stream_.read_some(asio::buffer(out, size), ec);
    return ec ? 0 : n;
  }
  bool Write(std::string_view data) override {
    beast::error_code ec;
    asio::write(stream_, asio::buffer(data.data(), data.size()), ec);
    return !ec;
  }

 private:
  SocketStream& stream_;
  beast::flat_buffer& buffer_;
};

// Writes the 101 and runs the handler on the connection; it is closed after.
void ServeUpgrade(SocketStream& stream, beast::flat_buffer& buffer, HttpResponse& res,
                  const std::string& name) {
  std::string head = "HTTP/1.1 101 Switching Protocols\r\n";
  for (const auto& [field, value] : res.headers) absl::StrAppend(&head, field, ": ", value, "\r\n");
  head += "\r\n";
  beast::error_code ec;
  asio::write(stream, asio::buffer(head.data(), head.size()), ec);
  if (ec) return;
  // An upgraded connection idles as long as its protocol allows: the handler polls and pings.
  timeval forever{0, 0};
  setsockopt(stream.fd(), SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
  Upgraded connection(stream, buffer);
  try {
    res.upgrade(connection);
  } catch (const std::exception& e) {
    Logger(name)->error("upgrade handler: {}", e.what());
  }
}

bool ServeRequest(SocketStream& stream, beast::flat_buffer& buffer, std::vector<char>& piece,
                  bool last, const HttpHandler& handler, const std::atomic<bool>& stopping,
                  const std::string& name, const std::string& client,
                  const ConnectionLimits& limits) {
  bhttp::request_parser<bhttp::buffer_body> parser;
  parser.header_limit(kHeaderLimit);
  // Not body_limit(boost::none): Beast 1.74 then refuses every sized body.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  beast::error_code ec;
  bhttp::read_header(stream, buffer, parser, ec);
  if (ec) {
    const bool malformed =
        ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
    if (malformed) {
      HttpRequest none;
      HttpResponse res;
      res.status = ec == bhttp::error::header_limit ? 431 : 400;
      WriteResponse(stream, none, res, /*close=*/true, stopping);
    }
    return false;
  }
  auto& head = parser.get();
  HttpRequest req;
  req.method = std::string(Sv(head.method_string()));
  req.target = std::string(Sv(head.target()));
  req.remote_addr = client;
  req.connection_fd = stream.fd();
  for (const auto& field : head) {
    req.headers.emplace(std::string(Sv(field.name_string())), std::string(Sv(field.value())));
  }
  bool close = last || !head.keep_alive();

  if (strcasecmp(req.get_header_value("Expect").c_str(), "100-continue") == 0) {
    constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::write(stream, asio::buffer(kContinue.data(), kContinue.size()), ec);
    if (ec) {
      return false;
    }
  }

  bool body_failed = false;
  BodyPace pace(limits.body_rate_grace, limits.body_min_rate, limits.body_idle_timeout);
  ContentReader reader = [&](const ContentReceiver& receiver) {
    while (!parser.is_done()) {
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      beast::error_code read_ec;
      stream.set_pace(&pace);
      bhttp::read(stream, buffer, parser, read_ec);
      stream.set_pace(nullptr);
      const size_t n = piece.size() - parser.get().body().size;
      if (read_ec && read_ec != bhttp::error::need_buffer) {
        body_failed = true;
      }
      if (n > 0 && !receiver(piece.data(), n)) {
        return false;
      }
      if (body_failed) {
        return false;
      }
    }
    return true;
  };

  HttpResponse res;
  try {
    handler(req, res, IsBodyMethod(req.method) ? &reader : nullptr);
  } catch (const std::exception& e) {
    Logger(name)->error("request handler: {}", e.what());
    return false;
  }
  if (stream.timed_out()) {
    // The client's address only: the target may carry a presigned URL's signature.
    Logger(name)->warn(
        "cut a request body from {}: {} bytes in {:.1f}s of waiting (wanted {} B/s after {}s, "
        "pauses under {}s)",
        client, pace.bytes(), absl::ToDoubleSeconds(pace.waited()), limits.body_min_rate,
        absl::ToInt64Seconds(limits.body_rate_grace),
        absl::ToInt64Seconds(limits.body_idle_timeout));
    AnswerBodyTooSlow(res);
  }
  if (res.upgrade && res.status == 101) {
    ServeUpgrade(stream, buffer, res, name);
    return false;
  }
  // The unread rest of a body cannot be taken for the next request.
  auto connection = res.headers.find("Connection");
  close = close || body_failed || !parser.is_done() ||
          (connection != res.headers.end() && strcasecmp(connection->second.c_str(), "close") == 0);
  return WriteResponse(stream, req, res, close, stopping) && !close;
}

}  // namespace

struct HttpTransport::Listener {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io};
};

HttpTransport::HttpTransport(HttpTransportOptions options, HttpHandler handler)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      too_many_connections_(absl::StrCat(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: ", options_.over_cap_content_type,
          "\r\nContent-Length: ", options_.over_cap_body.size(), "\r\nConnection: close\r\n\r\n",
          options_.over_cap_body)) {}

HttpTransport::~HttpTransport() {
  Stop();
  if (tls_ != nullptr) {
    SSL_CTX_free(tls_);
  }
}

absl::Status ParseListen(const std::string& flag, const std::string& listen, std::string& host,
                         int& port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": want host:port, got \"", listen, "\""));
  }
  host = listen.substr(0, colon);
  return absl::OkStatus();
}

absl::StatusOr<SSL_CTX*> NewTlsContext(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    return absl::InternalError("SSL_CTX_new failed");
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    SSL_CTX_free(ctx);
    return absl::InvalidArgumentError(
        absl::StrCat("tls: cannot load ", cert_file, " and ", key_file));
  }
  return ctx;
}

absl::Status HttpTransport::Start() {
  if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls: a certificate and its key go together");
  }
  if (!options_.tls_cert_file.empty() && tls_ == nullptr) {
    absl::StatusOr<SSL_CTX*> context = NewTlsContext(options_.tls_cert_file, options_.tls_key_file);
    if (!context.ok()) {
      return context.status();
    }
    tls_ = *context;
  }
  // A client that hangs up mid-response must cost a failed write, not the process (OpenSSL
  // writes with plain send()).
  signal(SIGPIPE, SIG_IGN);
  auto listener = std::make_unique<Listener>();
  beast::error_code ec;
  asio::ip::tcp::resolver resolver(listener->io);
  auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port),
                                    asio::ip::tcp::resolver::passive, ec);
  if (!ec && endpoints.empty()) {
    ec = asio::error::host_not_found;
  }
  if (!ec) {
    const asio::ip::tcp::endpoint endpoint = endpoints.begin()->endpoint();
    auto& acceptor = listener->acceptor;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec && options_.share_port) {
      using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
      acceptor.set_option(ReusePort(true), ec);
    }
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(kListenBacklog, ec);
  }
  if (ec) {
    return absl::UnavailableError(absl::StrCat(options_.name, ": cannot listen on ", options_.host,
                                               ":", options_.port, ": ", ec.message()));
  }
  port_ = listener->acceptor.local_endpoint().port();
  listener_ = std::move(listener);
  HeaderGateLimits limits;
  limits.header_timeout = absl::ToChronoMilliseconds(options_.limits.header_timeout);
  limits.idle_timeout = std::chrono::milliseconds(kKeepAliveMs);
  limits.header_limit = kHeaderLimit;
  gate_ = std::make_unique<HeaderGate>(
      limits,
      [this](std::unique_ptr<Connection> conn) {
        absl::MutexLock lock(&mu_);
        pending_.push_back(std::move(conn));
      },
      [this](std::unique_ptr<Connection> conn) { Close(std::move(conn)); });
  gate_->Start();
  for (int i = 0; i < options_.threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void HttpTransport::Stop() {
  if (!listener_ || stopping_.exchange(true)) {
    return;
  }
  if (acceptor_.joinable()) {
    acceptor_.join();
  }
  {
    absl::MutexLock lock(&mu_);
    // Wakes the workers (they wait on a condition that reads stopping_).
  }
  for (std::thread& worker : workers_) {
    worker.join();
  }
  workers_.clear();
  gate_->Stop();
  std::deque<std::unique_ptr<Connection>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(pending_);
  }
  for (auto& conn : left) {
    Close(std::move(conn));
  }
  beast::error_code ec;
  listener_->acceptor.close(ec);
}

void HttpTransport::Close(std::unique_ptr<Connection> conn) {
  if (conn->ssl && conn->handshaken) {
    SSL_shutdown(conn->ssl.get());
  }
  conn->ssl.reset();
  ::shutdown(conn->fd, SHUT_RDWR);
  ::close(conn->fd);
  absl::MutexLock lock(&mu_);
  auto it = per_client_.find(conn->client);
  if (it != per_client_.end() && --it->second <= 0) {
    per_client_.erase(it);
  }
}

namespace {

// The peer's address without its port ("127.0.0.1", "::1").
std::string ClientAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "";
  if (peer.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, text, sizeof(text));
  } else if (peer.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, text, sizeof(text));
  }
  return text;
}

}  // namespace

void HttpTransport::AcceptLoop() {
  const int listen_fd = listener_->acceptor.native_handle();
  while (!stopping_.load()) {
    pollfd pfd{listen_fd, POLLIN, 0};
    if (::poll(&pfd, 1, kPollSliceMs) <= 0) {
      continue;
    }
    sockaddr_storage peer{};
    socklen_t peer_size = sizeof(peer);
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &peer_size, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: keep serving the connections we have.
        std::this_thread::sleep_for(std::chrono::milliseconds(kPollSliceMs));
      }
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->fd = fd;
    conn->client = ClientAddress(peer);
    bool over_cap;
    {
      absl::MutexLock lock(&mu_);
      int& open = per_client_[conn->client];
      over_cap = open >= options_.limits.max_connections_per_client;
      if (!over_cap) {
        ++open;
      }
    }
    if (over_cap) {
      [[maybe_unused]] ssize_t n =
          ::send(fd, too_many_connections_.data(), too_many_connections_.size(),
                 MSG_DONTWAIT | MSG_NOSIGNAL);
      ::close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (tls_ != nullptr) {
      conn->ssl.reset(SSL_new(tls_));
      if (!conn->ssl || SSL_set_fd(conn->ssl.get(), fd) != 1) {
        Close(std::move(conn));
        continue;
      }
    }
    gate_->Admit(std::move(conn));
  }
}

void HttpTransport::WorkerLoop() {
  for (;;) {
    std::unique_ptr<Connection> conn;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](HttpTransport* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_.load() || !self->pending_.empty();
          },
          this));
      if (stopping_.load()) {
        return;
      }
      conn = std::move(pending_.front());
      pending_.pop_front();
    }
    ServeConnection(std::move(conn));
  }
}

// Serves the request whose head the gate gathered, then gives the connection back to the gate
// to wait for the next one, or closes it.
void HttpTransport::ServeConnection(std::unique_ptr<Connection> conn) {
  timeval read_timeout = absl::ToTimeval(options_.limits.body_idle_timeout);
  timeval write_timeout{kWriteTimeoutSeconds, 0};
  setsockopt(conn->fd, SOL_SOCKET, SO_RCVTIMEO, &read_timeout, sizeof(read_timeout));
  setsockopt(conn->fd, SOL_SOCKET, SO_SNDTIMEO, &write_timeout, sizeof(write_timeout));
  SocketStream stream(conn->fd, conn->ssl.get());
  // Beast reads at most what the buffer holds (at least 512 bytes) and a flat_buffer only grows
  // to what a read asked for: without room reserved, a body would arrive 512 bytes a call.
  beast::flat_buffer buffer;
  buffer.reserve(std::max(kBodyPiece, conn->head.size()));
  auto head = buffer.prepare(conn->head.size());
  std::memcpy(head.data(), conn->head.data(), conn->head.size());
  buffer.commit(conn->head.size());
  conn->head.clear();
  thread_local std::vector<char> piece(kBodyPiece);
  ++conn->served;
  const bool keep = ServeRequest(stream, buffer, piece, conn->served == kMaxRequestsPerConnection,
                                 handler_, stopping_, options_.name, conn->client, options_.limits);
  if (!keep || stopping_.load()) {
    Close(std::move(conn));
    return;
  }
  // A pipelined request's start, already read.
  conn->head.assign(static_cast<const char*>(buffer.data().data()), buffer.size());
  gate_->Admit(std::move(conn));
}

}  // namespace gpuaas::http
