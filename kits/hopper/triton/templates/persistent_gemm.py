# Persistent GEMM with an L2-grouped tile order (Hopper): C[M,N] = A[M,K] * B[N,K]^T, bf16 in, fp32 accumulate.
#   - grid = min(SMs, tiles); program p takes tiles p, p + programs, ... (tl.num_programs(0) is the stride).
#   - grouped order: GROUP_M tile-rows per group, walked column by column, so concurrent programs share the
#     A rows and B columns they read in L2.
#   - host TMA descriptors (tma_descriptors.py); b.T is a view of the shared tile: tl.dot(a, b.T) is wgmma
#     reading both operands from shared memory (num_warps 8: two warpgroups of m64nBLOCK_Nk16).
#   - tl.range(..., flatten=True) merges the tile loop with the k-loop, so the pipeliner prefetches the next
#     tile's first k-steps while this tile's last ones run; num_stages is the depth.
#   - the epilogue's tile index is counted apart from the loop's (the pipeliner may have advanced the loop's).
#   - the TMA store clips rows past M and columns past N; loads zero-fill past M, N, K: no masks anywhere.
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


def launch_persistent_gemm(A, B, C, M, N, K, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8,
                           num_stages=3, split_epilogue=True):
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    a_desc = TensorDescriptor(A, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor(B, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = TensorDescriptor(C, [M, N], [N, 1], [BLOCK_M, BLOCK_N // 2 if split_epilogue else BLOCK_N])
    programs = min(sms, triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N))
    return _gemm_persistent[(programs,)](a_desc, b_desc, c_desc, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                         BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, SPLIT_EPILOGUE=split_epilogue,
                                         num_warps=num_warps, num_stages=num_stages)
