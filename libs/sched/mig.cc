#include "libs/sched/mig.h"

#include <array>
#include <cctype>
#include <string>

namespace gpuaas::sched {
namespace {

constexpr uint8_t Starts(std::initializer_list<int> starts) {
  uint8_t mask = 0;
  for (int s : starts) {
    mask = static_cast<uint8_t>(mask | (1u << s));
  }
  return mask;
}

// A100-40GB: 7 compute / 8 memory slices. 1g instances may start at 0-6 only.
constexpr std::array<MigProfile, 6> kA100x40Profiles = {{
    {"1g.5gb", 1, Starts({0, 1, 2, 3, 4, 5, 6})},
    {"1g.10gb", 2, Starts({0, 2, 4, 6})},
    {"2g.10gb", 2, Starts({0, 2, 4})},
    {"3g.20gb", 4, Starts({0, 4})},
    {"4g.20gb", 4, Starts({0})},
    {"7g.40gb", 8, Starts({0})},
}};
constexpr std::array<MigProfile, 6> kA100x80Profiles = {{
    {"1g.10gb", 1, Starts({0, 1, 2, 3, 4, 5, 6})},
    {"1g.20gb", 2, Starts({0, 2, 4, 6})},
    {"2g.20gb", 2, Starts({0, 2, 4})},
    {"3g.40gb", 4, Starts({0, 4})},
    {"4g.40gb", 4, Starts({0})},
    {"7g.80gb", 8, Starts({0})},
}};
constexpr std::array<MigProfile, 6> kH100x80Profiles = {{
    {"1g.10gb", 1, Starts({0, 1, 2, 3, 4, 5, 6})},
    {"1g.20gb", 2, Starts({0, 2, 4, 6})},
    {"2g.20gb", 2, Starts({0, 2, 4})},
    {"3g.40gb", 4, Starts({0, 4})},
    {"4g.40gb", 4, Starts({0})},
    {"7g.80gb", 8, Starts({0})},
}};
// A30: 4 compute / 4 memory slices.
constexpr std::array<MigProfile, 3> kA30Profiles = {{
    {"1g.6gb", 1, Starts({0, 1, 2, 3})},
    {"2g.12gb", 2, Starts({0, 2})},
    {"4g.24gb", 4, Starts({0})},
}};

constexpr std::array<MigGeometry, 4> kGeometries = {{
    {"A100-40GB", 8, kA100x40Profiles},
    {"A100-80GB", 8, kA100x80Profiles},
    {"H100-80GB", 8, kH100x80Profiles},
    {"A30", 4, kA30Profiles},
}};

std::string Upper(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

const MigGeometry* FindMigGeometry(absl::string_view gpu_model) {
  for (const MigGeometry& g : kGeometries) {
    if (g.model == gpu_model) {
      return &g;
    }
  }
  // NVML reports names such as "NVIDIA A100-SXM4-80GB" or "NVIDIA H100 80GB HBM3".
  const std::string up = Upper(gpu_model);
  const bool has80 = up.find("80GB") != std::string::npos;
  if (up.find("A100") != std::string::npos) {
    return has80 ? &kGeometries[1] : &kGeometries[0];
  }
  if (up.find("H100") != std::string::npos && has80) {
    return &kGeometries[2];
  }
  if (up.find("A30") != std::string::npos) {
    return &kGeometries[3];
  }
  return nullptr;
}

const MigProfile* FindMigProfile(const MigGeometry& geometry, absl::string_view name) {
  for (const MigProfile& p : geometry.profiles) {
    if (p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

uint8_t FullMigMask(const MigGeometry& geometry) { return MigSliceMask(0, geometry.total_slices); }

int32_t CountMigPlacements(const MigGeometry& geometry, uint8_t free_mask) {
  int32_t count = 0;
  for (const MigProfile& p : geometry.profiles) {
    for (int32_t s = 0; s + p.slices <= geometry.total_slices; ++s) {
      const uint8_t need = MigSliceMask(s, p.slices);
      if ((p.start_mask >> s & 1u) && (free_mask & need) == need) {
        ++count;
      }
    }
  }
  return count;
}

int32_t ChooseMigStart(const MigGeometry& geometry, const MigProfile& profile, uint8_t free_mask) {
  int32_t best = -1;
  int32_t best_left = -1;
  for (int32_t s = 0; s + profile.slices <= geometry.total_slices; ++s) {
    const uint8_t need = MigSliceMask(s, profile.slices);
    if (!(profile.start_mask >> s & 1u) || (free_mask & need) != need) {
      continue;
    }
    const int32_t left = CountMigPlacements(geometry, static_cast<uint8_t>(free_mask & ~need));
    if (left > best_left) {
      best_left = left;
      best = s;
    }
  }
  return best;
}

}  // namespace gpuaas::sched
