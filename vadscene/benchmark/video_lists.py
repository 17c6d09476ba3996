"""Reading the video list files benchmarks ship (split lists, feature lists).

Real lists name videos in several ways — ``Abuse/Abuse028_x264.mp4`` (UCF-Crime
``Anomaly_Test.txt``), ``test/Abuse028_x264__1.npy`` (per-crop feature lists of RTFM, UR-DMU,
PEL4VAD), bare ids (``01_0014``, ShanghaiTech). A video id is the file stem with a trailing
crop index ``__N`` (and RTFM's feature suffix ``_i3d``) removed; the ten crops of one video
count once, in first-seen order, and two other names of one id are an error
(:func:`distinct_video_ids`). Ids are NFC-normalised.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from vadscene.core.errors import VadsceneError, parse_failure

_CROP_SUFFIX = re.compile(r"__\d+$")
_FEATURE_SUFFIX = re.compile(r"_i3d$", re.IGNORECASE)
"""RTFM-style feature lists name ShanghaiTech videos ``01_0015_i3d.npy``."""
_LEADING_LETTERS = re.compile(r"([A-Za-z]+)\d")
_KNOWN_SUFFIXES = {".mp4", ".avi", ".mkv", ".webm", ".mov", ".npy", ".npz", ".pt", ".pkl", ".h5"}


def video_id_from_entry(entry: str) -> str:
    """``test/Abuse028_x264__1.npy`` → ``Abuse028_x264``; ``01_0014`` → ``01_0014``;
    ``01_0015_i3d.npy`` → ``01_0015`` (RTFM's I3D feature lists).

    Ids are NFC-normalised: a name typed or saved as NFD (macOS file names) is the same video.
    """
    return video_id_from_stem(_stem(entry))


def video_id_from_stem(stem: str) -> str:
    """The id of a bare file stem (no folder, no extension, no surrounding spaces), as
    :func:`video_id_from_entry` gives it: called once per file of a score folder, so the
    usual plain ASCII stem skips the substitutions it cannot need."""
    if "__" in stem:
        stem = _CROP_SUFFIX.sub("", stem)
    if "_" in stem:
        stem = _FEATURE_SUFFIX.sub("", stem)
    return stem if stem.isascii() else unicodedata.normalize("NFC", stem)


def _stem(entry: str) -> str:
    text = entry.strip().replace("\\", "/")
    # a plain name is its own PurePosixPath name: no path object per entry of a long list
    name = PurePosixPath(text).name if "/" in text or text in (".", "..") else text
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""  # PurePosixPath.suffix's rule
    return name[: -len(suffix)] if suffix.lower() in _KNOWN_SUFFIXES else name


def distinct_video_ids(entries: Iterable[tuple[int, str]], unit: str = "lines") -> list[str]:
    """Video ids of numbered list entries, each once, in first-seen order.

    Several entries may name one video only as its crops: the full set ``__0``, ``__1``, … in
    that order (feature lists: ``Abuse028_x264__0.npy`` … ``__9.npy``; PEL4VAD writes crop 0
    without its suffix, ``Abuse028_x264.npy``, ``Abuse028_x264__1.npy`` …). Two other different
    entries with one id (``Clip__1`` and ``Clip__2``, ``a/Clip.mp4`` and ``b/Clip.mp4``) would
    merge two videos silently: a :class:`VadsceneError` gives both numbers (``unit`` says what
    the numbers count), not the entries, which may be text of any file. Identical entries
    count once.
    """
    groups: dict[str, list[tuple[int, str]]] = {}
    for number, entry in entries:
        text = unicodedata.normalize("NFC", entry.strip())
        group = groups.setdefault(video_id_from_entry(text), [])
        if all(text != seen for _, seen in group):
            group.append((number, text))
    for group in groups.values():
        crops = [_CROP_SUFFIX.search(_stem(text)) for _, text in group]
        indices = [int(match.group()[2:]) if match else 0 for match in crops]  # PEL4VAD: no __0
        if len(group) > 1 and indices != list(range(len(group))):
            (first, _), (second, _) = group[0], group[1]
            raise VadsceneError(  # numbers only: the entries are the file's text
                f"{unit} {first} and {second} name one video (ids drop folders and extensions; "
                "a trailing __N is a crop index, and only a full set of crops __0, __1, … in "
                "order is one video); rename the videos if they are distinct"
            )
    return list(groups)


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
        raise VadsceneError(f"{path}: not a text file ({parse_failure(exc)})") from None
    entries = [
        (number, line)
        for number, line in enumerate(lines, 1)
        if line.strip() and not line.startswith("#")
    ]
    if not entries:
        raise VadsceneError(f"{path}: the video list is empty")
    try:
        return distinct_video_ids(entries)
    except VadsceneError as exc:
        raise VadsceneError(f"{path}: {exc}") from None


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
