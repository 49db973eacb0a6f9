// Instance templates and images as tenants give them to the instance API (through the gateway's
// JSON or gRPC), validated and merged (services/instance/instance_rules.h): no crash, no UB, and
// a template the rules accept keeps its promises (ports in range and distinct, at most one probe,
// no volume over /proc, /dev or /sys, no platform variable).
//
// Input: a CreateInstanceRequest as JSON, then optionally "\n---\n" and an Image as JSON.
#include <google/protobuf/util/json_util.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "services/instance/instance_rules.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace pb = ::gpuaas::instance::v1;
using ::gpuaas::fuzz::Fail;

bool FromJson(std::string_view json, google::protobuf::Message& message) {
  return google::protobuf::util::JsonStringToMessage(
             google::protobuf::StringPiece(json.data(), json.size()), &message)
      .ok();
}

void CheckPromises(const pb::Template& t) {
  std::set<int> ports;
  int probes = 0;
  for (const pb::Port& p : t.ports()) {
    if (p.port() < 1 || p.port() > 65535 || !ports.insert(p.port()).second) {
      Fail("an accepted template has a port out of range or twice");
    }
    probes += p.is_probe() ? 1 : 0;
  }
  if (probes > 1) {
    Fail("an accepted template has two probe ports");
  }
  for (const pb::Volume& v : t.volumes()) {
    for (std::string_view system : {"/proc", "/dev", "/sys"}) {
      if (v.mount_path() == system ||
          absl::StartsWith(v.mount_path(), absl::StrCat(std::string(system), "/"))) {
        Fail("an accepted template mounts over", system);
      }
    }
    for (absl::string_view part : absl::StrSplit(v.sub_path(), '/')) {
      if (part == "..") {
        Fail("an accepted template's sub_path climbs out of the storage");
      }
    }
  }
  for (const pb::Env& e : t.envs()) {
    if (absl::StartsWith(e.name(), "GPUAAS_") || e.name() == "CUDA_VISIBLE_DEVICES") {
      Fail("an accepted template sets a platform variable");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace instance = ::gpuaas::instance;
  std::string_view text = gpuaas::fuzz::AsText(data, size);
  size_t split = text.find("\n---\n");
  pb::CreateInstanceRequest request;
  pb::Image image;
  if (!FromJson(text.substr(0, split), request)) {
    return 0;
  }
  if (split != std::string_view::npos && !FromJson(text.substr(split + 5), image)) {
    return 0;
  }
  (void)instance::SplitImageRef(request.image());
  (void)instance::ValidateInstanceId("instance_id", request.instance_id());
  if (instance::ValidateImage(image).ok()) {
    CheckPromises(image.defaults());
  }
  pb::Template effective = instance::ApplyImage(image, request.template_());
  for (bool runs_oci_image : {false, true}) {
    if (instance::ValidateCreate(request, effective, runs_oci_image).ok()) {
      CheckPromises(request.template_());
      CheckPromises(effective);
    }
  }
  return 0;
}
