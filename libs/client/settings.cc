#include "libs/client/settings.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::client {
namespace {

constexpr std::string_view kStackEnvPath = ".gpuaas/stack.env";

// Debian's abseil keeps its own string_view type, so string helpers work on absl::string_view.
absl::string_view Unquote(absl::string_view v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || *v == '\0') {
      return std::nullopt;
    }
    return std::string(v);
  };
}

EnvLookup MapEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end() || it->second.empty()) {
      return std::nullopt;
    }
    return it->second;
  };
}

std::map<std::string, std::string> ParseStackEnv(std::string_view text) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') {
      continue;
    }
    absl::ConsumePrefix(&line, "export ");
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      continue;
    }
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, eq));
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(eq + 1));
    if (key.empty()) {
      continue;
    }
    out[std::string(key)] = std::string(Unquote(value));
  }
  return out;
}

std::optional<std::filesystem::path> FindStackEnv(const std::filesystem::path& start) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(start, ec);
  if (ec) {
    return std::nullopt;
  }
  while (true) {
    std::filesystem::path candidate = dir / kStackEnvPath;
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return candidate;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) {
      return std::nullopt;
    }
    dir = dir.parent_path();
  }
}

absl::StatusOr<std::string> Settings::Get(std::string_view flag, std::string_view var,
                                          std::string_view fallback) {
  if (!flag.empty()) {
    return std::string(flag);
  }
  if (std::optional<std::string> v = env_(var)) {
    return *v;
  }
  if (!stack_) {
    std::map<std::string, std::string> loaded;
    if (std::optional<std::filesystem::path> file = FindStackEnv(cwd_)) {
      std::ifstream in(*file);
      if (!in) {
        // Not cached: every later lookup reports the same error instead of a silent default.
        return absl::FailedPreconditionError("cannot read " + file->string());
      }
      std::stringstream text;
      text << in.rdbuf();
      loaded = ParseStackEnv(text.str());
    }
    stack_ = std::move(loaded);
  }
  if (auto it = stack_->find(std::string(var)); it != stack_->end() && !it->second.empty()) {
    return it->second;
  }
  return std::string(fallback);
}

}  // namespace gpuaas::client
