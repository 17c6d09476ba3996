"""What the Review page shows: a videos × factors table with filter flags, and agreement.

The table is what a lead annotator scans to decide what needs another look, so each row carries
the value a release would publish (resolved by
:func:`vadscene.annotate.consensus.resolve_assignment`, the
one resolution rule) and boolean flags the page filters on. Agreement is reported per manual
factor as Cohen's or Fleiss' κ among the human annotators, computed here from their formulas so
the statistic shown is exactly the one documented (no statistics dependency at run time).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import combinations
from urllib.parse import urlencode

import altair as alt
import numpy as np
import pandas as pd

from vadscene.annotate.consensus import HUMAN_SOURCES, Dispute, disputes, resolve_assignment
from vadscene.core.catalogue import AMBIGUOUS, Factor
from vadscene.core.errors import CatalogueError
from vadscene.core.records import AUTO_ANNOTATOR, DecisionSource, FactorDecision
from vadscene.store.database import AnnotationStore, Decision
from vadscene.store.workspace import Workspace

FILTERS: dict[str, str] = {
    "incomplete": "Incomplete",
    "ambiguous": "Ambiguous",
    "flagged": "Flagged",
    "manual_vs_auto": "Manual ≠ auto",
    "disagree": "Annotators disagree",
}
"""Filter key (a boolean column of :func:`review_table`) → label shown on the page."""

_KEY = ["video", "factor"]
_Shape = tuple[tuple[str, DecisionSource, str, int], ...]
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Origin of the stand-in decision times of a shape (see :func:`_resolved_values`)."""


# --- the review table -----------------------------------------------------------------------


