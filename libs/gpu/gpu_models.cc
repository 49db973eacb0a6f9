#include "libs/gpu/gpu_models.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace gpuaas::gpu {
namespace {

// G2 and G3 are the anonymised models of Alibaba's openb trace (bench/sched); V100M16/V100M32
// keep the trace's spelling for the two V100 sizes.
constexpr std::array<GpuModel, 15> kModels = {{
    {"T4", 16, false},
    {"L4", 24, false},
    {"A10", 24, false},
    {"A30", 24, true},
    {"A40", 48, false},
    {"L40S", 48, false},
    {"A100-40GB", 40, true},
    {"A100-80GB", 80, true},
    {"H100-80GB", 80, true},
    {"H200-141GB", 141, false},
    {"P100", 16, false},
    {"V100M16", 16, false},
    {"V100M32", 32, false},
    {"G2", 0, false},
    {"G3", 0, false},
}};

// "NVIDIA A100-SXM4-80GB" -> {"NVIDIA", "A100", "SXM4", "80GB"}: whole tokens, so "A10" never
// matches inside "A100".
std::vector<std::string> Tokens(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!cur.empty()) {
        out.push_back(std::move(cur));
        cur.clear();
      }
      continue;
    }
    cur += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (!cur.empty()) {
    out.push_back(std::move(cur));
  }
  return out;
}

}  // namespace

std::span<const GpuModel> KnownGpuModels() { return kModels; }

const GpuModel* FindGpuModel(std::string_view name) {
  for (const GpuModel& m : kModels) {
    if (m.name == name) {
      return &m;
    }
  }
  return nullptr;
}

std::optional<std::string_view> CanonicalGpuModel(std::string_view nvml_name) {
  if (const GpuModel* m = FindGpuModel(nvml_name)) {
    return m->name;
  }
  const std::vector<std::string> tokens = Tokens(nvml_name);
  auto has = [&](std::string_view t) {
    return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
  };
  // Memory sizes decide between variants of one chip.
  if (has("A100")) return has("80GB") ? "A100-80GB" : "A100-40GB";
  if (has("H100")) return has("80GB") ? std::optional<std::string_view>("H100-80GB") : std::nullopt;
  if (has("H200")) return "H200-141GB";
  if (has("V100")) return has("32GB") ? "V100M32" : "V100M16";
  for (std::string_view chip : {"T4", "L4", "A10", "A30", "A40", "L40S", "P100"}) {
    if (has(chip)) return chip;
  }
  return std::nullopt;
}

}  // namespace gpuaas::gpu
