// A browser's WebSocket bytes as the gateway's terminal reads them (libs/http/websocket_frames.h):
// fed in any split, the parser never crashes, never returns more than its message cap, never a
// control frame over 125 bytes; and any payload a client masks comes back whole, whichever way
// its bytes arrive.
#include <string>

#include "libs/http/websocket_frames.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using gpuaas::http::WsMessage;
using gpuaas::http::WsOpcode;
using gpuaas::http::WsParser;

constexpr size_t kMax = 4096;

// A client's frame: FIN, `opcode`, masked with a fixed key.
std::string Masked(WsOpcode opcode, std::string_view payload) {
  std::string frame(1, static_cast<char>(0x80 | static_cast<uint8_t>(opcode)));
  if (payload.size() < 126) {
    frame.push_back(static_cast<char>(0x80 | payload.size()));
  } else {
    frame.push_back(static_cast<char>(0x80 | 126));
    frame.push_back(static_cast<char>(payload.size() >> 8));
    frame.push_back(static_cast<char>(payload.size() & 0xFF));
  }
  const char mask[4] = {0x12, 0x34, 0x56, 0x78};
  frame.append(mask, 4);
  for (size_t i = 0; i < payload.size(); ++i) frame.push_back(payload[i] ^ mask[i % 4]);
  return frame;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  std::string_view bytes = gpuaas::fuzz::AsText(data, size);
  const size_t step = bytes.empty() ? 1 : 1 + static_cast<uint8_t>(bytes[0]) % 64;

  WsParser parser(kMax);
  for (size_t at = 0; at < bytes.size(); at += step) {
    absl::StatusOr<std::vector<WsMessage>> got = parser.Feed(bytes.substr(at, step));
    if (!got.ok()) break;
    for (const WsMessage& m : *got) {
      if (m.payload.size() > kMax) Fail("a message over the cap", bytes);
      if ((static_cast<uint8_t>(m.opcode) & 0x8) != 0 && m.payload.size() > 125) {
        Fail("a control frame over 125 bytes", bytes);
      }
    }
  }

  const std::string_view payload = bytes.substr(0, std::min(bytes.size(), kMax));
  const std::string frame = Masked(WsOpcode::kBinary, payload);
  WsParser again(kMax);
  std::string joined;
  for (size_t at = 0; at < frame.size(); at += step) {
    absl::StatusOr<std::vector<WsMessage>> got =
        again.Feed(std::string_view(frame).substr(at, step));
    if (!got.ok()) Fail("a client's well-formed frame refused", bytes);
    for (const WsMessage& m : *got) joined += m.payload;
  }
  if (joined != payload) Fail("a masked payload did not come back whole", bytes);
  return 0;
}
