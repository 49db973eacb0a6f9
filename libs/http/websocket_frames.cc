#include "libs/http/websocket_frames.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "absl/strings/str_cat.h"

namespace gpuaas::http {
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
constexpr size_t kMaxControl = 125;

bool IsControl(uint8_t opcode) { return (opcode & 0x8) != 0; }

}  // namespace

std::string WebSocketAccept(std::string_view key) {
  std::string joined(key);
  joined.append(kGuid);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(joined.data()), joined.size(), digest);
  unsigned char out[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
  return std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n));
}

std::string EncodeWsFrame(WsOpcode opcode, std::string_view payload) {
  if (IsControl(static_cast<uint8_t>(opcode)) && payload.size() > kMaxControl) {
    payload = payload.substr(0, kMaxControl);
  }
  std::string frame;
  frame.push_back(static_cast<char>(0x80 | static_cast<uint8_t>(opcode)));
  const uint64_t n = payload.size();
  if (n < 126) {
    frame.push_back(static_cast<char>(n));
  } else if (n <= 0xFFFF) {
    frame.push_back(static_cast<char>(126));
    frame.push_back(static_cast<char>(n >> 8));
    frame.push_back(static_cast<char>(n & 0xFF));
  } else {
    frame.push_back(static_cast<char>(127));
    for (int shift = 56; shift >= 0; shift -= 8) frame.push_back(static_cast<char>(n >> shift));
  }
  frame.append(payload);
  return frame;
}

absl::StatusOr<std::vector<WsMessage>> WsParser::Feed(std::string_view bytes) {
  pending_.append(bytes);
  std::vector<WsMessage> out;
  for (;;) {
    const auto* p = reinterpret_cast<const unsigned char*>(pending_.data());
    const size_t have = pending_.size();
    if (have < 2) break;
    const bool fin = (p[0] & 0x80) != 0;
    const uint8_t opcode = p[0] & 0x0F;
    if ((p[0] & 0x70) != 0) return absl::InvalidArgumentError("reserved bits set");
    if ((p[1] & 0x80) == 0) return absl::InvalidArgumentError("a client's frame must be masked");
    uint64_t length = p[1] & 0x7F;
    size_t at = 2;
    if (length == 126) {
      if (have < 4) break;
      length = (uint64_t{p[2]} << 8) | p[3];
      at = 4;
    } else if (length == 127) {
      if (have < 10) break;
      length = 0;
      for (int i = 0; i < 8; ++i) length = (length << 8) | p[2 + i];
      at = 10;
    }
    if (IsControl(opcode) && (length > kMaxControl || !fin)) {
      return absl::InvalidArgumentError("a control frame must be whole and at most 125 bytes");
    }
    const size_t so_far = fragmented_ ? fragmented_->payload.size() : 0;
    if (length > max_message_ || so_far + length > max_message_) {
      return absl::ResourceExhaustedError("message too big");
    }
    if (have < at + 4 + length) break;
    const unsigned char* mask = p + at;
    std::string payload(static_cast<size_t>(length), '\0');
    for (size_t i = 0; i < length; ++i) {
      payload[i] = static_cast<char>(p[at + 4 + i] ^ mask[i % 4]);
    }
    pending_.erase(0, at + 4 + static_cast<size_t>(length));

    if (IsControl(opcode)) {
      out.push_back({static_cast<WsOpcode>(opcode), std::move(payload)});
      continue;
    }
    if (opcode == static_cast<uint8_t>(WsOpcode::kContinuation)) {
      if (!fragmented_) return absl::InvalidArgumentError("a continuation without a start");
      fragmented_->payload.append(payload);
    } else if (opcode == static_cast<uint8_t>(WsOpcode::kText) ||
               opcode == static_cast<uint8_t>(WsOpcode::kBinary)) {
      if (fragmented_) return absl::InvalidArgumentError("a new message inside a fragmented one");
      fragmented_ = WsMessage{static_cast<WsOpcode>(opcode), std::move(payload)};
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown opcode ", static_cast<int>(opcode)));
    }
    if (fin) {
      out.push_back(*std::move(fragmented_));
      fragmented_.reset();
    }
  }
  return out;
}

}  // namespace gpuaas::http
