// A stand-in for libcuda.so.1 on simulated GPU nodes: enough of the driver API for a program to
// load it and count its GPUs, which are the entries of CUDA_VISIBLE_DEVICES (the container sees
// only those).
#include <cstdlib>
#include <cstring>

extern "C" {

int cuInit(unsigned int flags) { return flags == 0 ? 0 : 1; }  // CUDA_ERROR_INVALID_VALUE

int cuDriverGetVersion(int* version) {
  *version = 12040;
  return 0;
}

int cuDeviceGetCount(int* count) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  *count = 0;
  if (visible == nullptr || *visible == '\0') {
    return 0;
  }
  *count = 1;
  for (const char* p = visible; *p != '\0'; ++p) {
    *count += *p == ',' ? 1 : 0;
  }
  return 0;
}

}  // extern "C"
