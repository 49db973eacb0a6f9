// gpuaas-image-unpacker: parses a registry's manifests and configs and unpacks its layers for the
// agent's image store, one job per run, in a sandbox (unpacker_sandbox.h) it enters before it
// reads any of the registry's bytes. The agent starts one per job (unpacker_client.h); a crash,
// a bomb or a limit costs that job, never the agent.
//
//   gpuaas-image-unpacker [--NAME=VALUE...] manifest FILE
//       the manifest or index in FILE: {"platform_manifest_hex", "config_hex", "layers"}
//   gpuaas-image-unpacker [...] layout LAYOUT_DIR BLOB_DIR
//       the image one skopeo copy wrote: {"manifest_hex", "config_hex", "layers", "config"}
//       ("config" the image config reduced to what the runtime uses, as a JSON string)
//   gpuaas-image-unpacker [...] layer BLOB HEX SIZE LAYERS_DIR
//   gpuaas-image-unpacker [...] growing DOWNLOAD BLOB_DIR HEX,HEX,... MAX_SIZE LAYERS_DIR
//       a whole blob, or one skopeo is still downloading (whole once renamed to one of the
//       planned layers' blobs), unpacked into LAYERS_DIR/<hex>: {"hex", "bytes", "entries"}
//
// Flags (integers): --max-layer-bytes --max-layer-entries --max-ratio --ratio-floor-bytes
// --min-free-bytes (unpack_limits.h), --memory-bytes --cpu-seconds --deadline-seconds
// (unpacker_sandbox.h). The answer is one JSON object on stdout, exit 0; a failure is
// "error <absl code number> <message>" on stderr, exit 2.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"
#include "nlohmann/json.hpp"
#include "services/agent/images/bounded_json.h"
#include "services/agent/images/image_record.h"
#include "services/agent/images/layer_unpack.h"
#include "services/agent/images/oci_layout.h"
#include "services/agent/images/unpacker_sandbox.h"

namespace gpuaas::agent {
namespace {

struct Args {
  std::map<std::string, int64_t> flags;
  std::vector<std::string> positional;
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      args.positional.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || !absl::SimpleAtoi(arg.substr(eq + 1), &value)) {
      return absl::InvalidArgumentError(absl::StrCat("flag ", arg, ": want --NAME=INTEGER"));
    }
    args.flags[arg.substr(2, eq - 2)] = value;
  }
  if (args.positional.empty()) return absl::InvalidArgumentError("no job given");
  return args;
}

int64_t Flag(const Args& args, const std::string& name, int64_t fallback) {
  const auto it = args.flags.find(name);
  return it == args.flags.end() ? fallback : it->second;
}

UnpackLimits Limits(const Args& args) {
  UnpackLimits defaults;
  return UnpackLimits{
      .max_layer_bytes = Flag(args, "max-layer-bytes", defaults.max_layer_bytes),
      .max_layer_entries = Flag(args, "max-layer-entries", defaults.max_layer_entries),
      .max_ratio = Flag(args, "max-ratio", defaults.max_ratio),
      .ratio_floor_bytes = Flag(args, "ratio-floor-bytes", defaults.ratio_floor_bytes),
      .min_free_bytes = Flag(args, "min-free-bytes", defaults.min_free_bytes)};
}

// Read before the sandbox closes the door: the agent's private files are root's.
absl::StatusOr<std::string> ReadInput(const std::string& path, absl::string_view what) {
  return ReadBoundedFile(path, what, kMaxManifestBytes);
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

nlohmann::json LayersJson(const std::vector<OciLayer>& layers) {
  nlohmann::json out = nlohmann::json::array();
  for (const OciLayer& layer : layers) out.push_back({{"hex", layer.hex}, {"size", layer.size}});
  return out;
}

// The config reduced to the fields ParseImageConfig reads, in its own shape: the agent parses
// only what this process wrote.
nlohmann::json ReducedConfig(const ImageConfig& config) {
  nlohmann::json ports = nlohmann::json::object();
  for (int port : config.exposed_ports)
    ports[absl::StrCat(port, "/tcp")] = nlohmann::json::object();
  return {{"config",
           {{"Env", config.env},
            {"Entrypoint", config.entrypoint},
            {"Cmd", config.cmd},
            {"WorkingDir", config.working_dir},
            {"User", config.user},
            {"ExposedPorts", ports}}}};
}

nlohmann::json LayerJson(const StreamedLayer& layer) {
  return {{"hex", layer.hex}, {"bytes", layer.size_bytes}, {"entries", layer.entries}};
}

// Whether the download at `path` (open at `fd`) is whole: skopeo renamed it to one of the
// planned blobs. Waits a little while it may still grow; an error once skopeo dropped it or
// kept it as something else (the config).
absl::StatusOr<bool> DownloadComplete(int fd, const std::string& path, const std::string& blob_dir,
                                      const std::vector<std::string>& planned) {
  struct stat download;
  if (::fstat(fd, &download) != 0 || download.st_nlink == 0) {
    return absl::AbortedError("the download was abandoned");
  }
  const auto renamed_to_layer = [&] {
    for (const std::string& hex : planned) {
      struct stat blob;
      if (::stat((blob_dir + "/" + hex).c_str(), &blob) == 0 && blob.st_ino == download.st_ino &&
          blob.st_dev == download.st_dev) {
        return true;
      }
    }
    return false;
  };
  if (renamed_to_layer()) return true;
  struct stat still;
  if (::stat(path.c_str(), &still) == 0 && still.st_ino == download.st_ino) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return false;
  }
  if (renamed_to_layer()) return true;  // renamed between the two looks
  return absl::AbortedError("the download is not a layer");
}

