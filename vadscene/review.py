"""What the Review page shows: a videos × factors table with filter flags, and agreement.

The table is what a lead annotator scans to decide what needs another look, so each row carries
the value a release would publish (resolved by :func:`vadscene.release.resolve_assignment`, the
one resolution rule) and boolean flags the page filters on. Agreement is reported per manual
factor as Cohen's or Fleiss' κ among the human annotators, computed here from their formulas so
the statistic shown is exactly the one documented (no statistics dependency at run time).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from vadscene.catalogue import AMBIGUOUS, Factor
from vadscene.errors import CatalogueError
from vadscene.records import AUTO_ANNOTATOR, FactorDecision
from vadscene.release import HUMAN_SOURCES, resolve_assignment
from vadscene.store import AnnotationStore, Decision
from vadscene.workspace import Workspace

FILTERS: dict[str, str] = {
    "incomplete": "Incomplete",
    "ambiguous": "Ambiguous",
    "flagged": "Flagged",
    "manual_vs_auto": "Manual ≠ auto",
    "disagree": "Annotators disagree",
}
"""Filter key (a boolean column of :func:`review_table`) → label shown on the page."""

_KEY = ["video", "factor"]
_Shape = tuple[tuple[str, str, str, int], ...]
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Origin of the stand-in decision times of a shape (see :func:`_resolved_values`)."""


# --- the review table -----------------------------------------------------------------------


def review_table(workspace: Workspace) -> pd.DataFrame:
    """One row per registered video (sorted by id): its resolved values and filter flags.

    Columns: ``video``, ``category``, one column per catalogue factor holding the value a
    consensus release publishes ("" when there is none: no decision, or an unadjudicated
    disagreement), then the boolean :data:`FILTERS` columns and ``annotators``:

    - ``incomplete``: some manual factor has no current (non-cleared) decision by anyone;
    - ``ambiguous``: some factor resolved to "ambiguous";
    - ``flagged``: some annotator's current flag on the video is set;
    - ``manual_vs_auto``: a person's value on an auto factor (an override, or a consensus)
      differs from the current auto pole;
    - ``disagree``: human annotators (manual or override decisions) give different values on
      some factor — also when a consensus decision has since settled it, so adjudicated videos
      stay findable;
    - ``annotators``: the people with a current decision or mark on the video, comma-joined
      (the same names a release lists for it).

    Everything comes from one :meth:`~vadscene.store.AnnotationStore.current_decisions` read
    and one marks read, never per-video queries. Measured once by hand on a generated store of
    2,000 videos × 12 factors (45,691 current decisions: two annotators on every manual factor,
    a third on 10 %, auto poles, overrides, consensus, flags) on a 2-core machine shared with
    other work: 0.51-0.62 s (median of 11 runs; best 0.52 s), about 0.25 s of it the store read
    itself. Resolving every (video, factor) separately instead of once per decision pattern
    (see :func:`_resolved_values`) took 0.78 s.
    """
    catalogue = workspace.catalogue
    keys = list(catalogue.keys)
    clashing = sorted({"video", "category", "annotators", *FILTERS} & set(keys))
    if clashing:
        raise CatalogueError(
            f"catalogue '{catalogue.name}': factor keys {clashing} clash with review columns"
        )
    store = workspace.store
    videos = store.videos()
    ids = pd.Index([v.video_id for v in videos], name="video")
    decisions = [d for d in store.current_decisions() if d.value is not None]
    decided = pd.DataFrame(
        [(d.video_id, d.factor, d.value, d.annotator, d.source) for d in decisions],
        columns=[*_KEY, "value", "annotator", "source"],
    )
    values = _resolved_values(decisions).reindex(index=ids, columns=keys).astype(object).fillna("")
    marks = {key: m for key, m in store.marks().items() if m["flag"] or m["skip"] or m["note"]}
    manual = [f.key for f in catalogue.factors if f.source == "manual"]
    on_manual = decided[decided["factor"].isin(manual)]
    human = decided[decided["source"].isin(HUMAN_SOURCES)]
    flags = pd.DataFrame(
        {
            "incomplete": on_manual.groupby("video")["factor"].nunique().reindex(ids, fill_value=0)
            < len(manual),
            "ambiguous": (values == AMBIGUOUS).any(axis=1),
            "flagged": ids.isin({video for (video, _), m in marks.items() if m["flag"]}),
            "manual_vs_auto": _any_by_video(_differs_from_auto(decided), ids),
            "disagree": _any_by_video(human.groupby(_KEY)["value"].nunique() > 1, ids),
        },
        index=ids,
    )
    people: dict[str, set[str]] = {}
    for d in decisions:
        if d.annotator != AUTO_ANNOTATOR:
            people.setdefault(d.video_id, set()).add(d.annotator)
    for video, who in marks:
        people.setdefault(video, set()).add(who)
    table = pd.concat(
        [
            pd.DataFrame({"category": [v.category for v in videos]}, index=ids),
            values,
            flags,
            pd.Series(
                [", ".join(sorted(people.get(video, ()))) for video in ids],
                index=ids,
                name="annotators",
            ),
        ],
        axis=1,
    )
    return table.reset_index()


