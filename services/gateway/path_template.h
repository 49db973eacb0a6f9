// The path templates of `google.api.http` rules, in the subset our protos use:
// "/v1/instances/{instance_id}:start" is literal segments, variables that name a request field
// (`{field}` or `{msg.field}`: one whole segment each), and an optional custom verb after the
// last segment. `**`, `{var=pattern}` and verbs inside the path are refused when the rules are
// read, so a proto that uses them fails at start, not on a request.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuaas::gateway {

class PathTemplate final {
 public:
  // INVALID_ARGUMENT naming what is wrong with `text`.
  static absl::StatusOr<PathTemplate> Parse(absl::string_view text);

  // The field paths `path` binds, each with its percent-decoded segment, when `path` (no query
  // string) matches; nothing when it does not.
  bool Match(absl::string_view path,
             std::vector<std::pair<std::string, std::string>>& bindings) const;

  // The field paths of the variables, in order.
  std::vector<std::string> Variables() const;
  // Literal segments count: a route with more of them wins over one with variables there.
  int LiteralCount() const;
  // The template with its variables' names left out ("/v1/instances/{}:start"): two templates
  // of one shape match the same paths.
  std::string Shape() const;
  const std::string& text() const { return text_; }
  const std::string& verb() const { return verb_; }

 private:
  struct Segment {
    std::string literal;  // when not a variable
    std::string field;    // the field path, for a variable
  };
  std::string text_;
  std::vector<Segment> segments_;
  std::string verb_;
};

// `segment` percent-decoded; false when an escape is malformed.
bool PercentDecode(absl::string_view segment, std::string& out);

}  // namespace gpuaas::gateway
