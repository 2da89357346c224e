# Reference Triton solution for the Hopper bf16 GEMM tasks: C[M,N] = A[M,K] * B[N,K]^T, fp32 accumulation, bf16
# out (docs/triton-abi.md, include/ptxbench/abi.h). The idioms are the kit's (kits/hopper/triton).
#
# Design
#   - Persistent: one program per SM (fewer when there are fewer tiles); program p takes output tiles p,
#     p + programs, p + 2 programs, ... in a grouped order: GROUP_M tile-rows of M per group, walked down the
#     column first, so the programs running at one time share A rows and B columns in L2.
#   - A, B and C are host-side TMA tensor descriptors (TensorDescriptor): every tile is one descriptor load per
#     operand and k-step (cp.async.bulk.tensor completing on an mbarrier), and loads past M, N or K fill zeros,
#     so a partial tile runs the same code. B is [N, K], K-major: `b.T` is a view of the shared-memory tile and
#     tl.dot(a, b.T) lowers to wgmma with both operands read from shared memory.
#   - Software pipelining: the tile loop is flattened with its k-loop (tl.range(..., flatten=True)), so the
#     pipeliner keeps num_stages - 1 k-steps of loads in flight across tile boundaries too.
#   - Epilogue: the fp32 accumulator is rounded to bf16 and stored by the C descriptor (a TMA store, which clips
#     rows past M), in two halves of BLOCK_N / 2 columns with the large config (half the shared memory for the
#     staging buffer, which then goes to the pipeline).
#   - Two fixed configs, no autotuning: 128 x 256 x 64 tiles with 8 warps (two warpgroups, each wgmma
#     m64n256k16) and 3 stages when there are at least as many of those tiles as SMs; 64 x 64 x 128 with 4 warps
#     and 4 stages otherwise (small M: more tiles, so more SMs stream B).
# Limits: K and N multiples of 8 (TMA needs 16-byte row pitches); any M >= 1. Measured on the H200 (kernel time at
# cuBLASLt's; bench/triton/README.md); bench/triton/check_references.py checks it against torch on more shapes.
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _tile_coordinates(tile, tiles_m, tiles_in_group, GROUP_M: tl.constexpr):
    """Tile `tile` of the grouped order: its (tile-row, tile-column)."""
    group = tile // tiles_in_group
    first_m = group * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    within = tile % tiles_in_group
    return first_m + within % rows_in_group, within // rows_in_group


@triton.jit
def _gemm_persistent(a_desc, b_desc, c_desc, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, SPLIT_EPILOGUE: tl.constexpr):
    programs = tl.num_programs(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    tiles = tiles_m * tiles_n
    tiles_in_group = GROUP_M * tiles_n
    # The epilogue's tile is counted apart from the loop's: with a flattened loop the pipeliner may have moved
    # the loop's own index ahead to the next tile's loads by the time the epilogue runs.
    epilogue_tile = tl.program_id(0) - programs
    for tile in tl.range(tl.program_id(0), tiles, programs, flatten=True):
        pid_m, pid_n = _tile_coordinates(tile, tiles_m, tiles_in_group, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ks in range(k_steps):
            off_k = ks * BLOCK_K
            a = a_desc.load([off_m, off_k])
            b = b_desc.load([off_n, off_k])
            acc = tl.dot(a, b.T, acc)

        epilogue_tile += programs
        pid_m, pid_n = _tile_coordinates(epilogue_tile, tiles_m, tiles_in_group, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        if SPLIT_EPILOGUE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            c_desc.store([off_m, off_n], left.to(tl.bfloat16))
            c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(tl.bfloat16))
        else:
            c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages, split epilogue). Shared memory per stage is
# (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes: 48 KB x 3 + a 32 KB epilogue buffer for the large config, 32 KB x 4
# + 8 KB for the small one, both within Hopper's 227 KB per block.
LARGE = (128, 256, 64, 8, 8, 3, True)
SMALL = (64, 64, 128, 8, 4, 4, False)


def ptxbench_gemm_bf16(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int,
                       stream: torch.cuda.Stream) -> int:
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    config = LARGE if triton.cdiv(M, LARGE[0]) * triton.cdiv(N, LARGE[1]) >= sms else SMALL
    block_m, block_n, block_k, group_m, warps, stages, split = config
    a_desc = TensorDescriptor(A, [M, K], [K, 1], [block_m, block_k])
    b_desc = TensorDescriptor(B, [N, K], [K, 1], [block_n, block_k])
    c_desc = TensorDescriptor(C, [M, N], [N, 1], [block_m, block_n // 2 if split else block_n])
    programs = min(sms, triton.cdiv(M, block_m) * triton.cdiv(N, block_n))
    # Launched on the current stream, which the caller made `stream`.
    _gemm_persistent[(programs,)](a_desc, b_desc, c_desc, M, N, K,
                                  BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                                  SPLIT_EPILOGUE=split,
                                  num_warps=warps, num_stages=stages)
    return 0
