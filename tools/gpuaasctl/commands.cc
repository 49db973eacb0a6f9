#include "tools/gpuaasctl/commands.h"

#include "libs/common/ids.h"
#include "tools/gpuaasctl/roles.h"

namespace gpuaas::ctl {

void OnRun(CLI::App* sub, Context& ctx, std::function<absl::Status(Session&)> fn) {
  sub->callback([&ctx, fn = std::move(fn)] {
    ctx.set_action([&ctx, fn] {
      absl::StatusOr<Session*> session = ctx.session();
      if (!session.ok()) {
        return session.status();
      }
      return fn(**session);
    });
  });
}

CLI::Option* AddRoleOption(CLI::App* sub, const std::string& name, std::string& value,
                           const std::string& help) {
  return sub->add_option(name, value,
                         help + " (tenant-admin|member|viewer|platform-admin|service)");
}

absl::Status ParseRoleInto(const std::string& name, common::v1::Role& role) {
  if (name.empty()) {
    return absl::OkStatus();
  }
  absl::StatusOr<Role> r = ParseRole(name);
  if (!r.ok()) {
    return r.status();
  }
  role = *r;
  return absl::OkStatus();
}

std::string RequestIdOrNew(const std::string& given) {
  return given.empty() ? NewId("req_") : given;
}

void AddPageFlags(CLI::App* sub, PageFlags& flags) {
  sub->add_option("--page-size", flags.page_size, "results per page (server default 50)")
      ->check(CLI::Range(0, 500));
  sub->add_option("--page-token", flags.page_token, "continue from this page token");
  sub->add_flag("--all", flags.all, "fetch every page");
}

}  // namespace gpuaas::ctl
