// A program for Nsight Compute fixtures with several kernels in the profiled region:
//   outside the region: warm-up launches (must NOT appear with --profile-from-start off)
//   inside cudaProfilerStart/Stop:
//     mine::scale_kernel<4> on stream s1 (a namespaced template kernel),
//     plain_c_kernel        on stream s2 (extern "C", a second stream),
//     one cuBLAS bf16 GEMM  on stream s1 (M=N=K=1024: a library kernel, nvjet/cutlass named).
// It prints each stream's cudaStreamGetId so the fixture shows how ncu's Stream column relates to it.
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o multi_kernel multi_kernel.cu -lcublas
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)
#define CB(x) do { cublasStatus_t s = (x); if (s != CUBLAS_STATUS_SUCCESS) { std::printf("cuBLAS error %d at %d\n", (int)s, __LINE__); return 1; } } while (0)

namespace mine {
template <int kFactor>
__global__ void scale_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * kFactor + 1.0f;
}
}  // namespace mine

extern "C" __global__ void plain_c_kernel(float* data) { data[threadIdx.x] += 1.0f; }

__global__ void fill_bf16(__nv_bfloat16* p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __float2bfloat16(v * static_cast<float>(i % 7 - 3));
}

int main() {
  const int n = 1 << 16, M = 1024, N = 1024, K = 1024;
  float *x, *y;
  __nv_bfloat16 *A, *B, *C;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&y, 256 * sizeof(float)));
  CK(cudaMalloc(&A, size_t(M) * K * 2));
  CK(cudaMalloc(&B, size_t(N) * K * 2));
  CK(cudaMalloc(&C, size_t(M) * N * 2));
  CK(cudaMemset(x, 0, n * sizeof(float)));
  CK(cudaMemset(y, 0, 256 * sizeof(float)));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  unsigned long long id1 = 0, id2 = 0;
  CK(cudaStreamGetId(s1, &id1));
  CK(cudaStreamGetId(s2, &id2));
  std::printf("cudaStreamGetId: s1=%llu s2=%llu\n", id1, id2);

  cublasHandle_t handle;
  CB(cublasCreate(&handle));
  CB(cublasSetStream(handle, s1));
  const float alpha = 1.0f, beta = 0.0f;
  // Warm-up outside the profiled region: the fills, one GEMM (cuBLAS' first call may load modules), the kernels.
  fill_bf16<<<(M * K + 255) / 256, 256, 0, s1>>>(A, M * K, 0.25f);
  fill_bf16<<<(N * K + 255) / 256, 256, 0, s1>>>(B, N * K, 0.5f);
  // C[M,N] = A[M,K] * B[N,K]^T in row-major terms is, column-major, C^T[N,M] = B^T... : op(B)=T on the left.
  CB(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, K, A, CUDA_R_16BF, K, &beta,
                  C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  mine::scale_kernel<4><<<n / 256, 256, 0, s1>>>(x, n);
  plain_c_kernel<<<1, 256, 0, s2>>>(y);
  CK(cudaDeviceSynchronize());

  CK(cudaProfilerStart());
  mine::scale_kernel<4><<<n / 256, 256, 0, s1>>>(x, n);
  plain_c_kernel<<<1, 256, 0, s2>>>(y);
  CB(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, K, A, CUDA_R_16BF, K, &beta,
                  C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CK(cudaDeviceSynchronize());
  CK(cudaProfilerStop());

  float h = 0;
  CK(cudaMemcpy(&h, y, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("y[0]=%f (expect 2)\n", h);
  CB(cublasDestroy(handle));
  return 0;
}
