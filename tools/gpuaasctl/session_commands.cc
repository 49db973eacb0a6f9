// instances exec ID [-t|-T] -- COMMAND...: a command inside the instance, with a terminal when
// ours is one (raw mode, resizes passed on), its exit status as ours.
// instances port-forward ID [ADDRESS:]LOCAL:REMOTE: like `kubectl port-forward`, a local port
// whose every connection reaches REMOTE on the instance's loopback.
// instances tunnel ID PORT: one such connection on stdin and stdout, for
// `ssh -o ProxyCommand='gpuaasctl instances tunnel %h 22'`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/rpc/status.h"
#include "tools/gpuaasctl/commands.h"

namespace gpuaas::ctl {
namespace {

namespace instancepb = ::gpuaas::instance::v1;

constexpr size_t kChunk = 32 << 10;
constexpr int kPollMillis = 200;

std::atomic<bool> window_changed{false};
void OnWindowChange(int) { window_changed = true; }

// Our terminal in raw mode for as long as this lives (what the remote terminal gets is every
// key, ^C included), restored whatever happens.
class RawTerminal final {
 public:
  RawTerminal() {
    if (tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

instancepb::TerminalSize OurSize() {
  instancepb::TerminalSize size;
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
    size.set_rows(ws.ws_row);
    size.set_cols(ws.ws_col);
  }
  return size;
}

// Reads what `fd` has within a poll interval: bytes, "" at EOF, nullopt for nothing yet.
std::optional<std::string> ReadSome(int fd) {
  pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, kPollMillis) <= 0) return std::nullopt;
  std::string buf(kChunk, '\0');
  const ssize_t n = read(fd, buf.data(), buf.size());
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return std::nullopt;
  buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return buf;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

struct ExecFlags {
  std::string instance_id;
  std::vector<std::string> command;
  bool tty = false;
  bool no_tty = false;
};

absl::StatusOr<int> Exec(Session& session, const ExecFlags& f) {
  const bool tty = !f.no_tty && (f.tty || (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)));
  GPUAAS_ASSIGN_OR_RETURN(client::ExecCall call, session.OpenExec());
  instancepb::ExecInstanceRequest start;
  start.mutable_start()->set_instance_id(f.instance_id);
  for (const std::string& arg : f.command) start.mutable_start()->add_command(arg);
  start.mutable_start()->set_tty(tty);
  if (tty) *start.mutable_start()->mutable_size() = OurSize();
  call.stream->Write(start);

  std::optional<RawTerminal> raw;
  if (tty && isatty(STDIN_FILENO)) {
    raw.emplace();
    signal(SIGWINCH, OnWindowChange);
  }
  // Our input up, from a thread of its own (the only one that writes to the stream).
  std::atomic<bool> stop{false};
  std::thread input([&] {
    bool open = true;
    while (!stop) {
      if (window_changed.exchange(false)) {
        instancepb::ExecInstanceRequest r;
        *r.mutable_resize() = OurSize();
        call.stream->Write(r);
      }
      if (!open) {
        usleep(kPollMillis * 1000);
        continue;
      }
      std::optional<std::string> got = ReadSome(STDIN_FILENO);
      if (!got.has_value()) continue;
      instancepb::ExecInstanceRequest r;
      if (got->empty()) {
        r.set_close_stdin(true);
        open = false;
      } else {
        r.set_stdin(*std::move(got));
      }
      if (!call.stream->Write(r)) return;
    }
  });
  std::optional<int> exit_code;
  instancepb::ExecInstanceResponse resp;
  while (call.stream->Read(&resp)) {
    if (resp.kind_case() == instancepb::ExecInstanceResponse::kStdout) {
      WriteAll(STDOUT_FILENO, resp.stdout());
    } else if (resp.kind_case() == instancepb::ExecInstanceResponse::kStderr) {
      WriteAll(STDERR_FILENO, resp.stderr());
    } else if (resp.kind_case() == instancepb::ExecInstanceResponse::kExitCode ||
               resp.aborted()) {  // then Finish says why
      if (!resp.aborted()) exit_code = resp.exit_code();
      stop = true;
      input.join();
      call.stream->WritesDone();
    }
  }
  if (input.joinable()) {
    stop = true;
    input.join();
  }
  const absl::Status status = rpc::FromGrpcStatus(call.stream->Finish());
  raw.reset();
  if (!status.ok()) return NameTheService(status, "instance", session.instance_addr());
  if (!exit_code) return absl::UnavailableError("the session ended without an exit status");
  return *exit_code;
}

// One connection carried by a ForwardInstancePort stream: `in` up, the answers to `out`, until
// both sides closed. Returns the stream's end.
absl::Status Carry(client::PortForwardCall call, const std::string& instance_id, int port, int in,
                   int out, bool sockets) {
  instancepb::ForwardInstancePortRequest start;
  start.mutable_start()->set_instance_id(instance_id);
  start.mutable_start()->set_port(port);
  call.stream->Write(start);
  std::atomic<bool> stop{false};
  std::thread up([&] {
    while (!stop) {
      std::optional<std::string> got = ReadSome(in);
      if (!got.has_value()) continue;
      if (got->empty()) {
        call.stream->WritesDone();
        return;
      }
      instancepb::ForwardInstancePortRequest r;
      r.set_data(*std::move(got));
      if (!call.stream->Write(r)) return;
    }
  });
  instancepb::ForwardInstancePortResponse resp;
  while (call.stream->Read(&resp)) {
    if (!resp.data().empty() && !WriteAll(out, resp.data())) call.ctx->TryCancel();
    if (resp.closed()) sockets ? shutdown(out, SHUT_WR) : close(out);
  }
  stop = true;
  up.join();
  return rpc::FromGrpcStatus(call.stream->Finish());
}

struct ForwardFlags {
  std::string instance_id;
  std::string ports;  // [ADDRESS:]LOCAL:REMOTE
  int port = 0;       // tunnel
};

struct ForwardSpec {
  std::string address = "127.0.0.1";
  int local = 0;
  int remote = 0;
};

absl::StatusOr<ForwardSpec> ParsePorts(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  ForwardSpec spec;
  if (parts.size() == 3) spec.address = parts[0];
  if (parts.size() < 2 || parts.size() > 3 ||
      !absl::SimpleAtoi(parts[parts.size() - 2], &spec.local) ||
      !absl::SimpleAtoi(parts.back(), &spec.remote) || spec.local < 0 || spec.local > 65535 ||
      spec.remote < 1 || spec.remote > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("ports: \"", text, "\" is not [ADDRESS:]LOCAL:REMOTE (e.g. 2222:22)"));
  }
  return spec;
}

absl::Status PortForward(Session& session, const ForwardFlags& f) {
  GPUAAS_ASSIGN_OR_RETURN(ForwardSpec spec, ParsePorts(f.ports));
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<uint16_t>(spec.local));
  if (inet_pton(AF_INET, spec.address.c_str(), &at.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ports: \"", spec.address, "\" is not an IPv4 address"));
  }
  if (bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
      listen(listener, 64) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", spec.address, ":", spec.local, ": ", strerror(errno)));
  }
  socklen_t len = sizeof at;
  getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len);
  // The one line scripts wait for (the port chosen when LOCAL is 0).
  std::printf("Forwarding from %s:%d -> %d\n", spec.address.c_str(), ntohs(at.sin_port),
              spec.remote);
  std::fflush(stdout);
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    const int conn = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return absl::InternalError(absl::StrCat("accept: ", strerror(errno)));
    }
    setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // The session's token is read and refreshed on this thread only; each connection's stream
    // runs on a thread of its own.
    absl::StatusOr<client::PortForwardCall> call = session.OpenPortForward();
    if (!call.ok()) {
      close(conn);
      return call.status();
    }
    std::thread([call = *std::move(call), id = f.instance_id, remote = spec.remote,
                 address = session.instance_addr(), conn]() mutable {
      const absl::Status s =
          NameTheService(Carry(std::move(call), id, remote, conn, conn, true), "instance", address);
      if (!s.ok())
        std::fprintf(stderr, "connection to port %d: %s\n", remote, s.ToString().c_str());
      close(conn);
    }).detach();
  }
}

}  // namespace

