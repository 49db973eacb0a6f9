// A command run inside a running container (`runc exec`): what a tenant's terminal and
// `gpuaasctl instances exec` reach. runc joins the container's namespaces and cgroup and takes
// the container's own process settings (its user, capabilities, seccomp, rlimits,
// no_new_privileges, working directory and environment) from the bundle, so a command run this
// way can do exactly what the workload can, never more.
//
// runc 1.1 joins a container's namespaces user namespace first, so `runc exec` cannot join our
// containers' network namespaces, which belong to the node's user namespace (workload_network.h:
// so that the container has no power over its own network). runc 1.2 tries the others first.
// Until then, each session runs runc from a copy of the container's state without the network
// namespace, in a process that joined that namespace beforehand (as root on the node, which
// may): the command inherits it, and joins all else as runc does.
//
// With a terminal, the agent makes a pty pair and runs runc on its slave as the session's
// controlling terminal: runc makes the container's own pty, puts ours in raw mode and copies
// between the two, so what the caller sends reaches the command byte for byte, and a size set
// on our master reaches runc as SIGWINCH, which it applies inside. Without one, three pipes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::agent {

struct ExecCommand {
  std::string runc_path = "/usr/sbin/runc";
  std::string runc_root;     // RuncRoot(runtime root)
  std::string container_id;  // the workload id
  std::vector<std::string> argv;
  bool tty = false;
  unsigned short rows = 24;  // with tty
  unsigned short cols = 80;
  // A directory of this session's own (made 0700, removed with the process): the state copy, and
  // the command's pid (as the node sees it), so an abandoned session can end the command itself
  // (ending runc alone would leave it running in the container).
  std::string scratch_dir;
};

// One running `runc exec`. Owns its descriptors; the destructor ends the command (SIGKILL)
// and reaps runc if the caller did not wait for it.
class ExecProcess final {
 public:
  ExecProcess(pid_t runc, int input, int output, int errors, std::string scratch_dir)
      : runc_(runc),
        input_(input),
        output_(output),
        errors_(errors),
        scratch_dir_(std::move(scratch_dir)) {}
  ~ExecProcess();
  ExecProcess(const ExecProcess&) = delete;
  ExecProcess& operator=(const ExecProcess&) = delete;

  // Non-blocking descriptors: the command's input (the pty master with a tty), its output
  // (the same master), its errors (-1 with a tty). Poll them; EOF or EIO is the end.
  int input() const { return input_; }
  int output() const { return output_; }
  int errors() const { return errors_; }

  // Sets the terminal's size (with a tty). Errors: INTERNAL from ioctl.
  absl::Status Resize(unsigned short rows, unsigned short cols);
  // runc starts the command, then writes its pid file, then sets the terminal's size: input sent
  // before that lands in a 0×0 terminal (`stty size`, a full-screen program). Waits until the
  // pid file is there (a little after, for the size), the command exited, or `timeout` passed.
  // Blocks.
  void WaitUntilSized(absl::Duration timeout = absl::Seconds(5));
  // The command's input ends: the pipe closes, or with a tty ^D (EOF at a line's start).
  void CloseInput();
  // The caller went away: SIGHUP to the command, as a terminal that closed sends; still running
  // after `grace`, it is killed. Blocks up to `grace`; Wait reaps.
  void End(absl::Duration grace = absl::Seconds(3));
  // Whether runc has ended (reaping it if so). Never blocks.
  bool Exited();
  // Reaps runc and returns the command's exit status (runc passes it on; 128 + N for signal
  // N). Blocks until runc ends.
  int Wait();

 private:
  void KillCommand(int signal);

  pid_t runc_;
  int input_;
  int output_;
  int errors_;
  std::string scratch_dir_;
  bool reaped_ = false;
  int exit_status_ = 0;
};

// Starts the command. Errors: INVALID_ARGUMENT for an empty argv; FAILED_PRECONDITION when the
// container has no state (not running); INTERNAL when files, pipes, a pty or the fork fail. runc's
// own refusal (a container that is not running) shows as its message on the command's errors and a
// non-zero exit, as a shell's would. Blocks for the fork.
absl::StatusOr<std::unique_ptr<ExecProcess>> StartExec(const ExecCommand& command);

}  // namespace gpuaas::agent
