// Error handling for the runner's own CUDA and cuBLASLt calls: every return code is checked and a failure
// becomes an exception that names the call, so the result document can say exactly what broke.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace ptxbench::runner {

// A CUDA runtime call of the runner failed.
struct CudaError : std::runtime_error {
  CudaError(cudaError_t error_code, const std::string& what_failed)
      : std::runtime_error(what_failed + ": " + cudaGetErrorName(error_code) + ": " +
                           cudaGetErrorString(error_code)),
        code(error_code) {}
  cudaError_t code;
};

// Errors that leave the context unusable: a kernel faulted. Once the solution has run, one of these is its
// doing even when a later call of the runner is the one that reports it.
inline bool is_sticky_kernel_error(cudaError_t code) {
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

inline void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) {
    const std::string path = file;
    const std::string name = path.substr(path.find_last_of('/') + 1);  // no build machine's paths in messages
    throw CudaError(code, std::string(call) + " (" + name + ":" + std::to_string(line) + ")");
  }
}

}  // namespace ptxbench::runner

#define PTXBENCH_CUDA(call) ::ptxbench::runner::check_cuda((call), #call, __FILE__, __LINE__)
