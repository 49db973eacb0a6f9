#include "services/instance/registry_secrets.h"

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"

namespace gpuaas::instance {

std::string ImageSecretAad(const std::string& tenant, const std::string& name,
                           const std::string& version) {
  return absl::StrCat("image:", tenant, "/", name, ":", version);
}

std::string InstanceSecretAad(const std::string& instance_id) {
  return absl::StrCat("instance:", instance_id);
}

absl::StatusOr<std::string> SealCredentials(const SecretBox& box,
                                            const pb::RegistryCredentials& credentials,
                                            const std::string& aad) {
  if (credentials.username().empty()) return std::string();
  return box.Seal(credentials.SerializeAsString(), aad);
}

absl::StatusOr<pb::RegistryCredentials> OpenCredentials(const SecretBox& box,
                                                        const std::string& sealed,
                                                        const std::string& aad) {
  pb::RegistryCredentials credentials;
  if (sealed.empty()) return credentials;
  GPUAAS_ASSIGN_OR_RETURN(const std::string plain, box.Open(sealed, aad));
  if (!credentials.ParseFromString(plain)) {
    return absl::DataLossError("a sealed registry login does not parse");
  }
  return credentials;
}

}  // namespace gpuaas::instance
