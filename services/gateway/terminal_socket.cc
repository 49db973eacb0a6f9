#include "services/gateway/terminal_socket.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/http/websocket_frames.h"
#include "services/gateway/browser_session.h"

namespace gpuaas::gateway {
namespace {

namespace pb = ::gpuaas::instance::v1;

constexpr absl::string_view kPrefix = "/v1/instances/";
constexpr absl::string_view kSuffix = "/exec";
// A login shell where the image has bash, sh where it has not (busybox images).
constexpr char kShell[] = "command -v bash >/dev/null 2>&1 && exec bash -l; exec sh";
constexpr size_t kMaxMessage = 64 << 10;
constexpr int kMaxCells = 1000;

// A close frame's payload: the code, then a reason of at most 123 bytes.
std::string CloseBody(uint16_t code, std::string_view reason) {
  std::string body = {static_cast<char>(code >> 8), static_cast<char>(code & 0xFF)};
  body.append(reason.substr(0, 123));
  return body;
}

// rows= and cols= of the query (1 to 1000), 24×80 when absent.
absl::Status TerminalSize(absl::string_view query, int& rows, int& cols) {
  rows = 24;
  cols = 80;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, '=');
    int* into = kv.first == "rows" ? &rows : kv.first == "cols" ? &cols : nullptr;
    if (into == nullptr) continue;
    if (!absl::SimpleAtoi(kv.second, into) || *into < 1 || *into > kMaxCells) {
      return absl::InvalidArgumentError(absl::StrCat(kv.first, ": must be 1 to ", kMaxCells));
    }
  }
  return absl::OkStatus();
}

