// Moving bytes without holding a whole body: an HTTP message body relayed piece by piece from
// a parser to a serializer (Beast's buffer_body), and a raw two-way tunnel for upgraded
// (WebSocket) connections. Both run on the caller's event loop; every buffer is fixed-size, so a
// 1 GB body costs no more memory than a 1 KB one.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
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
#include <memory>
#include <type_traits>

#include "services/proxy/internal/read_deadline.h"

namespace gpuaas::proxy::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// Every connection lives on one single-threaded io_context (proxy_server.cc): its concrete
// executor type, not asio's type-erased any_io_executor, whose copies and queries cost more per
// request than parsing HTTP did.
using Executor = asio::io_context::executor_type;
template <class T>
using Task = asio::awaitable<T, Executor>;
inline constexpr asio::use_awaitable_t<Executor> kAwait;
using TcpStream = beast::basic_stream<asio::ip::tcp, Executor>;

inline constexpr size_t kRelayChunk = 64 * 1024;

// A connection's buffer for relaying bodies: made at its first body and kept, never zeroed.
// (A fresh zeroed 64 KiB per message cost a third of the proxy's CPU on small responses.)
class RelayChunk {
 public:
  char* get() {
    if (!data_) data_.reset(new char[kRelayChunk]);
    return data_.get();
  }

 private:
  std::unique_ptr<char[]> data_;
};

inline std::chrono::steady_clock::duration Chrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

// Our direct reads and writes must return would_block, never wait. Asio's setter makes a
// system call each time; the getter does not.
template <class Socket>
void SetNonBlocking(Socket& socket, beast::error_code& ec) {
  if (!socket.non_blocking()) {
    socket.non_blocking(true, ec);
  }
}

// Writes what `serializer` has ready. On plain TCP it first tries at once, without waiting: a
// message that fits the socket's send buffer (nearly every one on a quiet connection) then
// costs one send() instead of an asynchronous composed write with its timer, which took most
// of the proxy's own CPU per small request. Whatever does not fit goes the asynchronous way,
// from where the serializer stopped.
template <bool isRequest, class Out>
Task<beast::error_code> Write(Out& out,
                              http::serializer<isRequest, http::buffer_body>& serializer) {
  beast::error_code ec;
  if constexpr (std::is_same_v<Out, TcpStream>) {
    auto& socket = out.socket();
    SetNonBlocking(socket, ec);
    if (!ec) {
      http::write(socket, serializer, ec);
    }
    if (ec != asio::error::would_block && ec != asio::error::try_again) {
      co_return ec;
    }
    ec = {};
  }
  co_await http::async_write(out, serializer, asio::redirect_error(kAwait, ec));
  co_return ec;
}

// Reads a message head into `parser`. On plain TCP it parses what the socket has and waits
// for more with a bare readiness wait, bounded by `deadline`, instead of Beast's composed read
// with a timer per operation (most of the proxy's own CPU per small request went there).
template <class In, class Parser>
Task<beast::error_code> ReadHeader(In& in, beast::flat_buffer& buffer, Parser& parser,
                                   ReadDeadline& deadline, absl::Duration timeout) {
  beast::error_code ec;
  if constexpr (std::is_same_v<In, TcpStream>) {
    auto& socket = in.socket();
    SetNonBlocking(socket, ec);
    if (ec) {
      co_return ec;
    }
    deadline.Start(socket, Chrono(timeout));
    for (;;) {
      http::read_header(socket, buffer, parser, ec);
      if (ec != asio::error::would_block && ec != asio::error::try_again) {
        break;
      }
      co_await socket.async_wait(asio::socket_base::wait_read, asio::redirect_error(kAwait, ec));
      if (ec) {
        break;
      }
    }
    deadline.Stop();
    if (ec && deadline.expired()) {
      ec = beast::error::timeout;
    }
  } else {
    beast::get_lowest_layer(in).expires_after(Chrono(timeout));
    co_await http::async_read_header(in, buffer, parser, asio::redirect_error(kAwait, ec));
  }
  co_return ec;
}

// Relays the body of the message `parser` has read the head of, from `in` (with `in_buffer`,
// which may already hold body bytes) to `out` through `serializer` (made from parser.get(),
// head included), through `chunk`. Each read from `in` must come within `read_timeout`.
// Returns the first error; success once the whole message went out.
template <bool isRequest, class In, class Out>
Task<beast::error_code> RelayBody(In& in, beast::flat_buffer& in_buffer,
                                  http::parser<isRequest, http::buffer_body>& parser, Out& out,
                                  http::serializer<isRequest, http::buffer_body>& serializer,
                                  RelayChunk& chunk, absl::Duration read_timeout) {
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
      // Body bytes that came in with the head go to the parser here: a read would find them
      // too, but only after a trip through the event loop (a small response's whole body).
      size_t used = 0;
      if (in_buffer.size() > 0) {
        parser.eager(true);
        used = parser.put(in_buffer.data(), ec);
        in_buffer.consume(used);
        if (ec == http::error::need_more || ec == http::error::need_buffer) {
          ec = {};
        }
      }
      if (!ec && used == 0) {
        beast::get_lowest_layer(in).expires_after(Chrono(read_timeout));
        co_await http::async_read(in, in_buffer, parser, asio::redirect_error(kAwait, ec));
        if (ec == http::error::need_buffer) {
          ec = {};
        }
      }
      if (ec) {
        co_return ec;
      }
      const size_t got = kRelayChunk - body.size;
      if (got == 0 && !parser.is_done()) {
        // Only framing was read (a chunk's size line): nothing to send yet. An empty piece
        // would go out as a zero-size chunk, which ends a chunked body early.
        continue;
      }
      // The end with no bytes left is a null piece: the serializer then writes only the last
      // chunk (an empty piece would write a zero-size chunk and then the last one again).
      body.data = got > 0 ? chunk.get() : nullptr;
      body.size = got;
      body.more = !parser.is_done();
    } else {
      body.data = nullptr;
      body.size = 0;
      body.more = false;
    }
    ec = co_await Write(out, serializer);
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
Task<void> Pump(From& from, beast::flat_buffer& pending, To& to) {
  beast::error_code ec;
  if (pending.size() > 0) {
    co_await asio::async_write(to, pending.data(), asio::redirect_error(kAwait, ec));
    pending.consume(pending.size());
    if (ec) {
      co_return;
    }
  }
  auto chunk = std::make_unique<char[]>(16 * 1024);
  for (;;) {
    const size_t n = co_await from.async_read_some(asio::buffer(chunk.get(), 16 * 1024),
                                                   asio::redirect_error(kAwait, ec));
    if (ec) {
      co_return;
    }
    co_await asio::async_write(to, asio::buffer(chunk.get(), n), asio::redirect_error(kAwait, ec));
    if (ec) {
      co_return;
    }
  }
}

// Tunnels bytes both ways between `a` and `b` until either side closes, then closes both.
// Returns once both directions have stopped, so the streams may be destroyed after.
template <class A, class B>
Task<void> Tunnel(A& a, beast::flat_buffer& a_pending, B& b, beast::flat_buffer& b_pending) {
  auto executor = co_await asio::this_coro::executor;
  beast::get_lowest_layer(a).expires_never();
  beast::get_lowest_layer(b).expires_never();
  asio::basic_waitable_timer<std::chrono::steady_clock,
                             asio::wait_traits<std::chrono::steady_clock>, Executor>
      other_done(executor, std::chrono::steady_clock::time_point::max());
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
    co_await other_done.async_wait(asio::redirect_error(kAwait, ignored));
  }
}

}  // namespace gpuaas::proxy::internal
