#include "services/agent/simulated_inventory.h"

#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/gpu/gpu_models.h"

namespace gpuaas::agent {
namespace {

// NVML names as the driver reports them, and board power from idle to the default limit.
constexpr std::array<SimulatedModel, 13> kSimulatedModels = {{
    {"T4", "Tesla T4", 10, 70},
    {"L4", "NVIDIA L4", 16, 72},
    {"A10", "NVIDIA A10", 20, 150},
    {"A30", "NVIDIA A30", 30, 165},
    {"A40", "NVIDIA A40", 30, 300},
    {"L40S", "NVIDIA L40S", 35, 350},
    {"A100-40GB", "NVIDIA A100-SXM4-40GB", 50, 400},
    {"A100-80GB", "NVIDIA A100-SXM4-80GB", 60, 400},
    {"H100-80GB", "NVIDIA H100 80GB HBM3", 70, 700},
    {"H200-141GB", "NVIDIA H200", 75, 700},
    {"P100", "Tesla P100-PCIE-16GB", 25, 250},
    {"V100M16", "Tesla V100-SXM2-16GB", 40, 300},
    {"V100M32", "Tesla V100-SXM2-32GB", 40, 300},
}};

absl::Status Bad(std::string_view group, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--simulate-gpus: \"", std::string(group), "\": ", std::string(why)));
}

std::string KnownModels() {
  std::string out;
  for (const SimulatedModel& m : kSimulatedModels) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", std::string(m.model));
  }
  return out;
}

}  // namespace

const SimulatedModel* FindSimulatedModel(std::string_view model) {
  for (const SimulatedModel& m : kSimulatedModels) {
    if (m.model == model) {
      return &m;
    }
  }
  return nullptr;
}

std::string SimulatedGpuUuid(std::string_view node_id, int index) {
  const std::string seed = absl::StrCat("gpuaas-simulated-gpu/", std::string(node_id), "/", index);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(seed.data()), seed.size(), digest);
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    out += hex;
  }
  return out;
}

absl::StatusOr<std::vector<GpuInfo>> ParseSimulatedGpus(std::string_view spec,
                                                        std::string_view node_id) {
  if (spec.empty()) {
    return absl::InvalidArgumentError("--simulate-gpus: empty; want e.g. 8xA100-80GB");
  }
  std::vector<GpuInfo> gpus;
  for (absl::string_view group : absl::StrSplit(absl::string_view(spec.data(), spec.size()), ',')) {
    const std::string g(group);
    const size_t x = g.find('x');
    if (x == std::string::npos || x == 0 || x + 1 == g.size()) {
      return Bad(g, "want <count>x<model>, e.g. 8xA100-80GB");
    }
    const std::string digits = g.substr(0, x);
    int count = 0;
    if (!std::all_of(digits.begin(), digits.end(),
                     [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) ||
        !absl::SimpleAtoi(digits, &count) || count < 1 || count > kMaxSimulatedGpus) {
      return Bad(g, absl::StrCat("count must be 1..", kMaxSimulatedGpus));
    }
    const std::string model = g.substr(x + 1);
    const SimulatedModel* sim = FindSimulatedModel(model);
    const gpu::GpuModel* known = gpu::FindGpuModel(model);
    if (sim == nullptr || known == nullptr) {
      return Bad(g, absl::StrCat("unknown GPU model \"", model, "\"; known: ", KnownModels()));
    }
    if (static_cast<int>(gpus.size()) + count > kMaxSimulatedGpus) {
      return Bad(spec, absl::StrCat("more than ", kMaxSimulatedGpus, " GPUs"));
    }
    for (int i = 0; i < count; ++i) {
      GpuInfo info;
      info.index = static_cast<int>(gpus.size());
      info.minor = info.index;
      info.uuid = SimulatedGpuUuid(node_id, info.index);
      info.nvml_name = std::string(sim->nvml_name);
      info.model = std::string(known->name);
      info.memory_mib = int64_t{known->memory_gib} * 1024;
      gpus.push_back(std::move(info));
    }
  }
  return gpus;
}

}  // namespace gpuaas::agent