def filter_review(table: pd.DataFrame, selected: Iterable[str]) -> pd.DataFrame:
    """The rows of a :func:`review_table` matching ANY selected filter; all rows with none.

    Filters widen rather than narrow because the page uses them to gather every video that
    needs attention for any of the chosen reasons. Raises ValueError for an unknown filter key.
    """
    chosen = list(selected)
    unknown = [key for key in chosen if key not in FILTERS]
    if unknown:
        raise ValueError(f"unknown review filters {unknown} (known: {', '.join(FILTERS)})")
    if not chosen:
        return table
    return table[table[chosen].any(axis=1)]


def _resolved_values(decisions: Sequence[Decision]) -> pd.DataFrame:
    """Videos × factors of resolved values, through the release's own resolution rule.

    Only (video, factor) pairs with a decision appear; an unadjudicated disagreement is None.

    Building a :class:`~vadscene.records.FactorDecision` per decision and calling
    :func:`~vadscene.release.resolve_assignment` per pair cost more than everything else
    together, so each pair is reduced to its *shape* — the (annotator, source, value) of its
    decisions with each decision time replaced by its rank in the pair — and resolved once per
    distinct shape (976 on the 2,000-video store timed in :func:`review_table`). This relies on
    the rule using decision times only to order decisions (the latest consensus wins), which
    the tests check by comparing with :func:`~vadscene.release.build_release`.
    """
    groups: dict[tuple[str, str], list[Decision]] = {}
    for d in decisions:
        groups.setdefault((d.video_id, d.factor), []).append(d)
    if not groups:
        return pd.DataFrame()
    resolved: dict[_Shape, str | None] = {}
    values = []
    for group in groups.values():
        shape = _shape(group)
        if shape not in resolved:
            resolved[shape] = resolve_assignment(
                FactorDecision(
                    annotator=annotator,
                    value=value,
                    source=source,
                    decided_at=_EPOCH + timedelta(seconds=rank),
                )
                for annotator, source, value, rank in shape
            ).value
        values.append(resolved[shape])
    index = pd.MultiIndex.from_tuples(list(groups), names=_KEY)
    return pd.Series(values, index=index, dtype=object).unstack("factor")


def _shape(group: Sequence[Decision]) -> _Shape:
    """(annotator, source, value, rank of decision time) per decision, sorted by annotator."""
    times = [datetime.fromisoformat(d.decided_at) for d in group]
    rank = {t: i for i, t in enumerate(sorted(set(times)))}
    return tuple(
        sorted((d.annotator, d.source, d.value, rank[t]) for d, t in zip(group, times, strict=True))
    )


