#include "services/agent/images/bounded_json.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/images/oci_layout.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(BoundedJsonTest, RefusesTooLongAndTooDeepBeforeParsing) {
  EXPECT_THAT(
      ParseBoundedJson(std::string(101, ' '), "manifest", 100),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than the limit of 100")));
  EXPECT_THAT(ParseBoundedJson(Nested(kMaxJsonDepth + 1), "manifest", 1000),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper")));
  // Unbalanced and deep: refused by the scan all the same, never handed to the parser.
  EXPECT_THAT(ParseBoundedJson(std::string(1'000'000, '{'), "manifest", 1 << 20),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper")));
  EXPECT_THAT(ParseBoundedJson("{nope", "manifest", 100),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not JSON")));
}

TEST(BoundedJsonTest, BracketsInStringsDoNotCountAndTheDeepestAllowedParses) {
  const std::string text = R"({"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"[[[[","b":)" +
                           Nested(kMaxJsonDepth - 1) + "}";
  absl::StatusOr<nlohmann::json> parsed = ParseBoundedJson(text, "config", 1000);
  ASSERT_OK(parsed.status());
  EXPECT_TRUE(parsed->contains("b"));
}

TEST(BoundedJsonTest, ReadBoundedFileRefusesALargerFileAndNamesAMissingOne) {
  gpuaas::testing::TempDir temp;
  const std::string path = (temp.path() / "f").string();
  std::ofstream(path) << std::string(11, 'x');
  EXPECT_THAT(ReadBoundedFile(path, "config", 10),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("config")));
  EXPECT_EQ(ReadBoundedFile(path, "config", 11).value_or(""), std::string(11, 'x'));
  EXPECT_THAT(ReadBoundedFile(path + ".missing", "config", 10),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(BoundedJsonTest, AManifestListingTooManyLayersOrANegativeSizeIsRefused) {
  std::string layers;
  for (size_t i = 0; i <= kMaxDescriptors; ++i) {
    layers += std::string(i == 0 ? "" : ",") +
              R"({"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:)" +
              std::string(64, 'a') + R"(","size":1})";
  }
  const std::string config = R"({"digest":"sha256:)" + std::string(64, 'b') + R"(","size":1})";
  EXPECT_THAT(ParseManifest(R"({"config":)" + config + R"(,"layers":[)" + layers + "]}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 1000 layers")));
  EXPECT_THAT(
      ParseManifest(
          R"({"config":)" + config +
          R"(,"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:)" +
          std::string(64, 'a') + R"(","size":-5}]})"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size must be a whole number")));
}

}  // namespace
}  // namespace gpuaas::agent
