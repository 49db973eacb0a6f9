#include "services/agent/runtime/shim_files.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace gpuaas::agent {

void ShimFiles::WriteAtomically(const std::string& name, const std::string& text) const {
  const std::string path = dir_ + "/" + name;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());
}

std::optional<uint64_t> ShimFiles::StartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  // Fields 3..21 precede the start time (22).
  for (int i = 3; i <= 21; ++i) fields >> field;
  uint64_t start = 0;
  if (!(fields >> start)) return std::nullopt;
  return start;
}

void ShimFiles::WriteShim(pid_t pid) const {
  std::optional<uint64_t> start = StartTime(pid);
  WriteAtomically("shim", std::to_string(pid) + " " + std::to_string(start.value_or(0)) + "\n");
}

std::optional<pid_t> ShimFiles::LiveShim() const {
  std::ifstream in(dir_ + "/shim");
  pid_t pid = 0;
  uint64_t start = 0;
  if (!(in >> pid >> start) || pid <= 0) return std::nullopt;
  std::optional<uint64_t> now = StartTime(pid);
  if (!now || *now != start) return std::nullopt;
  // A zombie (exited, not reaped yet by the agent that started it) runs no more.
  std::ifstream status("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(status)), {});
  const size_t close = text.rfind(')');
  if (close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z') {
    return std::nullopt;
  }
  return pid;
}

void ShimFiles::MarkStopping() const { WriteAtomically("stopping", "1\n"); }

bool ShimFiles::Stopping() const { return access((dir_ + "/stopping").c_str(), F_OK) == 0; }

void ShimFiles::WriteExit(int code, bool stopped, bool oom_killed) const {
  WriteAtomically("exit", std::to_string(code) + " " + (stopped ? "1" : "0") + " " +
                              (oom_killed ? "1" : "0") + "\n");
}

std::optional<WorkloadExit> ShimFiles::ReadExit() const {
  std::ifstream in(dir_ + "/exit");
  WorkloadExit e;
  int stopped = 0;
  if (!(in >> e.code >> stopped)) return std::nullopt;
  e.stopped = stopped != 0;
  int oom = 0;
  if (in >> oom) e.oom_killed = oom != 0;  // absent in files of older shims
  return e;
}

}  // namespace gpuaas::agent
