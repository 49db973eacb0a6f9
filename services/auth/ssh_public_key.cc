#include "services/auth/ssh_public_key.h"

#include <array>
#include <cstdint>
#include <optional>

#include "absl/strings/escaping.h"
#include "libs/service/validate.h"

namespace gpuaas::auth {
namespace {

using service::InvalidField;

// abseil's string_view is not std's in Debian's build: the text here stays in std's.
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

std::string_view StripSpaces(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

constexpr size_t kMaxLine = 8 << 10;
constexpr size_t kMaxComment = 256;
constexpr int kMaxKeys = 16;
constexpr int kMinRsaBits = 2048;

constexpr std::array<std::string_view, 7> kKeyTypes = {
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
};

// The wire format of RFC 4251 §5: a sequence of uint32-length-prefixed strings.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : rest_(data) {}

  std::optional<std::string_view> Next() {
    if (rest_.size() < 4) return std::nullopt;
    const uint32_t n = (uint32_t{static_cast<uint8_t>(rest_[0])} << 24) |
                       (uint32_t{static_cast<uint8_t>(rest_[1])} << 16) |
                       (uint32_t{static_cast<uint8_t>(rest_[2])} << 8) |
                       uint32_t{static_cast<uint8_t>(rest_[3])};
    rest_.remove_prefix(4);
    if (n > rest_.size()) return std::nullopt;
    std::string_view s = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return s;
  }
  bool AtEnd() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// The number of significant bits of an mpint's magnitude.
int MpintBits(std::string_view mpint) {
  while (!mpint.empty() && mpint.front() == '\0') mpint.remove_prefix(1);
  if (mpint.empty()) return 0;
  int bits = static_cast<int>(mpint.size() - 1) * 8;
  for (auto top = static_cast<uint8_t>(mpint.front()); top != 0; top >>= 1) ++bits;
  return bits;
}

// The fields after the type, by type (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709, PROTOCOL.u2f).
absl::Status CheckKeyFields(std::string_view field, std::string_view type, WireReader& in) {
  const auto bad = [&] { return InvalidField(field, Cat({"not a valid ", type, " key"})); };
  if (type == "ssh-rsa") {
    std::optional<std::string_view> e = in.Next();
    std::optional<std::string_view> n = in.Next();
    if (!e || !n || MpintBits(*e) == 0) return bad();
    if (MpintBits(*n) < kMinRsaBits) {
      return InvalidField(field, Cat({"an RSA key of ", std::to_string(MpintBits(*n)),
                                      " bits; at least 2048 are needed"}));
    }
  } else if (type == "ssh-ed25519" || type == "sk-ssh-ed25519@openssh.com") {
    std::optional<std::string_view> pk = in.Next();
    if (!pk || pk->size() != 32) return bad();
  } else {
    // ecdsa-sha2-<curve> and sk-ecdsa-sha2-nistp256@openssh.com: the curve, then its point.
    std::optional<std::string_view> curve = in.Next();
    std::optional<std::string_view> point = in.Next();
    const bool sk = type.starts_with("sk-");
    const std::string_view want =
        type.substr(std::string_view("ecdsa-sha2-").size() + (sk ? 3 : 0), 8);
    if (!curve || *curve != want || !point || point->empty()) return bad();
  }
  if (type.starts_with("sk-")) {
    std::optional<std::string_view> application = in.Next();
    if (!application) return bad();
  }
  return in.AtEnd() ? absl::OkStatus() : bad();
}

bool IsPrintable(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> CanonicalSshPublicKey(std::string_view field, std::string_view line) {
  line = StripSpaces(line);
  if (line.empty()) return InvalidField(field, "required");
  if (line.size() > kMaxLine) return InvalidField(field, "longer than 8 KiB");
  if (!IsPrintable(line)) {
    return InvalidField(field, "one line of printable text (a key per entry)");
  }
  const size_t type_end = line.find(' ');
  const std::string_view type = line.substr(0, type_end);
  bool known = false;
  for (std::string_view t : kKeyTypes) known = known || t == type;
  if (!known) {
    return InvalidField(field,
                        "must start with a key type (ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa, "
                        "...); options such as command= are not taken");
  }
  if (type_end == std::string_view::npos) return InvalidField(field, "the key's base64 is missing");
  std::string_view rest = StripSpaces(line.substr(type_end));
  const size_t blob_end = rest.find(' ');
  const std::string_view blob = rest.substr(0, blob_end);
  const std::string_view comment =
      blob_end == std::string_view::npos ? std::string_view() : StripSpaces(rest.substr(blob_end));
  std::string decoded;
  // Canonical base64 only: what decodes must encode back to the same text.
  const absl::string_view blob_text(blob.data(), blob.size());
  if (!absl::Base64Unescape(blob_text, &decoded) || absl::Base64Escape(decoded) != blob_text) {
    return InvalidField(field, "the key is not valid base64");
  }
  WireReader in(decoded);
  std::optional<std::string_view> inner_type = in.Next();
  if (!inner_type || *inner_type != type) {
    return InvalidField(field, Cat({"the key's data is not a ", type, " key"}));
  }
  if (absl::Status s = CheckKeyFields(field, type, in); !s.ok()) return s;
  if (comment.size() > kMaxComment) return InvalidField(field, "comment longer than 256 bytes");
  return comment.empty() ? Cat({type, " ", blob}) : Cat({type, " ", blob, " ", comment});
}

absl::StatusOr<std::vector<std::string>> CanonicalSshPublicKeys(
    std::string_view field, const google::protobuf::RepeatedPtrField<std::string>& keys) {
  if (keys.size() > kMaxKeys) return InvalidField(field, "at most 16 keys");
  std::vector<std::string> out;
  std::vector<std::string> bodies;  // "TYPE BASE64": the same key under another comment is twice
  for (int i = 0; i < keys.size(); ++i) {
    const std::string at = Cat({field, "[", std::to_string(i), "]"});
    absl::StatusOr<std::string> key = CanonicalSshPublicKey(at, keys[i]);
    if (!key.ok()) return key.status();
    std::string body = key->substr(0, key->find(' ', key->find(' ') + 1));
    for (size_t j = 0; j < bodies.size(); ++j) {
      if (bodies[j] == body) {
        return InvalidField(at, Cat({"the same key as ", field, "[", std::to_string(j), "]"}));
      }
    }
    bodies.push_back(std::move(body));
    out.push_back(*std::move(key));
  }
  return out;
}

}  // namespace gpuaas::auth
