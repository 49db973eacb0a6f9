#include "tools/gpuaasctl/secret_input.h"

#include <termios.h>
#include <unistd.h>

#include <iostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "libs/common/files.h"

namespace gpuaas::ctl {
namespace {

// Turns terminal echo off for its lifetime and restores the previous mode, even on early return.
class EchoOff final {
 public:
  EchoOff() {
    if (::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios quiet = saved_;
      quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
      active_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
    }
  }
  ~EchoOff() {
    if (active_) {
      ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
    }
  }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;

 private:
  termios saved_{};
  bool active_ = false;
};

}  // namespace

absl::StatusOr<std::string> FirstLine(std::istream& in, std::string_view what) {
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
    line.pop_back();
  }
  if (line.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(what), " is empty"));
  }
  return line;
}

absl::StatusOr<std::string> ReadSecret(std::string_view prompt, const std::string& value,
                                       const std::string& file) {
  if (!value.empty()) {
    return value;
  }
  if (!file.empty()) {
    return ReadSecretFile(file);
  }
  if (::isatty(STDIN_FILENO) == 1) {
    std::cerr << prompt << ": " << std::flush;
    absl::StatusOr<std::string> line;
    {
      EchoOff quiet;
      line = FirstLine(std::cin, prompt);
    }
    std::cerr << "\n";
    return line;
  }
  return FirstLine(std::cin, prompt);
}

}  // namespace gpuaas::ctl