def _differs_from_auto(decided: pd.DataFrame) -> pd.Series:
    """Per (video, factor, person): does a person's value differ from the current auto pole."""
    is_auto = decided["source"] == "auto"
    poles = decided.loc[is_auto, [*_KEY, "value"]]
    both = decided.loc[~is_auto, [*_KEY, "value"]].merge(poles, on=_KEY, suffixes=("", "_auto"))
    return (both["value"] != both["value_auto"]).set_axis(pd.Index(both["video"], name="video"))


def _any_by_video(mask: pd.Series, ids: pd.Index) -> pd.Series:
    """Per video of ``ids``: is ``mask`` (indexed by video, or by (video, …)) true anywhere."""
    return mask.groupby(level="video").any().reindex(ids, fill_value=False).astype(bool)


# --- agreement ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactorAgreement:
    """Inter-annotator agreement on one manual factor.

    ``statistic`` is ``cohen_kappa`` (two annotators), ``fleiss_kappa`` (three or more) or
    ``none`` (fewer than two). ``videos`` counts the videos rated by every one of
    ``annotators``, the only ones the statistic uses; ``categories`` are the values seen in
    those ratings, in catalogue order ("ambiguous" last). ``kappa`` is NaN when undefined (no
    shared videos, or every shared rating in one category); ``observed_agreement`` (Cohen's
    p_o, Fleiss' P̄) is NaN only without shared videos.
    """

    factor: str
    statistic: str
    kappa: float
    annotators: tuple[str, ...]
    videos: int
    observed_agreement: float
    categories: tuple[str, ...]

    @property
    def kappa_text(self) -> str:
        """κ as a person reads it: three decimals, or why it is undefined."""
        if self.statistic == "none":
            return "— (needs two annotators)"
        if self.videos == 0:
            return "— (no video rated by all of them)"
        if math.isnan(self.kappa):
            return "undefined (every rating in one category)"
        return f"{self.kappa:.3f}"


def agreement(store: AnnotationStore) -> list[FactorAgreement]:
    """κ per manual factor (catalogue order) among the human annotators who rated it.

    Ratings are each human annotator's current value (manual decisions; "ambiguous" is a
    category like any other). Auto poles and consensus decisions are left out: they are not
    independent judgements. Two annotators get Cohen's κ over the videos both rated. Three or
    more get Fleiss' κ over the videos rated by all of them, because Fleiss' formula needs the
    same number of ratings per video; a late or partial annotator therefore shrinks
    ``videos``, which the result reports. The alternatives would keep every rating — Fleiss'
    κ generalised to unequal numbers of raters, Krippendorff's α (which handles missing
    ratings), or the mean of pairwise Cohen's κ (Light 1971) — at the price of a statistic
    that is less standard to read.
    """
    ratings = pd.DataFrame(
        [
            (d.video_id, d.factor, d.annotator, d.value)
            for d in store.current_decisions()
            if d.value is not None and d.source in HUMAN_SOURCES
        ],
        columns=[*_KEY, "annotator", "value"],
    )
    return [
        _factor_agreement(factor, ratings[ratings["factor"] == factor.key])
        for factor in store.catalogue.factors
        if factor.source == "manual"
    ]


