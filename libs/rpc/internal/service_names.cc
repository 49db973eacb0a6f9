#include "libs/rpc/internal/service_names.h"

#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/impl/server_initializer.h>

namespace gpuaas::rpc::internal {
namespace {

class ServiceNamesPlugin final : public grpc::ServerBuilderPlugin {
 public:
  explicit ServiceNamesPlugin(std::vector<std::string>* names) : names_(names) {}

  std::string name() override { return "gpuaas_service_names"; }
  void InitServer(grpc::ServerInitializer*) override {}
  // Runs after the server started, when every service (health included) is registered.
  void Finish(grpc::ServerInitializer* si) override { *names_ = *si->GetServiceList(); }
  void ChangeArguments(const std::string&, void*) override {}

 private:
  std::vector<std::string>* names_;
};

class ServiceNamesOption final : public grpc::ServerBuilderOption {
 public:
  explicit ServiceNamesOption(std::vector<std::string>* names) : names_(names) {}

  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->push_back(std::make_unique<ServiceNamesPlugin>(names_));
  }

 private:
  std::vector<std::string>* names_;
};

}  // namespace

std::unique_ptr<grpc::ServerBuilderOption> CollectServiceNames(std::vector<std::string>* names) {
  return std::make_unique<ServiceNamesOption>(names);
}

}  // namespace gpuaas::rpc::internal
