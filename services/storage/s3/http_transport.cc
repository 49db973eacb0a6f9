#include "services/storage/s3/http_transport.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>

namespace gpuaas::storage::s3 {
namespace {

// Idle time between requests on one connection, and per read or write while in one.
constexpr int kKeepAliveMs = 10'000;
constexpr int kIoTimeoutSeconds = 60;
constexpr int kHandshakeTimeoutSeconds = 10;
constexpr int kMaxRequestsPerConnection = 1000;
constexpr size_t kReadBuffer = 64 * 1024;

thread_local Exchange* current_exchange = nullptr;

void Address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) {
    return;
  }
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), serv, sizeof(serv),
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

// A connection's bytes, buffered for reading. Subclasses move them (plain or TLS).
class BufferedStream : public httplib::Stream {
 public:
  explicit BufferedStream(int fd) : fd_(fd), buffer_(kReadBuffer) {}

  bool is_readable() const override { return begin_ < end_; }
  bool is_writable() const override { return true; }  // writes block up to SO_SNDTIMEO

  ssize_t read(char* ptr, size_t size) override {
    if (begin_ == end_) {
      if (size >= buffer_.size()) {
        return Receive(ptr, size);
      }
      ssize_t n = Receive(buffer_.data(), buffer_.size());
      if (n <= 0) {
        return n < 0 ? -1 : 0;
      }
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  using httplib::Stream::write;

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

  // Bytes already received and not yet read (the start of a pipelined request).
  bool HasBuffered() const { return begin_ < end_; }
  virtual bool HasPending() const { return HasBuffered(); }

 protected:
  virtual ssize_t Receive(char* out, size_t size) = 0;

  int fd_;

 private:
  std::vector<char> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

class PlainStream final : public BufferedStream {
 public:
  using BufferedStream::BufferedStream;

  ssize_t write(const char* ptr, size_t size) override {
    ssize_t n;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

 private:
  ssize_t Receive(char* out, size_t size) override {
    ssize_t n;
    do {
      n = ::recv(fd_, out, size, 0);
    } while (n < 0 && errno == EINTR);
    return n;
  }
};

class TlsStream final : public BufferedStream {
 public:
  TlsStream(int fd, SSL* ssl) : BufferedStream(fd), ssl_(ssl) {}

  ssize_t write(const char* ptr, size_t size) override {
    int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    return n > 0 ? n : -1;
  }
  bool HasPending() const override { return HasBuffered() || SSL_pending(ssl_) > 0; }

 private:
  ssize_t Receive(char* out, size_t size) override {
    int n = SSL_read(ssl_, out, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    if (n > 0) {
      return n;
    }
    return SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
  }

  SSL* ssl_;
};

// Runs before httplib acts on the request (see the header for why).
void Normalize(httplib::Request& req, Exchange& exchange) {
  // We route and parse ranges ourselves, from req.target and the headers.
  req.path = "/";
  req.ranges.clear();
  auto [begin, end] = req.headers.equal_range("Content-Encoding");
  if (begin != end) {
    auto& original = exchange.original_headers["content-encoding"];
    for (auto it = begin; it != end; ++it) {
      original.push_back(it->second);
    }
    req.headers.erase("Content-Encoding");
  }
  // S3 answers are not compressed; httplib would gzip XML (and hold back the keep-alive spaces
  // of a long CompleteMultipartUpload in its compressor).
  auto [accept_begin, accept_end] = req.headers.equal_range("Accept-Encoding");
  if (accept_begin != accept_end) {
    auto& original = exchange.original_headers["accept-encoding"];
    for (auto it = accept_begin; it != accept_end; ++it) {
      original.push_back(it->second);
    }
    req.headers.erase("Accept-Encoding");
  }
  auto expect = req.headers.find("Expect");
  if (expect != req.headers.end() && expect->second != "100-continue" &&
      strcasecmp(expect->second.c_str(), "100-continue") == 0) {
    exchange.original_headers["expect"].push_back(expect->second);
    expect->second = "100-continue";
  }
}

struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

}  // namespace

Exchange& HttpTransport::CurrentExchange() {
  static thread_local Exchange outside;
  return current_exchange != nullptr ? *current_exchange : outside;
}

void HttpTransport::WidenBacklog(int backlog) {
  socket_t sock = svr_sock_;
  if (sock != INVALID_SOCKET) {
    ::listen(sock, backlog);
  }
}

bool HttpTransport::process_and_close_socket(socket_t sock) {
  // A client that connects and says nothing holds a thread for the handshake timeout only.
  timeval handshake{kHandshakeTimeoutSeconds, 0};
  timeval timeout{kIoTimeoutSeconds, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, tls_ != nullptr ? &handshake : &timeout,
             sizeof(timeout));
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  std::unique_ptr<SSL, SslDeleter> ssl;
  std::unique_ptr<BufferedStream> stream;
  if (tls_ != nullptr) {
    ssl.reset(SSL_new(tls_));
    if (!ssl || SSL_set_fd(ssl.get(), sock) != 1 || SSL_accept(ssl.get()) != 1) {
      ::close(sock);
      return false;
    }
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    stream = std::make_unique<TlsStream>(sock, ssl.get());
  } else {
    stream = std::make_unique<PlainStream>(sock);
  }

  bool ok = true;
  for (int served = 0; served < kMaxRequestsPerConnection; ++served) {
    // Wait for the next request in short slices, so Stop() is not held up by idle clients.
    bool readable = stream->HasPending();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kKeepAliveMs);
    while (!readable && svr_sock_ != INVALID_SOCKET &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd pfd{sock, POLLIN, 0};
      int rc = ::poll(&pfd, 1, 100);
      if (rc < 0 && errno != EINTR) {
        break;
      }
      readable = rc > 0;
    }
    if (!readable || svr_sock_ == INVALID_SOCKET) {
      break;
    }
    Exchange exchange;
    current_exchange = &exchange;
    bool connection_closed = false;
    ok = process_request(*stream, served + 1 == kMaxRequestsPerConnection, connection_closed,
                         [&exchange](httplib::Request& req) { Normalize(req, exchange); });
    current_exchange = nullptr;
    if (!ok || connection_closed || exchange.close_after_response) {
      break;
    }
  }
  if (ssl) {
    SSL_shutdown(ssl.get());
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace gpuaas::storage::s3