def _factor_agreement(factor: Factor, ratings: pd.DataFrame) -> FactorAgreement:
    """Agreement on one factor from its (video, annotator, value) ratings."""
    by_video = ratings.pivot(index="video", columns="annotator", values="value")
    annotators = tuple(sorted(by_video.columns))
    shared = by_video[list(annotators)].dropna()
    seen = set(shared.to_numpy().ravel())
    categories = tuple(v for v in (*factor.values, AMBIGUOUS) if v in seen)
    if len(annotators) == 2:
        statistic = "cohen_kappa"
        kappa, observed = _cohen(shared[annotators[0]].tolist(), shared[annotators[1]].tolist())
    elif len(annotators) > 2:
        statistic = "fleiss_kappa"
        counts = np.zeros((len(shared), len(categories)), dtype=np.int64)
        for j, category in enumerate(categories):
            counts[:, j] = (shared == category).sum(axis=1)
        kappa, observed = _fleiss(counts)
    else:
        statistic, kappa, observed = "none", math.nan, math.nan
    return FactorAgreement(
        factor=factor.key,
        statistic=statistic,
        kappa=kappa,
        annotators=annotators,
        videos=len(shared),
        observed_agreement=observed,
        categories=categories,
    )


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's κ of two raters' labels on the same subjects (Cohen 1960).

    κ = (p_o − p_e) / (1 − p_e), where p_o is the share of subjects given the same label and
    p_e = Σ_k (a_k / n)(b_k / n) the agreement expected by chance from each rater's own label
    frequencies a_k, b_k over the n subjects.

    Equals ``sklearn.metrics.cohen_kappa_score``, including NaN when κ is undefined (p_e = 1:
    both raters used one and the same label throughout), except that no subjects give NaN
    instead of an error — a factor nobody has co-rated yet is a normal state, not a mistake.

    Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
    Psychological Measurement, 20(1), 37-46.
    """
    return _cohen(a, b)[0]


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' κ from a subjects × categories matrix of rating counts (Fleiss 1971).

    Every subject is rated by the same number n ≥ 2 of raters; ``counts[i, j]`` is how many
    put subject i in category j. With N subjects:

    - P_i = (Σ_j n_ij² − n) / (n (n − 1)), the agreeing share of rater pairs on subject i;
    - P̄ = mean of P_i (observed agreement); p_j = Σ_i n_ij / (N n);
    - P̄_e = Σ_j p_j² (agreement expected by chance); κ = (P̄ − P̄_e) / (1 − P̄_e).

    NaN when undefined: no subjects, or P̄_e = 1 (every rating in one category). Raises
    ValueError for a matrix that is not 2-D non-negative integer counts with equal row sums
    of at least 2.

    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
    Bulletin, 76(5), 378-382.
    """
    return _fleiss(counts)[0]


def _cohen(a: Sequence[str], b: Sequence[str]) -> tuple[float, float]:
    """(κ, p_o) of two raters; integer arithmetic until the last division, so p_e = 1 is exact."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"the raters labelled different numbers of subjects ({len(a)}, {len(b)})")
    n = len(a)
    if n == 0:
        return math.nan, math.nan
    agree = sum(x == y for x, y in zip(a, b, strict=True))
    chance = sum(a.count(label) * b.count(label) for label in set(a) | set(b))  # n² · p_e
    kappa = math.nan if chance == n * n else (n * agree - chance) / (n * n - chance)
    return kappa, agree / n


def _fleiss(counts: np.ndarray) -> tuple[float, float]:
    """(κ, P̄) of a count matrix; see :func:`fleiss_kappa`."""
    matrix = np.asarray(counts)
    if matrix.ndim != 2:
        raise ValueError(f"expected a subjects × categories matrix, got shape {matrix.shape}")
    if matrix.size and (not np.array_equal(matrix, np.round(matrix)) or bool((matrix < 0).any())):
        raise ValueError("rating counts must be non-negative integers")
    matrix = matrix.astype(np.int64)
    subjects = matrix.shape[0]
    if subjects == 0:
        return math.nan, math.nan
    raters = matrix.sum(axis=1)
    n = int(raters[0])
    if (raters != n).any() or n < 2:
        raise ValueError(
            f"every subject needs the same number (≥ 2) of ratings; row sums are "
            f"{sorted(set(raters.tolist()))}"
        )
    total = subjects * n
    observed = (int((matrix**2).sum()) - total) / (total * (n - 1))  # P̄
    chance_count = int((matrix.sum(axis=0) ** 2).sum())  # (N n)² · P̄_e
    if chance_count == total * total:
        return math.nan, observed
    chance = chance_count / (total * total)
    return (observed - chance) / (1 - chance), observed
