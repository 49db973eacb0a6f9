// Throughput of the local backend on this machine's disk: one 1 GiB object written in 1 MiB
// chunks (with and without sync_writes) and read back, and 10 KB objects one after another.
// Built, not run by ctest: `build/services/storage/local/storage_local_benchmark`.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/local/local_backend.h"

namespace gpuaas::storage::local {
namespace {

constexpr int64_t kChunk = 1 << 20;
constexpr VolumeLimits kRoomy{int64_t{1} << 40, 10'000'000};

struct Fixture {
  explicit Fixture(bool sync) {
    backend = *NewLocalBackend(LocalBackendOptions{(temp.path() / "data").string(), sync});
    (void)backend->CreateVolume("vol", kRoomy);
    volume = *backend->OpenVolume("vol", kRoomy);
  }
  testing::TempDir temp;
  std::unique_ptr<Backend> backend;
  std::shared_ptr<Volume> volume;
};

void WriteObject(Volume& volume, const std::string& key, int64_t size, const std::string& chunk,
                 benchmark::State& state) {
  auto writer = volume.Create(key, size, "application/octet-stream");
  if (!writer.ok()) {
    state.SkipWithError(std::string(writer.status().message()).c_str());
    return;
  }
  for (int64_t done = 0; done < size; done += static_cast<int64_t>(chunk.size())) {
    if (!(*writer)->Write(chunk).ok()) {
      state.SkipWithError("write failed");
      return;
    }
  }
  if (!(*writer)->Commit().ok()) {
    state.SkipWithError("commit failed");
  }
}

void BM_LocalBackend_Write1GiB(benchmark::State& state) {
  const bool sync = state.range(0) != 0;
  Fixture fixture(sync);
  const int64_t size = int64_t{1} << 30;
  const std::string chunk(kChunk, 'x');
  for (auto _ : state) {
    WriteObject(*fixture.volume, "big.bin", size, chunk, state);
  }
  state.SetBytesProcessed(state.iterations() * size);
}
BENCHMARK(BM_LocalBackend_Write1GiB)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("sync")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

void BM_LocalBackend_Read1GiB(benchmark::State& state) {
  Fixture fixture(false);
  const int64_t size = int64_t{1} << 30;
  const std::string chunk(kChunk, 'x');
  WriteObject(*fixture.volume, "big.bin", size, chunk, state);
  std::string buffer(kChunk, '\0');
  for (auto _ : state) {
    auto reader = *fixture.volume->Open("big.bin");
    int64_t offset = 0;
    while (true) {
      auto n = reader->ReadAt(offset, buffer.data(), buffer.size());
      if (!n.ok() || *n == 0) {
        break;
      }
      offset += static_cast<int64_t>(*n);
    }
    benchmark::DoNotOptimize(offset);
  }
  state.SetBytesProcessed(state.iterations() * size);
}
BENCHMARK(BM_LocalBackend_Read1GiB)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_LocalBackend_Put10KB(benchmark::State& state) {
  const bool sync = state.range(0) != 0;
  Fixture fixture(sync);
  const std::string data(10'000, 'x');
  int64_t i = 0;
  for (auto _ : state) {
    WriteObject(*fixture.volume, absl::StrCat("small/", i++), 10'000, data, state);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LocalBackend_Put10KB)->Arg(0)->Arg(1)->ArgName("sync")->UseRealTime();

}  // namespace
}  // namespace gpuaas::storage::local
