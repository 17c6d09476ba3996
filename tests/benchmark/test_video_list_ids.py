"""Video lists name videos by id: two entries that lose their crop suffix to one id are an
error, a full set of crops of one video is that one video."""

from __future__ import annotations

from pathlib import Path

import pytest

from vadscene.benchmark.video_lists import read_video_list
from vadscene.core.errors import VadsceneError


def test_two_listed_videos_that_lose_their_crop_suffix_to_one_id_are_an_error(
    tmp_path: Path,
) -> None:
    listing = tmp_path / "order.txt"
    listing.write_text("Clip__1.mp4\nClip__2.mp4\nOther.mp4\n")
    with pytest.raises(VadsceneError) as error:
        read_video_list(listing)
    assert str(error.value).startswith(
        f"{listing}: lines 1 and 2 name one video (ids drop folders and extensions; a trailing "
        "__N is a crop index"
    )


def test_a_full_set_of_crops_still_names_one_video(tmp_path: Path) -> None:
    listing = tmp_path / "crops.txt"
    listing.write_text(
        "".join(
            f"test/{v}__{c}.npy\n" for v in ("Abuse028_x264", "Arson011_x264") for c in range(10)
        )
    )
    assert read_video_list(listing) == ["Abuse028_x264", "Arson011_x264"]
