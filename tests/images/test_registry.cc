#include "tests/images/test_registry.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::images_testing {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadFixtureFile(const std::string& name) {
  const fs::path path = fs::path(GPUAAS_TEST_REGISTRY_DIR) / name;
  std::ifstream in(path);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("no ", path.string(), ": declare the test with FIXTURES registry"));
  }
  std::stringstream s;
  s << in.rdbuf();
  return std::string(absl::StripSuffix(s.str(), "\n"));
}

// `images` lines: "<name> <reference by tag> <reference by digest>" (tools/registry push).
absl::StatusOr<std::vector<RegistryImage>> ParseImages(const std::string& file) {
  absl::StatusOr<std::string> text = ReadFixtureFile(file);
  if (!text.ok()) return text.status();
  std::vector<RegistryImage> images;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    const size_t at = fields.size() == 3 ? fields[2].find("@sha256:") : std::string::npos;
    if (at == std::string::npos) {
      return absl::FailedPreconditionError(absl::StrCat(
          file, ": expected \"<name> <tag reference> <digest reference>\", got \"", line, "\""));
    }
    images.push_back({fields[0], fields[1], fields[2], fields[2].substr(at + 1)});
  }
  return images;
}

absl::StatusOr<TestRegistry> ReadRegistry(const std::string& address_file,
                                          const std::string& images_file) {
  TestRegistry registry;
  absl::StatusOr<std::string> address = ReadFixtureFile(address_file);
  if (!address.ok()) return address.status();
  registry.address = *std::move(address);
  absl::StatusOr<std::vector<RegistryImage>> images = ParseImages(images_file);
  if (!images.ok()) return images.status();
  registry.images = *std::move(images);
  return registry;
}

}  // namespace

absl::StatusOr<RegistryImage> TestRegistry::Image(std::string_view name) const {
  for (const RegistryImage& image : images) {
    if (image.name == name) return image;
  }
  return absl::NotFoundError(
      absl::StrCat("the registry at ", address, " has no image ", std::string(name)));
}

absl::StatusOr<TestRegistry> OpenTestRegistry() { return ReadRegistry("address", "images"); }

absl::StatusOr<TestRegistry> LoginTestRegistry() {
  absl::StatusOr<TestRegistry> registry = ReadRegistry("auth-address", "auth-images");
  if (!registry.ok()) return registry;
  absl::StatusOr<std::string> login = ReadFixtureFile("credentials");
  if (!login.ok()) return login.status();
  const size_t colon = login->find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == login->size()) {
    return absl::FailedPreconditionError("credentials: expected USER:PASSWORD");
  }
  registry->username = login->substr(0, colon);
  registry->password = login->substr(colon + 1);
  return registry;
}

}  // namespace gpuaas::images_testing
