// A bound on how long a read may wait, without a timer operation per read. Beast's streams
// arm and cancel a timer around every operation; on a keep-alive connection that bookkeeping
// cost more CPU than the HTTP. Here one timer per connection sleeps until the deadline it was
// armed with; when it wakes it either gives up the read (the deadline passed while a read was
// waiting) or sleeps again until the deadline later reads have moved it to. Single-threaded,
// like the connection's event loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

namespace gpuaas::proxy::internal {

class ReadDeadline {
 public:
  using Executor = boost::asio::io_context::executor_type;
  using Socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, Executor>;
  using Clock = std::chrono::steady_clock;

  explicit ReadDeadline(Executor executor) : state_(std::make_shared<State>(executor)) {}
  ~ReadDeadline() {
    state_->socket = nullptr;
    state_->timer.cancel();
  }
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;

  // A read on `socket` starts waiting and must be done within `timeout`; the socket's
  // operations are cancelled if it is not.
  void Start(Socket& socket, Clock::duration timeout) {
    State& s = *state_;
    s.socket = &socket;
    s.due = Clock::now() + timeout;
    s.expired = false;
    if (!s.armed || s.due < s.timer.expiry()) {
      Arm(state_);
    }
  }
  // The read is done (whatever its outcome).
  void Stop() { state_->socket = nullptr; }
  // Whether the last read was cut off by its deadline.
  bool expired() const { return state_->expired; }

 private:
  struct State {
    explicit State(Executor executor) : timer(executor) {}
    boost::asio::basic_waitable_timer<Clock, boost::asio::wait_traits<Clock>, Executor> timer;
    Socket* socket = nullptr;  // while a read waits
    Clock::time_point due;
    uint64_t generation = 0;  // which arming the pending wait belongs to
    bool armed = false;
    bool expired = false;
  };

  static void Arm(const std::shared_ptr<State>& state) {
    State& s = *state;
    s.armed = true;
    const uint64_t generation = ++s.generation;
    s.timer.expires_at(s.due);
    s.timer.async_wait([state, generation](const boost::system::error_code& ec) {
      State& s = *state;
      if (generation != s.generation) {
        return;  // re-armed earlier since
      }
      s.armed = false;
      if (ec || s.socket == nullptr) {
        return;  // cancelled, or no read waits: the next Start arms again
      }
      if (Clock::now() < s.due) {
        Arm(state);
        return;
      }
      s.expired = true;
      boost::system::error_code ignored;
      s.socket->cancel(ignored);
    });
  }

  std::shared_ptr<State> state_;
};

}  // namespace gpuaas::proxy::internal
