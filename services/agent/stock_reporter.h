// The agent's link to the stock service (NodeAgentService in stock.proto): RegisterNode, then one
// Heartbeat stream carrying a HeartbeatRequest per interval, each answered. Any break (the
// service restarted, the network failed, the node was forgotten: NOT_FOUND) leads back to
// RegisterNode after a jittered backoff, so the node reappears by itself once the service is
// back. It logs one line per change of state, never one per retry, so an agent waiting for a
// stock service that is down (or does not implement NodeAgentService yet) stays quiet.
//
//   StockReporter reporter(channel, &tokens, node_fn, heartbeat_fn, {.node_id = "gpu-7"});
//   std::thread t([&] { reporter.Run(); });
//   ...
//   reporter.Stop();  // Run returns promptly: the open call is cancelled
//   t.join();
#pragma once

#include <grpcpp/channel.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/cancellation.h"
#include "libs/client/node_agent_client.h"
#include "libs/common/backoff.h"
#include "libs/common/logging.h"
#include "libs/common/stop_signal.h"

namespace gpuaas::agent {

// What the reporter has achieved so far, for the metrics endpoint. Read without locks.
struct ReporterStats {
  std::atomic<bool> connected{false};     // a heartbeat stream is open and answering
  std::atomic<int64_t> registrations{0};  // RegisterNode calls that succeeded
  std::atomic<int64_t> heartbeats{0};     // heartbeats the service answered
};

class StockReporter final {
 public:
  struct Options {
    std::string node_id;
    // Zero: the interval RegisterNodeResponse gives (kDefaultHeartbeatInterval if none).
    absl::Duration heartbeat_interval = absl::ZeroDuration();
    // The deadline of RegisterNode, and how long a heartbeat may wait for its answer.
    absl::Duration call_timeout = absl::Seconds(5);
    Backoff::Options backoff;
  };
  static constexpr absl::Duration kDefaultHeartbeatInterval = absl::Seconds(10);

  using NodeFn = std::function<stock::v1::Node()>;
  using HeartbeatFn = std::function<stock::v1::HeartbeatRequest()>;

  // `channel` to the stock service. `tokens` may be null (no token is sent: only for a stock
  // service that does not check); it must outlive the reporter. `node` builds the registration,
  // `heartbeat` each heartbeat; both are called on Run's thread.
  StockReporter(std::shared_ptr<grpc::ChannelInterface> channel, client::AccessTokens* tokens,
                NodeFn node, HeartbeatFn heartbeat, Options options);

  // Registers and heartbeats until Stop. Blocks.
  void Run();
  // Makes Run return soon: cancels the call in flight and any backoff wait. Thread-safe;
  // returns at once.
  void Stop();

  const ReporterStats& stats() const { return stats_; }

 private:
  enum class StreamEnd { kStopped, kTokenRefresh, kNotFound, kBroken };

  absl::StatusOr<stock::v1::RegisterNodeResponse> Register();
  // One Heartbeat stream, from open to end. `why` says why it ended when kBroken.
  StreamEnd Stream(absl::Duration interval, absl::Status& why);
  void OnAnswer(const stock::v1::HeartbeatResponse& resp);
  // Logs `message` at `level` if `state` differs from the last state logged.
  void Note(const std::string& state, spdlog::level::level_enum level, const std::string& message);
  void NoteFailure(std::string_view phase, const absl::Status& status);
  // Waits `d` or until Stop. Returns false when stopped.
  bool Sleep(absl::Duration d);
  bool Stopped();

  client::NodeAgentClient stock_;
  NodeFn node_;
  HeartbeatFn heartbeat_;
  const Options options_;
  Backoff backoff_;
  ReporterStats stats_;
  std::string last_state_;         // Run's thread only
  bool cordoned_ = false;          // Run's thread only
  std::string connected_message_;  // Run's thread only

  StopSignal stop_;
  client::Cancellation cancel_;  // Stop's: ends the call in flight
};

}  // namespace gpuaas::agent
