#include "tools/gpuaasctl/context.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/channel.h"
#include "tools/gpuaasctl/config.h"

namespace gpuaas::ctl {

absl::StatusOr<Session*> Context::session() {
  if (session_) {
    return session_.get();
  }
  absl::Duration timeout;
  if (!absl::ParseDuration(options_.timeout, &timeout) || timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout: want a positive duration like 10s, got \"", options_.timeout, "\""));
  }
  const EnvLookup env = ProcessEnv();
  std::error_code ec;
  Settings settings(env, std::filesystem::current_path(ec));
  absl::StatusOr<Endpoint> endpoint = settings.AuthEndpoint(
      {options_.auth_addr, {options_.ca_file, options_.cert_file, options_.key_file}});
  if (!endpoint.ok()) {
    return endpoint.status();
  }
  absl::StatusOr<std::filesystem::path> token_path = TokenPath(env);
  if (!token_path.ok()) {
    return token_path.status();
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      MakeChannel(endpoint->addr, endpoint->tls);
  if (!channel.ok()) {
    return channel.status();
  }
  session_ = std::make_unique<Session>(authpb::AuthService::NewStub(*channel),
                                       TokenStore(*token_path), clock_, timeout, endpoint->addr,
                                       env("GPUAAS_TOKEN"));
  return session_.get();
}

absl::Status Context::Print(const google::protobuf::Message& message,
                            const std::function<std::string()>& table) {
  absl::StatusOr<Format> f = format();
  if (!f.ok()) {
    return f.status();
  }
  std::cout << (*f == Format::kJson ? ToJson(message) : table());
  return absl::OkStatus();
}

void Context::Note(std::string_view text) {
  if (options_.output != "json") {
    std::cout << text << "\n";
  }
}

}  // namespace gpuaas::ctl
