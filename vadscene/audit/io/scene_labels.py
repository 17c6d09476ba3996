"""Scene labels for the audit: each contrast's poles per video, from a release or a label table,
matched to the ground truth's videos.

A factor's contrast splits the annotated videos into poles ⊕ / ⊖; ambiguous and unlabelled
videos are left out of that contrast only (docs/metrics.md, "Scene factors").
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.video_lists import ucf_short_name, video_id_from_entry
from vadscene.core.catalogue import Catalogue, load_catalogue
from vadscene.core.records import Release
from vadscene.release.tables import read_label_table, values_of_release

_MAX_LISTED = 20
LABEL_TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


@dataclass(frozen=True)
class SceneContrast:
    factor: str
    positive: str
    negative: str
    primary: bool
    role: str


@dataclass(frozen=True)
class SceneLabels:
    """Resolved factor values per video, and the contrasts to audit."""

    contrasts: tuple[SceneContrast, ...]
    values: dict[str, dict[str, str]]  # factor → video id → value ("ambiguous" included)
    source: str
    not_in_ground_truth: tuple[str, ...] = ()
    """Labelled videos the ground truth does not list (set by :func:`match_to_ground_truth`)."""

    def __post_init__(self) -> None:
        where = f"{self.source}: scene labels"
        contrasts = tuple(self.contrasts)
        for contrast in contrasts:
            if not isinstance(contrast, SceneContrast):
                raise AuditInputError(
                    f"{where}: contrasts must be SceneContrast, got {type(contrast).__name__}"
                )
            if contrast.positive == contrast.negative:
                raise AuditInputError(
                    f"{where}: contrast of factor '{contrast.factor}' sets "
                    f"'{contrast.positive}' against itself"
                )
            if contrast.factor not in self.values:
                raise AuditInputError(
                    f"{where}: contrast '{contrast.positive} vs {contrast.negative}' names "
                    f"factor '{contrast.factor}', which has no values (factors: "
                    f"{', '.join(map(str, self.values)) or 'none'})"
                )
        for factor, by_video in self.values.items():
            if not isinstance(by_video, dict):
                raise AuditInputError(
                    f"{where}: factor '{factor}': expected a mapping video id → value, got "
                    f"{type(by_video).__name__}"
                )
            wrong = next(
                (
                    (v, x)
                    for v, x in by_video.items()
                    if not (isinstance(v, str) and isinstance(x, str))
                ),
                None,
            )
            if wrong is not None:
                raise AuditInputError(
                    f"{where}: factor '{factor}': video ids and values must be strings, got "
                    f"{wrong[0]!r} → {wrong[1]!r}"
                )
        object.__setattr__(self, "contrasts", contrasts)

    def poles(self, contrast: SceneContrast, video_ids: tuple[str, ...]) -> tuple[np.ndarray, ...]:
        """Boolean masks over ``video_ids``: videos at the ⊕ pole, videos at the ⊖ pole."""
        values = self.values.get(contrast.factor, {})
        labelled = np.array([values.get(v) for v in video_ids], dtype=object)
        return labelled == contrast.positive, labelled == contrast.negative


def match_to_ground_truth(scene: SceneLabels, ground_truth: GroundTruth) -> SceneLabels:
    """The labels of the ground truth's videos, refusing ids that look like a naming mismatch.

    Label ids are normalised as ground-truth ids are (file stems, crop index ``__N`` and
    feature suffixes dropped: :func:`vadscene.benchmark.video_lists.video_id_from_entry`). Labelled
    ids
    that match no ground-truth video are an error listing them when none of the labels match,
    or when any of them resembles a ground-truth id ("did you mean Abuse028_x264?": the
    UCF-Crime short name, or a close spelling) — both mean the labels name the videos
    differently. Otherwise (a release of the whole benchmark audited on its test split) they
    are left out, and :attr:`SceneLabels.not_in_ground_truth` lists them for the report.
    """
    known = set(ground_truth.video_ids)
    values = {
        factor: {video_id_from_entry(v): value for v, value in per_video.items()}
        for factor, per_video in scene.values.items()
    }
    labelled = sorted({v for per_video in values.values() for v in per_video})
    unknown = [v for v in labelled if v not in known]
    suggestions = _suggestions(unknown, ground_truth.video_ids)
    if unknown and (suggestions or len(unknown) == len(labelled)):
        listed = [
            f"{v} (did you mean {suggestions[v]}?)" if v in suggestions else v
            for v in unknown[:_MAX_LISTED]
        ]
        more = f", … ({len(unknown) - _MAX_LISTED} more)" if len(unknown) > _MAX_LISTED else ""
        raise AuditInputError(
            f"{scene.source}: {len(unknown)} of {len(labelled)} labelled videos match no "
            f"video of the ground truth ({ground_truth.source}): {', '.join(listed)}{more}. "
            "Video ids are file stems (folders, extensions and crop suffixes __N are "
            "ignored); rename the labels' videos to the ground truth's ids"
        )
    return SceneLabels(
        scene.contrasts,
        {f: {v: x for v, x in per_video.items() if v in known} for f, per_video in values.items()},
        scene.source,
        not_in_ground_truth=tuple(sorted({*unknown, *scene.not_in_ground_truth})),
    )


def _suggestions(unknown: list[str], candidates: tuple[str, ...]) -> dict[str, str]:
    """Unknown id → the ground-truth id it most likely means: same UCF-Crime short name
    (``Abuse028`` ↔ ``Abuse028_x264``), else the closest spelling (difflib ratio ≥ 0.85)."""
    by_short = {ucf_short_name(c): c for c in candidates}
    found = {}
    for video in unknown:
        match = by_short.get(ucf_short_name(video)) or next(
            iter(difflib.get_close_matches(video, candidates, n=1, cutoff=0.85)), None
        )
        if match is not None:
            found[video] = match
    return found


def scene_labels(
    catalogue: Catalogue, values: Mapping[str, Mapping[str, str]], *, source: str
) -> SceneLabels:
    """Scene labels of any origin — a release, a workspace, a label table — with the
    catalogue's contrasts: the one path every source of labels takes into the audit."""
    contrasts = tuple(
        SceneContrast(f.key, c.positive, c.negative, c.primary, f.role)
        for f in catalogue.factors
        for c in f.contrasts
    )
    return SceneLabels(contrasts, {k: dict(values.get(k, {})) for k in catalogue.keys}, source)


