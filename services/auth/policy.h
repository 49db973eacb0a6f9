// The auth service's permission decisions that need no database, built on the role model in
// libs/authz (roles.h), so they are unit-tested on their own (policy_test.cc).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/authz/principal.h"

namespace gpuaas::auth {

// The role a new API key gets: `requested`, or the caller's own role when unspecified.
// Errors: INVALID_ARGUMENT for a role outside the enum; PERMISSION_DENIED when the caller may
// not grant it (a key never holds a power its creator lacks); FAILED_PRECONDITION for a tenant
// role when the caller's token acts for no tenant (a tenant role always names its tenant).
absl::StatusOr<common::v1::Role> ApiKeyRole(const authz::Principal& p, common::v1::Role requested);

// A key of `role` may be bound to `node_id`: NODE_AGENT needs a node, every other role takes
// none. (Who may make a machine's key at all, a platform admin only, ApiKeyRole decides through
// authz::MayGrant.) Error: INVALID_ARGUMENT "node_id: ...".
absl::Status ApiKeyNode(common::v1::Role role, std::string_view node_id);

// The caller holds the rights a user has over itself (its password, its own API keys) on
// `user_id`: it is that user, logged in. A token exchanged from an API key never has them: a
// leaked read-only key must not change its creator's password and log in as the creator.
bool HasSelfRights(const authz::Principal& p, std::string_view user_id);

// The caller may revoke `key`: its creator (with self rights), whoever manages the key's
// tenant's people and may grant the key's role, or a platform admin. Others must not learn the
// key exists.
bool MayManageKey(const authz::Principal& p, const auth::v1::ApiKey& key);

// The caller may give a member (or a user it creates) `role`. Error: PERMISSION_DENIED.
absl::Status RequireGrantable(const authz::Principal& p, common::v1::Role role);

}  // namespace gpuaas::auth
