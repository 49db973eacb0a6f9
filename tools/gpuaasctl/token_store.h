// The login session on disk: access and refresh token, their expiry and who they belong to.
//
// The file holds bearer credentials, so it is created with mode 0600 inside a 0700 directory
// and replaced atomically (write a temporary file, then rename), so a crash never leaves a
// half-written or world-readable token behind.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/client/settings.h"

namespace gpuaas::ctl {

struct StoredToken {
  std::string auth_addr;  // the server that issued it, for `whoami` and warnings
  std::string user_name;
  std::string tenant_id;
  std::string role;  // display name, e.g. "tenant-admin"
  std::string access_token;
  std::string refresh_token;  // empty after an API-key exchange
  absl::Time expire_time = absl::InfinitePast();

  // True when the access token is past its expiry, or within `skew` of it.
  bool Expired(absl::Time now, absl::Duration skew) const { return now + skew >= expire_time; }
};

class TokenStore final {
 public:
  explicit TokenStore(std::filesystem::path path) : path_(std::move(path)) {}

  const std::filesystem::path& path() const { return path_; }

  // nullopt when no file exists. Error: DATA_LOSS when the file is not a token file,
  // UNAVAILABLE when it cannot be read. Blocks on file I/O.
  absl::StatusOr<std::optional<StoredToken>> Load() const;

  // Writes the token with mode 0600, creating the directory with mode 0700 when missing.
  // Error: UNAVAILABLE for I/O failures. Blocks on file I/O.
  absl::Status Save(const StoredToken& token) const;

  // Removes the file; a missing file is OK.
  absl::Status Clear() const;

 private:
  std::filesystem::path path_;
};

// $XDG_CONFIG_HOME/gpuaas/token.json, else $HOME/.config/gpuaas/token.json.
// Error: FAILED_PRECONDITION when neither variable is set.
absl::StatusOr<std::filesystem::path> DefaultTokenPath(const client::EnvLookup& env);

}  // namespace gpuaas::ctl
