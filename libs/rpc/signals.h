// SIGTERM/SIGINT as something a thread can wait for. The handler only write()s one byte to a
// pipe (async-signal-safe); Server::Wait polls the pipe next to its own shutdown pipe.
#pragma once

namespace gpuaas::rpc {

// Installs the handlers for SIGTERM and SIGINT (again on every call) and returns the read end
// of the process-wide signal pipe, or -1 when the pipe cannot be created. SA_RESETHAND: the
// first signal asks for a graceful stop, a second one kills the process the default way.
int InstallTerminationSignalPipe();

// Reads away pending signal bytes so the next Wait does not see an old signal.
void DrainSignalPipe(int fd);

}  // namespace gpuaas::rpc
