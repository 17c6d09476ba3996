"""Release files refused or normalised on reading: a key given twice is refused without echoing
it, an id in NFD is read as NFC, and two ids that normalise to one are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DUPLICATED_KEY, NFC, NFD
from support.examples import release_data

from vadscene.core.errors import ReleaseError
from vadscene.release.releases import read_release


def test_a_release_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    text = json.dumps(release_data(tmp_path))
    path = tmp_path / "dup.json"
    # the second "dataset" would silently win with json.loads
    path.write_text(text.replace('{"schema_version"', '{"dataset": "other", "schema_version"', 1))
    with pytest.raises(ReleaseError) as error:
        read_release(path)
    assert str(error.value).startswith(f"{path}: not valid JSON (")
    assert DUPLICATED_KEY.format(line=1, column=1) in str(error.value)
    assert "dataset" not in str(error.value)  # the key is the file's text: never echoed


def test_a_release_id_in_nfd_is_read_as_nfc_and_a_collision_is_refused(tmp_path: Path) -> None:
    data = release_data(tmp_path)
    data["videos"][0]["video_id"] = NFD
    path = tmp_path / "nfd.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert read_release(path).videos[0].video_id == NFC

    data["videos"].append({**data["videos"][0], "video_id": NFC})
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ReleaseError, match=f"duplicate video id '{NFC}'"):
        read_release(path)
