// Registry logins at rest: a gpuaas.instance.v1.RegistryCredentials sealed with the service's
// SecretBox, bound to its row (an image's "<tenant>/<name>:<version>", an instance's id), so a
// sealed login copied onto another image or instance does not open. An image's login is sealed
// again for each instance made from it: an instance keeps its login when its image is deleted.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/common/secret_box.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

// The additional data of an image's login, and of an instance's.
std::string ImageSecretAad(const std::string& tenant, const std::string& name,
                           const std::string& version);
std::string InstanceSecretAad(const std::string& instance_id);

// "" for an empty login (no username). Error: INTERNAL when OpenSSL fails.
absl::StatusOr<std::string> SealCredentials(const SecretBox& box,
                                            const pb::RegistryCredentials& credentials,
                                            const std::string& aad);

// The login sealed for `aad`; an empty one for "". Error: DATA_LOSS when it does not open
// (another key, another row's).
absl::StatusOr<pb::RegistryCredentials> OpenCredentials(const SecretBox& box,
                                                        const std::string& sealed,
                                                        const std::string& aad);

}  // namespace gpuaas::instance
