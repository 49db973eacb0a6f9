// The gateway's path templates (services/gateway/path_template.h) and the request paths matched
// against them: no crash, no UB, and a path built from a template with any values (each
// percent-encoded, as clients send them) matches it and binds exactly those values.
//
// Input: the template, then '\n'-separated values for its variables; the second line is also
// matched as a raw path.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/gateway/path_template.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  using ::gpuaas::gateway::PathTemplate;
  auto lines = gpuaas::fuzz::Fields(gpuaas::fuzz::AsText(data, size), '\n', 64);
  auto t = PathTemplate::Parse(gpuaas::fuzz::Av(lines[0]));
  std::string decoded;
  (void)gpuaas::gateway::PercentDecode(gpuaas::fuzz::Av(gpuaas::fuzz::FieldOr(lines, 1)), decoded);
  if (!t.ok()) {
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> bindings;
  (void)t->Match(gpuaas::fuzz::Av(gpuaas::fuzz::FieldOr(lines, 1)), bindings);
  (void)t->Shape();
  (void)t->LiteralCount();

  // "/v1/instances/{instance_id}:start" -> "/v1/instances/%41%42:start".
  std::vector<std::pair<std::string, std::string>> want;
  std::string path;
  std::vector<std::string> variables = t->Variables();
  size_t next_value = 1;
  for (absl::string_view segment : absl::StrSplit(t->Shape(), '/', absl::SkipEmpty())) {
    absl::ConsumeSuffix(&segment, absl::StrCat(":", t->verb()));
    if (segment != "{}") {
      absl::StrAppend(&path, "/", segment);
      continue;
    }
    std::string value(gpuaas::fuzz::FieldOr(lines, next_value++));
    if (value.empty()) {
      value = "x";
    }
    absl::StrAppend(&path, "/");
    for (unsigned char c : value) {
      absl::StrAppend(&path, absl::StrFormat("%%%02X", c));
    }
    want.emplace_back(variables[want.size()], value);
  }
  if (!t->verb().empty()) {
    absl::StrAppend(&path, ":", t->verb());
  }
  if (!t->Match(path, bindings) || bindings != want) {
    Fail("a path built from the template does not match it:", path);
  }
  return 0;
}
