// The proxy benchmark's upstream: as little work per request as possible, so the numbers are
// the proxy's. A thread per connection (Beast, blocking):
//   GET /stream?n=N   N bytes, chunked, in 64 KiB pieces
//   GET /ws           a WebSocket echo
//   anything else     "hello\n" (keep-alive)
// Usage: proxy_bench_upstream PORT
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdio>
#include <string>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

void Stream(tcp::socket& socket, uint64_t n, unsigned version) {
  http::response<http::empty_body> res{http::status::ok, version};
  res.chunked(true);
  http::response_serializer<http::empty_body> sr{res};
  beast::error_code ec;
  http::write_header(socket, sr, ec);
  const std::string piece(64 * 1024, 'x');
  while (!ec && n > 0) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, piece.size()));
    asio::write(socket, http::make_chunk(asio::buffer(piece.data(), k)), ec);
    n -= k;
  }
  if (!ec) asio::write(socket, http::make_chunk_last(), ec);
}

void Serve(tcp::socket socket) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  for (;;) {
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) return;
    const std::string target(req.target());
    if (beast::websocket::is_upgrade(req)) {
      beast::websocket::stream<tcp::socket> ws(std::move(socket));
      ws.accept(req, ec);
      while (!ec) {
        beast::flat_buffer b;
        ws.read(b, ec);
        if (ec) return;
        ws.text(ws.got_text());
        ws.write(b.data(), ec);
      }
      return;
    }
    if (target.rfind("/stream?n=", 0) == 0) {
      Stream(socket, std::stoull(target.substr(10)), req.version());
      if (!req.keep_alive()) return;
      continue;
    }
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.body() = "hello\n";
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !req.keep_alive()) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  asio::io_context io;
  tcp::acceptor acceptor(
      io, {asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(std::stoi(argv[1]))});
  acceptor.listen(4096);
  for (;;) {
    tcp::socket socket(io);
    acceptor.accept(socket);
    socket.set_option(tcp::no_delay(true));
    std::thread(Serve, std::move(socket)).detach();
  }
}
