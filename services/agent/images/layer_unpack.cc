#include "services/agent/images/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"
#include "services/agent/images/internal/layer_writer.h"

namespace gpuaas::agent {
namespace {

constexpr size_t kReadChunk = 1 << 20;

// The blob as libarchive reads it, every byte also going through sha256. A blob still being
// written has `complete`, asked at each end of the bytes written so far.
struct HashingReader {
  int fd = -1;
  EVP_MD_CTX* md = nullptr;
  const std::function<absl::StatusOr<bool>()>* complete = nullptr;
  bool whole = false;      // `complete` said so: the next end is the end
  int64_t max_bytes = -1;  // the most the blob may hold; -1: no bound
  int64_t bytes_read = 0;
  absl::Status error;
  std::vector<char> buffer = std::vector<char>(kReadChunk);
};

// The next bytes into reader.buffer: their count, 0 at the end, -1 on error (in reader.error).
ssize_t ReadMore(HashingReader& reader) {
  for (;;) {
    const ssize_t n = ::read(reader.fd, reader.buffer.data(), reader.buffer.size());
    if (n < 0) {
      reader.error = LayerErrnoError(errno, "reading the layer blob");
      return -1;
    }
    if (n > 0) {
      reader.bytes_read += n;
      if (reader.max_bytes >= 0 && reader.bytes_read > reader.max_bytes) {
        reader.error =
            absl::InvalidArgumentError(absl::StrCat("layer size: the blob holds more than the ",
                                                    reader.max_bytes, " bytes its manifest says"));
        return -1;
      }
      EVP_DigestUpdate(reader.md, reader.buffer.data(), static_cast<size_t>(n));
      return n;
    }
    if (reader.complete == nullptr || reader.whole) {
      return 0;
    }
    absl::StatusOr<bool> whole = (*reader.complete)();
    if (!whole.ok()) {
      reader.error = whole.status();
      return -1;
    }
    reader.whole = *whole;
  }
}

la_ssize_t ReadHashed(archive* a, void* data, const void** out) {
  auto* reader = static_cast<HashingReader*>(data);
  const ssize_t n = ReadMore(*reader);
  if (n < 0) {
    archive_set_error(a, EIO, "reading the layer blob");
    return -1;
  }
  *out = reader->buffer.data();
  return n;
}

// Hashes what libarchive left unread (the tar's end padding) and returns the hex digest.
absl::StatusOr<std::string> FinishDigest(HashingReader& reader) {
  for (;;) {
    const ssize_t n = ReadMore(reader);
    if (n < 0) {
      return reader.error;
    }
    if (n == 0) {
      break;
    }
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(reader.md, digest, &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    absl::StrAppend(&hex, absl::Hex(digest[i], absl::kZeroPad2));
  }
  return hex;
}

// Unpacks the blob open at `blob_fd` into `dir`. `sha256_hex` empty: the digest is not known
// yet (a blob still downloading); a failed unpack then ends at once rather than reading on.
absl::StatusOr<StreamedLayer> UnpackInto(int blob_fd, const std::string& sha256_hex,
                                         const std::function<absl::StatusOr<bool>()>* complete,
                                         const std::string& dir, const UnpackLimits& limits,
                                         int64_t max_blob_size) {
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    return LayerErrnoError(errno, "opening the layer directory");
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr);
  HashingReader reader{
      .fd = blob_fd, .md = md.get(), .complete = complete, .max_bytes = max_blob_size};
  LayerBudget budget(limits, root.get(), &reader.bytes_read);
  std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_format_tar(a.get());
  absl::StatusOr<int64_t> written;
  if (archive_read_open(a.get(), &reader, nullptr, ReadHashed, nullptr) != ARCHIVE_OK) {
    written = absl::InvalidArgumentError(
        absl::StrCat("unsafe layer: not a tar: ", archive_error_string(a.get())));
  } else {
    written = WriteLayerEntries(a.get(), root.get(), budget);
  }
  if (!reader.error.ok()) {
    return reader.error;
  }
  if (!written.ok() && sha256_hex.empty()) {
    return written.status();
  }
  // A corrupt blob usually shows first as a broken tar: the digest decides which it is.
  GPUAAS_ASSIGN_OR_RETURN(std::string actual, FinishDigest(reader));
  if (!sha256_hex.empty() && actual != sha256_hex) {
    return absl::DataLossError(absl::StrCat("digest mismatch: layer sha256:", sha256_hex,
                                            " has bytes hashing to sha256:", actual));
  }
  GPUAAS_RETURN_IF_ERROR(written.status());
  return StreamedLayer{
      .hex = std::move(actual), .size_bytes = *written, .entries = budget.entries()};
}

// Unpacks into a temporary directory in `layers_dir` and renames it to the layer's hex, keeping
// a layer another pull put there first.
absl::StatusOr<StreamedLayer> UnpackAndRename(int blob_fd, const std::string& sha256_hex,
                                              const std::function<absl::StatusOr<bool>()>* complete,
                                              const std::string& layers_dir,
                                              const UnpackLimits& limits, int64_t max_blob_size) {
  std::string temp =
      layers_dir + "/" + (sha256_hex.empty() ? "stream" : sha256_hex) + ".tmp-XXXXXX";
  if (::mkdtemp(temp.data()) == nullptr) {
    return LayerErrnoError(errno, "making a layer directory");
  }
  ::chmod(temp.c_str(), 0755);
  // Root's, as a layer's root is, also when a sandboxed unpacker of another uid made it.
  ::chown(temp.c_str(), 0, 0);
  absl::StatusOr<StreamedLayer> layer =
      UnpackInto(blob_fd, sha256_hex, complete, temp, limits, max_blob_size);
  if (layer.ok()) {
    const std::string dest = layers_dir + "/" + layer->hex;
    if (::rename(temp.c_str(), dest.c_str()) == 0) {
      return layer;
    }
    // ENOTEMPTY/EEXIST: a concurrent pull of an image sharing this layer finished first.
    if (errno != ENOTEMPTY && errno != EEXIST) {
      layer = LayerErrnoError(errno, "putting a layer in place");
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(temp, ignored);
  return layer;
}

}  // namespace

absl::StatusOr<int64_t> UnpackLayer(const std::string& blob_path, const std::string& sha256_hex,
                                    const std::string& layers_dir) {
  GPUAAS_ASSIGN_OR_RETURN(
      const StreamedLayer layer,
      UnpackLayerWithin(blob_path, sha256_hex, -1, layers_dir, UnpackLimits{.min_free_bytes = 0}));
  return layer.size_bytes;
}

absl::StatusOr<StreamedLayer> UnpackLayerWithin(const std::string& blob_path,
                                                const std::string& sha256_hex, int64_t blob_size,
                                                const std::string& layers_dir,
                                                const UnpackLimits& limits) {
  UniqueFd blob(::open(blob_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!blob.valid()) {
    return LayerErrnoError(errno, absl::StrCat("opening layer blob ", sha256_hex));
  }
  struct stat st;
  if (blob_size >= 0 && ::fstat(blob.get(), &st) == 0 && st.st_size != blob_size) {
    return absl::InvalidArgumentError(absl::StrCat("layer size: blob sha256:", sha256_hex,
                                                   " holds ", st.st_size,
                                                   " bytes, its manifest says ", blob_size));
  }
  return UnpackAndRename(blob.get(), sha256_hex, nullptr, layers_dir, limits, blob_size);
}

absl::StatusOr<StreamedLayer> UnpackGrowingLayer(
    int blob_fd, const std::function<absl::StatusOr<bool>()>& complete,
    const std::string& layers_dir, const UnpackLimits& limits, int64_t max_blob_size) {
  return UnpackAndRename(blob_fd, "", &complete, layers_dir, limits, max_blob_size);
}

}  // namespace gpuaas::agent
