#include "services/agent/workload_sessions.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "libs/authz/node_calls.h"
#include "libs/common/ids.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/status.h"
#include "services/agent/runtime/container_exec.h"
#include "services/agent/runtime/container_launch.h"
#include "services/agent/runtime/netns_dial.h"
#include "services/agent/runtime/workload_network.h"
#include "services/agent/workload_dir.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;

constexpr size_t kSessionChunk = 32 << 10;
constexpr int kSessionPollMillis = 200;
// How long a session whose command ended waits for its caller's half-close before it ends the
// call itself (a caller that never half-closes must not hold two threads).
constexpr absl::Duration kCloseWait = absl::Seconds(10);

// A session's caller went away, or it ended: whatever still runs for it stops.
class Ending final {
 public:
  explicit Ending(grpc::ServerContext& ctx) : ctx_(ctx) {}
  bool now() const { return flag_.load() || ctx_.IsCancelled(); }
  void Set() { flag_ = true; }

 private:
  grpc::ServerContext& ctx_;
  std::atomic<bool> flag_{false};
};

// Writes all of `data` to the non-blocking `fd`, waiting while it is full. False once the fd
// refuses (closed, or the reader is gone) or the session ends.
bool WriteAll(int fd, std::string_view data, const Ending& ending) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    pollfd p = {.fd = fd, .events = POLLOUT, .revents = 0};
    poll(&p, 1, kSessionPollMillis);
    if (ending.now()) return false;
  }
  return true;
}

// Reads what `fd` has now: its bytes, "" at EOF or error (EIO: the pty's other side closed),
// nullopt when nothing is there yet.
std::optional<std::string> ReadSome(int fd) {
  std::string buf(kSessionChunk, '\0');
  const ssize_t n = read(fd, buf.data(), buf.size());
  if (n > 0) {
    buf.resize(static_cast<size_t>(n));
    return buf;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return std::nullopt;
  return std::string();
}

// Sends the command's output until both its streams ended or the command exited (what a
// background process it left keeps open is not waited for), draining what is already there.
template <class Writer>
void RelayOutput(ExecProcess& proc, Writer& out, Ending& ending) {
  struct Stream {
    int fd;
    bool errors;
  };
  std::vector<Stream> open;
  if (proc.output() >= 0) open.push_back({proc.output(), false});
  if (proc.errors() >= 0) open.push_back({proc.errors(), true});
  bool exited = false;
  while (!open.empty() && !ending.now()) {
    std::vector<pollfd> fds;
    for (const Stream& s : open) fds.push_back({.fd = s.fd, .events = POLLIN, .revents = 0});
    if (!exited) poll(fds.data(), fds.size(), kSessionPollMillis);
    for (size_t i = open.size(); i-- > 0;) {
      std::optional<std::string> got = ReadSome(open[i].fd);
      while (got.has_value() && !got->empty()) {
        pb::ExecWorkloadResponse w;
        pb::ExecInstanceResponse& r = *w.mutable_response();
        open[i].errors ? r.set_stderr(*std::move(got)) : r.set_stdout(*std::move(got));
        if (!out.Write(w)) {
          ending.Set();
          return;
        }
        got = ReadSome(open[i].fd);
      }
      if (got.has_value() || exited) open.erase(open.begin() + static_cast<long>(i));
    }
    exited = exited || proc.Exited();
  }
}

// The bytes of the connection `fd` until the workload closes it or the session ends.
template <class Writer>
void RelayConnection(int fd, Writer& out, Ending& ending) {
  while (!ending.now()) {
    pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, kSessionPollMillis) <= 0) continue;
    std::optional<std::string> got = ReadSome(fd);
    if (!got.has_value()) continue;
    pb::ForwardWorkloadPortResponse w;
    pb::ForwardInstancePortResponse& r = *w.mutable_response();
    if (got->empty()) {
      r.set_closed(true);
      out.Write(w);
      return;
    }
    r.set_data(*std::move(got));
    if (!out.Write(w)) {
      ending.Set();
      return;
    }
  }
}

bool ValidCommand(const pb::ExecStart& start) {
  if (start.command().empty()) return false;
  for (const std::string& arg : start.command()) {
    if (arg.find('\0') != std::string::npos) return false;
  }
  return true;
}

}  // namespace

WorkloadSessionServiceImpl::WorkloadSessionServiceImpl(WorkloadSessionsOptions options,
                                                       rpc::Handler& handler)
    : options_(std::move(options)),
      handler_(handler),
      sessions_(options_.max_sessions, options_.max_sessions_per_instance, "sessions", "instance") {
  // What sessions of an agent that stopped left (they did not outlive it).
  std::error_code ec;
  std::filesystem::remove_all(options_.root + "/.exec", ec);
}

absl::StatusOr<SlotLimiter::Slot> WorkloadSessionServiceImpl::Admit(
    grpc::ServerContext& ctx, std::string_view purpose, const std::string& workload_id) {
  GPUAAS_ASSIGN_OR_RETURN(authz::Principal p, handler_.AuthenticateBlocking(ctx));
  GPUAAS_RETURN_IF_ERROR(authz::RequireAgentCall(p, options_.node_id, purpose));
  const std::string dir = options_.root + "/" + workload_id;
  struct stat st;
  if (!PlainWorkloadId(workload_id) || lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat("workload ", workload_id, " not found"));
  }
  if (access((dir + "/container").c_str(), F_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", workload_id, " is not a container"));
  }
  if (!options_.running(workload_id)) {
    return absl::FailedPreconditionError(absl::StrCat("workload ", workload_id, " is not running"));
  }
  return sessions_.Acquire(InstanceOfWorkload(workload_id));
}

