"""Helpers shared by the test modules: real-data location and small generated videos."""

from __future__ import annotations

import os
from pathlib import Path

import av
import numpy as np
import pytest

REALDATA = Path(
    os.environ.get("VADSCENE_REALDATA")
    or Path(__file__).resolve().parents[2] / "shared" / "realdata"
)


ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
"""Screenshots and other files tests leave for a person to look at (git-ignored)."""
ARTIFACTS.mkdir(exist_ok=True)


def realdata_dir() -> Path:
    """The shared real-data directory, read in place; skip (or fail in CI) when absent."""
    if not REALDATA.is_dir():
        message = f"real data directory {REALDATA} is absent"
        if os.environ.get("VADSCENE_REQUIRE_REALDATA") == "1":
            pytest.fail(f"{message} but VADSCENE_REQUIRE_REALDATA=1 requires it")
        pytest.skip(message)
    return REALDATA


def write_video(
    path: Path,
    codec: str,
    *,
    frames: int = 25,
    fps: int = 25,
    width: int = 64,
    height: int = 48,
    container_options: dict[str, str] | None = None,
) -> Path:
    """Encode a small synthetic clip (a moving bar on a changing background) with PyAV."""
    with av.open(str(path), "w", options=container_options or {}) as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuv420p"
        for i in range(frames):
            image = np.full((height, width, 3), (i * 9) % 256, dtype=np.uint8)
            image[:, (i * 3) % width] = 255
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return path


def damage(path: Path, seed: int) -> Path:
    """Truncate a file at a random point and overwrite 64 random bytes somewhere in it."""
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(seed)
    data = data[: rng.integers(1, len(data))]
    start = int(rng.integers(0, len(data)))
    data[start : start + 64] = rng.bytes(len(data[start : start + 64]))
    path.write_bytes(data)
    return path


def record_sharpness_poles(
    store, sharpness: dict[str, float], *, threshold: float = 37.5, params: dict | None = None
) -> None:
    """Store a sharpness measurement per video and the auto resolution pole it gives."""
    from datetime import UTC, datetime

    from vadscene.records import Measurement

    for video_id, value in sharpness.items():
        store.record_measurement(
            video_id,
            "sharpness",
            Measurement(
                value=value,
                params=params or {},
                decoder="opencv",
                frames_read=30,
                seconds=0.01,
                measured_at=datetime(2026, 1, 2, tzinfo=UTC),
            ),
        )
        pole = "high" if value > threshold else "low"
        store.record_decision(video_id, "resolution", pole, annotator="auto", source="auto")
