#include "libs/service/env_options.h"

namespace gpuaas::service {

CLI::Option* EnvOptions::Add(const std::string& names, absl::Duration& value,
                             const std::string& description, bool allow_zero) {
  const std::string flag = names.substr(0, names.find(','));
  return app_
      .add_option_function<std::string>(
          names,
          [&value, flag, allow_zero](const std::string& text) {
            absl::StatusOr<absl::Duration> d = ParseDurationFlag(flag, text, allow_zero);
            if (!d.ok()) {
              throw CLI::ParseError(std::string(d.status().message()), 2);
            }
            value = *d;
          },
          description)
      ->type_name("DURATION")
      ->default_str(absl::FormatDuration(value))
      ->envname(FlagEnvName(process_, names));
}

}  // namespace gpuaas::service
