#include <cstdio>
__device__ volatile int flag = 0;
__global__ void wait_for_flag(int* out) {
  if (threadIdx.x < 32) {
    while (flag == 0) __nanosleep(1000);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
int main() {
  int* out = nullptr;
  cudaMalloc(&out, 4096);
  wait_for_flag<<<4, 128>>>(out);
  cudaDeviceSynchronize();
  std::printf("done\n");
  return 0;
}
