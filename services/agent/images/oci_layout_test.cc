#include "services/agent/images/oci_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kHex[] = "9834876dcfb05cb167a5c24953eba58c4ac89b1adf57f28f2f9d09af107ee8f0";

// A manifest with one layer per size, each given as its JSON text.
std::string ManifestWithSizes(std::initializer_list<const char*> sizes) {
  std::string layers;
  for (const char* size : sizes) {
    absl::StrAppend(&layers, layers.empty() ? "" : ",",
                    R"({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", )",
                    R"("digest": "sha256:)", kHex, R"(", "size": )", size, "}");
  }
  return absl::StrCat(R"({"schemaVersion": 2, "config": {"digest": "sha256:)", kHex,
                      R"(", "size": 7023}, "layers": [)", layers, "]}");
}

TEST(ParseManifest, ReadsConfigAndLayers) {
  auto manifest = ParseManifest(ManifestWithSizes({"32654", "0"}));
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->config_hex, kHex);
  ASSERT_EQ(manifest->layers.size(), 2u);
  EXPECT_EQ(manifest->layers[0].size, 32654);
  EXPECT_EQ(manifest->layers[1].size, 0);
}

// Found by tests/fuzz (oci_manifest): a registry's "size": 1e300 converted to int64 with
// undefined behaviour, and 2^64-1 became -1; sizes that add up past int64 overflowed the pull's
// progress.
TEST(ParseManifest, RefusesSizesThatAreNotWholeNumbersOfBytes) {
  for (const char* size : {"1e300", "-1", "1.5", "18446744073709551615", "\"12\"", "null"}) {
    EXPECT_THAT(ParseManifest(ManifestWithSizes({size})),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size")))
        << size;
  }
  EXPECT_THAT(ParseManifest(ManifestWithSizes({"9223372036854775807", "1"})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size")));
  auto largest = ParseManifest(ManifestWithSizes({"9223372036854775806", "1"}));
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_EQ(largest->layers[0].size, 9223372036854775806);
}

}  // namespace
}  // namespace gpuaas::agent