grpc::Status WorkloadSessionServiceImpl::ExecWorkload(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<pb::ExecWorkloadResponse, pb::ExecWorkloadRequest>* stream) {
  pb::ExecWorkloadRequest first;
  if (!stream->Read(&first)) return grpc::Status(grpc::StatusCode::CANCELLED, "no request");
  if (!first.request().has_start()) {
    return rpc::ToGrpcStatus(
        absl::InvalidArgumentError("request.start: the first request must be start"));
  }
  const pb::ExecStart& start = first.request().start();
  if (!ValidCommand(start)) {
    return rpc::ToGrpcStatus(absl::InvalidArgumentError("start.command: empty, or holds NUL"));
  }
  absl::StatusOr<SlotLimiter::Slot> slot =
      Admit(*ctx, authz::kPurposeExecWorkload, first.workload_id());
  if (!slot.ok()) return rpc::ToGrpcStatus(slot.status());
  ExecCommand command{
      .runc_path = options_.runc_path,
      .runc_root = RuncRoot(options_.root),
      .container_id = first.workload_id(),
      .argv = {start.command().begin(), start.command().end()},
      .tty = start.tty(),
      .rows = static_cast<unsigned short>(start.size().rows() > 0 ? start.size().rows() : 24),
      .cols = static_cast<unsigned short>(start.size().cols() > 0 ? start.size().cols() : 80),
      .scratch_dir = absl::StrCat(options_.root, "/.exec/", NewId("exec-"))};
  absl::StatusOr<std::unique_ptr<ExecProcess>> proc = StartExec(command);
  if (!proc.ok()) return rpc::ToGrpcStatus(proc.status());

  Ending ending(*ctx);
  absl::Notification reads_done;
  std::thread pump([&] {
    RelayOutput(**proc, *stream, ending);
    if (ending.now()) (*proc)->End();
    const int code = (*proc)->Wait();
    if (!ending.now()) {
      pb::ExecWorkloadResponse w;
      w.mutable_response()->set_exit_code(code);
      stream->Write(w);
    }
    if (!reads_done.WaitForNotificationWithTimeout(kCloseWait)) ctx->TryCancel();
  });
  if (start.tty()) (*proc)->WaitUntilSized();
  pb::ExecWorkloadRequest next;
  while (stream->Read(&next)) {
    const pb::ExecInstanceRequest& req = next.request();
    if (req.has_resize()) {
      (*proc)
          ->Resize(static_cast<unsigned short>(req.resize().rows()),
                   static_cast<unsigned short>(req.resize().cols()))
          .IgnoreError();
    } else if (req.kind_case() == pb::ExecInstanceRequest::kStdin) {
      WriteAll((*proc)->input(), req.stdin(), ending);
    } else if (req.kind_case() == pb::ExecInstanceRequest::kCloseStdin) {
      (*proc)->CloseInput();
    }
  }
  // A half-close is the end of the caller's input; a cancel, of the caller.
  if (ctx->IsCancelled()) {
    ending.Set();
  } else if (!start.tty()) {
    (*proc)->CloseInput();
  }
  reads_done.Notify();
  pump.join();
  return grpc::Status::OK;
}

grpc::Status WorkloadSessionServiceImpl::ForwardWorkloadPort(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<pb::ForwardWorkloadPortResponse, pb::ForwardWorkloadPortRequest>*
        stream) {
  pb::ForwardWorkloadPortRequest first;
  if (!stream->Read(&first)) return grpc::Status(grpc::StatusCode::CANCELLED, "no request");
  if (!first.request().has_start()) {
    return rpc::ToGrpcStatus(
        absl::InvalidArgumentError("request.start: the first request must be start"));
  }
  const pb::PortForwardStart& start = first.request().start();
  if (start.port() < 1 || start.port() > 65535) {
    return rpc::ToGrpcStatus(absl::InvalidArgumentError("start.port: must be 1 to 65535"));
  }
  absl::StatusOr<SlotLimiter::Slot> slot =
      Admit(*ctx, authz::kPurposeForwardWorkloadPort, first.workload_id());
  if (!slot.ok()) return rpc::ToGrpcStatus(slot.status());
  absl::StatusOr<int> fd =
      DialInNamespace(NetnsPath(options_.root + "/" + first.workload_id()), start.port());
  if (!fd.ok()) return rpc::ToGrpcStatus(fd.status());
  fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) | O_NONBLOCK);

  Ending ending(*ctx);
  std::thread pump([&] { RelayConnection(*fd, *stream, ending); });
  pb::ForwardWorkloadPortRequest next;
  while (stream->Read(&next)) {
    const pb::ForwardInstancePortRequest& req = next.request();
    if (req.kind_case() == pb::ForwardInstancePortRequest::kData &&
        !WriteAll(*fd, req.data(), ending)) {
      break;
    }
  }
  if (ctx->IsCancelled()) {
    ending.Set();
  } else {
    shutdown(*fd, SHUT_WR);  // the caller's half-close, passed on
  }
  pump.join();
  close(*fd);
  return grpc::Status::OK;
}

}  // namespace gpuaas::agent
