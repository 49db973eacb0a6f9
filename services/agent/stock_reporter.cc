#include "services/agent/stock_reporter.h"

#include <grpcpp/alarm.h>
#include <grpcpp/completion_queue.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "libs/client/call_context.h"
#include "libs/common/proto_time.h"

namespace gpuaas::agent {
namespace {

// Completion-queue tags of the heartbeat stream's operations.
enum class Tag : intptr_t { kStart = 1, kWrite, kRead, kAlarm, kWritesDone, kFinish };

void* ToTag(Tag t) { return reinterpret_cast<void*>(static_cast<intptr_t>(t)); }
Tag FromTag(void* p) { return static_cast<Tag>(reinterpret_cast<intptr_t>(p)); }

std::chrono::system_clock::time_point Chrono(absl::Time t) { return absl::ToChronoTime(t); }

}  // namespace

StockReporter::StockReporter(std::shared_ptr<grpc::ChannelInterface> channel,
                             client::AccessTokens* tokens, NodeFn node, HeartbeatFn heartbeat,
                             Options options)
    : stock_(std::move(channel), tokens, options.call_timeout),
      node_(std::move(node)),
      heartbeat_(std::move(heartbeat)),
      options_(std::move(options)),
      backoff_(options_.backoff) {}

void StockReporter::Stop() {
  stop_.Stop();
  cancel_.Cancel();
}

bool StockReporter::Stopped() { return stop_.stopped(); }

bool StockReporter::Sleep(absl::Duration d) { return !stop_.WaitFor(d); }

void StockReporter::Note(const std::string& state, spdlog::level::level_enum level,
                         const std::string& message) {
  if (state == last_state_) {
    return;
  }
  last_state_ = state;
  Logger("agent")->log(level, "{}", message);
}

void StockReporter::NoteFailure(std::string_view phase, const absl::Status& status) {
  std::string message = absl::StrCat(std::string(phase), ": ", status.ToString());
  if (absl::IsUnimplemented(status)) {
    absl::StrAppend(&message, " (the stock service does not serve NodeAgentService yet)");
  }
  absl::StrAppend(&message, "; retrying with backoff up to ",
                  absl::FormatDuration(options_.backoff.max), ", quietly until this changes");
  Note(absl::StrCat(std::string(phase), ":", absl::StatusCodeToString(status.code())),
       spdlog::level::warn, message);
}

absl::StatusOr<stock::v1::RegisterNodeResponse> StockReporter::Register() {
  stock::v1::RegisterNodeRequest req;
  *req.mutable_node() = node_();
  return stock_.RegisterNode(req, client::CallContext().set_cancellation(cancel_));
}

void StockReporter::OnAnswer(const stock::v1::HeartbeatResponse& resp) {
  stats_.heartbeats.fetch_add(1);
  stats_.connected.store(true);
  backoff_.Reset();
  Note("connected", spdlog::level::info, connected_message_);
  if (resp.cordoned() != cordoned_) {
    cordoned_ = resp.cordoned();
    Logger("agent")->info("node {} is {}", options_.node_id,
                          cordoned_ ? "cordoned: no new stocks land on it" : "no longer cordoned");
  }
}

StockReporter::StreamEnd StockReporter::Stream(absl::Duration interval, absl::Status& why) {
  if (Stopped()) {
    return StreamEnd::kStopped;
  }
  // No deadline on the stream itself, which lives as long as the agent; instead each operation
  // must complete within call_timeout (answer_deadline below).
  grpc::CompletionQueue cq;
  absl::StatusOr<std::unique_ptr<client::HeartbeatCall>> heartbeat =
      stock_.PrepareHeartbeat(cq, client::CallContext().set_cancellation(cancel_));
  if (!heartbeat.ok()) {
    why = heartbeat.status();
    return StreamEnd::kBroken;
  }
  client::HeartbeatCall::Stream* stream = &(*heartbeat)->stream();
  grpc::Alarm alarm;
  stock::v1::HeartbeatRequest req;
  stock::v1::HeartbeatResponse resp;
  bool start_pending = true;
  bool write_pending = false;
  bool read_pending = false;
  bool alarm_pending = false;
  bool writes_done_pending = false;
  bool read_ended = false;  // the service ended the stream
  bool closing = false;     // we half-closed it to reopen with a fresh token
  int unanswered = 0;
  absl::Time answer_deadline = absl::Now() + options_.call_timeout;
  why = absl::OkStatus();

  stream->StartCall(ToTag(Tag::kStart));
  auto send = [&] {
    req = heartbeat_();
    stream->Write(req, ToTag(Tag::kWrite));
    write_pending = true;
    if (unanswered++ == 0) {
      answer_deadline = absl::Now() + options_.call_timeout;
    }
  };
  auto arm = [&] {
    alarm.Set(&cq, Chrono(absl::Now() + interval), ToTag(Tag::kAlarm));
    alarm_pending = true;
  };

  bool done = false;
  while (!done) {
    const bool waiting = start_pending || unanswered > 0 || closing;
    // Nothing but the alarm or a break can arrive while not waiting; wake now and then anyway.
    const absl::Time wake = waiting ? answer_deadline : absl::Now() + interval + absl::Seconds(1);
    void* tag = nullptr;
    bool ok = false;
    grpc::CompletionQueue::NextStatus next = cq.AsyncNext(&tag, &ok, Chrono(wake));
    if (next == grpc::CompletionQueue::SHUTDOWN) {
      break;
    }
    if (next == grpc::CompletionQueue::TIMEOUT) {
      if (waiting && absl::Now() >= answer_deadline) {
        why =
            absl::DeadlineExceededError(absl::StrCat("the stock service did not answer within ",
                                                     absl::FormatDuration(options_.call_timeout)));
        done = true;
      }
      continue;
    }
    switch (FromTag(tag)) {
      case Tag::kStart:
        start_pending = false;
        if (!ok) {
          done = true;
          break;
        }
        send();
        stream->Read(&resp, ToTag(Tag::kRead));
        read_pending = true;
        break;
      case Tag::kWrite:
        write_pending = false;
        if (!ok) {
          done = true;
        }
        break;
      case Tag::kRead:
        read_pending = false;
        if (!ok) {
          read_ended = true;
          done = true;
          break;
        }
        unanswered = std::max(0, unanswered - 1);
        if (unanswered > 0) {
          answer_deadline = absl::Now() + options_.call_timeout;
        }
        OnAnswer(resp);
        stream->Read(&resp, ToTag(Tag::kRead));
        read_pending = true;
        if (!alarm_pending && !closing) {
          arm();
        }
        break;
      case Tag::kAlarm:
        alarm_pending = false;
        if (!ok || closing) {
          break;
        }
        if (write_pending) {
          arm();  // the last beat is still on its way: skip this one
          break;
        }
        if (stock_.TokenRefreshDue()) {
          // Half-close: the service ends the stream and we reopen it with a fresh token.
          stream->WritesDone(ToTag(Tag::kWritesDone));
          writes_done_pending = true;
          closing = true;
          answer_deadline = absl::Now() + options_.call_timeout;
          break;
        }
        send();
        break;
      case Tag::kWritesDone:
        writes_done_pending = false;
        if (!ok) {
          done = true;
        }
        break;
      case Tag::kFinish:
        break;
    }
  }

  // Wind down: cancel unless the service already ended the stream, then collect every
  // operation still in flight before asking for the status.
  if (!read_ended) {
    (*heartbeat)->Cancel();
  }
  if (alarm_pending) {
    alarm.Cancel();
  }
  while (start_pending || write_pending || read_pending || alarm_pending || writes_done_pending) {
    void* tag = nullptr;
    bool ok = false;
    if (!cq.Next(&tag, &ok)) {
      break;
    }
    switch (FromTag(tag)) {
      case Tag::kStart:
        start_pending = false;
        break;
      case Tag::kWrite:
        write_pending = false;
        break;
      case Tag::kRead:
        read_pending = false;
        break;
      case Tag::kAlarm:
        alarm_pending = false;
        break;
      case Tag::kWritesDone:
        writes_done_pending = false;
        break;
      case Tag::kFinish:
        break;
    }
  }
  grpc::Status status;
  stream->Finish(&status, ToTag(Tag::kFinish));
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok) && FromTag(tag) != Tag::kFinish) {
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  const absl::Status ended = (*heartbeat)->Ended(status);

  if (Stopped()) {
    return StreamEnd::kStopped;
  }
  if (closing) {
    return StreamEnd::kTokenRefresh;
  }
  if (absl::IsNotFound(ended)) {
    why = ended;
    return StreamEnd::kNotFound;
  }
  if (why.ok()) {
    why =
        ended.ok() ? absl::UnavailableError("the stock service ended the heartbeat stream") : ended;
  }
  return StreamEnd::kBroken;
}

