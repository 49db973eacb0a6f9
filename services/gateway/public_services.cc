#include "services/gateway/public_services.h"

#include "absl/strings/str_cat.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "gpuaas/storage/v1/storage.grpc.pb.h"

namespace gpuaas::gateway {

absl::StatusOr<std::vector<const google::protobuf::ServiceDescriptor*>> PublicServiceDescriptors() {
  // A proto file's services reach the generated pool when its code is linked in; naming a
  // message of each keeps the linker from dropping one.
  for (const google::protobuf::Descriptor* d :
       {auth::v1::Tenant::descriptor(), stock::v1::Spec::descriptor(),
        storage::v1::Storage::descriptor(), instance::v1::Instance::descriptor()}) {
    (void)d;
  }
  std::vector<const google::protobuf::ServiceDescriptor*> out;
  for (const PublicService& s : kPublicServices) {
    const google::protobuf::ServiceDescriptor* d =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(std::string(s.name));
    if (d == nullptr) {
      return absl::InternalError(absl::StrCat(s.name, " is not compiled into this binary"));
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace gpuaas::gateway
