// How RunInTransaction classifies libpqxx exceptions beyond MapException's Status.
#pragma once

#include <exception>

namespace gpuaas::db::internal {

// The connection is gone (or the server is going away), so it must not return to the pool.
bool IsConnectionLost(const std::exception& e);

// The server refused a write because it is (now) a standby: 25006, "cannot execute ... in a
// read-only transaction". Our transactions are all read-write, so this means the connection
// still reaches a node that was demoted after it connected (libpq's target_session_attrs only
// chooses at connect time): drop it, and the retry connects to the new primary.
bool IsReadOnlyNode(const std::exception& e);

// A prepared statement whose plan a schema change (a migration by a newer replica) made
// invalid: the connection must be dropped, and a fresh one will prepare it again.
bool IsStalePreparedStatement(const std::exception& e);

// Re-running the whole transaction on a fresh connection may succeed: serialization failure,
// deadlock, a stale prepared statement, a read-only node, or a connection lost before COMMIT
// was sent. Never an in-doubt commit.
bool IsRetryable(const std::exception& e);

}  // namespace gpuaas::db::internal
