#include "services/agent/images/internal/run_child.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::agent {
namespace {

constexpr size_t kMaxStderr = 64 << 10;

}  // namespace

absl::StatusOr<ChildResult> RunChild(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env,
                                     const std::string& stdout_path) {
  std::array<int, 2> pipe_fds;
  if (::pipe2(pipe_fds.data(), O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
  }
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& var : env) {
    envp.push_back(const_cast<char*>(var.c_str()));
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (spawned != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", argv[0], ": ", strerror(spawned)));
  }
  ChildResult child;
  std::array<char, 4096> buffer;
  ssize_t n;
  while ((n = ::read(read_end.get(), buffer.data(), buffer.size())) > 0 ||
         (n < 0 && errno == EINTR)) {
    if (n > 0) {
      child.stderr_text.append(buffer.data(), static_cast<size_t>(n));
      // A child that writes without end costs the agent no memory: the last lines tell why.
      if (child.stderr_text.size() > kMaxStderr) {
        child.stderr_text.erase(0, child.stderr_text.size() - kMaxStderr);
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  child.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return child;
}

}  // namespace gpuaas::agent
