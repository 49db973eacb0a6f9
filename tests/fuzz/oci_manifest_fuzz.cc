// Image manifests, OCI indexes and Docker manifest lists as a registry (any tenant's) serves
// them to the agent (services/agent/images/oci_layout.h): no crash, no UB, and what is accepted
// names blobs by 64 hex digits, since they become file names in the node's blob store.
#include "services/agent/images/oci_layout.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

bool IsHex64(const std::string& hex) {
  return hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  std::string text(gpuaas::fuzz::AsText(data, size));
  auto manifest = gpuaas::agent::ParseManifest(text);
  if (!manifest.ok()) {
    return 0;
  }
  if (!manifest->platform_manifest_hex.empty()) {
    if (!IsHex64(manifest->platform_manifest_hex)) {
      Fail("a platform manifest digest that is not 64 hex digits");
    }
    return 0;
  }
  if (!IsHex64(manifest->config_hex)) {
    Fail("a config digest that is not 64 hex digits");
  }
  for (const auto& layer : manifest->layers) {
    if (!IsHex64(layer.hex)) {
      Fail("a layer digest that is not 64 hex digits");
    }
  }
  return 0;
}
