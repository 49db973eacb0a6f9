// The command groups of gpuaasctl, one file each, and the helpers they share.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "libs/common/status_macros.h"
#include "tools/gpuaasctl/context.h"
#include "tools/gpuaasctl/session.h"

namespace gpuaas::ctl {

void AddAuthCommands(CLI::App& root, Context& ctx);          // login, logout, whoami
void AddTenantCommands(CLI::App& root, Context& ctx);        // tenants ...
void AddUserCommands(CLI::App& root, Context& ctx);          // users ...
void AddMemberCommands(CLI::App& root, Context& ctx);        // members ...
void AddApiKeyCommands(CLI::App& root, Context& ctx);        // api-keys ...
void AddSpecCommands(CLI::App& root, Context& ctx);          // specs ...
void AddStockCommands(CLI::App& root, Context& ctx);         // stocks ...
void AddNodeCommands(CLI::App& root, Context& ctx);          // nodes ...
void AddStorageSpecCommands(CLI::App& root, Context& ctx);   // storage-specs ...
void AddStorageCommands(CLI::App& root, Context& ctx);       // storages ...
void AddAccessorCommands(CLI::App& root, Context& ctx);      // accessors ...
void AddSnapshotCommands(CLI::App& storages, Context& ctx);  // storages snapshots ...
void AddImageCommands(CLI::App& root, Context& ctx);         // images ...
void AddInstanceCommands(CLI::App& root, Context& ctx);      // instances ...
void AddInstanceLogCommands(CLI::App& root, Context& ctx);   // instances logs (after the above)
// instances exec, port-forward, tunnel (after AddInstanceCommands)
void AddInstanceSessionCommands(CLI::App& root, Context& ctx);
void AddUsageCommands(CLI::App& root, Context& ctx);  // usage

// Makes `sub`, when it is the command given, run `fn` with a connected session.
void OnRun(CLI::App* sub, Context& ctx, std::function<absl::Status(Session&)> fn);

// Adds --role style options that take a role name; validation happens in ParseRole so the
// error message lists the valid names.
CLI::Option* AddRoleOption(CLI::App* sub, const std::string& name, std::string& value,
                           const std::string& help);

// Sets `role` from a name when `name` is not empty. Error: INVALID_ARGUMENT.
absl::Status ParseRoleInto(const std::string& name, common::v1::Role& role);

// A fresh idempotency key when the user gave none, so a retry inside one run is safe.
std::string RequestIdOrNew(const std::string& given);

struct PageFlags {
  int page_size = 0;  // 0 = server default
  std::string page_token;
  bool all = false;
};
void AddPageFlags(CLI::App* sub, PageFlags& flags);

// Lists one page, or with --all every page merged into `out` (repeated fields concatenate).
// In table mode a remaining next_page_token is shown on stderr so stdout stays the table.
template <class Client, class Req, class Resp>
absl::Status ListPages(Session& session, Session::ClientMethod<Client, Req, Resp> method, Req req,
                       const PageFlags& flags, Resp& out) {
  req.set_page_size(flags.page_size);
  req.set_page_token(flags.page_token);
  // A misbehaving server could hand back the same token forever; this bounds the loop.
  constexpr int kMaxPages = 100000;
  for (int page = 0; page < kMaxPages; ++page) {
    GPUAAS_ASSIGN_OR_RETURN(Resp resp, session.Call(method, req));
    const std::string next = resp.next_page_token();
    out.MergeFrom(resp);
    out.set_next_page_token(next);
    if (!flags.all || next.empty() || next == req.page_token()) {
      break;
    }
    req.set_page_token(next);
  }
  if (!out.next_page_token().empty() && !flags.all) {
    std::cerr << "more results: --page-token " << out.next_page_token() << " (or --all)\n";
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::ctl
