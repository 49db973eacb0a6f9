// Moving bytes without holding a whole body: an HTTP message body relayed piece by piece from
// a parser to a serializer (Beast's buffer_body), and a raw two-way tunnel for upgraded
// (WebSocket) connections. Both run on the caller's strand; every buffer is fixed-size, so a
// 1 GB body costs no more memory than a 1 KB one.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <limits>

namespace gpuaas::proxy::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

inline constexpr size_t kRelayChunk = 64 * 1024;

inline std::chrono::steady_clock::duration Chrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

// Relays the body of the message `parser` has read the head of, from `in` (with `in_buffer`,
// which may already hold body bytes) to `out` through `serializer` (made from parser.get(),
// head included). Each read from `in` must come within `read_timeout`. Returns the first
// error; success once the whole message went out.
template <bool isRequest, class In, class Out>
asio::awaitable<beast::error_code> RelayBody(
    In& in, beast::flat_buffer& in_buffer, http::parser<isRequest, http::buffer_body>& parser,
    Out& out, http::serializer<isRequest, http::buffer_body>& serializer,
    absl::Duration read_timeout) {
  auto chunk = std::make_unique<char[]>(kRelayChunk);
  // Beast reads at most the buffer's free capacity (but at least 512 bytes): a buffer sized
  // for a request head would move a body in sub-kilobyte reads, one syscall each. Reserved
  // here, and only for a body, so bodiless requests and idle connections do not pay for it.
  if (!parser.is_done()) {
    in_buffer.reserve(kRelayChunk);
  }
  beast::error_code ec;
  do {
    auto& body = parser.get().body();
    if (!parser.is_done()) {
      body.data = chunk.get();
      body.size = kRelayChunk;
      beast::get_lowest_layer(in).expires_after(Chrono(read_timeout));
      co_await http::async_read(in, in_buffer, parser,
                                asio::redirect_error(asio::use_awaitable, ec));
      if (ec == http::error::need_buffer) {
        ec = {};
      }
      if (ec) {
        co_return ec;
      }
      body.size = kRelayChunk - body.size;
      body.data = chunk.get();
      body.more = !parser.is_done();
    } else {
      body.data = nullptr;
      body.size = 0;
      body.more = false;
    }
    co_await http::async_write(out, serializer, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (ec) {
      co_return ec;
    }
  } while (!parser.is_done() || !serializer.is_done());
  co_return ec;
}

// Copies what `from` sends to `to` until either fails or closes; `pending` (bytes already
// read past the HTTP head) goes first.
template <class From, class To>
asio::awaitable<void> Pump(From& from, beast::flat_buffer& pending, To& to) {
  beast::error_code ec;
  if (pending.size() > 0) {
    co_await asio::async_write(to, pending.data(), asio::redirect_error(asio::use_awaitable, ec));
    pending.consume(pending.size());
    if (ec) {
      co_return;
    }
  }
  auto chunk = std::make_unique<char[]>(16 * 1024);
  for (;;) {
    const size_t n = co_await from.async_read_some(asio::buffer(chunk.get(), 16 * 1024),
                                                   asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      co_return;
    }
    co_await asio::async_write(to, asio::buffer(chunk.get(), n),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      co_return;
    }
  }
}

// Tunnels bytes both ways between `a` and `b` until either side closes, then closes both.
// Returns once both directions have stopped, so the streams may be destroyed after.
template <class A, class B>
asio::awaitable<void> Tunnel(A& a, beast::flat_buffer& a_pending, B& b,
                             beast::flat_buffer& b_pending) {
  auto executor = co_await asio::this_coro::executor;
  beast::get_lowest_layer(a).expires_never();
  beast::get_lowest_layer(b).expires_never();
  asio::steady_timer other_done(executor, asio::steady_timer::time_point::max());
  bool finished = false;
  // Whichever direction ends first closes both sockets, which ends the other one's read.
  auto close_both = [&a, &b] {
    beast::error_code ignored;
    beast::get_lowest_layer(a).socket().close(ignored);
    beast::get_lowest_layer(b).socket().close(ignored);
  };
  asio::co_spawn(executor, Pump(b, b_pending, a), [&](std::exception_ptr) {
    finished = true;
    close_both();
    other_done.cancel();
  });
  co_await Pump(a, a_pending, b);
  close_both();
  if (!finished) {
    beast::error_code ignored;
    co_await other_done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
}

}  // namespace gpuaas::proxy::internal
