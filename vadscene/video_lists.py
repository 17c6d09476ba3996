"""Reading the video list files benchmarks ship (split lists, feature lists).

Real lists name videos in several ways — ``Abuse/Abuse028_x264.mp4`` (UCF-Crime
``Anomaly_Test.txt``), ``test/Abuse028_x264__1.npy`` (per-crop feature lists of RTFM, UR-DMU,
PEL4VAD), bare ids (``01_0014``, ShanghaiTech). A video id is the file stem with a trailing
crop index ``__N`` (and RTFM's feature suffix ``_i3d``) removed; the ten crops of one video
count once, in first-seen order.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from vadscene.errors import VadsceneError

_CROP_SUFFIX = re.compile(r"__\d+$")
_FEATURE_SUFFIX = re.compile(r"_i3d$", re.IGNORECASE)
"""RTFM-style feature lists name ShanghaiTech videos ``01_0015_i3d.npy``."""
_LEADING_LETTERS = re.compile(r"([A-Za-z]+)\d")
_KNOWN_SUFFIXES = {".mp4", ".avi", ".mkv", ".webm", ".mov", ".npy", ".npz", ".pt", ".pkl", ".h5"}


def video_id_from_entry(entry: str) -> str:
    """``test/Abuse028_x264__1.npy`` → ``Abuse028_x264``; ``01_0014`` → ``01_0014``;
    ``01_0015_i3d.npy`` → ``01_0015`` (RTFM's I3D feature lists)."""
    name = PurePosixPath(entry.strip().replace("\\", "/")).name
    suffix = PurePosixPath(name).suffix
    stem = name[: -len(suffix)] if suffix.lower() in _KNOWN_SUFFIXES else name
    return _FEATURE_SUFFIX.sub("", _CROP_SUFFIX.sub("", stem))


def ucf_short_name(video: str) -> str:
    """``Abuse028_x264`` → ``Abuse028``; ``Normal_Videos_003_x264`` → ``Normal003``."""
    return re.sub(r"^Normal_Videos_", "Normal", video.removesuffix("_x264"))


def read_video_list(path: Path | str) -> list[str]:
    """Video ids of a list file, one entry per line (blank lines and ``#`` comments skipped)."""
    path = Path(path)
    if not path.is_file():
        raise VadsceneError(f"{path}: video list file not found")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise VadsceneError(f"{path}: not a text file ({exc})") from None
    ids = [video_id_from_entry(line) for line in lines if line.strip() and not line.startswith("#")]
    if not ids:
        raise VadsceneError(f"{path}: the video list is empty")
    return list(dict.fromkeys(ids))


def category_from_video_id(video_id: str, normal_category: str = "Normal") -> str | None:
    """The category a benchmark's naming scheme gives a video, or ``None`` if it gives none.

    - XD-Violence ``..._label_B4-0-0``: the first label code (``B4``); ``label_A`` → normal;
    - names starting with ``Normal`` (any case) → ``normal_category``;
    - UCF-Crime ``Abuse028_x264``: the leading letters before the first digit (``Abuse``);
    - anything else (ShanghaiTech ``01_0014``) → ``None``.
    """
    if "_label_" in video_id:
        code = video_id.rsplit("_label_", 1)[1].split("-", 1)[0]
        if code:
            return normal_category if code == "A" else code
        return None
    if video_id.lower().startswith("normal"):
        return normal_category
    match = _LEADING_LETTERS.match(video_id)
    return match.group(1) if match else None