void AddInstanceSessionCommands(CLI::App& root, Context& ctx) {
  CLI::App* group = root.get_subcommand("instances");
  auto e = std::make_shared<ExecFlags>();
  CLI::App* exec = group->add_subcommand(
      "exec",
      "run a command inside the instance (`-- bash` for a shell); with a terminal when this "
      "one is a terminal; exits with the command's status");
  exec->add_option("instance", e->instance_id, "instance id")->required();
  exec->add_option("command", e->command, "the command and its arguments (after --)")->required();
  exec->add_flag("-t,--tty", e->tty, "run it on a terminal even when stdin is not one");
  exec->add_flag("-T,--no-tty", e->no_tty, "never a terminal (separate stdout and stderr)");
  OnRun(exec, ctx, [e](Session& s) -> absl::Status {
    GPUAAS_ASSIGN_OR_RETURN(int code, Exec(s, *e));
    std::fflush(stdout);
    std::_Exit(code);  // the command's status is ours, as ssh and kubectl exec do
  });

  auto f = std::make_shared<ForwardFlags>();
  CLI::App* forward = group->add_subcommand(
      "port-forward",
      "listen on a local port (127.0.0.1 unless ADDRESS) and carry each connection to a port "
      "on the instance, e.g. 2222:22 for `ssh -p 2222 localhost`; until Ctrl-C");
  forward->add_option("instance", f->instance_id, "instance id")->required();
  forward->add_option("ports", f->ports, "[ADDRESS:]LOCAL:REMOTE (LOCAL 0 picks a free port)")
      ->required();
  OnRun(forward, ctx, [f](Session& s) { return PortForward(s, *f); });

  CLI::App* tunnel = group->add_subcommand(
      "tunnel",
      "carry stdin and stdout to a port on the instance: ssh -o ProxyCommand='gpuaasctl "
      "instances tunnel %h 22' user@INSTANCE");
  tunnel->add_option("instance", f->instance_id, "instance id")->required();
  tunnel->add_option("port", f->port, "the port on the instance")
      ->required()
      ->check(CLI::Range(1, 65535));
  OnRun(tunnel, ctx, [f](Session& s) {
    signal(SIGPIPE, SIG_IGN);
    GPUAAS_ASSIGN_OR_RETURN(client::PortForwardCall call, s.OpenPortForward());
    return NameTheService(
        Carry(std::move(call), f->instance_id, f->port, STDIN_FILENO, STDOUT_FILENO, false),
        "instance", s.instance_addr());
  });
}

}  // namespace gpuaas::ctl