def review_table(
    workspace: Workspace, *, decisions: Sequence[Decision] | None = None
) -> pd.DataFrame:
    """One row per registered video (sorted by id): its resolved values and filter flags.

    Columns: ``video``, ``category``, one column per catalogue factor holding the value a
    consensus release publishes ("" without a decision; the votes, e.g. "ana: few · bo: many",
    for a disagreement nobody has adjudicated — see
    :attr:`~vadscene.annotate.consensus.Dispute.text`), then the boolean :data:`FILTERS`
    columns and ``annotators``:

    - ``incomplete``: some manual factor has no current (non-cleared) decision by anyone;
    - ``ambiguous``: some factor resolved to "ambiguous";
    - ``flagged``: some annotator's current flag on the video is set;
    - ``manual_vs_auto``: a person's value on an auto factor (an override, or a consensus)
      differs from the current auto pole;
    - ``disagree``: some factor of the video is in
      :func:`~vadscene.annotate.consensus.disputes` — also when a consensus decision has since
      settled it, so adjudicated videos stay findable;
    - ``annotators``: the people with a current decision or mark on the video, comma-joined
      (the same names a release lists for it).

    Everything comes from one
    :meth:`~vadscene.store.database.AnnotationStore.current_decisions` read (or ``decisions``,
    that read already made: the Review page shares one among the table and both agreement
    views) and one marks read, never per-video queries; values are resolved once per decision
    pattern (see :func:`_resolved_values`), not once per (video, factor).
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
    if decisions is None:
        decisions = store.current_decisions()
    decisions = [d for d in decisions if d.value is not None]
    decided = pd.DataFrame(
        [(d.video_id, d.factor, d.value, d.annotator, d.source) for d in decisions],
        columns=[*_KEY, "value", "annotator", "source"],
    )
    disputed = disputes(decisions)
    resolved = _resolved_values(decisions, disputed)
    values = resolved.reindex(index=ids, columns=keys).astype(object).fillna("")
    marks = {key: m for key, m in store.marks().items() if m["flag"] or m["skip"] or m["note"]}
    manual = [f.key for f in catalogue.factors if f.source == "manual"]
    on_manual = decided[decided["factor"].isin(manual)]
    flags = pd.DataFrame(
        {
            "incomplete": on_manual.groupby("video")["factor"].nunique().reindex(ids, fill_value=0)
            < len(manual),
            "ambiguous": (values == AMBIGUOUS).any(axis=1),
            "flagged": ids.isin({video for (video, _), m in marks.items() if m["flag"]}),
            "manual_vs_auto": _any_by_video(_differs_from_auto(decided), ids),
            "disagree": ids.isin({video for video, _ in disputed}),
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


def annotate_url(video_id: str, annotator: str = "") -> str:
    """The app-relative link that opens ``video_id`` on the Annotate page, as ``annotator``.

    Both are URL-encoded: a name such as "ana & bo" must reach the page whole, not split into
    query parameters. Without a name the link leaves the choice to the page.
    """
    query = {"annotator": annotator, "video": video_id} if annotator else {"video": video_id}
    return "/?" + urlencode(query)


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


def _resolved_values(
    decisions: Sequence[Decision], disputed: dict[tuple[str, str], Dispute]
) -> pd.DataFrame:
    """Videos × factors of resolved values, through the release's own resolution rule.

    Only (video, factor) pairs with a decision appear; an unadjudicated disagreement — the
    rule's None, which only a pair of ``disputed`` can give — holds its votes' text.

    Building a :class:`~vadscene.core.records.FactorDecision` per decision and calling
    :func:`~vadscene.annotate.consensus.resolve_assignment` per pair would dominate the cost,
    so each pair is reduced to its *shape* — the (annotator, source, value) of its decisions
    with each decision time replaced by its rank in the pair — and resolved once per distinct
    shape, of which a store has far fewer than pairs. This relies on the rule using decision
    times only to order decisions (the latest consensus wins), which the tests check by
    comparing with :func:`~vadscene.release.releases.build_release`.
    """
    groups: dict[tuple[str, str], list[Decision]] = {}
    for d in decisions:
        groups.setdefault((d.video_id, d.factor), []).append(d)
    if not groups:
        return pd.DataFrame()
    resolved: dict[_Shape, str | None] = {}
    values = []
    for key, group in groups.items():
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
        values.append(disputed[key].text if resolved[shape] is None else resolved[shape])
    index = pd.MultiIndex.from_tuples(list(groups), names=_KEY)
    return pd.Series(values, index=index, dtype=object).unstack("factor")


def _shape(group: Sequence[Decision]) -> _Shape:
    """(annotator, source, value, rank of decision time) per decision, sorted by annotator;
    the decisions hold values (cleared ones are left out before)."""
    times = [datetime.fromisoformat(d.decided_at) for d in group]
    rank = {t: i for i, t in enumerate(sorted(set(times)))}
    shape = []
    for d, t in zip(group, times, strict=True):
        if d.value is None:
            raise ValueError(f"decision {d.decision_id} clears its factor and has no shape")
        shape.append((d.annotator, d.source, d.value, rank[t]))
    return tuple(sorted(shape))


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
class PairAgreement:
    """Cohen's κ of two annotators on one manual factor, over the videos both rated.

    ``kappa`` is NaN when undefined (no shared videos, or every shared rating in one
    category); ``observed_agreement`` (p_o) is NaN only without shared videos.
    """

    first: str
    second: str
    videos: int
    kappa: float
    observed_agreement: float

    @property
    def kappa_text(self) -> str:
        """κ as a person reads it: three decimals, or why it is undefined."""
        if self.videos == 0:
            return "— (no video rated by both)"
        if math.isnan(self.kappa):
            return "undefined (every rating in one category)"
        return f"{self.kappa:.3f}"


@dataclass(frozen=True)
class FactorAgreement:
    """Inter-annotator agreement on one manual factor: every pair, and all raters together.

    ``pairs`` holds Cohen's κ for every pair of ``annotators`` (in name order), each over the
    videos that pair both rated. The all-raters ``statistic`` is ``cohen_kappa`` (two
    annotators: their one pair), ``fleiss_kappa`` (three or more) or ``none`` (fewer than
    two). ``videos`` counts the videos rated by every one of ``annotators``, the only ones
    the all-raters statistic uses; ``categories`` are the values seen in those ratings, in
    catalogue order ("ambiguous" last). ``kappa`` is NaN when undefined (no shared videos, or
    every shared rating in one category); ``observed_agreement`` (Cohen's p_o, Fleiss' P̄) is
    NaN only without shared videos.
    """

    factor: str
    statistic: str
    kappa: float
    annotators: tuple[str, ...]
    videos: int
    observed_agreement: float
    categories: tuple[str, ...]
    pairs: tuple[PairAgreement, ...]

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


def agreement(
    store: AnnotationStore, *, decisions: Sequence[Decision] | None = None
) -> list[FactorAgreement]:
    """κ per manual factor (catalogue order) among the human annotators who rated it.

    Ratings are each human annotator's current value (manual decisions; "ambiguous" is a
    category like any other), from the store or from ``decisions``, its current decisions
    already read (the read dominates the cost on a large store). Auto poles and consensus
    decisions are left out: they are not independent judgements.

    Every pair of annotators gets Cohen's κ over the videos both rated, so a late or partial
    annotator costs no pair its shared videos. All annotators together get one more
    statistic: with two, their pair's Cohen's κ; with three or more, Fleiss' κ over the
    videos rated by all of them, because Fleiss' formula needs the same number of ratings per
    video — which a partial annotator shrinks, as ``videos`` reports. (Krippendorff's α would
    keep every rating in one number, at the price of a statistic less standard to read.)
    """
    ratings = pd.DataFrame(
        [
            (d.video_id, d.factor, d.annotator, d.value)
            for d in (store.current_decisions() if decisions is None else decisions)
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
    pairs = []
    for first, second in combinations(annotators, 2):
        both = by_video[[first, second]].dropna()
        kappa, observed = _cohen(both[first].tolist(), both[second].tolist())
        pairs.append(PairAgreement(first, second, len(both), kappa, observed))
    if len(annotators) == 2:
        statistic = "cohen_kappa"
        kappa, observed = pairs[0].kappa, pairs[0].observed_agreement
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
        pairs=tuple(pairs),
    )


@dataclass(frozen=True)
class AutoAgreement:
    """One person's values on one measured factor against the current auto pole.

    ``videos`` counts the videos where the person holds a current value and the factor an
    auto pole; ``agreed`` those where the two are equal ("ambiguous" never equals a pole).
    ``kappa`` is Cohen's κ of person against pole over those videos (NaN when undefined).
    """

    factor: str
    annotator: str
    videos: int
    agreed: int
    kappa: float

    @property
    def observed_agreement(self) -> float:
        """The share of compared videos where the person kept the pole (NaN with none)."""
        return self.agreed / self.videos if self.videos else math.nan


def auto_agreement(
    store: AnnotationStore, *, decisions: Sequence[Decision] | None = None
) -> list[AutoAgreement]:
    """Per measured factor (catalogue order) and person (by name): agreement with the pole.

    A person's value on a measured factor is an override, or the pole accepted as their own
    decision; either is compared with the factor's current auto pole on the same video, the
    same comparison as the Review table's "Manual ≠ auto" filter. Consensus decisions are
    adjudications, not judgements, and are left out. ``decisions``: as in :func:`agreement`.

    Read with care: people record a value on a measured factor where they looked at it, often
    because the pole looked wrong, so the share describes the videos they decided — not how
    often the measurement is right across the benchmark.
    """
    poles: dict[tuple[str, str], str] = {}
    people: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for d in store.current_decisions() if decisions is None else decisions:
        if d.value is None:
            continue
        if d.source == "auto":
            poles[(d.video_id, d.factor)] = d.value
        elif d.source in HUMAN_SOURCES:
            people.setdefault((d.factor, d.annotator), []).append((d.video_id, d.value))
    results = []
    for factor in store.catalogue.factors:
        if factor.source != "auto":
            continue
        for (key, annotator), values in sorted(people.items()):
            if key != factor.key:
                continue
            pairs = [(v, poles[(video, key)]) for video, v in values if (video, key) in poles]
            mine, auto = [p[0] for p in pairs], [p[1] for p in pairs]
            results.append(
                AutoAgreement(
                    factor=key,
                    annotator=annotator,
                    videos=len(pairs),
                    agreed=sum(a == b for a, b in pairs),
                    kappa=_cohen(mine, auto)[0],
                )
            )
    return results


def kappa_heatmap(agreements: Sequence[FactorAgreement]) -> alt.LayerChart | None:
    """Pairwise Cohen's κ as a factors × annotator-pairs heatmap, each cell "κ / n videos".

    One grid instead of one small annotator × annotator matrix per factor: the same numbers,
    and a factor whose annotators agree less than the others stands out down a column.
    Colours run from −1 (red) through 0 (white) to 1 (blue); undefined κ is grey. None when
    no factor has two annotators.
    """
    rows = [
        {
            "factor": a.factor,
            "pair": f"{pair.first} – {pair.second}",
            "kappa": None if math.isnan(pair.kappa) else pair.kappa,
            "videos": pair.videos,
            "label": ("—" if math.isnan(pair.kappa) else f"{pair.kappa:.2f}")
            + f"\nn={pair.videos}",
        }
        for a in agreements
        for pair in a.pairs
    ]
    if not rows:
        return None
    data = pd.DataFrame(rows)
    base = alt.Chart(data).encode(
        x=alt.X("pair:N", title="annotator pair", axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("factor:N", sort=list(dict.fromkeys(data["factor"])), title=None),
    )
    cells = base.mark_rect(stroke="white").encode(
        color=alt.condition(
            "isValid(datum.kappa)",
            alt.Color(
                "kappa:Q",
                title="Cohen's κ",
                scale=alt.Scale(scheme="redblue", domain=[-1, 1], domainMid=0),
            ),
            alt.value("#d9d9d9"),
        ),
        tooltip=["factor", "pair", alt.Tooltip("kappa:Q", format=".3f"), "videos:Q"],
    )
    text = base.mark_text(lineBreak="\n", fontSize=12).encode(
        text="label:N",
        color=alt.condition("abs(datum.kappa) > 0.6", alt.value("white"), alt.value("#212121")),
    )
    # altair leaves configure_* unannotated; the chart it returns is the layer chart.
    chart: alt.LayerChart = (
        alt.layer(cells, text)
        .properties(
            # Room for "name – name" labels, narrower as pairs multiply (tooltips keep them).
            width=alt.Step(max(90, min(170, 900 // data["pair"].nunique()))),
            height=alt.Step(40),
            # Its designed size everywhere: Streamlit would otherwise fit a step-sized chart.
            autosize=alt.AutoSizeParams(type="pad", contains="padding"),
            title=alt.TitleParams(
                "Pairwise agreement per factor",
                subtitle=["Cohen's κ of each pair over the videos both rated (n)."],
                anchor="start",
            ),
        )
        .configure_axis(labelFontSize=12, titleFontSize=13, labelLimit=320)
        .configure_title(fontSize=17, subtitleFontSize=13, subtitleColor="#555555", offset=12)
    )
    return chart


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
