"""The fused exact kernel of :mod:`vadscene.measure` for 8-bit planes (numba).

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
OpenCV functions in :mod:`vadscene.measure` remain the reference and serve planes deeper than
8 bits. Compiled code is cached on disk (``cache=True``), so pool workers load it instead of
compiling it on every start; numba falls back to a per-user cache directory when the package
directory is read-only.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _laplacian_into(out, above, row, below, width):  # type: ignore[no-untyped-def]
    """``out[j] = L`` along one row, given its neighbour rows (reflected at the border).

    ``int16`` holds every value (|L| <= 1020) and keeps the loop narrow enough for SIMD.
    """
    if width == 1:  # both horizontal neighbours reflect onto the pixel itself
        out[0] = np.int16(above[0]) + np.int16(below[0]) - np.int16(2) * np.int16(row[0])
        return
    for j in range(1, width - 1):
        out[j] = (
            np.int16(above[j])
            + np.int16(below[j])
            + np.int16(row[j - 1])
            + np.int16(row[j + 1])
            - np.int16(4) * np.int16(row[j])
        )
    last = width - 1
    for j, inner in ((0, 1), (last, last - 1)):  # reflect-101: column -1 is column 1
        out[j] = (
            np.int16(above[j])
            + np.int16(below[j])
            + np.int16(2) * np.int16(row[inner])
            - np.int16(4) * np.int16(row[j])
        )


@njit(cache=True, nogil=True)
def _offset_from(rows, width, neutral):  # type: ignore[no-untyped-def]
    """Σ|rows - neutral| over the first ``width`` columns of every row."""
    total = 0
    for i in range(rows.shape[0]):
        row = rows[i]
        row_total = 0
        for j in range(width):
            row_total += abs(np.int16(row[j]) - np.int16(neutral))
        total += row_total
    return total


@njit(cache=True, nogil=True)
def fused_kernel(luma, width, previous, chroma_u, chroma_v, chroma_width, neutral):  # type: ignore[no-untyped-def]
    """The compiled kernel behind :func:`fused_sums`, without its argument checks (the caller
    passes planes it built itself, as :mod:`vadscene.measure` does for every frame)."""
    height = luma.shape[0]
    laplacian = np.empty(width, dtype=np.int16)
    laplacian_sum = 0
    laplacian_squares = 0
    difference = 0
    for i in range(height):
        above = luma[i - 1] if i > 0 else luma[min(1, height - 1)]
        below = luma[i + 1] if i < height - 1 else luma[max(height - 2, 0)]
        row = luma[i]
        _laplacian_into(laplacian, above, row, below, width)
        row_sum = 0
        row_squares = 0
        for j in range(width):
            value = np.int32(laplacian[j])
            row_sum += value
            row_squares += value * value
        laplacian_sum += row_sum
        laplacian_squares += row_squares
        if previous.shape[0]:
            before = previous[i]
            row_difference = 0
            for j in range(width):
                row_difference += abs(np.int16(row[j]) - np.int16(before[j]))
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
    sums = fused_kernel(luma, width, previous, chroma[0], chroma[1], chroma_width, neutral)
    return tuple(int(total) for total in sums)  # type: ignore[return-value]
