// What one layer may cost the node's disk when it is unpacked: a layer is hostile input (a
// decompression bomb, a tar of a million empty files, a sparse file that claims a terabyte), so
// each limit stops the unpack and fails the pull, never the node. The agent's flags set them
// (services/agent/README.md); the defaults fit the largest real images (CUDA and PyTorch images
// unpack to 10-20 GB in a few hundred thousand files).
#pragma once

#include <cstdint>

namespace gpuaas::agent {

struct UnpackLimits {
  // Bytes of regular files, as their tar headers declare them (a sparse file counts whole).
  int64_t max_layer_bytes = 32LL << 30;
  int64_t max_image_bytes = 64LL << 30;
  // Tar entries of every kind.
  int64_t max_layer_entries = 1'000'000;
  int64_t max_image_entries = 2'000'000;
  // Unpacked bytes per blob byte read, checked once a layer has unpacked ratio_floor_bytes
  // (small layers of text compress well and cost nothing). gzip's best is about 1000.
  int64_t max_ratio = 100;
  int64_t ratio_floor_bytes = 64 << 20;
  // Free space left on the layers' filesystem: an unpack stops before it takes the last of it.
  int64_t min_free_bytes = 2LL << 30;
};

}  // namespace gpuaas::agent
