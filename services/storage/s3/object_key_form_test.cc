#include "services/storage/s3/object_key_form.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "services/storage/s3/errors.h"

namespace gpuaas::storage::s3 {
namespace {

TEST(ObjectKeyFormTest, TakesWhatMinioTakes) {
  for (const std::string& key : std::vector<std::string>{
           "a", "a/b/c.txt", "a..b/..c", "...", ".hidden", "a/.b", "with space", "%2F-literal",
           "back\\slash", "\xC3\xA9t\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC/\xF0\x9F\x98\x80",
           std::string(255, 'x') + "/" + std::string(255, 'y'),
           // folder markers, as the AWS console and s3fs make them
           "a/", "a/b/", "with space/"}) {
    EXPECT_TRUE(CheckObjectKey(key).ok()) << key << ": " << CheckObjectKey(key);
  }
}

TEST(ObjectKeyFormTest, RefusesWhatCannotBeAPathInsideTheBucket) {
  for (const std::string& key : std::vector<std::string>{"..",
                                                         ".",
                                                         "../x",
                                                         "a/../b",
                                                         "a/./b",
                                                         "a/..",
                                                         "/a",
                                                         "a//b",
                                                         "a//",
                                                         "/",
                                                         "../",
                                                         "a/../",
                                                         "./",
                                                         " .. /x",
                                                         "a\\..\\b",
                                                         "..\\x",
                                                         std::string("a\0b", 3),
                                                         "\xC3",
                                                         "\xED\xA0\x80",
                                                         "\xC0\xAF",
                                                         "\xFF",
                                                         std::string(256, 'x')}) {
    absl::Status status = CheckObjectKey(key);
    EXPECT_EQ(S3Code(status), "InvalidArgument") << key << ": " << status;
  }
  EXPECT_EQ(S3Code(CheckObjectKey(std::string(1025, 'a'))), "KeyTooLongError");
  const std::string segment(255, 's');
  EXPECT_TRUE(CheckObjectKey(segment + "/" + segment + "/" + segment + "/" + segment).ok());
}

}  // namespace
}  // namespace gpuaas::storage::s3