def scene_labels_from_release(release: Release, *, source: str) -> SceneLabels:
    """The values a release resolved (:func:`vadscene.annotate.consensus.resolve_assignment`)."""
    return scene_labels(release.catalogue, values_of_release(release), source=source)


def load_scene_labels(path: Path | str, *, catalogue: Catalogue | None = None) -> SceneLabels:
    """Scene labels from a release JSON file, a workspace folder (its consensus release) or a
    label table (``.csv``/``.tsv``/``.parquet``: long or wide, or the export CSV; see
    :func:`vadscene.release.tables.read_label_table`), the table validated against
    ``catalogue`` (default: the UCF-Crime catalogue)."""
    from vadscene.release.releases import build_release, read_release
    from vadscene.store.workspace import CONFIG_NAME, Workspace

    path = Path(path)
    if path.is_dir():
        if not (path / CONFIG_NAME).is_file():
            raise AuditInputError(f"{path}: not a vadscene workspace (no {CONFIG_NAME})")
        with Workspace.open(path) as workspace:
            return scene_labels_from_release(
                build_release(workspace), source=f"workspace {path} (consensus)"
            )
    if path.suffix.lower() in LABEL_TABLE_SUFFIXES:
        catalogue = catalogue if catalogue is not None else load_catalogue()
        return scene_labels(
            catalogue,
            read_label_table(path, catalogue),
            source=f"label table {path} (catalogue '{catalogue.name}')",
        )
    return scene_labels_from_release(read_release(path), source=f"release {path}")
