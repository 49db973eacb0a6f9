#include "libs/common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <string>

namespace gpuaas {

std::shared_ptr<spdlog::logger> Logger(std::string_view component) {
  std::string name(component);
  if (auto existing = spdlog::get(name)) {
    return existing;
  }
  try {
    auto logger = spdlog::stderr_color_mt(name);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%L%$ [%n] %v");
    logger->set_level(spdlog::get_level());
    return logger;
  } catch (const spdlog::spdlog_ex&) {
    // Another thread registered the same name first.
    return spdlog::get(name);
  }
}

void SetLogLevel(std::string_view level) {
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

}  // namespace gpuaas
