// Image references as tenants give them to the image API (services/instance/oci_reference.h):
// no crash, no UB, and an accepted reference prints, and pins, as one that parses back to itself
// (the instance service stores and pins the printed form).
#include "services/instance/oci_reference.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  std::string_view text = gpuaas::fuzz::AsText(data, size);
  auto ref = gpuaas::instance::ParseOciReference("oci_reference", text);
  if (!ref.ok()) {
    return 0;
  }
  if (ref->host.empty() || ref->repository.empty() || (ref->tag.empty() == ref->digest.empty())) {
    Fail("an accepted reference lacks a part", text);
  }
  (void)gpuaas::instance::IsLoopbackRegistry(ref->host);
  auto again = gpuaas::instance::ParseOciReference("oci_reference", ref->ToString());
  if (!again.ok() || again->host != ref->host || again->repository != ref->repository ||
      again->tag != ref->tag || again->digest != ref->digest) {
    Fail("ToString does not parse back to the same reference", text);
  }
  auto pinned = gpuaas::instance::ParseOciReference(
      "oci_digest_reference", ref->PinnedTo("sha256:" + std::string(64, 'f')));
  if (!pinned.ok() || pinned->host != ref->host || pinned->repository != ref->repository) {
    Fail("the pinned reference does not parse back to the same repository", text);
  }
  return 0;
}
