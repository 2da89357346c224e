// A library the dynamic loader refuses under RTLD_NOW: it calls a function that nothing it links defines (as a
// solution that calls a CUDA driver function without the driver linked did). test_solution_process.cpp loads
// it to see what the solution process says of such a failure.
extern "C" int cuTensorMapEncodeTiledNowhere(int);

extern "C" int ptxbench_gemm_bf16_probe(int value) { return cuTensorMapEncodeTiledNowhere(value); }
