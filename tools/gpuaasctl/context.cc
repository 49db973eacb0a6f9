#include "tools/gpuaasctl/context.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libs/client/channel.h"
#include "libs/client/endpoint.h"
#include "libs/client/settings.h"
#include "libs/common/status_macros.h"

namespace gpuaas::ctl {

absl::StatusOr<Session*> Context::session() {
  if (session_) {
    return session_.get();
  }
  absl::Duration timeout;
  if (!absl::ParseDuration(options_.timeout, &timeout) || timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--timeout: want a positive duration like 10s, got \"", options_.timeout, "\""));
  }
  const client::EnvLookup env = client::ProcessEnv();
  std::error_code ec;
  client::Settings settings(env, std::filesystem::current_path(ec));
  client::Endpoint flags;
  flags.tls.ca_file = options_.ca_file;
  flags.tls.cert_file = options_.cert_file;
  flags.tls.key_file = options_.key_file;
  flags.address = options_.auth_addr;
  GPUAAS_ASSIGN_OR_RETURN(client::Endpoint auth_at,
                          client::ResolveEndpoint(client::Service::kAuth, flags, settings));
  flags.address = options_.stock_addr;
  GPUAAS_ASSIGN_OR_RETURN(client::Endpoint stock_at,
                          client::ResolveEndpoint(client::Service::kStock, flags, settings));
  flags.address = options_.storage_addr;
  GPUAAS_ASSIGN_OR_RETURN(client::Endpoint storage_at,
                          client::ResolveEndpoint(client::Service::kStorage, flags, settings));
  flags.address = options_.instance_addr;
  GPUAAS_ASSIGN_OR_RETURN(client::Endpoint instance_at,
                          client::ResolveEndpoint(client::Service::kInstance, flags, settings));
  GPUAAS_ASSIGN_OR_RETURN(std::filesystem::path token_path, DefaultTokenPath(env));
  // Channels connect on their first call, so a command for one service never waits on another.
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> auth_channel,
                          client::OpenChannel(auth_at.address, auth_at.tls));
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> stock_channel,
                          client::OpenChannel(stock_at.address, stock_at.tls));
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> storage_channel,
                          client::OpenChannel(storage_at.address, storage_at.tls));
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> instance_channel,
                          client::OpenChannel(instance_at.address, instance_at.tls));
  session_ = std::make_unique<Session>(
      AuthClient(std::move(auth_channel), timeout), StockClient(std::move(stock_channel), timeout),
      StorageClient(std::move(storage_channel), timeout),
      InstanceClient(std::move(instance_channel), timeout), TokenStore(token_path), clock_,
      Session::Addresses{auth_at.address, stock_at.address, storage_at.address,
                         instance_at.address},
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