void StockReporter::Run() {
  auto log = Logger("agent");
  while (true) {
    absl::StatusOr<stock::v1::RegisterNodeResponse> reg = Register();
    if (!reg.ok()) {
      if (absl::IsCancelled(reg.status()) && !Sleep(absl::ZeroDuration())) {
        return;
      }
      NoteFailure("RegisterNode", reg.status());
      if (!Sleep(backoff_.Next())) {
        return;
      }
      continue;
    }
    stats_.registrations.fetch_add(1);
    absl::Duration interval = options_.heartbeat_interval;
    if (interval <= absl::ZeroDuration()) {
      interval = reg->has_heartbeat_interval() ? FromProtoDuration(reg->heartbeat_interval())
                                               : kDefaultHeartbeatInterval;
      if (interval <= absl::ZeroDuration()) {
        interval = kDefaultHeartbeatInterval;
      }
    }
    // Logged at the first answered heartbeat: a service that accepts the registration but
    // breaks every stream must not log a "registered" line per retry.
    connected_message_ =
        absl::StrCat("registered node ", options_.node_id, " with ", reg->node().gpus_size(),
                     " GPUs; heartbeat every ", absl::FormatDuration(interval));

    StreamEnd end = StreamEnd::kTokenRefresh;
    absl::Status why;
    while (end == StreamEnd::kTokenRefresh) {
      end = Stream(interval, why);
    }
    stats_.connected.store(false);
    if (end == StreamEnd::kStopped) {
      return;
    }
    if (end == StreamEnd::kNotFound) {
      Note("not-found", spdlog::level::info,
           absl::StrCat("the stock service does not know node ", options_.node_id,
                        "; registering again"));
    } else {
      NoteFailure("heartbeat stream", why);
    }
    if (!Sleep(backoff_.Next())) {
      return;
    }
  }
}

}  // namespace gpuaas::agent
