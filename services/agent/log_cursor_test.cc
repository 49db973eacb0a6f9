#include "services/agent/log_cursor.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "libs/testing/temp_dir.h"

namespace gpuaas::agent {
namespace {

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

std::string ReadAll(LogCursor& c, size_t max = 1 << 20) {
  std::string out;
  for (std::string s = c.ReadSome(max); !s.empty(); s = c.ReadSome(max)) out += s;
  return out;
}

TEST(LogCursorTest, TailTakesTheLastLines) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "stdout.log").string();
  Append(path, "one\ntwo\nthree\nfour\n");
  LogCursor c = LogCursor::AtTail(path, 2);
  EXPECT_EQ(ReadAll(c), "three\nfour\n");
}

TEST(LogCursorTest, TailCountsALineStillBeingWritten) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "stdout.log").string();
  Append(path, "one\ntwo\nthr");
  LogCursor c = LogCursor::AtTail(path, 2);
  EXPECT_EQ(ReadAll(c), "two\nthr");
}

TEST(LogCursorTest, TailReachesIntoTheRotatedHalf) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "stdout.log").string();
  Append(path + ".1", "a\nb\nc\n");
  Append(path, "d\n");
  LogCursor c = LogCursor::AtTail(path, 3);
  EXPECT_EQ(ReadAll(c), "b\nc\nd\n");
  LogCursor all = LogCursor::AtTail(path, 100);
  EXPECT_EQ(ReadAll(all), "a\nb\nc\nd\n");
}

TEST(LogCursorTest, MissingFilesReadEmptyUntilTheyAppear) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "stderr.log").string();
  LogCursor c = LogCursor::AtTail(path, 10);
  EXPECT_EQ(c.ReadSome(100), "");
  Append(path, "late\n");
  EXPECT_EQ(ReadAll(c), "late\n");
}

TEST(LogCursorTest, FollowsAppendsAndARotation) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "stdout.log").string();
  Append(path, "old\n");
  LogCursor c = LogCursor::AtTail(path, 1);
  EXPECT_EQ(ReadAll(c), "old\n");
  Append(path, "before rotation\n");
  // As the shim rotates: the full file becomes .1, a new one takes over.
  std::rename(path.c_str(), (path + ".1").c_str());
  Append(path, "after rotation\n");
  EXPECT_EQ(ReadAll(c), "before rotation\nafter rotation\n");
  Append(path, "more\n");
  EXPECT_EQ(ReadAll(c), "more\n");
}

TEST(LogCursorTest, ChunksEndAtALineWhenTheyCan) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "stdout.log").string();
  Append(path, "aaaa\nbbbb\ncccc\n");
  LogCursor c = LogCursor::AtTail(path, 100);
  EXPECT_EQ(c.ReadSome(12), "aaaa\nbbbb\n");
  EXPECT_EQ(c.ReadSome(12), "cccc\n");
}

}  // namespace
}  // namespace gpuaas::agent
