// OpenSSH public keys as users paste them (a line of ~/.ssh/id_ed25519.pub): the keys the
// instances of their tenants' sshd trusts (User.ssh_public_keys). A key is one line of an
// authorized_keys file in every instance, so what is stored must be a key and nothing else: no
// options (`command=`, `from=`), no second line, a blob that decodes to a key of the type named.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/repeated_field.h"

namespace gpuaas::auth {

// The key in its canonical form, "TYPE BASE64[ COMMENT]", or INVALID_ARGUMENT naming `field`.
// Types: ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa of 2048 bits or more, and the
// security-key kinds sk-ssh-ed25519@openssh.com and sk-ecdsa-sha2-nistp256@openssh.com.
// Spaces around the line and a trailing newline are dropped; the comment is free printable
// text of at most 256 bytes.
absl::StatusOr<std::string> CanonicalSshPublicKey(std::string_view field, std::string_view line);

// Every key of `keys` canonical (CanonicalSshPublicKey with `field`[i]), at most 16 of them, no
// key twice. INVALID_ARGUMENT names the first offending one.
absl::StatusOr<std::vector<std::string>> CanonicalSshPublicKeys(
    std::string_view field, const google::protobuf::RepeatedPtrField<std::string>& keys);

}  // namespace gpuaas::auth
