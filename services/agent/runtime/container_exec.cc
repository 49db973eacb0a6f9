#include "services/agent/runtime/container_exec.h"

#include <fcntl.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/common/status_macros.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;

absl::Status ExecError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int ExitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

constexpr char kPidFile[] = "/pid";

// The container's state with its network namespace left out, in `scratch_dir`/<id>, for runc to
// exec from; returns that namespace's path ("" when the container has none of its own).
absl::StatusOr<std::string> CopyStateWithoutNetwork(const ExecCommand& command) {
  const fs::path from = fs::path(command.runc_root) / command.container_id / "state.json";
  std::ifstream in(from);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("container ", command.container_id, " is not running"));
  }
  nlohmann::json state = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (state.is_discarded() || !state.contains("config") ||
      !state["config"].contains("namespaces") || !state["config"]["namespaces"].is_array()) {
    return absl::InternalError(absl::StrCat("unreadable runc state ", from.string()));
  }
  std::string netns;
  nlohmann::json kept = nlohmann::json::array();
  for (const nlohmann::json& ns : state["config"]["namespaces"]) {
    if (ns.value("type", "") == "NEWNET" && !ns.value("path", "").empty()) {
      netns = ns.value("path", "");
    } else {
      kept.push_back(ns);
    }
  }
  state["config"]["namespaces"] = std::move(kept);
  const fs::path dir = fs::path(command.scratch_dir) / command.container_id;
  std::error_code ec;
  fs::create_directories(dir, ec);
  chmod(command.scratch_dir.c_str(), 0700);
  std::ofstream out(dir / "state.json", std::ios::trunc);
  out << state.dump();
  if (!out) return absl::InternalError("cannot write the exec state");
  return netns;
}

// The child's half: the container's network namespace joined, its descriptors in place, then
// runc. Only async-signal-safe calls.
[[noreturn]] void ExecRunc(char* const* argv, char* const* envp, int in, int out, int err, bool tty,
                           int netns) {
  if (netns >= 0 && setns(netns, CLONE_NEWNET) != 0) _exit(126);
  if (tty) {
    setsid();  // the pty's session leader, so a size change reaches runc as SIGWINCH
    ioctl(in, TIOCSCTTY, 0);
  }
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  close_range(3, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(argv[0], argv, envp);
  _exit(127);
}

}  // namespace

ExecProcess::~ExecProcess() {
  if (!reaped_ && runc_ > 0) {
    KillCommand(SIGKILL);
    kill(runc_, SIGKILL);
    waitpid(runc_, nullptr, 0);
  }
  if (input_ >= 0 && input_ != output_) close(input_);
  if (output_ >= 0) close(output_);
  if (errors_ >= 0) close(errors_);
  std::error_code ec;
  if (!scratch_dir_.empty()) fs::remove_all(scratch_dir_, ec);
}

absl::Status ExecProcess::Resize(unsigned short rows, unsigned short cols) {
  struct winsize size = {.ws_row = rows, .ws_col = cols, .ws_xpixel = 0, .ws_ypixel = 0};
  if (ioctl(output_, TIOCSWINSZ, &size) != 0) return ExecError("resize");
  return absl::OkStatus();
}

void ExecProcess::WaitUntilSized(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (access((scratch_dir_ + kPidFile).c_str(), F_OK) != 0 && absl::Now() < deadline) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(runc_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid == runc_) {
      return;  // ended (or reaped already)
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  // runc sizes the terminal right after it wrote the file.
  absl::SleepFor(absl::Milliseconds(50));
}

void ExecProcess::CloseInput() {
  if (errors_ < 0) {
    // The pty stays (it is also the output); the line discipline is raw on runc's side, so the
    // ^D reaches the container's own terminal, whose canonical mode turns it into EOF.
    const char eot = 4;
    [[maybe_unused]] ssize_t n = write(input_, &eot, 1);
    return;
  }
  if (input_ >= 0) {
    close(input_);
    input_ = -1;
  }
}

void ExecProcess::KillCommand(int signal) {
  pid_t pid = 0;
  std::ifstream(scratch_dir_ + kPidFile) >> pid;
  if (pid > 1) kill(pid, signal);
}

void ExecProcess::End(absl::Duration grace) {
  if (reaped_) return;
  KillCommand(SIGHUP);
  kill(runc_, SIGHUP);  // runc passes it on too, should the pid file not be written yet
  const absl::Time deadline = absl::Now() + grace;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(runc_, &status, WNOHANG) == runc_) {
      reaped_ = true;
      exit_status_ = ExitStatus(status);
      return;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  KillCommand(SIGKILL);
  kill(runc_, SIGKILL);
}

bool ExecProcess::Exited() {
  int status = 0;
  if (!reaped_ && waitpid(runc_, &status, WNOHANG) == runc_) {
    reaped_ = true;
    exit_status_ = ExitStatus(status);
  }
  return reaped_;
}

int ExecProcess::Wait() {
  if (reaped_) return exit_status_;
  int status = 0;
  while (waitpid(runc_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  exit_status_ = ExitStatus(status);
  return exit_status_;
}

absl::StatusOr<std::unique_ptr<ExecProcess>> StartExec(const ExecCommand& command) {
  if (command.argv.empty()) return absl::InvalidArgumentError("command: empty");
  GPUAAS_ASSIGN_OR_RETURN(const std::string netns_path, CopyStateWithoutNetwork(command));
  // Whatever fails from here on, the scratch directory goes.
  struct ScratchGuard {
    std::string dir;
    ~ScratchGuard() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } cleanup{command.scratch_dir};
  std::vector<std::string> args = {command.runc_path,   "--root",
                                   command.scratch_dir, "exec",
                                   "--pid-file",        command.scratch_dir + kPidFile};
  if (command.tty) {
    args.push_back("--tty");
    args.push_back("--env");
    args.push_back("TERM=xterm-256color");
  }
  args.push_back(command.container_id);
  args.insert(args.end(), command.argv.begin(), command.argv.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path.data(), nullptr};
  const int netns = netns_path.empty() ? -1 : open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (!netns_path.empty() && netns < 0) return ExecError("open the network namespace");
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) close(fd);
    }
  } netns_fd{netns};

  if (command.tty) {
    int master = -1;
    int slave = -1;
    struct winsize size = {
        .ws_row = command.rows, .ws_col = command.cols, .ws_xpixel = 0, .ws_ypixel = 0};
    if (openpty(&master, &slave, nullptr, nullptr, &size) != 0) return ExecError("openpty");
    fcntl(master, F_SETFD, FD_CLOEXEC);
    const pid_t pid = fork();
    if (pid < 0) {
      close(master);
      close(slave);
      return ExecError("fork");
    }
    if (pid == 0) ExecRunc(argv.data(), envp, slave, slave, slave, true, netns);
    close(slave);
    SetNonBlocking(master);
    cleanup.dir.clear();
    return std::make_unique<ExecProcess>(pid, master, master, -1, command.scratch_dir);
  }
  int in[2];
  int out[2];
  int err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ExecError("pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return ExecError("pipe");
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return ExecError("pipe");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    return ExecError("fork");
  }
  if (pid == 0) ExecRunc(argv.data(), envp, in[0], out[1], err[1], false, netns);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  for (int fd : {in[1], out[0], err[0]}) SetNonBlocking(fd);
  cleanup.dir.clear();
  return std::make_unique<ExecProcess>(pid, in[1], out[0], err[0], command.scratch_dir);
}

}  // namespace gpuaas::agent
