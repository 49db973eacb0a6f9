// State shared by every gpuaasctl command: the global flags, the session (built on first use, so
// `--help` and usage errors never dial the server), the output format, and the one action the
// parsed command line selected.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "libs/common/clock.h"
#include "tools/gpuaasctl/output.h"
#include "tools/gpuaasctl/session.h"

namespace gpuaas::ctl {

struct GlobalOptions {
  std::string auth_addr;      // empty = env, stack.env, default
  std::string stock_addr;     // the same order, GPUAAS_STOCK_ADDR
  std::string storage_addr;   // the same order, GPUAAS_STORAGE_ADDR
  std::string instance_addr;  // the same order, GPUAAS_INSTANCE_ADDR
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string output = "table";
  std::string timeout = "10s";
};

using Action = std::function<absl::Status()>;

class Context final {
 public:
  GlobalOptions& options() { return options_; }

  // Connects lazily. Errors: INVALID_ARGUMENT for bad flags, FAILED_PRECONDITION for no home.
  absl::StatusOr<Session*> session();

  absl::StatusOr<Format> format() const { return ParseFormat(options_.output); }

  // Prints `message` as JSON, or the text `table()` returns.
  absl::Status Print(const google::protobuf::Message& message,
                     const std::function<std::string()>& table);

  // Plain text for people; suppressed with -o json so stdout stays valid JSON.
  void Note(std::string_view text);

  void set_action(Action action) { action_ = std::move(action); }
  const Action& action() const { return action_; }

 private:
  GlobalOptions options_;
  SystemClock clock_;
  std::unique_ptr<Session> session_;
  Action action_;
};

}  // namespace gpuaas::ctl