absl::StatusOr<nlohmann::json> Run(const Args& args) {
  const std::vector<std::string>& p = args.positional;
  const std::string& job = p[0];
  SandboxLimits sandbox{.memory_bytes = Flag(args, "memory-bytes", SandboxLimits().memory_bytes),
                        .cpu_seconds = Flag(args, "cpu-seconds", SandboxLimits().cpu_seconds),
                        .deadline_seconds = Flag(args, "deadline-seconds", 0)};
  const auto enter = [&]() -> absl::Status {
    if (std::string error = EnterSandbox(sandbox); !error.empty()) {
      return absl::InternalError("image unpacker: cannot enter its sandbox: " + error);
    }
    return absl::OkStatus();
  };
  if (job == "manifest" && p.size() == 2) {
    GPUAAS_ASSIGN_OR_RETURN(const std::string text, ReadInput(p[1], "image manifest"));
    GPUAAS_RETURN_IF_ERROR(enter());
    GPUAAS_ASSIGN_OR_RETURN(const ManifestLayers manifest, ParseManifest(text));
    return nlohmann::json{{"platform_manifest_hex", manifest.platform_manifest_hex},
                          {"config_hex", manifest.config_hex},
                          {"layers", LayersJson(manifest.layers)}};
  }
  if (job == "layout" && p.size() == 3) {
    sandbox.role = SandboxRole::kReadFiles;
    sandbox.read_beneath = {p[1], p[2]};
    GPUAAS_RETURN_IF_ERROR(enter());
    GPUAAS_ASSIGN_OR_RETURN(const OciImage image, ReadOciLayout(p[1], p[2]));
    GPUAAS_ASSIGN_OR_RETURN(const ImageConfig config, ParseImageConfig(image.config_json));
    return nlohmann::json{{"manifest_hex", image.manifest_hex},
                          {"config_hex", image.config_hex},
                          {"layers", LayersJson(image.layers)},
                          {"config", ReducedConfig(config).dump()}};
  }
  const UnpackLimits limits = Limits(args);
  sandbox.role = SandboxRole::kWriteLayers;
  sandbox.file_bytes = limits.max_layer_bytes;
  int64_t size = 0;
  if (job == "layer" && p.size() == 5 && absl::SimpleAtoi(p[3], &size)) {
    sandbox.read_beneath = {Parent(p[1])};
    sandbox.write_beneath = {p[4]};
    GPUAAS_RETURN_IF_ERROR(enter());
    GPUAAS_ASSIGN_OR_RETURN(const StreamedLayer layer,
                            UnpackLayerWithin(p[1], p[2], size, p[4], limits));
    return LayerJson(layer);
  }
  if (job == "growing" && p.size() == 6 && absl::SimpleAtoi(p[4], &size)) {
    UniqueFd fd(::open(p[1].c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return absl::AbortedError("the download is gone");
    sandbox.read_beneath = {Parent(p[1]), p[2]};
    sandbox.write_beneath = {p[5]};
    GPUAAS_RETURN_IF_ERROR(enter());
    const std::vector<std::string> planned = absl::StrSplit(p[3], ',', absl::SkipEmpty());
    GPUAAS_ASSIGN_OR_RETURN(
        const StreamedLayer layer,
        UnpackGrowingLayer(
            fd.get(), [&] { return DownloadComplete(fd.get(), p[1], p[2], planned); }, p[5], limits,
            size));
    return LayerJson(layer);
  }
  return absl::InvalidArgumentError("usage: see unpacker_main.cc");
}

}  // namespace
}  // namespace gpuaas::agent

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer stops the world at exit with clone and ptrace, which the sandbox's filter
// refuses (a fatal error for every job of the sanitized build); what the unpacker leaks ends
// with it a moment later.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

int main(int argc, char** argv) {
  absl::StatusOr<gpuaas::agent::Args> args = gpuaas::agent::ParseArgs(argc, argv);
  absl::StatusOr<nlohmann::json> out =
      args.ok() ? gpuaas::agent::Run(*args) : absl::StatusOr<nlohmann::json>(args.status());
  if (!out.ok()) {
    std::fprintf(stderr, "error %d %s\n", static_cast<int>(out.status().code()),
                 std::string(out.status().message()).c_str());
    return 2;
  }
  const std::string text = out->dump();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
