// Test helpers for the local backend: a backend on a private temp dir with one volume, and
// one-call put/get on top of the streaming interfaces.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/local/local_backend.h"

namespace gpuaas::storage::local {

inline absl::StatusOr<ObjectInfo> Put(Volume& volume, std::string_view key, std::string_view data,
                                      std::string_view content_type = "") {
  absl::StatusOr<std::unique_ptr<ObjectWriter>> writer =
      volume.Create(key, static_cast<int64_t>(data.size()), content_type);
  if (!writer.ok()) {
    return writer.status();
  }
  absl::Status status = (*writer)->Write(data);
  if (!status.ok()) {
    return status;
  }
  return (*writer)->Commit();
}

inline absl::StatusOr<std::string> Get(Volume& volume, std::string_view key) {
  absl::StatusOr<std::unique_ptr<ObjectReader>> reader = volume.Open(key);
  if (!reader.ok()) {
    return reader.status();
  }
  std::string out;
  char buf[65536];
  while (true) {
    absl::StatusOr<size_t> n = (*reader)->ReadAt(static_cast<int64_t>(out.size()), buf, sizeof buf);
    if (!n.ok()) {
      return n.status();
    }
    if (*n == 0) {
      return out;
    }
    out.append(buf, *n);
  }
}

inline std::string ReadHostFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteHostFile(const std::filesystem::path& path, std::string_view data) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// A backend on a fresh data root with the volume "vol" open under generous limits.
class LocalBackendTest : public ::testing::Test {
 protected:
  static constexpr VolumeLimits kRoomy{int64_t{1} << 32, 1'000'000};

  void SetUp() override { OpenBackend(); }

  void OpenBackend(bool sync_writes = false) {
    volume_.reset();
    backend_.reset();
    absl::StatusOr<std::unique_ptr<Backend>> backend =
        NewLocalBackend(LocalBackendOptions{DataRoot().string(), sync_writes});
    ASSERT_OK(backend);
    backend_ = *std::move(backend);
    ASSERT_OK(backend_->CreateVolume("vol", kRoomy));
    absl::StatusOr<std::shared_ptr<Volume>> volume = backend_->OpenVolume("vol", kRoomy);
    ASSERT_OK(volume);
    volume_ = *std::move(volume);
  }

  std::filesystem::path DataRoot() const { return temp_.path() / "data"; }
  std::filesystem::path VolumeDir() const { return DataRoot() / "volumes" / "vol"; }
  // A directory beside the data root: "outside" for escape tests.
  std::filesystem::path Outside() const { return temp_.path() / "outside"; }

  testing::TempDir temp_;
  std::unique_ptr<Backend> backend_;
  std::shared_ptr<Volume> volume_;
};

}  // namespace gpuaas::storage::local
