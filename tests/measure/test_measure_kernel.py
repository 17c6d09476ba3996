"""The fused kernel equals the OpenCV reference bit for bit: ΣL and ΣL² of the ksize-1
Laplacian (reflect-101 border), Σ|Y - P| and Σ|C - n|, on odd sizes, padded rows, 1×N and N×1
planes, and extreme content."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from vadscene.measure import statistics as measure
from vadscene.measure.kernel import NO_PLANE, fused_sums


def reference(
    luma: np.ndarray, previous: np.ndarray | None, u: np.ndarray, v: np.ndarray, neutral: int
) -> tuple[int, int, int, int, int]:
    """OpenCV's Laplacian in CV_64F (exact for 8-bit input) and numpy integer sums."""
    laplacian = cv2.Laplacian(luma, cv2.CV_64F).astype(np.int64)  # |L| <= 1020: exact
    difference = 0 if previous is None else np.abs(luma.astype(np.int64) - previous).sum()
    return (
        int(laplacian.sum()),
        int((laplacian * laplacian).sum()),
        int(difference),
        int(np.abs(u.astype(np.int64) - neutral).sum()),
        int(np.abs(v.astype(np.int64) - neutral).sum()),
    )


def padded(picture: np.ndarray, pad: int, rng: np.random.Generator) -> np.ndarray:
    """``picture`` inside C-contiguous rows ``pad`` bytes wider, the padding random junk."""
    rows = rng.integers(0, 256, (picture.shape[0], picture.shape[1] + pad), dtype=np.uint8)
    rows[:, : picture.shape[1]] = picture
    return rows


SHAPES = [(1, 1), (1, 2), (1, 7), (7, 1), (2, 1), (2, 2), (3, 3), (5, 9), (17, 31), (240, 320)]
# rows wider than the kernel's int32 blocks: a checkerboard row of 4099 sums L² = 4.3e9 > 2**31
SHAPES += [(2, 2049), (3, 4099)]
CONTENT = ["random", "extremes", "flat"]


def picture(kind: str, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    if kind == "random":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if kind == "extremes":  # a checkerboard of 0 and 255: the largest |L| there is (1020)
        return ((np.indices(shape).sum(axis=0) % 2) * 255).astype(np.uint8)
    return np.full(shape, 77, dtype=np.uint8)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind", CONTENT)
@pytest.mark.parametrize("pad", [0, 1, 13])
def test_fused_sums_equal_the_reference(shape: tuple[int, int], kind: str, pad: int) -> None:
    rng = np.random.default_rng(zlib.crc32(repr((shape, kind, pad)).encode()))
    luma, previous = picture(kind, shape, rng), rng.integers(0, 256, shape, dtype=np.uint8)
    chroma_shape = ((shape[0] + 1) // 2, (shape[1] + 1) // 2)
    u, v = (rng.integers(0, 256, chroma_shape, dtype=np.uint8) for _ in range(2))
    got = fused_sums(
        padded(luma, pad, rng),
        shape[1],
        padded(previous, pad, rng),
        (padded(u, pad, rng), padded(v, pad, rng)),
        chroma_shape[1],
        neutral=128,
    )
    assert got == reference(luma, previous, u, v, 128)


def test_without_previous_frame_or_chroma() -> None:
    rng = np.random.default_rng(3)
    luma = rng.integers(0, 256, (9, 14), dtype=np.uint8)
    sums = fused_sums(padded(luma, 3, rng), 14)
    assert sums == reference(luma, None, NO_PLANE, NO_PLANE, 128)
    assert sums[2:] == (0, 0, 0)


@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (31, 45), (240, 320)], ids=str)
def test_the_opencv_reference_path_gives_the_same_variance(shape: tuple[int, int]) -> None:
    """measure's OpenCV path (kept for deeper planes) and the kernel agree to the last bit."""
    rng = np.random.default_rng(4)
    luma = rng.integers(0, 256, shape, dtype=np.uint8)
    laplacian_sum, laplacian_squares = fused_sums(padded(luma, 5, rng), shape[1])[:2]
    mean = laplacian_sum / luma.size
    assert measure._laplacian_variance(luma) == laplacian_squares / luma.size - mean * mean


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((np.zeros((4, 4), np.uint16), 4), "uint8"),
        ((np.zeros((4, 4), np.uint8), 5), "width 5"),
        ((np.zeros((4, 4), np.uint8)[:, :2], 2), "C-contiguous"),
        ((np.zeros((4, 4), np.uint8), 4, np.zeros((3, 4), np.uint8)), "previous"),
    ],
)
def test_bad_planes_are_refused(arguments: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fused_sums(*arguments)


def test_a_new_process_loads_the_compiled_kernel_instead_of_compiling_it(tmp_path: Path) -> None:
    """Pool workers start often: the first one compiles and stores, later ones only load."""
    script = (
        "import numpy as np\n"
        "from vadscene.measure.kernel import fused_kernel, fused_sums\n"
        "fused_sums(np.zeros((3, 5), np.uint8), 4)\n"
        "print(sum(fused_kernel.stats.cache_hits.values()),"
        " sum(fused_kernel.stats.cache_misses.values()))\n"
    )
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}

    def hits_and_misses() -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", script], env=environment, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return [int(n) for n in done.stdout.split()]

    assert hits_and_misses() == [0, 1]  # compiled, and written to the cache directory
    assert hits_and_misses() == [1, 0]  # loaded
