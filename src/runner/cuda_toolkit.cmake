# find_package(CUDAToolkit) for the CUDA 13 toolkit under Debian 12's CMake 3.25, whose FindCUDAToolkit marks
# CUDA::nvToolsExt deprecated without checking that the target exists: CUDA 13 ships no nvToolsExt (only the
# header-only nvtx3), and the configure stops with "set_property could not find TARGET CUDA::nvToolsExt". The
# module does that only when the project's minimum CMake is 3.25 or newer, so it sees 3.24 here.
macro(ptxbench_find_cuda_toolkit)
  set(ptxbench_cmake_minimum ${CMAKE_MINIMUM_REQUIRED_VERSION})
  set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_MINIMUM_REQUIRED_VERSION ${ptxbench_cmake_minimum})
endmacro()
