// PostgreSQL LISTEN/NOTIFY for services that react to changes other processes commit (the
// instance reconciler to `instance_work`, the agents' streams to `node_workloads`): one
// dedicated connection (a pooled one cannot wait for notifications), one thread, a callback per
// notification.
//
//   db::NotifyListener listener(dsn, {"instance_work"},
//       {.on_notify = [&](std::string_view channel, std::string_view payload) { Kick(); },
//        .on_connect = [&] { Kick(); }});
//   listener.Start();
//
// Notifications sent while the connection is down are lost, so `on_connect` runs after every
// (re)connection, the first one included: whoever listens re-reads what it follows there.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "libs/common/stop_signal.h"

namespace gpuaas::db {

struct NotifyCallbacks {
  // Each notification, on the listener's thread, in the order PostgreSQL delivered them. Must
  // not block long: later notifications wait for it.
  std::function<void(std::string_view channel, std::string_view payload)> on_notify;
  // After each successful LISTEN on a fresh connection, on the listener's thread.
  std::function<void()> on_connect;
};

struct NotifyOptions {
  // How long a reconnection waits after a failure (doubling up to max_backoff).
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // How often the thread looks up from waiting to notice Stop().
  absl::Duration wake_interval = absl::Milliseconds(200);
};

class NotifyListener final {
 public:
  // `dsn` is a libpq connection string; `channels` plain identifiers (they are quoted). Does
  // not connect.
  NotifyListener(std::string dsn, std::vector<std::string> channels, NotifyCallbacks callbacks,
                 NotifyOptions options = {});
  // Stops the thread (waits at most about wake_interval).
  ~NotifyListener();
  NotifyListener(const NotifyListener&) = delete;
  NotifyListener& operator=(const NotifyListener&) = delete;

  // Starts the thread, which connects, LISTENs and reconnects after any failure until Stop().
  // Never blocks on the database. Call once.
  void Start();
  // Ends the thread. Idempotent.
  void Stop();

  // True while the connection is up and listening. Thread-safe.
  bool connected() const;

 private:
  void Run();

  const std::string dsn_;
  const std::vector<std::string> channels_;
  const NotifyCallbacks callbacks_;
  const NotifyOptions options_;
  StopSignal stop_;
  std::atomic<bool> connected_{false};
  std::thread thread_;
};

}  // namespace gpuaas::db
