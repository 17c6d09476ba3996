"""Scene-factor audit: bias-AUC on normal footage and scene-conditioned AUC (A §4, Supp. S1).

A factor's contrast splits the annotated videos into poles ⊕ / ⊖; ambiguous and unlabelled
videos are left out of that contrast only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vadscene.audit.inputs import AuditInputError
from vadscene.audit.metrics import ratio_or_nan
from vadscene.records import Release


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


def scene_labels_from_release(release: Release, *, source: str) -> SceneLabels:
    """The values a release resolved (see :func:`vadscene.release.resolve_assignment`)."""
    contrasts = tuple(
        SceneContrast(f.key, c.positive, c.negative, c.primary, f.role)
        for f in release.catalogue.factors
        for c in f.contrasts
    )
    values: dict[str, dict[str, str]] = {key: {} for key in release.catalogue.keys}
    for video in release.videos:
        for key, assignment in video.factors.items():
            if assignment.value is not None:
                values[key][video.video_id] = assignment.value
    return SceneLabels(contrasts, values, source)


def load_scene_labels(path: Path | str) -> SceneLabels:
    """Scene labels from a release JSON file or a workspace folder (its consensus release)."""
    from vadscene.release import build_release, read_release
    from vadscene.workspace import CONFIG_NAME, Workspace

    path = Path(path)
    if path.is_dir():
        if not (path / CONFIG_NAME).is_file():
            raise AuditInputError(f"{path}: not a vadscene workspace (no {CONFIG_NAME})")
        with Workspace.open(path) as workspace:
            return scene_labels_from_release(
                build_release(workspace), source=f"workspace {path} (consensus)"
            )
    return scene_labels_from_release(read_release(path), source=f"release {path}")


def bias_auroc(
    positive: np.ndarray,
    negative: np.ndarray,
    positive_counts: np.ndarray,
    negative_counts: np.ndarray,
) -> np.ndarray:
    """Video-level AUROC of ⊕ over ⊖ normal-footage means, per replicate (A §4):

        b = Σ_i Σ_j k⁺_i k⁻_j τ(x_i, y_j) / (Σk⁺ · Σk⁻),   τ(x, y) = 1[x > y] + ½·1[x = y]

    ``positive_counts`` (R, n⁺) and ``negative_counts`` (R, n⁻) are copy counts (ones for
    the estimate; within-pole resamples for the bootstrap). A ranking probability, so it does
    not depend on how many videos each pole has (S1.3). Cost O(R·(n⁺ + n⁻)) via the sorted ⊖
    values and cumulative counts.
    """
    order = np.argsort(negative, kind="stable")
    sorted_negative = negative[order]
    cumulative = np.zeros((negative_counts.shape[0], negative.size + 1))
    np.cumsum(negative_counts[:, order], axis=1, out=cumulative[:, 1:])
    below = cumulative[:, np.searchsorted(sorted_negative, positive, "left")]
    at_or_below = cumulative[:, np.searchsorted(sorted_negative, positive, "right")]
    wins = np.einsum("ri,ri->r", positive_counts, (below + at_or_below) / 2)
    return ratio_or_nan(wins, positive_counts.sum(1) * negative_counts.sum(1))


PAIR_TYPES = ("++", "--", "+-", "-+")
"""X Y: pole of the anomalous frame's video, pole of the normal frame's video."""


def scene_conditioned(
    u: np.ndarray, a: np.ndarray, n: np.ndarray, plus: np.ndarray, minus: np.ndarray
) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Pair-type AUROCs and weights, AUC_ref and AUC_cond on one contrast's support (A S1.2).

    AUC_XY = Σ_{u∈X, v∈Y} U[u, v] / (a_X n_Y), w_XY = a_X n_Y / (A_j N_j);
    AUC_ref = Σ w_XY AUC_XY (exactly the pooled AUROC of the support's frames);
    AUC_cond = ½ (AUC_⊕⊕ + AUC_⊖⊖); Δscene = AUC_ref − AUC_cond.
    (AUC_⊕⊕ is Borkan et al.'s subgroup AUC, AUC_⊖⊕ BPSN, AUC_⊕⊖ BNSP.)
    Returns ({pair type: (auroc, weight)}, AUC_ref, AUC_cond).
    """
    masks = {"+": plus.astype(np.float64), "-": minus.astype(np.float64)}
    support = plus | minus
    total_pairs = float(a[support].sum() * n[support].sum())
    pairs: dict[str, tuple[float, float]] = {}
    reference = 0.0
    for pair_type in PAIR_TYPES:
        rows, cols = masks[pair_type[0]], masks[pair_type[1]]
        count = float((rows @ a) * (cols @ n))
        auroc = float(rows @ u @ cols) / count if count > 0 else float("nan")
        weight = count / total_pairs if total_pairs > 0 else float("nan")
        pairs[pair_type] = (float(auroc), weight)
        if count > 0:
            reference += weight * auroc
    if total_pairs == 0:
        reference = float("nan")
    conditioned = 0.5 * (pairs["++"][0] + pairs["--"][0])
    return pairs, reference, conditioned
