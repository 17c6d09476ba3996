"""A ``.npy`` whose header declares more values than the file holds (issue 24 item 6a): refused
before numpy allocates them, with a message naming the file, the shape and both sizes."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as npy_format
from support.examples import GOOD, NORMAL

from vadscene.benchmark.frames import AuditInputError
from vadscene.benchmark.readers import load_npy
from vadscene.cli import run

HUGE = (10**12,)
"""A shape of float32 values no machine holds (4 TB)."""


def _lying_npy(
    path: Path, shape: tuple[int, ...], write_header: Callable[..., None], payload: int = 16
) -> Path:
    """A header as numpy.save writes it, declaring ``shape`` float32, then ``payload`` bytes."""
    header = io.BytesIO()
    write_header(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    path.write_bytes(header.getvalue() + bytes(payload))
    return path


@pytest.mark.parametrize(
    "write_header",
    [npy_format.write_array_header_1_0, npy_format.write_array_header_2_0],
    ids=["format-1.0", "format-2.0"],
)
def test_a_header_declaring_four_terabytes_in_a_small_file_is_refused(
    tmp_path: Path, write_header: Callable[..., None]
) -> None:
    file = _lying_npy(tmp_path / "model.npy", HUGE, write_header)
    with pytest.raises(AuditInputError) as error:
        load_npy(file)
    assert str(error.value) == (
        f"{file}: cannot read as a numeric .npy array: its header declares "
        "1,000,000,000,000 float32 values of shape (1000000000000,) (4,000,000,000,000 bytes) "
        "but the file holds only 16 bytes after the header; the file is truncated or its "
        "header is wrong — expected a file written by numpy.save"
    )


def test_a_cut_short_array_is_refused_with_both_sizes(tmp_path: Path) -> None:
    file = tmp_path / "cut.npy"
    np.save(file, np.zeros((5, 3), np.float64))
    file.write_bytes(file.read_bytes()[:-8])
    with pytest.raises(AuditInputError) as error:
        load_npy(file)
    assert str(error.value).startswith(
        f"{file}: cannot read as a numeric .npy array: its header declares 15 float64 values "
        "of shape (5, 3) (120 bytes) but the file holds only 112 bytes after the header;"
    )


def test_trailing_bytes_after_a_whole_array_are_read_as_numpy_reads_them(tmp_path: Path) -> None:
    file = tmp_path / "padded.npy"
    np.save(file, np.arange(4, dtype=np.int32))
    file.write_bytes(file.read_bytes() + b"\0" * 8)
    assert load_npy(file).tolist() == [0, 1, 2, 3]


def test_audit_of_a_score_folder_holding_such_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text(
        json.dumps(
            {
                GOOD: {"num_frames": 4, "labels": [0, 1, 1, 0]},
                NORMAL: {"num_frames": 3, "labels": [0, 0, 0]},
            }
        )
    )
    scores = tmp_path / "scores"
    scores.mkdir()
    lying = _lying_npy(scores / f"{GOOD}.npy", HUGE, npy_format.write_array_header_1_0)
    np.save(scores / f"{NORMAL}.npy", np.zeros(3, np.float32))
    code = run(
        [
            "audit",
            "--gt",
            str(gt),
            "--scores",
            f"m={scores}",
            "--bootstrap",
            "0",
            "--out",
            str(tmp_path / "report"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.startswith(
        f"error: {lying}: cannot read as a numeric .npy array: its header declares "
        "1,000,000,000,000 float32 values"
    )
    assert "(1000000000000,)" in captured.err and "bytes after the header" in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert not (tmp_path / "report").exists()
