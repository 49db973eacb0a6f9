#include "libs/common/errno_status.h"

#include <errno.h>
#include <string.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace gpuaas {

absl::Status ErrnoStatus(int err, std::string_view what) {
  char buf[128];
  // GNU strerror_r returns the message, which may or may not be `buf`.
  const std::string message =
      absl::StrCat(std::string(what), ": ", strerror_r(err, buf, sizeof buf));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case ELOOP:
    case EXDEV:
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(message);
    case ENOTDIR:
    case EISDIR:
    case ENOTEMPTY:
    case EEXIST:
      return absl::FailedPreconditionError(message);
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case EAGAIN:
    case EINTR:
    case EBUSY:
      return absl::UnavailableError(message);
    case EINVAL:
    case ENAMETOOLONG:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace gpuaas
