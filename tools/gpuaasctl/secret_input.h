// Reads passwords and API-key secrets without putting them on the command line, where every
// user on the machine could see them in `ps`.
#pragma once

#include <istream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::ctl {

// The secret, from the first source that is set: `value` (a --password flag), `file` (its first
// line), else a prompt on the terminal with echo off when stdin is a TTY, else the first line of
// stdin (so `echo pw | gpuaasctl login` works in scripts). Trailing "\r\n" is removed.
// Error: INVALID_ARGUMENT when the secret is empty, NOT_FOUND / UNAVAILABLE for an unreadable
// file. Blocks on input.
absl::StatusOr<std::string> ReadSecret(std::string_view prompt, const std::string& value,
                                       const std::string& file);

// The first line of `in` without its line ending. Error: INVALID_ARGUMENT when empty.
absl::StatusOr<std::string> FirstLine(std::istream& in, std::string_view what);

}  // namespace gpuaas::ctl
