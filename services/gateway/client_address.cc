#include "services/gateway/client_address.h"

#include <arpa/inet.h>

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::gateway {
namespace {

using Bytes = std::array<unsigned char, 16>;

// `text` as 16 bytes (IPv4 mapped into IPv6), and whether it was IPv4.
std::optional<std::pair<Bytes, bool>> ParseIp(absl::string_view text) {
  const std::string s(text);
  Bytes b{};
  if (inet_pton(AF_INET, s.c_str(), b.data() + 12) == 1) {
    b[10] = b[11] = 0xff;
    return std::make_pair(b, true);
  }
  if (inet_pton(AF_INET6, s.c_str(), b.data()) == 1) {
    return std::make_pair(b, false);
  }
  return std::nullopt;
}

bool PrefixMatches(const Bytes& a, const Bytes& b, int prefix) {
  for (int i = 0; i < 16 && prefix > 0; ++i, prefix -= 8) {
    const unsigned mask = prefix >= 8 ? 0xffu : (0xffu << (8 - prefix)) & 0xffu;
    if ((a[i] & mask) != (b[i] & mask)) return false;
  }
  return true;
}

// One hop of X-Forwarded-For ("203.0.113.7", "2001:db8::1") or a Forwarded `for=` value
// ("203.0.113.7:4711", "\"[2001:db8::1]:4711\""), as a bare IP literal; nullopt for anything
// else ("unknown", obfuscated identifiers, garbage).
std::optional<std::string> HopAddress(absl::string_view hop) {
  hop = absl::StripAsciiWhitespace(hop);
  if (absl::ConsumePrefix(&hop, "\"")) {
    if (!absl::ConsumeSuffix(&hop, "\"")) return std::nullopt;
  }
  if (absl::ConsumePrefix(&hop, "[")) {
    const size_t close = hop.find(']');
    if (close == absl::string_view::npos) return std::nullopt;
    hop = hop.substr(0, close);
  } else if (std::count(hop.begin(), hop.end(), ':') == 1) {
    hop = hop.substr(0, hop.find(':'));  // IPv4 with a port
  }
  if (!ParseIp(hop)) return std::nullopt;
  return std::string(hop);
}

// Every value of header `name`, its comma-separated elements in order (nearest last).
std::vector<std::string> Elements(const http::HttpRequest& req, const std::string& name) {
  std::vector<std::string> out;
  auto [begin, end] = req.headers.equal_range(name);
  for (auto it = begin; it != end; ++it) {
    for (absl::string_view e : absl::StrSplit(it->second, ',')) out.emplace_back(e);
  }
  return out;
}

// The hops the trusted peer reports, farthest first; nullopt-like entries for unusable ones.
std::vector<std::optional<std::string>> Hops(const http::HttpRequest& req) {
  std::vector<std::optional<std::string>> hops;
  std::vector<std::string> forwarded = Elements(req, "Forwarded");
  if (!forwarded.empty()) {
    for (const std::string& element : forwarded) {
      std::optional<std::string> addr;
      for (absl::string_view pair : absl::StrSplit(element, ';')) {
        pair = absl::StripAsciiWhitespace(pair);
        if (absl::StartsWithIgnoreCase(pair, "for=")) addr = HopAddress(pair.substr(4));
      }
      hops.push_back(addr);
    }
    return hops;
  }
  for (const std::string& hop : Elements(req, "X-Forwarded-For")) hops.push_back(HopAddress(hop));
  return hops;
}

}  // namespace

absl::StatusOr<TrustedProxies> TrustedProxies::Parse(absl::string_view flag,
                                                     absl::string_view list) {
  TrustedProxies t;
  for (absl::string_view entry : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t slash = entry.find('/');
    std::optional<std::pair<Bytes, bool>> ip = ParseIp(entry.substr(0, slash));
    int prefix = -1;
    if (ip) {
      prefix = ip->second ? 32 : 128;
      if (slash != absl::string_view::npos &&
          (!absl::SimpleAtoi(entry.substr(slash + 1), &prefix) || prefix < 0 ||
           prefix > (ip->second ? 32 : 128))) {
        prefix = -1;
      }
    }
    if (prefix < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": \"", entry, "\" is not an address or CIDR"));
    }
    t.ranges_.push_back(Range{.bytes = ip->first, .prefix = ip->second ? prefix + 96 : prefix});
  }
  return t;
}

bool TrustedProxies::Contains(absl::string_view address) const {
  std::optional<std::pair<Bytes, bool>> ip = ParseIp(address);
  if (!ip) return false;
  for (const Range& r : ranges_) {
    if (PrefixMatches(ip->first, r.bytes, r.prefix)) return true;
  }
  return false;
}

std::string ClientAddressOf(const http::HttpRequest& req, const TrustedProxies& trusted) {
  std::string client = req.remote_addr;
  if (!trusted.Contains(client)) return client;
  std::vector<std::optional<std::string>> hops = Hops(req);
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    if (!*it) break;
    client = **it;
    if (!trusted.Contains(client)) break;
  }
  return client;
}

client::CallContext& ClientVouching::Vouch(const http::HttpRequest& req,
                                           client::CallContext& call) const {
  if (tokens == nullptr) return call;
  absl::StatusOr<std::string> token = tokens->Get();
  if (!token.ok()) return call;
  return call.set_forwarded_client(*token, ClientAddressOf(req, trusted));
}

void ClientVouching::Vouch(const http::HttpRequest& req, grpc::ClientContext& ctx) const {
  if (tokens == nullptr) return;
  absl::StatusOr<std::string> token = tokens->Get();
  if (!token.ok()) return;
  ctx.AddMetadata(std::string(client::kForwarderKey), "Bearer " + *token);
  ctx.AddMetadata(std::string(client::kClientAddressKey), ClientAddressOf(req, trusted));
}

}  // namespace gpuaas::gateway
