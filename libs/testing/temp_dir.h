// Test helper: a private temporary directory removed at scope exit, so tests stay hermetic.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace gpuaas::testing {

class TempDir final {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpuaas_test.XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gpuaas::testing
