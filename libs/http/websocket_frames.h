// RFC 6455's wire format, as a server speaks it: the handshake's accept key, frames to a client
// (never masked), and a parser of a client's frames (always masked, or the connection is
// failed). Pure functions and a byte-fed parser: no socket, so the gateway's session loop owns
// every read and write of a connection (one thread, which TLS needs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::http {

enum class WsOpcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// Sec-WebSocket-Accept for a request's Sec-WebSocket-Key: base64(SHA-1(key + the RFC's GUID)).
std::string WebSocketAccept(std::string_view key);

// One whole frame to a client: FIN set, unmasked. Control frames (close, ping, pong) carry at
// most 125 bytes; a longer payload is cut there.
std::string EncodeWsFrame(WsOpcode opcode, std::string_view payload);

// A whole message from the client (fragments joined), or a control frame.
struct WsMessage {
  WsOpcode opcode = WsOpcode::kBinary;  // kText, kBinary, kClose, kPing or kPong
  std::string payload;
};

class WsParser final {
 public:
  // Messages longer than `max_message` fail the connection (1009).
  explicit WsParser(size_t max_message = 1 << 20) : max_message_(max_message) {}

  // Takes bytes as read; returns the messages they complete, in order. Errors (the connection
  // must then be closed, with the status' message as the reason): INVALID_ARGUMENT for an
  // unmasked or malformed frame, a control frame over 125 bytes or fragmented, a continuation
  // without a start; RESOURCE_EXHAUSTED past max_message.
  absl::StatusOr<std::vector<WsMessage>> Feed(std::string_view bytes);

 private:
  const size_t max_message_;
  std::string pending_;                  // bytes of a frame not yet whole
  std::optional<WsMessage> fragmented_;  // a data message whose last fragment has not come
};

}  // namespace gpuaas::http
