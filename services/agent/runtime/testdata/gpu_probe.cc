// Run inside a container built from a GpuInjection: opens each device named on the command
// line ("!/dev/x": must not exist), loads libcuda.so.1 and libnvidia-ml.so.1 by soname as CUDA
// programs do, and checks that CUDA counts `expected_gpus`. Prints "ok" or what failed.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int Fail(const char* what, const char* detail) {
  std::printf("%s: %s\n", what, detail != nullptr ? detail : "");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return Fail("usage", "gpu_probe <expected_gpus> [device|!device]...");
  }
  for (int i = 2; i < argc; ++i) {
    if (argv[i][0] == '!') {
      if (access(argv[i] + 1, F_OK) == 0) {
        return Fail("visible but not injected", argv[i] + 1);
      }
      continue;
    }
    const bool caps = std::strstr(argv[i], "nvidia-caps") != nullptr;
    const int fd = open(argv[i], caps ? O_RDONLY : O_RDWR);
    if (fd < 0) {
      return Fail(argv[i], std::strerror(errno));
    }
    close(fd);
  }
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda == nullptr) {
    return Fail("dlopen libcuda.so.1", dlerror());
  }
  auto cu_init = reinterpret_cast<int (*)(unsigned)>(dlsym(cuda, "cuInit"));
  auto cu_count = reinterpret_cast<int (*)(int*)>(dlsym(cuda, "cuDeviceGetCount"));
  int count = -1;
  if (cu_init == nullptr || cu_count == nullptr || cu_init(0) != 0 || cu_count(&count) != 0) {
    return Fail("libcuda", "cuInit or cuDeviceGetCount failed");
  }
  if (count != std::atoi(argv[1])) {
    return Fail("cuDeviceGetCount", std::to_string(count).c_str());
  }
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (nvml == nullptr) {
    return Fail("dlopen libnvidia-ml.so.1", dlerror());
  }
  auto nvml_init = reinterpret_cast<int (*)()>(dlsym(nvml, "nvmlInit_v2"));
  if (nvml_init == nullptr || nvml_init() != 0) {
    return Fail("libnvidia-ml", "nvmlInit_v2 failed");
  }
  std::printf("ok\n");
  return 0;
}
