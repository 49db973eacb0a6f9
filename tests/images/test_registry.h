// The ctest fixture `registry` (tests/registry_fixture) from a test's side: two registries on
// loopback that hold the catalog's images (tiny, jupyter, webui-demo) as OCI images pushed from
// tools/images/build-oci-images' cache, one open and one that needs a login. A test declared with
// gpuaas_test(... FIXTURES registry) reads them here; the fixture wrote them as files in the
// build tree's test-registry/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::images_testing {

struct RegistryImage {
  std::string name;              // tiny, jupyter, webui-demo
  std::string tag_reference;     // 127.0.0.1:PORT/gpuaas/tiny:1.0.0
  std::string digest_reference;  // 127.0.0.1:PORT/gpuaas/tiny@sha256:<hex>
  std::string digest;            // sha256:<hex>, the manifest's
};

struct TestRegistry {
  std::string address;   // 127.0.0.1:PORT, plain HTTP
  std::string username;  // the login; both empty for the open registry
  std::string password;
  std::vector<RegistryImage> images;

  // The image called `name`; NOT_FOUND when the registry does not hold it.
  absl::StatusOr<RegistryImage> Image(std::string_view name) const;
};

// The fixture's open registry. FAILED_PRECONDITION when the fixture's files are missing or
// malformed (the test lacks FIXTURES registry). Reads small files; does not touch the network.
absl::StatusOr<TestRegistry> OpenTestRegistry();

// The fixture's registry that needs a login, with its username and password (a fresh random
// one per ctest run). Errors as OpenTestRegistry's.
absl::StatusOr<TestRegistry> LoginTestRegistry();

}  // namespace gpuaas::images_testing
