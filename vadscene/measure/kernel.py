"""The fused exact kernel of :mod:`vadscene.measure.statistics` for 8-bit planes (numba).

One call walks the luma plane once and returns, as exact ``int64`` sums, everything the three
statistics need from a frame (definitions in ``docs/metrics.md``, "Measured scene
statistics"):

* ``ΣL`` and ``ΣL²`` of the ksize-1 Laplacian ``L = Y ∗ [[0,1,0],[1,-4,1],[0,1,0]]`` with
  OpenCV's default border (reflect-101: row ``-1`` is row ``1``; a plane one pixel high or
  wide reflects onto itself),
* ``Σ|Y - P|`` against the previous frame's luma ``P`` (when given),
* ``Σ|U - n|`` and ``Σ|V - n|`` over the chroma planes (when given), ``n`` the neutral value.

It replaces four OpenCV passes (``Laplacian`` to a ``CV_16S`` temporary, ``norm(L2SQR)``,
``sumElems``, ``norm(L1)`` per plane) with one pass and no temporary; the results are equal
bit for bit (the tests compare them on odd sizes, padded rows and 1×N / N×1 planes), and the
OpenCV functions in :mod:`vadscene.measure.statistics` remain the reference and serve planes
deeper than 8 bits. Compiled code is cached on disk (``cache=True``), so pool workers load it
instead of compiling it on every start; numba falls back to a per-user cache directory when the
package directory is read-only.
"""

from __future__ import annotations

import numpy as np

from vadscene.core.kernels import compiled

_BLOCK = 2048
"""Columns summed in ``int32`` before moving to ``int64``: ``2048 * 1020**2 < 2**31``."""

# numba widens integer arithmetic to int64, which halves the SIMD lanes; truncating every
# running sum back to int32 (each block's true value fits, see _BLOCK) lets LLVM keep the loops
# in 32-bit (16-bit for the Laplacian) lanes, and |a - b| of two bytes written as max - min
# maps onto byte-wise SIMD min/max. The results are the same exact integers.


@compiled()
def _offset_from(rows: np.ndarray, width: int, neutral: int) -> np.int64:
    """Σ|rows - neutral| over the first ``width`` columns of every row."""
    total = np.int64(0)
    centre = np.uint8(neutral)
    for i in range(rows.shape[0]):
        row = rows[i]
        row_total = np.int32(0)
        for j in range(width):
            value = row[j]
            row_total = np.int32(row_total + np.uint8(max(value, centre) - min(value, centre)))
        total += row_total
    return total


@compiled()
def fused_kernel(
    luma: np.ndarray,
    width: int,
    previous: np.ndarray,
    chroma_u: np.ndarray,
    chroma_v: np.ndarray,
    chroma_width: int,
    neutral: int,
) -> tuple[np.int64, np.int64, np.int64, np.int64, np.int64]:
    """The compiled kernel behind :func:`fused_sums`, without its argument checks (the caller
    passes planes it built itself, as :mod:`vadscene.measure.statistics` does for every frame).
    Called from Python, it returns the ``int64`` sums as Python ints.

    One function body on purpose: LLVM vectorises these loops only when the Laplacian buffer is
    visibly local (a buffer passed to a helper might alias the planes).
    """
    height = luma.shape[0]
    laplacian = np.empty(width, dtype=np.int16)  # L along the current row: |L| <= 1020
    last = width - 1
    laplacian_sum = np.int64(0)
    laplacian_squares = np.int64(0)
    difference = np.int64(0)
    for i in range(height):
        above = luma[i - 1] if i > 0 else luma[min(1, height - 1)]
        below = luma[i + 1] if i < height - 1 else luma[max(height - 2, 0)]
        row = luma[i]
        if width == 1:  # both horizontal neighbours reflect onto the pixel itself
            value = np.int64(above[0]) + np.int64(below[0]) - 2 * np.int64(row[0])
            laplacian_sum += value
            laplacian_squares += value * value
        else:
            for j in range(1, last):
                laplacian[j] = (
                    np.int16(above[j])
                    + np.int16(below[j])
                    + np.int16(row[j - 1])
                    + np.int16(row[j + 1])
                    - np.int16(4) * np.int16(row[j])
                )
            # reflect-101: column -1 is column 1, column `width` is column `width - 2`
            laplacian[0] = (
                np.int16(above[0])
                + np.int16(below[0])
                + np.int16(2) * np.int16(row[1])
                - np.int16(4) * np.int16(row[0])
            )
            laplacian[last] = (
                np.int16(above[last])
                + np.int16(below[last])
                + np.int16(2) * np.int16(row[last - 1])
                - np.int16(4) * np.int16(row[last])
            )
            for start in range(0, width, _BLOCK):
                block_sum = np.int32(0)
                block_squares = np.int32(0)
                for j in range(start, min(start + _BLOCK, width)):
                    value = laplacian[j]
                    block_sum = np.int32(block_sum + value)
                    block_squares = np.int32(block_squares + np.int32(value) * np.int32(value))
                laplacian_sum += block_sum
                laplacian_squares += block_squares
        if previous.shape[0]:
            before = previous[i]
            row_difference = np.int32(0)  # 255 * width < 2**31
            for j in range(width):
                now, then = row[j], before[j]
                row_difference = np.int32(
                    row_difference + np.uint8(max(now, then) - min(now, then))
                )
            difference += row_difference
    offset_u = _offset_from(chroma_u, chroma_width, neutral)
    offset_v = _offset_from(chroma_v, chroma_width, neutral)
    return laplacian_sum, laplacian_squares, difference, offset_u, offset_v


NO_PLANE = np.zeros((0, 0), dtype=np.uint8)
"""Stands for an absent plane (no previous frame, no chroma) in :func:`fused_sums`."""


def fused_sums(
    luma: np.ndarray,
    width: int,
    previous: np.ndarray = NO_PLANE,
    chroma: tuple[np.ndarray, np.ndarray] = (NO_PLANE, NO_PLANE),
    chroma_width: int = 0,
    neutral: int = 128,
) -> tuple[int, int, int, int, int]:
    """``(ΣL, ΣL², Σ|Y - P|, Σ|U - n|, Σ|V - n|)`` of one 8-bit frame, exactly.

    Planes are passed as decoders deliver them: C-contiguous ``uint8`` rows, padded (each row
    ``pitch >= width`` bytes), of which the first ``width`` (``chroma_width``) columns are the
    picture; they are read in place. ``previous`` (same shape as ``luma``) defaults to
    :data:`NO_PLANE`, giving ``Σ|Y - P| = 0``; so does ``chroma`` (grayscale), giving zeros.
    """
    if luma.dtype != np.uint8 or luma.ndim != 2 or not luma.flags.c_contiguous:
        raise ValueError(f"luma must be C-contiguous 2-D uint8 rows, got {luma.dtype} {luma.shape}")
    if not 0 < width <= luma.shape[1] or luma.shape[0] == 0:
        raise ValueError(f"width {width} does not fit rows of shape {luma.shape}")
    if previous.size and previous.shape != luma.shape:
        raise ValueError(f"previous has shape {previous.shape}, luma {luma.shape}")
    if chroma[0].shape != chroma[1].shape or chroma_width > chroma[0].shape[1]:
        raise ValueError(f"chroma planes {chroma[0].shape} {chroma[1].shape}, width {chroma_width}")
    laplacian_sum, laplacian_squares, difference, offset_u, offset_v = fused_kernel(
        luma, width, previous, chroma[0], chroma[1], chroma_width, neutral
    )
    return int(laplacian_sum), int(laplacian_squares), int(difference), int(offset_u), int(offset_v)
