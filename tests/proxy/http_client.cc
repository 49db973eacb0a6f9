#include "tests/proxy/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace gpuaas::proxy_testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpConnection::Impl {
  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
  bool ok = false;
};

HttpConnection::HttpConnection(int port) : impl_(std::make_unique<Impl>()) {
  beast::error_code ec;
  impl_->socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)}, ec);
  impl_->ok = !ec;
}

HttpConnection::~HttpConnection() = default;

bool HttpConnection::connected() const { return impl_->ok; }

bool HttpConnection::Send(const std::string& raw) {
  beast::error_code ec;
  asio::write(impl_->socket, asio::buffer(raw), ec);
  return !ec;
}

HttpResponse HttpConnection::Read(bool head) {
  HttpResponse out;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  parser.skip(head);
  beast::error_code ec;
  http::read(impl_->socket, impl_->buffer, parser, ec);
  if (ec) {
    return out;
  }
  const auto& res = parser.get();
  out.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  out.body = res.body();
  return out;
}

HttpResponse HttpConnection::Get(const std::string& host, const std::string& path,
                                 const std::string& headers) {
  if (!Send("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + headers + "\r\n")) {
    return {};
  }
  return Read();
}

bool HttpConnection::WaitClosed(int timeout_ms) {
  timeval tv{.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
  setsockopt(impl_->socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(impl_->socket.native_handle(), buf, sizeof buf);
    if (n == 0) {
      return true;
    }
    if (n < 0) {
      return errno == ECONNRESET;
    }
  }
}

HttpResponse HttpConnection::PostChunked(const std::string& host, const std::string& path,
                                         const std::string& headers, uint64_t total, size_t piece) {
  if (!Send("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: chunked\r\n" +
            headers + "\r\n")) {
    return {};
  }
  const std::string data(piece, 'u');
  char size_line[32];
  for (uint64_t left = total; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, piece));
    snprintf(size_line, sizeof size_line, "%zx\r\n", n);
    if (!Send(size_line + data.substr(0, n) + "\r\n")) {
      return {};
    }
    left -= n;
  }
  if (!Send("0\r\n\r\n")) {
    return {};
  }
  return Read();
}

int64_t HttpConnection::Download(const std::string& host, const std::string& path,
                                 const std::string& headers, int* status) {
  *status = 0;
  if (!Send("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + headers + "\r\n")) {
    return -1;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  beast::error_code ec;
  http::read_header(impl_->socket, impl_->buffer, parser, ec);
  if (ec) {
    return -1;
  }
  *status = static_cast<int>(parser.get().result_int());
  std::vector<char> chunk(1 << 16);
  int64_t total = 0;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    http::read(impl_->socket, impl_->buffer, parser, ec);
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (ec) {
      return -1;
    }
    total += static_cast<int64_t>(chunk.size() - parser.get().body().size);
  }
  return total;
}

HttpResponse HttpGet(int port, const std::string& host, const std::string& path,
                     const std::string& headers) {
  HttpConnection c(port);
  return c.Get(host, path, headers);
}

std::string WebSocketEcho(int port, const std::string& host, const std::string& path,
                          const std::string& authorization,
                          const std::vector<std::string>& messages) {
  try {
    asio::io_context io;
    beast::websocket::stream<tcp::socket> ws(io);
    ws.next_layer().connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)});
    ws.set_option(beast::websocket::stream_base::decorator(
        [authorization](beast::websocket::request_type& req) {
          if (!authorization.empty()) {
            req.set(http::field::authorization, authorization);
          }
        }));
    ws.handshake(host, path);
    std::string out;
    for (const std::string& m : messages) {
      ws.text(true);
      ws.write(asio::buffer(m));
      beast::flat_buffer b;
      ws.read(b);
      out += (out.empty() ? "" : "|") + beast::buffers_to_string(b.data());
    }
    ws.close(beast::websocket::close_code::normal);
    return out;
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

struct OpenWebSocket::Impl {
  asio::io_context io;
  beast::websocket::stream<tcp::socket> ws{io};
  std::string error;
};

OpenWebSocket::OpenWebSocket(int port, const std::string& host, const std::string& path,
                             const std::vector<std::pair<std::string, std::string>>& fields)
    : impl_(std::make_unique<Impl>()) {
  try {
    impl_->ws.next_layer().connect(
        {asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)});
    // A blocking read never outlasts this: a test waits on a closed socket, not forever.
    timeval tv{.tv_sec = 10, .tv_usec = 0};
    setsockopt(impl_->ws.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    impl_->ws.set_option(
        beast::websocket::stream_base::decorator([fields](beast::websocket::request_type& req) {
          for (const auto& [name, value] : fields) {
            req.set(name, value);
          }
        }));
    impl_->ws.handshake(host, path);
  } catch (const std::exception& e) {
    impl_->error = std::string("error: ") + e.what();
  }
}

OpenWebSocket::~OpenWebSocket() = default;

const std::string& OpenWebSocket::error() const { return impl_->error; }

std::string OpenWebSocket::Echo(const std::string& message) {
  if (!impl_->error.empty()) {
    return impl_->error;
  }
  try {
    impl_->ws.text(true);
    impl_->ws.write(asio::buffer(message));
    beast::flat_buffer b;
    impl_->ws.read(b);
    return beast::buffers_to_string(b.data());
  } catch (const std::exception& e) {
    impl_->error = std::string("error: ") + e.what();
    return impl_->error;
  }
}

}  // namespace gpuaas::proxy_testing
