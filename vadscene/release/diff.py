"""What changed between two releases: videos, annotators' decisions, resolved values, support.

``vadscene diff OLD NEW`` prints it; :func:`diff_releases` returns it as tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from vadscene.core.records import Release, VideoRecord

_VIDEO_COLUMNS = ["video_id", "change"]
_DECISION_COLUMNS = [
    "video_id",
    "factor",
    "annotator",
    "old_value",
    "new_value",
    "old_source",
    "new_source",
]
_VALUE_COLUMNS = [
    "video_id",
    "factor",
    "old_value",
    "new_value",
    "old_resolution",
    "new_resolution",
]
_SUPPORT_COLUMNS = ["factor", "positive", "negative", "count", "old", "new", "delta"]
_SUPPORT_COUNTS = ("n_positive", "n_negative", "n_ambiguous", "n_unresolved")


@dataclass(frozen=True, eq=False)
class ReleaseDiff:
    """Differences from an old release to a new one; every table is empty when they agree.

    ``videos``: video_id, change (``added`` | ``removed``).
    ``decisions``: one row per (video, factor, annotator) whose decision was added, removed,
    or changed value or source (None on the side where it is absent); videos in both only.
    ``values``: one row per (video, factor) whose resolved value or resolution changed
    (resolution ``unlabelled`` where nobody decided); videos in both only.
    ``support``: one row per contrast and count (n_positive, n_negative, n_ambiguous,
    n_unresolved) that changed, with old, new and delta.
    ``catalogue_changed``: the embedded catalogues differ.
    """

    videos: pd.DataFrame
    decisions: pd.DataFrame
    values: pd.DataFrame
    support: pd.DataFrame
    catalogue_changed: bool

    @property
    def empty(self) -> bool:
        return not self.catalogue_changed and all(
            table.empty for table in (self.videos, self.decisions, self.values, self.support)
        )

    def summary(self) -> str:
        """One line: how many of each kind of change."""
        if self.empty:
            return "no differences"
        counts = self.videos["change"].value_counts()
        parts = [
            f"{counts.get('added', 0)} videos added",
            f"{counts.get('removed', 0)} removed",
            f"{len(self.decisions)} decisions changed",
            f"{len(self.values)} resolved values changed",
            f"{len(self.support)} support counts changed",
        ]
        if self.catalogue_changed:
            parts.append("the catalogue changed")
        return ", ".join(parts)


def diff_releases(old: Release, new: Release) -> ReleaseDiff:
    """Compare two releases (see :class:`ReleaseDiff`)."""
    old_videos = {v.video_id: v for v in old.videos}
    new_videos = {v.video_id: v for v in new.videos}
    videos = [(v, "added") for v in sorted(new_videos.keys() - old_videos.keys())] + [
        (v, "removed") for v in sorted(old_videos.keys() - new_videos.keys())
    ]
    decisions, values = [], []
    for video_id in sorted(old_videos.keys() & new_videos.keys()):
        before, after = old_videos[video_id], new_videos[video_id]
        for factor in sorted(before.factors.keys() | after.factors.keys()):
            decisions += _decision_changes(video_id, factor, before, after)
            old_value, old_resolution = _resolved(before, factor)
            new_value, new_resolution = _resolved(after, factor)
            if (old_value, old_resolution) != (new_value, new_resolution):
                values.append(
                    (video_id, factor, old_value, new_value, old_resolution, new_resolution)
                )
    return ReleaseDiff(
        videos=pd.DataFrame(videos, columns=_VIDEO_COLUMNS),
        decisions=pd.DataFrame(decisions, columns=_DECISION_COLUMNS),
        values=pd.DataFrame(values, columns=_VALUE_COLUMNS),
        support=pd.DataFrame(_support_changes(old, new), columns=_SUPPORT_COLUMNS),
        catalogue_changed=old.catalogue != new.catalogue,
    )


def _decision_changes(
    video_id: str, factor: str, before: VideoRecord, after: VideoRecord
) -> list[tuple]:
    def by_annotator(video: VideoRecord) -> dict[str, tuple[str, str]]:
        assignment = video.factors.get(factor)
        decisions = assignment.decisions if assignment is not None else ()
        return {d.annotator: (d.value, d.source) for d in decisions}

    old, new = by_annotator(before), by_annotator(after)
    rows = []
    for annotator in sorted(old.keys() | new.keys()):
        old_value, old_source = old.get(annotator, (None, None))
        new_value, new_source = new.get(annotator, (None, None))
        if (old_value, old_source) != (new_value, new_source):
            rows.append((video_id, factor, annotator, old_value, new_value, old_source, new_source))
    return rows


def _resolved(video: VideoRecord, factor: str) -> tuple[str | None, str]:
    assignment = video.factors.get(factor)
    if assignment is None:
        return None, "unlabelled"
    return assignment.value, assignment.resolution


def _support_changes(old: Release, new: Release) -> list[tuple]:
    def counts(release: Release) -> dict[tuple[str, str, str], dict[str, int]]:
        return {
            (s.factor, s.positive, s.negative): {c: getattr(s, c) for c in _SUPPORT_COUNTS}
            for s in release.support
        }

    before, after = counts(old), counts(new)
    rows = []
    for contrast in sorted(before.keys() | after.keys()):
        for count in _SUPPORT_COUNTS:
            old_count = before.get(contrast, {}).get(count, 0)
            new_count = after.get(contrast, {}).get(count, 0)
            if old_count != new_count:
                rows.append((*contrast, count, old_count, new_count, new_count - old_count))
    return rows
