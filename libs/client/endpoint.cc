#include "libs/client/endpoint.h"

#include <array>

#include "libs/common/status_macros.h"

namespace gpuaas::client {
namespace {

struct ServiceInfo {
  Service service;
  std::string_view name;
  std::string_view address_env;
  std::string_view default_address;
};

// design.md: default ports auth 17051, stock 17052, storage 17053, instance 17054.
constexpr std::array<ServiceInfo, 4> kServices = {{
    {Service::kAuth, "auth", "GPUAAS_AUTH_ADDR", "localhost:17051"},
    {Service::kStock, "stock", "GPUAAS_STOCK_ADDR", "localhost:17052"},
    {Service::kStorage, "storage", "GPUAAS_STORAGE_ADDR", "localhost:17053"},
    {Service::kInstance, "instance", "GPUAAS_INSTANCE_ADDR", "localhost:17054"},
}};

// Info() indexes the table by enumerator, so the rows must follow the enum's order.
constexpr bool RowsFollowTheEnum() {
  for (size_t i = 0; i < kServices.size(); ++i) {
    if (static_cast<size_t>(kServices[i].service) != i) {
      return false;
    }
  }
  return true;
}
static_assert(RowsFollowTheEnum(), "kServices rows must follow the order of enum Service");

const ServiceInfo& Info(Service service) { return kServices[static_cast<size_t>(service)]; }

}  // namespace

std::string_view ServiceName(Service service) { return Info(service).name; }

std::string_view AddressEnvVar(Service service) { return Info(service).address_env; }

std::string_view DefaultAddress(Service service) { return Info(service).default_address; }

absl::StatusOr<Endpoint> ResolveEndpoint(Service service, const Endpoint& flags,
                                         Settings& settings) {
  Endpoint out;
  GPUAAS_ASSIGN_OR_RETURN(
      out.address, settings.Get(flags.address, AddressEnvVar(service), DefaultAddress(service)));
  GPUAAS_ASSIGN_OR_RETURN(out.tls.ca_file, settings.Get(flags.tls.ca_file, kTlsCaEnv));
  GPUAAS_ASSIGN_OR_RETURN(out.tls.cert_file, settings.Get(flags.tls.cert_file, kTlsCertEnv));
  GPUAAS_ASSIGN_OR_RETURN(out.tls.key_file, settings.Get(flags.tls.key_file, kTlsKeyEnv));
  out.tls.server_name_override = flags.tls.server_name_override;
  return out;
}

}  // namespace gpuaas::client
