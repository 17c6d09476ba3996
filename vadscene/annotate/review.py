"""What the Review page shows: a videos × factors table with filter flags, and agreement.

The table is what a lead annotator scans to decide what needs another look, so each row carries
the value a release would publish (by the rule of
:func:`vadscene.annotate.consensus.resolve_assignment`, the one resolution rule), or for an open
disagreement a compact count of the votes, and boolean flags the page filters on. Agreement is
reported per manual factor as Cohen's or Fleiss' κ among the human annotators, computed here
from their formulas so the statistic shown is exactly the one documented (no statistics
dependency at run time).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from operator import attrgetter
from urllib.parse import urlencode

import altair as alt
import numpy as np
import pandas as pd

from vadscene.annotate.consensus import HUMAN_SOURCES
from vadscene.core.catalogue import AMBIGUOUS, Factor
from vadscene.core.errors import CatalogueError
from vadscene.core.records import AUTO_ANNOTATOR
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


# --- the review table -----------------------------------------------------------------------


def review_table(
    workspace: Workspace, *, decisions: Sequence[Decision] | None = None
) -> pd.DataFrame:
    """One row per registered video (sorted by id): its resolved values and filter flags.

    Columns: ``video``, ``category``, one column per catalogue factor holding the value a
    consensus release publishes ("" without a decision; for a disagreement nobody has
    adjudicated, its :func:`vote_count`, e.g. "grayscale 4 · color 3"), then the boolean
    :data:`FILTERS` columns and ``annotators``:

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
    views) and one marks read, never per-video queries.

    The rule of :func:`~vadscene.annotate.consensus.resolve_assignment` (the latest consensus,
    else the human votes when they agree, else the auto pole) and the disagreement of
    :func:`~vadscene.annotate.consensus.disputes` are applied to all (video, factor) cells at
    once, as array operations over the decisions: calling them per cell would cost several
    times the read itself on a campaign's store. The tests hold the table to
    :func:`~vadscene.release.releases.build_release` and to ``disputes``. Times compare as
    text, which the store's canonical instants (:mod:`vadscene.core.instants`) make exact.
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
    rows = _Rows.of(store.current_decisions() if decisions is None else decisions, ids, keys)
    width = len(keys)
    grid, disputed = _resolved_grid(rows, len(ids), catalogue.factors)
    cells = grid.reshape(len(ids), width)
    marks = {key: m for key, m in store.marks().items() if m["flag"] or m["skip"] or m["note"]}
    manual = [i for i, f in enumerate(catalogue.factors) if f.source == "manual"]
    decided = np.zeros(len(grid), dtype=bool)
    decided[rows.cell[rows.known]] = True
    disagree = np.zeros(len(ids), dtype=bool)
    disagree[disputed // width] = True
    flags = pd.DataFrame(
        {
            "incomplete": decided.reshape(len(ids), width)[:, manual].sum(axis=1) < len(manual),
            "ambiguous": (cells == AMBIGUOUS).any(axis=1),
            "flagged": ids.isin({video for (video, _), m in marks.items() if m["flag"]}),
            "manual_vs_auto": _differs_from_auto(rows, len(ids), len(grid)),
            "disagree": disagree,
        },
        index=ids,
    )
    table = pd.concat(
        [
            pd.DataFrame({"category": [v.category for v in videos]}, index=ids),
            pd.DataFrame(cells, index=ids, columns=keys, dtype=object),
            flags,
            pd.Series(_people(rows, ids, marks), index=ids, name="annotators"),
        ],
        axis=1,
    )
    return table.reset_index()


def vote_count(votes: Iterable[str], order: Sequence[str]) -> str:
    """Votes as a compact table cell: each value and how many voted it, the most voted first
    (ties in ``order``, the factor's values and "ambiguous"), e.g. "grayscale 4 · color 3".

    A cell that lists every voter by name grows with the team and is cut off; the names stay
    on the dispute queue and in the adjudication's choices."""
    counts: dict[str, int] = {}
    for value in votes:
        counts[value] = counts.get(value, 0) + 1
    rank = {value: i for i, value in enumerate(order)}
    ranked = sorted(counts.items(), key=lambda item: (-item[1], rank.get(item[0], len(rank))))
    return " · ".join(f"{value} {n}" for value, n in ranked)


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


_FIELDS = ("video_id", "factor", "value", "annotator", "source", "decided_at")
"""The fields of a decision the table is computed from."""


@dataclass(frozen=True)
class _Rows:
    """The current decisions that hold a value, as columns, each placed in the table: its
    video's row (-1 for a video not registered) and its cell, ``row × factors + factor``
    (-1 unless both video and factor are known)."""

    row: np.ndarray
    cell: np.ndarray
    value: np.ndarray
    annotator: np.ndarray
    source: np.ndarray
    decided_at: np.ndarray

    @property
    def known(self) -> np.ndarray:
        return self.cell >= 0

    @classmethod
    def of(cls, decisions: Sequence[Decision], ids: pd.Index, keys: list[str]) -> _Rows:
        held = [d for d in decisions if d.value is not None]

        def read(name: str) -> np.ndarray:
            return np.array(list(map(attrgetter(name), held)), dtype=object)

        video, factor, value, annotator, source, decided_at = map(read, _FIELDS)
        row = ids.get_indexer(video)
        column = pd.Index(keys).get_indexer(factor)
        cell = np.where((row >= 0) & (column >= 0), row * len(keys) + column, -1)
        return cls(row, cell, value, annotator, source, decided_at)


def _resolved_grid(
    rows: _Rows, videos: int, factors: Sequence[Factor]
) -> tuple[np.ndarray, np.ndarray]:
    """The flat videos × factors grid of resolved cells ("" without a decision), and the
    cells in dispute (sorted).

    Laid down in reverse precedence, each layer over the last: auto poles, then the human
    votes of cells where they agree, the :func:`vote_count` of cells where they do not, and
    last the latest consensus (the earliest annotator name among tied times, as
    :func:`~vadscene.annotate.consensus.resolve_assignment` takes it)."""
    grid = np.full(videos * len(factors), "", dtype=object)
    auto = rows.known & (rows.source == "auto")
    grid[rows.cell[auto]] = rows.value[auto]
    human = rows.known & np.isin(rows.source, HUMAN_SOURCES)
    votes = pd.DataFrame({"cell": rows.cell[human], "value": rows.value[human]})
    distinct = votes.drop_duplicates()
    per_cell = np.bincount(distinct["cell"].to_numpy(), minlength=len(grid))
    agreed = distinct[per_cell[distinct["cell"].to_numpy()] == 1]
    grid[agreed["cell"].to_numpy()] = agreed["value"].to_numpy()
    disputed = np.flatnonzero(per_cell > 1)
    grid[disputed] = _vote_counts(votes[per_cell[votes["cell"].to_numpy()] > 1], factors)
    settled = rows.known & (rows.source == "consensus")
    if settled.any():
        latest = (
            pd.DataFrame(
                {
                    "cell": rows.cell[settled],
                    "at": rows.decided_at[settled],
                    "annotator": rows.annotator[settled],
                    "value": rows.value[settled],
                }
            )
            .sort_values(["at", "annotator"], ascending=[False, True])
            .drop_duplicates("cell")
        )
        grid[latest["cell"].to_numpy()] = latest["value"].to_numpy()
    return grid, disputed


def _vote_counts(votes: pd.DataFrame, factors: Sequence[Factor]) -> list[str]:
    """:func:`vote_count` of every cell of ``votes`` (its ``cell`` and ``value`` columns), in
    cell order: one sort of all the counts rather than one count per cell."""
    if votes.empty:
        return []
    counts = votes.groupby(["cell", "value"], sort=False).size().reset_index(name="n")
    rank = {
        (i, value): r
        for i, factor in enumerate(factors)
        for r, value in enumerate((*factor.values, AMBIGUOUS))
    }
    cells, values, n = (counts[c].to_numpy(dtype=object) for c in ("cell", "value", "n"))
    ranks = [rank.get((c % len(factors), v), len(rank)) for c, v in zip(cells, values, strict=True)]
    order = np.lexsort((ranks, -n.astype(int), cells.astype(int)))
    pieces = [f"{v} {k}" for v, k in zip(values[order].tolist(), n[order].tolist(), strict=True)]
    starts = np.flatnonzero(np.diff(cells[order].astype(int), prepend=-1))
    ends = [*starts[1:], len(pieces)]
    return [" · ".join(pieces[a:b]) for a, b in zip(starts, ends, strict=True)]


def _differs_from_auto(rows: _Rows, videos: int, cells: int) -> np.ndarray:
    """Per video: does a person's value on some cell differ from that cell's auto pole."""
    pole = np.full(cells, None, dtype=object)
    auto = rows.known & (rows.source == "auto")
    pole[rows.cell[auto]] = rows.value[auto]
    person = np.flatnonzero(rows.known & ~auto)
    their_pole = pole[rows.cell[person]]
    differs = person[(their_pole != None) & (rows.value[person] != their_pole)]  # noqa: E711
    flagged = np.zeros(videos, dtype=bool)
    flagged[rows.row[differs]] = True
    return flagged


def _people(rows: _Rows, ids: pd.Index, marks: Iterable[tuple[str, str]]) -> list[str]:
    """Per video of ``ids``: the names with a current decision or a set mark, comma-joined."""
    person = (rows.row >= 0) & (rows.annotator != AUTO_ANNOTATOR)
    pairs = set(zip(rows.row[person].tolist(), rows.annotator[person].tolist(), strict=True))
    position = {video: i for i, video in enumerate(ids)}
    pairs.update((position[video], who) for video, who in marks if video in position)
    names: list[list[str]] = [[] for _ in ids]
    for row, who in sorted(pairs):
        names[row].append(who)
    return [", ".join(people) for people in names]


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
    store: AnnotationStore,
    *,
    decisions: Sequence[Decision] | None = None,
    restrict_to: Mapping[str, Collection[str]] | None = None,
) -> list[FactorAgreement]:
    """κ per manual factor (catalogue order) among the human annotators who rated it.

    Ratings are each human annotator's current value (manual decisions; "ambiguous" is a
    category like any other), from the store or from ``decisions``, its current decisions
    already read (the read dominates the cost on a large store). Auto poles and consensus
    decisions are left out: they are not independent judgements.

    ``restrict_to`` (annotator → videos, e.g.
    :meth:`~vadscene.store.team.TeamStore.assignments`) computes κ on the planned overlap: an
    annotator named there is rated only on those videos, so each pair's κ is over the videos
    assigned to both that both rated; an annotator not named there (nothing assigned) keeps
    all their ratings.

    Every pair of annotators gets Cohen's κ over the videos both rated, so a late or partial
    annotator costs no pair its shared videos. All annotators together get one more
    statistic: with two, their pair's Cohen's κ; with three or more, Fleiss' κ over the
    videos rated by all of them, because Fleiss' formula needs the same number of ratings per
    video — which a partial annotator shrinks, as ``videos`` reports. (Krippendorff's α would
    keep every rating in one number, at the price of a statistic less standard to read.)
    """
    planned = {name: set(videos) for name, videos in (restrict_to or {}).items()}
    ratings = pd.DataFrame(
        [
            (d.video_id, d.factor, d.annotator, d.value)
            for d in (store.current_decisions() if decisions is None else decisions)
            if d.value is not None
            and d.source in HUMAN_SOURCES
            and (d.annotator not in planned or d.video_id in planned[d.annotator])
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


HEATMAP_CELLS_WIDTH = 900
"""Width in pixels the heatmap's cells may take: with the labels and legend beside them the
chart stays inside the Review page's column of a 1440-pixel-wide screen."""


def kappa_heatmap(agreements: Sequence[FactorAgreement]) -> alt.LayerChart | None:
    """Pairwise Cohen's κ as a factors × annotator-pairs heatmap, each cell "κ / n videos".

    One grid instead of one small annotator × annotator matrix per factor: the same numbers,
    and a factor whose annotators agree less than the others stands out. Pairs run across
    while they fit :data:`HEATMAP_CELLS_WIDTH` (up to five annotators); beyond, the pairs —
    which grow with the square of the team — run down, one row each, and the factors across,
    so the chart grows in height, not off the right edge. Colours run from −1 (red) through
    0 (white) to 1 (blue); undefined κ is grey. None when no factor has two annotators.
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
    factors = list(dict.fromkeys(data["factor"]))
    pairs = [
        f"{first} – {second}"
        for first, second in sorted({(p.first, p.second) for a in agreements for p in a.pairs})
    ]
    across = len(pairs) * 90 <= HEATMAP_CELLS_WIDTH
    if across:
        x = alt.X(
            "pair:N", sort=pairs, title="annotator pair", axis=alt.Axis(orient="top", labelAngle=0)
        )
        y = alt.Y("factor:N", sort=factors, title=None)
    else:
        x = alt.X("factor:N", sort=factors, title=None, axis=alt.Axis(orient="top", labelAngle=-30))
        y = alt.Y("pair:N", sort=pairs, title="annotator pair")
    base = alt.Chart(data).encode(x=x, y=y)
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
    text = base.mark_text(lineBreak="\n", fontSize=12 if across else 11).encode(
        text="label:N",
        color=alt.condition("abs(datum.kappa) > 0.6", alt.value("white"), alt.value("#212121")),
    )
    if across:
        # Room for "name – name" labels, narrower as pairs multiply (tooltips keep them).
        width, height = max(90, min(170, HEATMAP_CELLS_WIDTH // len(pairs))), 40
    else:
        # Factor keys across: narrower than pair labels, so cells to fit κ and n.
        width, height = max(56, min(72, HEATMAP_CELLS_WIDTH // len(factors))), 34
    # altair leaves configure_* unannotated; the chart it returns is the layer chart.
    chart: alt.LayerChart = (
        alt.layer(cells, text)
        .properties(
            width=alt.Step(width),
            height=alt.Step(height),
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
