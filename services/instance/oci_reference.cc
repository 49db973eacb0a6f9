#include "services/instance/oci_reference.h"

#include <arpa/inet.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "libs/service/validate.h"

namespace gpuaas::instance {
namespace {

constexpr size_t kMaxReference = 1024;
constexpr absl::string_view kSha256 = "sha256:";

bool IsLowerAlnum(char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z'); }

// A repository path component: [a-z0-9]+ joined by ".", "_", "__" or "-"s.
bool IsPathComponent(absl::string_view c) {
  if (c.empty() || !IsLowerAlnum(c.front()) || !IsLowerAlnum(c.back())) return false;
  for (char ch : c) {
    if (!IsLowerAlnum(ch) && ch != '.' && ch != '_' && ch != '-') return false;
  }
  return true;
}

// [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
bool IsTag(absl::string_view t) {
  if (t.empty() || t.size() > 128 || t.front() == '.' || t.front() == '-') return false;
  for (char ch : t) {
    if (!absl::ascii_isalnum(ch) && ch != '_' && ch != '.' && ch != '-') return false;
  }
  return true;
}

bool IsDigest(absl::string_view d) {
  if (!absl::StartsWith(d, kSha256) || d.size() != kSha256.size() + 64) return false;
  for (char ch : d.substr(kSha256.size())) {
    if (!absl::ascii_isdigit(ch) && !(ch >= 'a' && ch <= 'f')) return false;
  }
  return true;
}

// A host: letters, digits, ".", "-", an optional ":port", or a bracketed IPv6 address.
bool IsHost(absl::string_view h) {
  if (h.empty()) return false;
  for (char ch : h) {
    if (!absl::ascii_isalnum(ch) && ch != '.' && ch != '-' && ch != ':' && ch != '[' && ch != ']') {
      return false;
    }
  }
  return h.front() != '-' && h.front() != '.';
}

}  // namespace

std::string OciReference::ToString() const {
  if (!digest.empty()) return PinnedTo(digest);
  return absl::StrCat(host, "/", repository, ":", tag);
}

std::string OciReference::PinnedTo(std::string_view digest_text) const {
  const absl::string_view d(digest_text.data(), digest_text.size());
  return absl::StrCat(host, "/", repository, "@", d);
}

absl::StatusOr<OciReference> ParseOciReference(std::string_view field, std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  if (text.empty()) return service::InvalidField(field, "required");
  if (text.size() > kMaxReference) {
    return service::InvalidField(field, absl::StrCat("longer than ", kMaxReference, " bytes"));
  }
  const auto bad = [&](absl::string_view why) {
    return service::InvalidField(field, absl::StrCat("\"", text, "\": ", why));
  };
  OciReference ref;
  absl::string_view rest = text;
  if (const size_t at = rest.find('@'); at != absl::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    if (!IsDigest(ref.digest)) return bad("the digest must be sha256:<64 lowercase hex digits>");
    rest = rest.substr(0, at);
  }
  const size_t slash = rest.find('/');
  if (slash != absl::string_view::npos) {
    const absl::string_view first = rest.substr(0, slash);
    // As docker reads it: a first component with a dot or a port, or localhost, is a host.
    if (absl::StrContains(first, '.') || absl::StrContains(first, ':') || first == "localhost" ||
        absl::StartsWith(first, "[")) {
      if (!IsHost(first)) return bad("not a registry host");
      ref.host = std::string(first);
      rest = rest.substr(slash + 1);
    }
  }
  if (ref.host.empty()) ref.host = "docker.io";
  const size_t last_slash = rest.rfind('/');
  const size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos &&
      (last_slash == absl::string_view::npos || colon > last_slash)) {
    ref.tag = std::string(rest.substr(colon + 1));
    if (!IsTag(ref.tag)) return bad("the tag must be [A-Za-z0-9_.-], at most 128");
    rest = rest.substr(0, colon);
  }
  for (absl::string_view c : absl::StrSplit(rest, '/')) {
    if (!IsPathComponent(c)) {
      return bad("the repository must be lowercase [a-z0-9] parts joined by . _ - and /");
    }
  }
  ref.repository = std::string(rest);
  if (ref.host == "docker.io" && !absl::StrContains(rest, '/')) {
    ref.repository = absl::StrCat("library/", rest);
  }
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  if (!ref.digest.empty()) ref.tag.clear();  // the digest decides; a tag beside it is a label
  // What is stored and pulled is spelled out (docker.io/library/..., :latest) and then pinned
  // (@sha256:<64 hex>): that must parse again, so it must fit the limit too.
  const size_t pinned_size = ref.host.size() + 1 + ref.repository.size() + 1 + kSha256.size() + 64;
  if (std::max(ref.ToString().size(), pinned_size) > kMaxReference) {
    return service::InvalidField(
        field, absl::StrCat("longer than ", kMaxReference,
                            " bytes once spelled out as host/repository@sha256:<digest>"));
  }
  return ref;
}

bool IsLoopbackRegistry(std::string_view host) {
  absl::string_view name(host.data(), host.size());
  if (absl::StartsWith(name, "[")) {
    return absl::StartsWith(name, "[::1]");
  }
  if (const size_t colon = name.find(':'); colon != absl::string_view::npos) {
    name = name.substr(0, colon);
  }
  in_addr v4{};
  return name == "localhost" || (::inet_pton(AF_INET, std::string(name).c_str(), &v4) == 1 &&
                                 (ntohl(v4.s_addr) >> 24) == 127);
}

}  // namespace gpuaas::instance
