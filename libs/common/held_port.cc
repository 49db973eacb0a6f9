#include "libs/common/held_port.h"

#include <netinet/in.h>
#include <sys/socket.h>

namespace gpuaas {

UniqueFd HoldTcpPort(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return UniqueFd();
  }
  return fd;
}

}  // namespace gpuaas
