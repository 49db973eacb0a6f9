#include "services/agent/images/unpacker_client.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "libs/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/agent/images/bounded_json.h"
#include "services/agent/images/internal/run_child.h"

namespace gpuaas::agent {
namespace {

// The unpacker's answer: a few descriptors, or the reduced config (itself under its cap).
constexpr size_t kMaxAnswerBytes = kMaxConfigBytes + (1 << 20);

// The status the unpacker's stderr reports ("error <code> <message>"), else why it died.
absl::Status JobFailure(const ChildResult& child) {
  const absl::string_view text = absl::StripAsciiWhitespace(child.stderr_text);
  const size_t line = text.rfind("error ");
  if (child.exit_code == 2 && line != absl::string_view::npos) {
    absl::string_view rest = text.substr(line + 6);
    const size_t space = rest.find(' ');
    int code = 0;
    if (space != absl::string_view::npos && absl::SimpleAtoi(rest.substr(0, space), &code) &&
        code > 0 && code <= 16) {
      return absl::Status(static_cast<absl::StatusCode>(code), rest.substr(space + 1, 1000));
    }
  }
  if (child.exit_code < 0) {
    return absl::InternalError(absl::StrCat(
        "image unpacker died (signal ", child.signal,
        "): the registry's data crashed it or took it past its memory, CPU or time limit"));
  }
  return absl::InternalError(
      absl::StrCat("image unpacker failed (exit ", child.exit_code, "): ", text.substr(0, 500)));
}

template <typename T>
T Field(const nlohmann::json& json, const char* name) {
  return json.at(name).get<T>();
}

std::vector<OciLayer> Layers(const nlohmann::json& json) {
  std::vector<OciLayer> layers;
  for (const nlohmann::json& layer : json.at("layers")) {
    layers.push_back(
        {.hex = Field<std::string>(layer, "hex"), .size = Field<int64_t>(layer, "size")});
  }
  return layers;
}

StreamedLayer Layer(const nlohmann::json& json) {
  return StreamedLayer{.hex = Field<std::string>(json, "hex"),
                       .size_bytes = Field<int64_t>(json, "bytes"),
                       .entries = Field<int64_t>(json, "entries")};
}

// `parse` applied to the answer; a malformed answer is INTERNAL (the unpacker is ours).
template <typename T, typename Parse>
absl::StatusOr<T> Decode(const std::string& answer, Parse parse) {
  GPUAAS_ASSIGN_OR_RETURN(const nlohmann::json json,
                          ParseBoundedJson(answer, "image unpacker's answer", kMaxAnswerBytes));
  try {
    return parse(json);
  } catch (const nlohmann::json::exception& e) {
    return absl::InternalError(absl::StrCat("image unpacker's answer: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<std::string> UnpackerClient::RunJob(std::vector<std::string> job,
                                                   const UnpackLimits& limits,
                                                   const std::string& work_dir) {
  const std::string out = absl::StrCat(work_dir, "/unpacker-", ++jobs_, ".json");
  std::vector<std::string> argv = {
      options_.path,
      absl::StrCat("--max-layer-bytes=", limits.max_layer_bytes),
      absl::StrCat("--max-layer-entries=", limits.max_layer_entries),
      absl::StrCat("--max-ratio=", limits.max_ratio),
      absl::StrCat("--ratio-floor-bytes=", limits.ratio_floor_bytes),
      absl::StrCat("--min-free-bytes=", limits.min_free_bytes),
      absl::StrCat("--memory-bytes=", options_.memory_bytes),
      absl::StrCat("--cpu-seconds=", options_.cpu_seconds),
      absl::StrCat("--deadline-seconds=",
                   std::max<int64_t>(1, absl::ToInt64Seconds(options_.deadline)))};
  argv.insert(argv.end(), job.begin(), job.end());
  GPUAAS_ASSIGN_OR_RETURN(const ChildResult child, RunChild(argv, {"PATH=/usr/bin:/bin"}, out));
  absl::StatusOr<std::string> answer =
      child.exit_code == 0 ? ReadBoundedFile(out, "image unpacker's answer", kMaxAnswerBytes)
                           : absl::StatusOr<std::string>(JobFailure(child));
  ::unlink(out.c_str());
  return answer;
}

absl::StatusOr<ManifestLayers> UnpackerClient::ParseManifest(const std::string& manifest_path,
                                                             const std::string& work_dir) {
  GPUAAS_ASSIGN_OR_RETURN(const std::string answer,
                          RunJob({"manifest", manifest_path}, UnpackLimits(), work_dir));
  return Decode<ManifestLayers>(answer, [](const nlohmann::json& json) {
    return ManifestLayers{
        .platform_manifest_hex = Field<std::string>(json, "platform_manifest_hex"),
        .config_hex = Field<std::string>(json, "config_hex"),
        .layers = Layers(json)};
  });
}

absl::StatusOr<UnpackedLayout> UnpackerClient::ReadLayout(const std::string& layout_dir,
                                                          const std::string& blob_dir,
                                                          const std::string& work_dir) {
  GPUAAS_ASSIGN_OR_RETURN(const std::string answer,
                          RunJob({"layout", layout_dir, blob_dir}, UnpackLimits(), work_dir));
  return Decode<UnpackedLayout>(answer, [](const nlohmann::json& json) {
    return UnpackedLayout{.image = {.manifest_hex = Field<std::string>(json, "manifest_hex"),
                                    .config_hex = Field<std::string>(json, "config_hex"),
                                    .config_json = Field<std::string>(json, "config"),
                                    .layers = Layers(json)}};
  });
}

absl::StatusOr<StreamedLayer> UnpackerClient::UnpackLayer(const std::string& blob_path,
                                                          const std::string& hex, int64_t blob_size,
                                                          const std::string& layers_dir,
                                                          const UnpackLimits& limits,
                                                          const std::string& work_dir) {
  GPUAAS_ASSIGN_OR_RETURN(
      const std::string answer,
      RunJob({"layer", blob_path, hex, absl::StrCat(blob_size), layers_dir}, limits, work_dir));
  return Decode<StreamedLayer>(answer, Layer);
}

absl::StatusOr<StreamedLayer> UnpackerClient::UnpackDownload(const std::string& download_path,
                                                             const std::string& blob_dir,
                                                             const std::vector<OciLayer>& planned,
                                                             const std::string& layers_dir,
                                                             const UnpackLimits& limits,
                                                             const std::string& work_dir) {
  std::vector<std::string> hexes;
  int64_t largest = 0;
  for (const OciLayer& layer : planned) {
    hexes.push_back(layer.hex);
    largest = std::max(largest, layer.size);
  }
  GPUAAS_ASSIGN_OR_RETURN(const std::string answer,
                          RunJob({"growing", download_path, blob_dir, absl::StrJoin(hexes, ","),
                                  absl::StrCat(largest), layers_dir},
                                 limits, work_dir));
  return Decode<StreamedLayer>(answer, Layer);
}

}  // namespace gpuaas::agent
