// Object keys as S3 clients send them in a path or x-amz-copy-source, before any reaches the
// storage backend (services/storage/s3/object_key_form.h): no crash, no UB, and an accepted key
// is a relative path with no "." or ".." segment (at "/" or "\\"), no NUL and no empty segment,
// but for one trailing "/" (a folder marker's key, "a/b/").
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "services/storage/s3/object_key_form.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  std::string_view key = gpuaas::fuzz::AsText(data, size);
  if (!gpuaas::storage::s3::CheckObjectKey(key).ok()) {
    return 0;
  }
  if (key.empty() || key.size() > 1024 || key.front() == '/' ||
      key.find('\0') != std::string_view::npos) {
    Fail("an accepted key is empty, too long, absolute or holds a NUL");
  }
  std::string_view path = key;
  if (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);  // a folder marker's key
  }
  for (absl::string_view segment : absl::StrSplit(gpuaas::fuzz::Av(path), '/')) {
    if (segment.empty() || segment.size() > 255) {
      Fail("an accepted key has an empty or over-long segment");
    }
    for (absl::string_view part : absl::StrSplit(segment, '\\')) {
      part = absl::StripAsciiWhitespace(part);
      if (part == "." || part == "..") {
        Fail("an accepted key has a '.' or '..' segment");
      }
    }
  }
  return 0;
}
