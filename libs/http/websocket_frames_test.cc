#include "libs/http/websocket_frames.h"

#include <gtest/gtest.h>

namespace gpuaas::http {
namespace {

// RFC 6455's own examples (sections 1.3 and 5.7).
TEST(WebSocketFramesTest, TheRfcsExamples) {
  EXPECT_EQ(WebSocketAccept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(EncodeWsFrame(WsOpcode::kText, "Hello"), std::string("\x81\x05Hello", 7));

  WsParser parser;
  const std::string masked("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11);
  // Byte by byte: a frame is returned once whole.
  std::vector<WsMessage> got;
  for (char c : masked) {
    absl::StatusOr<std::vector<WsMessage>> some = parser.Feed(std::string_view(&c, 1));
    ASSERT_TRUE(some.ok()) << some.status();
    got.insert(got.end(), some->begin(), some->end());
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].opcode, WsOpcode::kText);
  EXPECT_EQ(got[0].payload, "Hello");
}

std::string Masked(uint8_t first, std::string_view payload) {
  std::string frame(1, static_cast<char>(first));
  const char mask[4] = {1, 2, 3, 4};
  if (payload.size() < 126) {
    frame.push_back(static_cast<char>(0x80 | payload.size()));
  } else {
    frame.push_back(static_cast<char>(0x80 | 126));
    frame.push_back(static_cast<char>(payload.size() >> 8));
    frame.push_back(static_cast<char>(payload.size() & 0xFF));
  }
  frame.append(mask, 4);
  for (size_t i = 0; i < payload.size(); ++i) frame.push_back(payload[i] ^ mask[i % 4]);
  return frame;
}

TEST(WebSocketFramesTest, FragmentsJoinAndControlFramesComeBetween) {
  WsParser parser;
  const std::string big(70000, 'x');
  absl::StatusOr<std::vector<WsMessage>> got = parser.Feed(
      Masked(0x02, big.substr(0, 40000)) + Masked(0x89, "ping") + Masked(0x80, big.substr(40000)));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].opcode, WsOpcode::kPing);
  EXPECT_EQ((*got)[1].opcode, WsOpcode::kBinary);
  EXPECT_EQ((*got)[1].payload, big);
  EXPECT_EQ(EncodeWsFrame(WsOpcode::kBinary, big).substr(0, 10),
            std::string("\x82\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10));
}

TEST(WebSocketFramesTest, BadFramesFailTheConnection) {
  EXPECT_FALSE(WsParser().Feed(std::string("\x81\x05Hello", 7)).ok()) << "unmasked";
  EXPECT_FALSE(WsParser().Feed(Masked(0x80, "orphan")).ok()) << "a continuation alone";
  EXPECT_FALSE(WsParser().Feed(Masked(0x09, "ping")).ok()) << "a fragmented control frame";
  EXPECT_FALSE(WsParser().Feed(Masked(0xC1, "x")).ok()) << "reserved bits";
  EXPECT_FALSE(WsParser().Feed(Masked(0x83, "x")).ok()) << "an unknown opcode";
  WsParser small(10);
  EXPECT_EQ(small.Feed(Masked(0x82, "eleven byte")).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace gpuaas::http