bool HeaderHas(const http::HttpRequest& req, const std::string& name, absl::string_view token) {
  for (absl::string_view part : absl::StrSplit(req.get_header_value(name), ',')) {
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(part), token)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> TerminalSockets::InstanceOf(absl::string_view path) {
  if (!absl::ConsumePrefix(&path, kPrefix) || !absl::ConsumeSuffix(&path, kSuffix) ||
      path.empty() || absl::StrContains(path, '/')) {
    return std::nullopt;
  }
  return std::string(path);
}

absl::Status TerminalSockets::Serve(const http::HttpRequest& req, const std::string& instance_id,
                                    absl::string_view query, bool https, http::HttpResponse& res) {
  const std::string key = req.get_header_value("Sec-WebSocket-Key");
  if (req.method != "GET" || !HeaderHas(req, "Upgrade", "websocket") ||
      !HeaderHas(req, "Connection", "upgrade") ||
      req.get_header_value("Sec-WebSocket-Version") != "13" || key.empty()) {
    return absl::InvalidArgumentError(
        "a terminal is a WebSocket: GET with Upgrade: websocket, Sec-WebSocket-Version: 13 and "
        "a Sec-WebSocket-Key");
  }
  if (channel_ == nullptr)
    return absl::UnavailableError("no instance service to open a terminal on");
  int rows = 0;
  int cols = 0;
  if (absl::Status size = TerminalSize(query, rows, cols); !size.ok()) return size;
  absl::StatusOr<std::string> authorization = AuthorizationOf(req, https);
  if (!authorization.ok()) return authorization.status();
  if (authorization->empty()) return absl::UnauthenticatedError("log in first");
  if (open_.fetch_add(1) >= options_.max_sessions) {
    open_.fetch_sub(1);
    return absl::ResourceExhaustedError(
        absl::StrCat("at most ", options_.max_sessions, " terminals open at once; retry later"));
  }
  res.set_header("Upgrade", "websocket");
  res.set_header("Connection", "Upgrade");
  res.set_header("Sec-WebSocket-Accept", http::WebSocketAccept(key));
  res.set_upgrade([this, authorization = *authorization, instance_id, rows,
                   cols](http::UpgradedConnection& connection) {
    RunSession(connection, authorization, instance_id, rows, cols);
    open_.fetch_sub(1);
  });
  return absl::OkStatus();
}

void TerminalSockets::RunSession(http::UpgradedConnection& connection,
                                 const std::string& authorization, const std::string& instance_id,
                                 int rows, int cols) {
  using http::WsOpcode;
  const auto send = [&connection](WsOpcode opcode, std::string_view payload) {
    return connection.Write(http::EncodeWsFrame(opcode, payload));
  };
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", authorization);
  std::unique_ptr<pb::InstanceSessionService::Stub> stub =
      pb::InstanceSessionService::NewStub(channel_);
  std::unique_ptr<grpc::ClientReaderWriter<pb::ExecInstanceRequest, pb::ExecInstanceResponse>>
      stream = stub->ExecInstance(&ctx);
  pb::ExecInstanceRequest start;
  start.mutable_start()->set_instance_id(instance_id);
  for (const char* arg : {"/bin/sh", "-c", kShell}) start.mutable_start()->add_command(arg);
  start.mutable_start()->set_tty(true);
  start.mutable_start()->mutable_size()->set_rows(rows);
  start.mutable_start()->mutable_size()->set_cols(cols);
  stream->Write(start);

  // The stream's answers, from its reader thread to this one.
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  absl::Mutex mu;
  std::deque<pb::ExecInstanceResponse> answers;
  bool ended = false;
  const auto nudge = [wake] {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake, &one, sizeof one);
  };
  std::thread reader([&] {
    for (pb::ExecInstanceResponse r; stream->Read(&r);) {
      absl::MutexLock lock(&mu);
      answers.push_back(std::move(r));
      nudge();
    }
    absl::MutexLock lock(&mu);
    ended = true;
    nudge();
  });

  http::WsParser parser(kMaxMessage);
  bool half_closed = false;  // the stream's: after the exit status
  bool stream_over = false;
  int unanswered_pings = 0;
  absl::Time next_ping = absl::Now() + options_.ping_interval;
  std::vector<char> buf(16 << 10);
  for (bool open = true; open;) {
    pollfd fds[2] = {{connection.fd(), POLLIN, 0}, {wake, POLLIN, 0}};
    if (!connection.Buffered()) {
      const int64_t wait = absl::ToInt64Milliseconds(next_ping - absl::Now());
      poll(fds, 2, static_cast<int>(std::clamp<int64_t>(wait, 0, 60000)));
    }
    if (connection.Buffered() || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const size_t n = connection.Read(buf.data(), buf.size());
      if (n == 0) break;  // the browser left
      absl::StatusOr<std::vector<http::WsMessage>> messages =
          parser.Feed(std::string_view(buf.data(), n));
      if (!messages.ok()) {
        const absl::string_view why = messages.status().message();
        send(WsOpcode::kClose, CloseBody(absl::IsResourceExhausted(messages.status()) ? 1009 : 1002,
                                         std::string_view(why.data(), why.size())));
        break;
      }
      for (http::WsMessage& m : *messages) {
        pb::ExecInstanceRequest up;
        if (m.opcode == WsOpcode::kBinary) {
          up.set_stdin(std::move(m.payload));
        } else if (m.opcode == WsOpcode::kText) {
          const nlohmann::json j = nlohmann::json::parse(m.payload, nullptr, false);
          if (j.is_object() && j.contains("resize") && j["resize"].is_object()) {
            up.mutable_resize()->set_rows(j["resize"].value("rows", 0));
            up.mutable_resize()->set_cols(j["resize"].value("cols", 0));
          }
        } else if (m.opcode == WsOpcode::kPing) {
          send(WsOpcode::kPong, m.payload);
        } else if (m.opcode == WsOpcode::kPong) {
          unanswered_pings = 0;
        } else if (m.opcode == WsOpcode::kClose) {
          send(WsOpcode::kClose, m.payload.substr(0, 2));
          open = false;
        }
        if (up.kind_case() != pb::ExecInstanceRequest::KIND_NOT_SET && !half_closed)
          stream->Write(up);
      }
    }
    std::deque<pb::ExecInstanceResponse> ready;
    {
      uint64_t drained = 0;
      [[maybe_unused]] ssize_t n = read(wake, &drained, sizeof drained);
      absl::MutexLock lock(&mu);
      ready.swap(answers);
      stream_over = ended;
    }
    for (const pb::ExecInstanceResponse& r : ready) {
      if (r.kind_case() == pb::ExecInstanceResponse::kExitCode || r.aborted()) {
        // Aborted: the stream's error follows, once half-closed.
        if (!r.aborted()) {
          send(WsOpcode::kText, nlohmann::json{{"exit_code", r.exit_code()}}.dump());
        }
        if (!half_closed) stream->WritesDone();
        half_closed = true;
      } else if (!send(WsOpcode::kBinary, r.stdout() + r.stderr())) {
        open = false;
      }
    }
    if (stream_over) break;
    if (absl::Now() >= next_ping) {
      if (unanswered_pings >= 2) break;
      send(WsOpcode::kPing, "");
      ++unanswered_pings;
      next_ping = absl::Now() + options_.ping_interval;
    }
  }
  if (!stream_over) ctx.TryCancel();  // the browser left first: the shell is hung up
  reader.join();
  const grpc::Status status = stream->Finish();
  close(wake);
  if (stream_over) {
    if (!status.ok()) {
      send(WsOpcode::kText, nlohmann::json{{"error", status.error_message()},
                                           {"code", static_cast<int>(status.error_code())}}
                                .dump());
    }
    send(WsOpcode::kClose, CloseBody(1000, ""));
  }
}

}  // namespace gpuaas::gateway
