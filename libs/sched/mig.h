// NVIDIA MIG geometry: which profiles a GPU model offers, how many memory slices each takes
// and at which slices an instance may start (NVIDIA MIG user guide, "Supported profiles").
// A GPU's MIG state is a bit mask of free memory slices (bit i = slice i free).
#pragma once

#include <cstdint>
#include <span>

#include "absl/strings/string_view.h"

namespace gpuaas::sched {

struct MigProfile {
  absl::string_view name;  // e.g. "3g.20gb"
  int32_t slices = 0;      // memory slices taken
  uint8_t start_mask = 0;  // bit i set = may start at slice i
};

struct MigGeometry {
  absl::string_view model;  // canonical GPU model name, e.g. "A100-40GB"
  int32_t total_slices = 0;
  std::span<const MigProfile> profiles;
};

// The geometry of `gpu_model` (canonical names A100-40GB, A100-80GB, H100-80GB, A30, or their
// NVML spellings such as "NVIDIA A100-SXM4-80GB"), or nullptr when the model has no MIG.
const MigGeometry* FindMigGeometry(absl::string_view gpu_model);

// The profile called `name` on `geometry`, or nullptr.
const MigProfile* FindMigProfile(const MigGeometry& geometry, absl::string_view name);

// The mask of all slices of a fresh MIG GPU.
uint8_t FullMigMask(const MigGeometry& geometry);

inline uint8_t MigSliceMask(int32_t start, int32_t slices) {
  return static_cast<uint8_t>(((1u << slices) - 1u) << start);
}

// Where to start `profile` in a GPU whose free slices are `free_mask`: among the legal starts
// whose slices are all free, the one that keeps the most placements of every profile
// possible afterwards (ties: lowest start). Returns -1 when none fits.
int32_t ChooseMigStart(const MigGeometry& geometry, const MigProfile& profile, uint8_t free_mask);

// How many (profile, start) placements still fit in `free_mask`; a flexibility measure.
int32_t CountMigPlacements(const MigGeometry& geometry, uint8_t free_mask);

}  // namespace gpuaas::sched
