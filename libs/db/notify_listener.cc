#include "libs/db/notify_listener.h"

#include <pqxx/pqxx>
#include <utility>

#include "libs/common/backoff.h"
#include "libs/common/logging.h"
#include "libs/db/db.h"

namespace gpuaas::db {
namespace {

// libpqxx's receiver registers LISTEN for its channel on construction and is called from
// await_notification on the same thread.
class Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& conn, const std::string& channel, const NotifyCallbacks& cb)
      : pqxx::notification_receiver(conn, channel), callbacks_(cb) {}

  void operator()(const std::string& payload, int /*backend_pid*/) override {
    if (callbacks_.on_notify) callbacks_.on_notify(channel(), payload);
  }

 private:
  const NotifyCallbacks& callbacks_;
};

}  // namespace

NotifyListener::NotifyListener(std::string dsn, std::vector<std::string> channels,
                               NotifyCallbacks callbacks, NotifyOptions options)
    : dsn_(std::move(dsn)),
      channels_(std::move(channels)),
      callbacks_(std::move(callbacks)),
      options_(options) {}

NotifyListener::~NotifyListener() { Stop(); }

void NotifyListener::Start() {
  thread_ = std::thread([this] { Run(); });
}

void NotifyListener::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
}

bool NotifyListener::connected() const { return connected_.load(); }

void NotifyListener::Run() {
  auto log = Logger("db");
  Backoff backoff({.initial = options_.initial_backoff, .max = options_.max_backoff, .jitter = 0});
  const int64_t wake_us = absl::ToInt64Microseconds(options_.wake_interval);
  while (!stop_.stopped()) {
    try {
      pqxx::connection conn(dsn_);
      std::vector<std::unique_ptr<Receiver>> receivers;
      for (const std::string& channel : channels_) {
        receivers.push_back(std::make_unique<Receiver>(conn, channel, callbacks_));
      }
      // Receivers LISTEN lazily on libpqxx's next round trip; make it happen now, so nothing
      // committed after on_connect is missed.
      conn.get_notifs();
      pqxx::nontransaction(conn).exec("SELECT 1");
      connected_ = true;
      backoff.Reset();
      if (callbacks_.on_connect) callbacks_.on_connect();
      while (!stop_.stopped()) {
        conn.await_notification(wake_us / 1'000'000, wake_us % 1'000'000);
        if (!conn.is_open()) throw pqxx::broken_connection("listener connection closed");
      }
      connected_ = false;
      return;
    } catch (const std::exception& e) {
      connected_ = false;
      const absl::Duration wait = backoff.Next();
      log->warn("listener: {}; reconnecting in {}", std::string(MapException(e).message()),
                absl::FormatDuration(wait));
      if (stop_.WaitFor(wait)) return;
    }
  }
}

}  // namespace gpuaas::db
