#include "tools/gpuaasctl/config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::ctl {
namespace {

constexpr std::string_view kStackEnvPath = ".gpuaas/stack.env";
constexpr std::string_view kTlsCaEnv = "GPUAAS_TLS_CA";
constexpr std::string_view kTlsCertEnv = "GPUAAS_TLS_CERT";
constexpr std::string_view kTlsKeyEnv = "GPUAAS_TLS_KEY";

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
    stack_.emplace();
    if (std::optional<std::filesystem::path> file = FindStackEnv(cwd_)) {
      std::ifstream in(*file);
      if (!in) {
        return absl::FailedPreconditionError("cannot read " + file->string());
      }
      std::stringstream text;
      text << in.rdbuf();
      stack_ = ParseStackEnv(text.str());
    }
  }
  if (auto it = stack_->find(std::string(var)); it != stack_->end() && !it->second.empty()) {
    return it->second;
  }
  return std::string(fallback);
}

absl::StatusOr<Endpoint> Settings::AuthEndpoint(const Endpoint& flags) {
  Endpoint out;
  for (auto [flag, var, fallback, dst] : {
           std::tuple{&flags.addr, kAuthAddrEnv, kDefaultAuthAddr, &out.addr},
           std::tuple{&flags.tls.ca_file, kTlsCaEnv, std::string_view(), &out.tls.ca_file},
           std::tuple{&flags.tls.cert_file, kTlsCertEnv, std::string_view(), &out.tls.cert_file},
           std::tuple{&flags.tls.key_file, kTlsKeyEnv, std::string_view(), &out.tls.key_file},
       }) {
    absl::StatusOr<std::string> v = Get(*flag, var, fallback);
    if (!v.ok()) {
      return v.status();
    }
    *dst = *std::move(v);
  }
  return out;
}

absl::StatusOr<std::string> ResolveAuthAddr(std::string_view flag, const EnvLookup& env,
                                            const std::filesystem::path& cwd) {
  return Settings(env, cwd).Get(flag, kAuthAddrEnv, kDefaultAuthAddr);
}

absl::StatusOr<std::filesystem::path> TokenPath(const EnvLookup& env) {
  if (std::optional<std::string> xdg = env("XDG_CONFIG_HOME")) {
    return std::filesystem::path(*xdg) / "gpuaas" / "token.json";
  }
  if (std::optional<std::string> home = env("HOME")) {
    return std::filesystem::path(*home) / ".config" / "gpuaas" / "token.json";
  }
  return absl::FailedPreconditionError("neither XDG_CONFIG_HOME nor HOME is set");
}

}  // namespace gpuaas::ctl
