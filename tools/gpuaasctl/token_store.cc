#include "tools/gpuaasctl/token_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "libs/common/errno_status.h"

namespace gpuaas::ctl {
namespace {

constexpr mode_t kFileMode = 0600;
constexpr mode_t kDirMode = 0700;

absl::Status PathErrno(std::string_view what, const std::filesystem::path& p) {
  return ErrnoStatus(errno, absl::StrCat(std::string(what), " ", p.string()));
}

// Creates `dir` and missing parents; only the last component gets 0700, the parents are the
// user's own config directories and keep their usual mode.
absl::Status MakePrivateDir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path()) {
    std::filesystem::create_directories(dir.parent_path(), ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("create ", dir.parent_path().string(), ": ", ec.message()));
    }
  }
  if (::mkdir(dir.c_str(), kDirMode) != 0 && errno != EEXIST) {
    return PathErrno("mkdir", dir);
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view data, const std::filesystem::path& p) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return PathErrno("write", p);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<StoredToken>> TokenStore::Load() const {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) {
    return std::optional<StoredToken>();
  }
  std::ifstream in(path_);
  if (!in) {
    return PathErrno("read", path_);
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    nlohmann::json j = nlohmann::json::parse(text.str());
    StoredToken t;
    t.auth_addr = j.value("auth_addr", "");
    t.user_name = j.value("user_name", "");
    t.tenant_id = j.value("tenant_id", "");
    t.role = j.value("role", "");
    t.access_token = j.at("access_token").get<std::string>();
    t.refresh_token = j.value("refresh_token", "");
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, j.at("expire_time").get<std::string>(), &t.expire_time,
                         &err)) {
      return absl::DataLossError(absl::StrCat(path_.string(), ": bad expire_time: ", err));
    }
    return std::optional<StoredToken>(std::move(t));
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat(path_.string(), " is not a token file (", e.what(),
                                            "); run `gpuaasctl logout`"));
  }
}

absl::Status TokenStore::Save(const StoredToken& t) const {
  if (absl::Status s = MakePrivateDir(path_.parent_path()); !s.ok()) {
    return s;
  }
  nlohmann::json j = {
      {"auth_addr", t.auth_addr},
      {"user_name", t.user_name},
      {"tenant_id", t.tenant_id},
      {"role", t.role},
      {"access_token", t.access_token},
      {"refresh_token", t.refresh_token},
      {"expire_time", absl::FormatTime(absl::RFC3339_full, t.expire_time, absl::UTCTimeZone())},
  };
  const std::string data = j.dump(2) + "\n";
  std::filesystem::path tmp = path_;
  tmp += absl::StrCat(".tmp.", ::getpid());
  // O_EXCL: never write through a file (or symlink) someone else placed at the temp name.
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, kFileMode);
  if (fd < 0) {
    return PathErrno("create", tmp);
  }
  absl::Status s = WriteAll(fd, data, tmp);
  // The umask may have narrowed the mode further but never widens it; fchmod makes it exact.
  if (s.ok() && ::fchmod(fd, kFileMode) != 0) {
    s = PathErrno("chmod", tmp);
  }
  if (s.ok() && ::fsync(fd) != 0) {
    s = PathErrno("fsync", tmp);
  }
  if (::close(fd) != 0 && s.ok()) {
    s = PathErrno("close", tmp);
  }
  if (s.ok() && ::rename(tmp.c_str(), path_.c_str()) != 0) {
    s = PathErrno("rename", path_);
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
  }
  return s;
}

absl::Status TokenStore::Clear() const {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    return PathErrno("remove", path_);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::filesystem::path> DefaultTokenPath(const client::EnvLookup& env) {
  if (std::optional<std::string> xdg = env("XDG_CONFIG_HOME")) {
    return std::filesystem::path(*xdg) / "gpuaas" / "token.json";
  }
  if (std::optional<std::string> home = env("HOME")) {
    return std::filesystem::path(*home) / ".config" / "gpuaas" / "token.json";
  }
  return absl::FailedPreconditionError("neither XDG_CONFIG_HOME nor HOME is set");
}

}  // namespace gpuaas::ctl
