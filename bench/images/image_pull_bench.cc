// Pulls one image into a fresh image store and reports the time from the first request to the
// registry to the last layer unpacked (mb_per_s: unpacked MB over that time), then times a
// second (cached) pull.
//   image_pull_bench --root DIR --reference HOST/PATH@sha256:... [--insecure]
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/time/clock.h"
#include "services/agent/images/image_store.h"

int main(int argc, char** argv) {
  gpuaas::agent::ImageStoreOptions options;
  std::string reference;
  bool insecure = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--root") == 0 && i + 1 < argc) {
      options.root = argv[++i];
    } else if (std::strcmp(argv[i], "--reference") == 0 && i + 1 < argc) {
      reference = argv[++i];
    } else if (std::strcmp(argv[i], "--insecure") == 0) {
      insecure = true;
    } else {
      std::fprintf(stderr, "usage: %s --root DIR --reference REF [--insecure]\n", argv[0]);
      return 2;
    }
  }
  if (insecure) {
    // Plain HTTP (or unverified TLS) to the reference's own registry only.
    auto registry = gpuaas::registry::RegistryOfReference(reference);
    auto policy = registry.ok()
                      ? gpuaas::registry::RegistryPolicy::Create({}, {registry->HostPort()})
                      : registry.status();
    if (!policy.ok()) {
      std::fprintf(stderr, "--reference: %s\n", policy.status().ToString().c_str());
      return 2;
    }
    options.registries = *std::move(policy);
  }
  auto store = gpuaas::agent::ImageStore::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  const absl::Time start = absl::Now();
  absl::Time planned = start;
  int64_t blob_bytes = 0;
  auto image = (*store)->Pull(reference, nullptr, [&](const gpuaas::agent::PullProgress& p) {
    std::fprintf(stderr, "%.3f s: %d/%d layers, %.1f/%.1f MB\n",
                 absl::ToDoubleSeconds(absl::Now() - start), p.layers_done, p.layers_total,
                 static_cast<double>(p.bytes_done) / 1e6, static_cast<double>(p.bytes_total) / 1e6);
    if (p.layers_done == 0) {  // the manifest is read; downloads start
      planned = absl::Now();
      blob_bytes = p.bytes_total;
    }
  });
  const absl::Time unpacked = absl::Now();
  if (!image.ok()) {
    std::fprintf(stderr, "%s\n", image.status().ToString().c_str());
    return 1;
  }
  auto cached = (*store)->Pull(reference, nullptr, nullptr);
  const absl::Duration cached_time = absl::Now() - unpacked;
  const double seconds = absl::ToDoubleSeconds(unpacked - start);
  std::printf(
      "{\"layers\": %zu, \"blob_mb\": %.1f, \"unpacked_mb\": %.1f, \"manifest_s\": %.2f, "
      "\"total_s\": %.2f, \"mb_per_s\": %.1f, \"cached_pull_ms\": %.3f, "
      "\"cached_ok\": %s}\n",
      image->layer_dirs.size(), static_cast<double>(blob_bytes) / 1e6,
      static_cast<double>(image->size_bytes) / 1e6, absl::ToDoubleSeconds(planned - start), seconds,
      static_cast<double>(image->size_bytes) / 1e6 / seconds,
      absl::ToDoubleMilliseconds(cached_time), cached.ok() ? "true" : "false");
  return 0;
}
