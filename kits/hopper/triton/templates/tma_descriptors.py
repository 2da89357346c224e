# Host-side TMA tensor descriptors (Hopper): made on the host in every call (no device allocation, no state),
# passed to the kernel as an argument (a __grid_constant__ CUtensorMap), used with desc.load / desc.store.
#   TensorDescriptor(tensor, shape, strides, block_shape)        # or TensorDescriptor.from_tensor(t, block)
#   - shape and strides in elements, outermost first; the last stride must be 1, the others 16-byte multiples
#     (bf16: multiples of 8 elements); the base 16-byte aligned.
#   - block_shape: powers of two (Triton's rule), each <= 256 (TMA's box limit); the inner block may be wider
#     than the 128-byte swizzle span (Triton then issues several boxes).
#   - desc.load([i, j]) returns the block at element coordinates (i, j) (any integers, not only multiples of the
#     block): a cp.async.bulk.tensor into shared memory, completed on an mbarrier. Parts outside `shape` load
#     as zeros. desc.store([i, j], x) is a TMA store that skips what lies outside `shape`.
#   - a [B, S, H, D] tensor as a 2-D view [B * S, H * D]: tile (b, s, h) is at [b * S + s, h * D]. Rows past S
#     belong to the next batch: mask what you read there and never TMA-store a tile that crosses S.
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _copy_tiles(src_desc, dst_desc, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """dst = src, tile by tile: each tile one TMA load and one TMA store; partial tiles at the edges too."""
    r = tl.program_id(0) * BLOCK_R
    c = tl.program_id(1) * BLOCK_C
    tile = src_desc.load([r, c])
    dst_desc.store([r, c], tile)


def copy_matrix(src, dst, BLOCK_R=64, BLOCK_C=64):
    rows, cols = src.shape[0], src.shape[1]
    src_desc = TensorDescriptor(src, [rows, cols], [src.stride(0), 1], [BLOCK_R, BLOCK_C])
    dst_desc = TensorDescriptor.from_tensor(dst, [BLOCK_R, BLOCK_C])
    grid = (triton.cdiv(rows, BLOCK_R), triton.cdiv(cols, BLOCK_C))
    return _copy_tiles[grid](src_desc, dst_desc, rows, cols, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=4)


def head_view_descriptor(X, B, S, H, D, block_rows):
    """A descriptor over X [B, S, H, D] as [B * S, H * D], blocks of block_rows x next_power_of_2(D)."""
    return TensorDescriptor(X, [B * S, H * D], [H * D, 1], [block_rows, triton.next_power_of_2(D)])
