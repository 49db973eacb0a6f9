// Layer blobs (tar, tar+gzip, tar+zstd) as a registry serves them, unpacked by the agent's
// writer (services/agent/images/layer_unpack.h) into a temporary directory: no crash, no UB, and
// nothing is ever written beside the layer's own directory.
#include <openssl/evp.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "services/agent/images/layer_unpack.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace fs = std::filesystem;

std::string Sha256Hex(const uint8_t* data, size_t size) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data, size, digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    absl::StrAppend(&hex, absl::Hex(digest[i], absl::kZeroPad2));
  }
  return hex;
}

// <tmp>/gpuaas-layer-fuzz-XXXXXX/{blob, layers/}, made once per process: in memory
// (/dev/shm) unless TMPDIR says otherwise, which runs twice as many inputs as a disk does.
const fs::path& Root() {
  static const fs::path* root = [] {
    std::error_code ec;
    fs::path tmp = std::getenv("TMPDIR") == nullptr && fs::is_directory("/dev/shm", ec)
                       ? fs::path("/dev/shm")
                       : fs::temp_directory_path();
    std::string dir = (tmp / "gpuaas-layer-fuzz-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
      gpuaas::fuzz::Fail("mkdtemp failed");
    }
    fs::create_directory(fs::path(dir) / "layers");
    return new fs::path(dir);
  }();
  return *root;
}

struct RemoveRootAtExit {
  ~RemoveRootAtExit() {
    std::error_code ec;
    fs::remove_all(Root(), ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  static RemoveRootAtExit cleanup;
  const fs::path& root = Root();
  const fs::path blob = root / "blob";
  const fs::path layers = root / "layers";
  {
    std::ofstream out(blob, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const std::string hex = Sha256Hex(data, size);
  auto unpacked = gpuaas::agent::UnpackLayer(blob.string(), hex, layers.string());
  // Nothing beside the blob and the layers directory, and in it at most the layer itself.
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path() != blob && entry.path() != layers) {
      Fail("the unpack wrote outside its directory:", entry.path().string());
    }
  }
  for (const auto& entry : fs::directory_iterator(layers)) {
    if (!unpacked.ok() || entry.path().filename() != hex) {
      Fail("the unpack left something beside the layer:", entry.path().string());
    }
  }
  if (unpacked.ok() && *unpacked < 0) {
    Fail("a negative unpacked size");
  }
  std::error_code ec;
  fs::remove_all(layers / hex, ec);
  if (ec) {
    Fail("the unpacked layer cannot be removed:", ec.message());
  }
  return 0;
}
