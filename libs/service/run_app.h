// What every service's main.cc does once its flags are parsed: build the service's app (its
// services/<svc>/app.h), log why it could not be built, and serve until a signal.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "libs/common/logging.h"

namespace gpuaas::service {

// `s` with "`what`: " before its message and its code kept (a failure at start-up).
inline absl::Status StartupError(std::string_view what, const absl::Status& s) {
  return absl::Status(s.code(), std::string(what) + ": " + std::string(s.message()));
}
// `s` as bad configuration: INVALID_ARGUMENT, "`flag`: " before its message (exit code 2).
inline absl::Status ConfigError(std::string_view flag, const absl::Status& s) {
  return absl::InvalidArgumentError(std::string(flag) + ": " + std::string(s.message()));
}

// `App` has `static constexpr ServiceIdentity kIdentity`, `static StatusOr<unique_ptr<App>>
// Create(const Options&)` and `int Run()`. Returns the process's exit code: 2 when Create
// says the configuration is wrong (INVALID_ARGUMENT), 1 when anything else kept it from
// starting, else Run()'s. Blocks until a signal has stopped the app.
template <typename App, typename Options>
int RunApp(const Options& options) {
  absl::StatusOr<std::unique_ptr<App>> app = App::Create(options);
  if (!app.ok()) {
    Logger(std::string(App::kIdentity.name))->critical("{}", app.status().ToString());
    return app.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return (*app)->Run();
}

}  // namespace gpuaas::service
