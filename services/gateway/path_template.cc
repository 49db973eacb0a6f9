#include "services/gateway/path_template.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::gateway {
namespace {

bool IsFieldPath(absl::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.' || absl::StrContains(s, "..")) {
    return false;
  }
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool PercentDecode(absl::string_view segment, std::string& out) {
  out.clear();
  out.reserve(segment.size());
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out.push_back(segment[i]);
      continue;
    }
    if (i + 2 >= segment.size()) {
      return false;
    }
    const int hi = HexValue(segment[i + 1]);
    const int lo = HexValue(segment[i + 2]);
    if (hi < 0 || lo < 0) {
      return false;
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

absl::StatusOr<PathTemplate> PathTemplate::Parse(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("path template \"", text, "\": ", why));
  };
  if (!absl::StartsWith(text, "/")) {
    return bad("must start with /");
  }
  PathTemplate t;
  t.text_ = std::string(text);
  absl::string_view rest = text.substr(1);
  // The verb follows the last ':' outside a variable.
  const size_t close = rest.rfind('}');
  const size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos && (close == absl::string_view::npos || colon > close)) {
    t.verb_ = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (t.verb_.empty() || absl::StrContains(t.verb_, "/")) {
      return bad("a custom verb follows the last segment");
    }
  }
  for (absl::string_view seg : absl::StrSplit(rest, '/')) {
    if (seg.empty()) {
      return bad("empty segment");
    }
    if (seg.front() == '{') {
      if (seg.back() != '}' || !IsFieldPath(seg.substr(1, seg.size() - 2))) {
        return bad(absl::StrCat("variable ", seg, " must be {field} or {message.field}"));
      }
      t.segments_.push_back({.field = std::string(seg.substr(1, seg.size() - 2))});
    } else if (absl::StrContains(seg, "{") || absl::StrContains(seg, "}") ||
               absl::StrContains(seg, "*") || absl::StrContains(seg, ":")) {
      return bad(absl::StrCat("segment ", seg, " is neither a literal nor a whole variable"));
    } else {
      t.segments_.push_back({.literal = std::string(seg)});
    }
  }
  return t;
}

bool PathTemplate::Match(absl::string_view path,
                         std::vector<std::pair<std::string, std::string>>& bindings) const {
  bindings.clear();
  if (!absl::ConsumePrefix(&path, "/")) {
    return false;
  }
  if (!verb_.empty()) {
    if (!absl::ConsumeSuffix(&path, absl::StrCat(":", verb_))) {
      return false;
    }
  }
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  if (parts.size() != segments_.size()) {
    return false;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const Segment& seg = segments_[i];
    if (seg.field.empty()) {
      if (parts[i] != seg.literal) {
        return false;
      }
      continue;
    }
    std::string value;
    // A variable never takes an empty segment. It may hold a colon (an image's "name:version"):
    // where a route with that verb matches too, RouteTable::Find prefers it.
    if (parts[i].empty() || !PercentDecode(parts[i], value)) {
      return false;
    }
    bindings.emplace_back(seg.field, std::move(value));
  }
  return true;
}

std::vector<std::string> PathTemplate::Variables() const {
  std::vector<std::string> out;
  for (const Segment& s : segments_) {
    if (!s.field.empty()) out.push_back(s.field);
  }
  return out;
}

int PathTemplate::LiteralCount() const {
  int n = 0;
  for (const Segment& s : segments_) {
    n += s.field.empty() ? 1 : 0;
  }
  return n;
}

std::string PathTemplate::Shape() const {
  std::string out;
  for (const Segment& s : segments_) {
    absl::StrAppend(&out, "/", s.field.empty() ? s.literal : "{}");
  }
  if (!verb_.empty()) {
    absl::StrAppend(&out, ":", verb_);
  }
  return out;
}

}  // namespace gpuaas::gateway
