#include "libs/rpc/signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

namespace gpuaas::rpc {
namespace {

// Plain ints: the only state a signal handler may touch.
int g_signal_pipe_read = -1;
int g_signal_pipe_write = -1;

void OnTerminationSignal(int) {
  int saved_errno = errno;
  char byte = 1;
  // Nothing useful to do on failure (pipe full means a wake-up is already pending).
  [[maybe_unused]] ssize_t n = write(g_signal_pipe_write, &byte, 1);
  errno = saved_errno;
}

}  // namespace

int InstallTerminationSignalPipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      g_signal_pipe_read = fds[0];
      g_signal_pipe_write = fds[1];
    }
  });
  if (g_signal_pipe_read < 0) {
    return -1;
  }
  struct sigaction action {};
  action.sa_handler = OnTerminationSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  return g_signal_pipe_read;
}

void DrainSignalPipe(int fd) {
  char buf[64];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
}

}  // namespace gpuaas::rpc
