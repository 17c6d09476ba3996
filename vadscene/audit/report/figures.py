"""Altair charts of an audit result: the report embeds them as SVG, the app shows them live.

Every function takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns a chart, or
``None`` when the table it needs is empty, so callers never special-case a ground-truth-only run.
A model keeps one colour in every chart: the colour scale's domain is the run's model list, in
order, whatever subset of models a table holds.
"""

from __future__ import annotations

import importlib
import math
import numbers
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.compute.tables import overlap_band


class _OnFirstUse:
    """A module imported when one of its names is first used, not when this module loads:
    altair is a large import, and the helpers here (labels, orders, number tests) serve the
    report's tables and the LaTeX export too, which draw no chart."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)


if TYPE_CHECKING:
    import altair as alt
else:
    alt = _OnFirstUse("altair")

NULL_BAND: tuple[float, float] = (0.45, 0.55)
"""bias-AUC inside this band counts as practically unbiased (A §5.4: |b − 0.5| ≤ 0.05)."""

PAIR_TYPES: dict[str, str] = {"++": "⊕⊕", "--": "⊖⊖", "+-": "⊕⊖", "-+": "⊖⊕"}
"""Scene pair types (pole of the anomalous frame's video, then the normal frame's) → label."""

GRANULARITY_LABELS: dict[str, str] = {
    "micro": "micro — all pairs, pooled",
    "cross": "cross — different-video pairs",
    "within": "within — same-video pairs",
    "macro": "macro — mean per-video AUROC",
    "per_category": "per-category — mean same-category AUROC",
    "category_vs_normal": "category vs Normal — mean",
}
"""Display order and labels: pooled readings, then within-video ones, then category ones."""

ANOMALOUS_COLOUR, NORMAL_COLOUR = "#d6604d", "#4393c3"
MAX_COMPOSITION_BARS = 500
"""Beyond this many videos the composition chart draws consecutive groups of videos (in its
sorted order) as one bar each: a chart embeds every row (Altair refuses more than 5,000), and
the 4,754 videos of XD-Violence would be bars under a pixel wide."""
_LABEL_LIMIT = 340
_Chart = TypeVar("_Chart", "alt.Chart", "alt.LayerChart", "alt.FacetChart")
_Channel = TypeVar("_Channel", "alt.Facet", "alt.Column")
# Layers are combined by _layers (alt.LayerChart): for layers without facet encodings it is
# what alt.layer(...) builds, and its type says so (alt.layer's admits a FacetChart).


def model_order(result: AuditResult) -> list[str]:
    """The run's models in order; falls back to first appearance in the tables."""
    if result.models:
        return list(result.models)
    seen: dict[str, None] = {}
    for name in ("metrics", "controls", "bias", "scene_pairs", "scene_conditioned"):
        table = getattr(result, name)
        if "model" in table:
            seen.update(dict.fromkeys(table["model"].astype(str)))
    return list(seen)


def contrast_labels(table: pd.DataFrame) -> pd.Series:
    """ "factor: positive vs negative", the one name a contrast has in figures and tables."""
    return table["factor"].astype(str) + ": " + table["positive"] + " vs " + table["negative"]


def contrast_order(table: pd.DataFrame) -> list[str]:
    """Contrast labels, primary contrasts first, each group in first-appearance order."""
    labels = contrast_labels(table)
    if "primary" in table:
        primary = table["primary"].astype(bool)
        labels = pd.concat([labels[primary], labels[~primary]])
    return list(dict.fromkeys(labels))


def percent(fraction: float) -> str:
    """A fraction as a percentage with three significant digits ("0.388 %", "25.1 %")."""
    return f"{100 * fraction:.3g} %"


def bias_dot_plot(result: AuditResult, population: str = "all") -> alt.LayerChart | None:
    """bias-AUC per contrast × model with 95 % CIs against the 0.45–0.55 null band (A Fig. 4).

    ``population="all"``: normal frames of every video (the paper's s̄⁰); ``"leak_free"``:
    Normal videos only (docs/metrics.md). ``None`` when the table has no such cells.
    """
    bias = result.bias
    if population != "all":
        suffix = f"_{population}"
        columns = ("bias_auroc", "ci_low", "ci_high", "p_bias")
        if bias.empty or f"bias_auroc{suffix}" not in bias:
            return None
        bias = bias.drop(columns=list(columns)).rename(columns={f"{c}{suffix}": c for c in columns})
        bias = bias[bias["bias_auroc"].notna()]
    if bias.empty:
        return None
    heading = {
        "all": ("bias-AUC (normal frames of all videos)", "Do scores on normal footage"),
        "leak_free": ("bias-AUC (Normal videos only)", "Do scores on Normal videos"),
    }[population]
    data = bias.assign(
        contrast=contrast_labels(bias),
        role=bias["role"].where(bias["role"] == "control", "scene factor"),
    )[["contrast", "model", "family", "role", "bias_auroc", "ci_low", "ci_high", "p_bias"]]
    scale = alt.Scale(domain=[0, 1])
    one_row = pd.DataFrame({"row": [0]})
    band = (
        alt.Chart(one_row)
        .mark_rect(color="#bdbdbd", opacity=0.35)
        .encode(x=alt.XDatum(NULL_BAND[0], scale=scale), x2=alt.X2Datum(NULL_BAND[1]))
    )
    points = _point_ci(
        data,
        result,
        value="bias_auroc",
        title=heading[0],
        scale=scale,
        y=alt.Y("contrast:N", sort=contrast_order(bias), title=None, axis=alt.Axis(grid=True)),
        dodge=True,
        extra={
            "shape": alt.Shape(
                "role:N",
                title="factor role",
                scale=alt.Scale(domain=["scene factor", "control"], range=["circle", "square"]),
            )
        },
    )
    chart = _layers(
        band,
        _chance_rule(alt.Chart(one_row), scale),
        points,
        width=560,
        # one sub-band per model: shrink them as models multiply so the chart stays on a page
        height=alt.Step(max(5, min(14, 96 // len(model_order(result))))),
        title=_title(
            f"{heading[1]} separate videos by scene?",
            "bias-AUC = P(a ⊕ video's mean normal-frame score > a ⊖ video's); 0.5 = no "
            "response to the factor.",
            f"Grey band {NULL_BAND[0]}–{NULL_BAND[1]}: practically unbiased. "
            + interval_words(result, "Bars: 95 % video-bootstrap CI.")
            + " Squares: control factors (correlated with anomaly class).",
        ),
    )
    return _finish(chart)


def granularity_forest_plot(result: AuditResult) -> alt.FacetChart | None:
    """AUROC with 95 % CIs per model, one panel per granularity (A Fig. S1)."""
    metrics = result.metrics
    if metrics.empty:
        return None
    present = set(metrics["granularity"])
    data = metrics.assign(panel=metrics["granularity"].map(GRANULARITY_LABELS))[
        ["panel", "model", "family", "value", "ci_low", "ci_high"]
    ]
    low = min(0.5, data[["value", "ci_low"]].min().min())
    # Start on a 0.05 step at least 0.025 below chance / the lowest bar, so 0.5 stays visible.
    start = math.floor((low - 0.025) * 20) / 20
    ticks = [t / 10 for t in range(math.ceil(start * 10), 11)]
    scale = alt.Scale(domain=[start, 1.0])
    y = alt.Y("model:N", sort=model_order(result), title=None)
    chance = _chance_rule(alt.Chart().transform_aggregate(rows="count()", groupby=["panel"]), scale)
    points = _point_ci(
        None, result, value="value", title="AUROC", scale=scale, y=y, axis=alt.Axis(values=ticks)
    )
    # The band where most intervals overlap ([audit] Fig. S1): inside it, models are not told
    # apart by their intervals alone.
    bands = {
        panel: overlap_band(group["ci_low"], group["ci_high"]) or (None, None)
        for panel, group in data.groupby("panel")
    }
    data = data.assign(
        band_low=data["panel"].map(lambda p: bands[p][0]),
        band_high=data["panel"].map(lambda p: bands[p][1]),
    )
    band = (
        alt.Chart()
        .transform_aggregate(
            band_low="min(band_low)", band_high="min(band_high)", groupby=["panel"]
        )
        .mark_rect(color=NORMAL_COLOUR, opacity=0.15)
        .encode(x=alt.X("band_low:Q", scale=scale), x2="band_high:Q")
    )
    layered = _layers(
        band,
        chance,
        points,
        data=data,
        width=380,
        height=alt.Step(26 if len(model_order(result)) <= 6 else 16),
    )
    chart = layered.facet(
        facet=_panel_header(
            [GRANULARITY_LABELS[g] for g in GRANULARITY_LABELS if g in present], alt.Facet
        ),
        columns=2,
        title=_title(
            "The same scores read under different pairing rules",
            "Only within and macro compare frames of the same video, i.e. test temporal "
            "localisation. Dashed: chance. "
            + interval_words(
                result, "Bars: 95 % video-bootstrap CI; shaded: where most intervals overlap."
            ),
        ),
    )
    return _finish(chart)


def decomposition_bars(result: AuditResult) -> alt.FacetChart | None:
    """micro, within and cross AUROC per model, titled with the within-pair fraction w (L Eq. 2)."""
    parts = ["micro", "within", "cross"]
    metrics = result.metrics
    rows = metrics[metrics["granularity"].isin(parts)]
    if rows.empty:
        return None
    data = rows.assign(panel=rows["granularity"].map(GRANULARITY_LABELS))[
        ["panel", "model", "family", "value", "ci_low", "ci_high"]
    ]
    base = alt.Chart().encode(y=alt.Y("model:N", sort=model_order(result), title=None))
    bars = base.mark_bar(opacity=0.55).encode(
        x=alt.X("value:Q", title="AUROC", scale=alt.Scale(domain=[0, 1])),
        color=_model_colour(result, legend=False),
        tooltip=_tooltip(["value", "ci_low", "ci_high"]),
    )
    ci = base.mark_rule(color="#212121").encode(x="ci_low:Q", x2="ci_high:Q")
    # Values sit at the bar's base so they never collide with the CI rule at its end.
    labels = base.mark_text(align="left", dx=4, color="#212121").encode(
        x=alt.datum(0), text=alt.Text("value:Q", format=".3f")
    )
    w = result.summary.get("within_pair_fraction")
    gain = result.summary.get("max_within_gain")
    subtitle = [
        "micro = w·within + (1 − w)·cross (exact). "
        + interval_words(result, "Bars: 95 % video-bootstrap CI.")
    ]
    if is_finite_number(w) and is_finite_number(gain):
        subtitle.insert(
            0,
            f"w = {percent(w)} of anomalous–normal pairs are within-video, so perfect "
            f"localisation can raise micro by at most w/2 = {gain:.4f} AUROC.",
        )
    layered = _layers(bars, ci, labels, data=data, width=280, height=alt.Step(24))
    chart = layered.facet(
        column=_panel_header([GRANULARITY_LABELS[g] for g in parts], alt.Column),
        title=_title("How much of pooled AUROC is within-video?", *subtitle),
    )
    return _finish(chart)


def scene_pair_heatmap(result: AuditResult, model: str | None = None) -> alt.LayerChart | None:
    """One model's AUROC per scene pair type (⊕⊕, ⊖⊖, ⊕⊖, ⊖⊕) for every contrast (A §S2.2).

    ``model`` defaults to the first model that has scene-pair rows; naming a model without
    rows is an error, since an empty heatmap would read as "no scene effect".
    """
    pairs = result.scene_pairs
    if pairs.empty:
        return None
    present = set(pairs["model"])
    if model is None:
        model = next(m for m in [*model_order(result), *pairs["model"]] if m in present)
    elif model not in present:
        raise ValueError(f"no scene-pair rows for model {model!r}; have {sorted(present)}")
    return _heatmap(pairs, model)


def _heatmap(pairs: pd.DataFrame, model: str) -> alt.LayerChart:
    """:func:`scene_pair_heatmap` of a ``model`` that has rows among the scene ``pairs``."""
    data = _heatmap_cells(pairs[pairs["model"] == model])
    base = alt.Chart(data).encode(
        x=alt.X(
            "pair:N",
            sort=list(PAIR_TYPES.values()),
            title="pole of the anomalous frame's video, then of the normal frame's video",
            axis=alt.Axis(labelAngle=0, orient="top", labelFontSize=14),
        ),
        y=alt.Y("contrast:N", sort=contrast_order(pairs), title=None),
        # on both layers: the text covers the middle of its cell
        tooltip=["contrast", "pair", alt.Tooltip("auroc:Q", format=".4f"), "weight:Q"],
    )
    cells = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            "auroc:Q",
            title="AUROC",
            scale=alt.Scale(scheme="redblue", domain=[0, 1], domainMid=0.5),
        ),
    )
    text = base.mark_text(lineBreak="\n", fontSize=11).encode(
        text="label:N",
        color=alt.condition(
            "abs(datum.auroc - 0.5) > 0.3", alt.value("white"), alt.value("#212121")
        ),
    )
    chart = _layers(
        cells,
        text,
        width=alt.Step(80),
        height=alt.Step(38),
        title=_title(
            _heatmap_title(model),
            "⊕⊕ and ⊖⊖ compare frames within one pole (AUC_cond is their mean); ⊕⊖ and ⊖⊕ "
            "cross poles.",
            "w: share of the factor's anomalous–normal pairs of that type.",
        ),
    )
    return _finish(chart)


def scene_pair_heatmap_specs(result: AuditResult) -> dict[str, dict[str, Any]]:
    """Every model's :func:`scene_pair_heatmap` as a Vega-Lite spec, in model order.

    The heatmaps differ only in their cells and title, so the first is built by Altair and
    the others are its spec with those two replaced, instead of building and serialising one
    chart per model.
    """
    pairs = result.scene_pairs
    present = set(pairs["model"])
    models = [m for m in model_order(result) if m in present]
    if not models:
        return {}
    template = _heatmap(pairs, models[0]).to_dict(validate=False)
    template.pop("datasets")
    cells = _heatmap_cells(pairs)  # row by row, so every model's at once, split below
    specs = {}
    for model in models:
        specs[model] = template | {
            "data": alt.to_values(cells[pairs["model"] == model]),  # as Altair inlines one
            "title": template["title"] | {"text": _heatmap_title(model)},
        }
    return specs


def _heatmap_cells(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(
        contrast=contrast_labels(rows),
        pair=rows["pair_type"].map(PAIR_TYPES),
        label=rows["auroc"].map(lambda v: f"{v:.3f}" if is_finite_number(v) else "—")
        + "\nw "
        + rows["weight"].map(lambda v: f"{v:.2f}"),
    )[["contrast", "pair", "auroc", "weight", "label"]]


def _heatmap_title(model: str) -> str:
    return f"{model}: AUROC by scene pair type"


def composition_chart(result: AuditResult) -> alt.Chart | None:
    """Anomalous and normal frames per video, videos sorted by anomalous fraction."""
    composition = result.composition
    if composition.empty:
        return None
    videos = composition.assign(
        fraction=composition["anomalous"] / composition["frames"].where(composition["frames"] > 0)
    ).sort_values(["fraction", "frames"], ascending=False, kind="stable")
    n, mixed = len(videos), int(videos["mixed"].sum())
    per_bar = math.ceil(n / MAX_COMPOSITION_BARS)
    if per_bar > 1:
        videos = _video_groups(videos, per_bar)
    data = videos.melt(
        id_vars=["video", "category", "frames", "fraction"],
        value_vars=["anomalous", "normal"],
        var_name="label",
        value_name="count",
    )
    bars = len(videos)
    named = bars <= 60  # beyond that, names would be unreadable slivers: the tooltip carries them
    chart: alt.Chart = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X(
                "video:N",
                sort=list(videos["video"]),
                title=f"{n} videos, sorted by anomalous fraction"
                + (f", in bars of {per_bar}" if per_bar > 1 else ""),
                axis=alt.Axis(labels=named, ticks=named, labelAngle=-60),
            ),
            y=alt.Y("count:Q", stack="zero", title="frames"),
            color=alt.Color(
                "label:N",
                title=None,
                scale=alt.Scale(
                    domain=["anomalous", "normal"], range=[ANOMALOUS_COLOUR, NORMAL_COLOUR]
                ),
                legend=alt.Legend(orient="top"),
            ),
            order=alt.Order("label:N"),
            tooltip=[
                "video",
                "category",
                "label",
                "count:Q",
                "frames:Q",
                alt.Tooltip("fraction:Q", format=".1%", title="anomalous fraction"),
            ],
        )
        .properties(
            width=alt.Step(max(2, min(18, 900 // bars))),
            height=220,
            title=_title(
                "Benchmark composition: anomalous and normal frames per video",
                f"{mixed} of {n} videos hold both kinds of frame; only these give within-video "
                "pairs.",
            ),
        )
    )
    return _finish(chart)


def _video_groups(videos: pd.DataFrame, size: int) -> pd.DataFrame:
    """Runs of ``size`` consecutive videos as one row each: frame counts summed, named by
    their first and last video (the category column says how many videos a bar holds)."""
    group = pd.RangeIndex(len(videos)) // size
    grouped = (
        videos.reset_index(drop=True)
        .groupby(group)
        .agg(
            first=("video", "first"),
            last=("video", "last"),
            members=("video", "size"),
            frames=("frames", "sum"),
            anomalous=("anomalous", "sum"),
            normal=("normal", "sum"),
        )
    )
    return grouped.assign(
        video=grouped["first"] + " … " + grouped["last"],
        category=grouped["members"].astype(str) + " videos",
        fraction=grouped["anomalous"] / grouped["frames"].where(grouped["frames"] > 0),
    )


def _point_ci(
    data: pd.DataFrame | None,
    result: AuditResult,
    *,
    value: str,
    title: str,
    scale: alt.Scale,
    y: alt.Y,
    dodge: bool = False,
    axis: alt.Axis | None = None,
    extra: dict[str, object] | None = None,
) -> alt.LayerChart:
    """Point at ``value`` with a ci_low–ci_high rule, coloured by model.

    ``dodge`` spreads the models of one y band apart (and then needs the colour legend, since
    y no longer names the model); ``data=None`` lets the layers inherit their parent's data
    (required inside a facet).
    """
    common: dict[str, object] = {"y": y, "color": _model_colour(result, legend=dodge)}
    if dodge:
        common["yOffset"] = alt.YOffset("model:N", sort=model_order(result))
    base = alt.Chart() if data is None else alt.Chart(data)
    axis = axis or alt.Axis()
    rule = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", scale=scale, title=title, axis=axis), x2="ci_high:Q", **common
    )
    fields = [value, "ci_low", "ci_high"]
    if data is not None and "p_bias" in data:
        fields.append("p_bias")
    point = base.mark_point(filled=True, size=70, opacity=1).encode(
        x=alt.X(f"{value}:Q", scale=scale, title=title, axis=axis),
        tooltip=_tooltip(fields),
        **common,
        **(extra or {}),
    )
    return _layers(rule, point)


def _layers(
    *layers: alt.Chart | alt.LayerChart, data: pd.DataFrame | None = None, **properties: Any
) -> alt.LayerChart:
    """``alt.LayerChart(layer=layers, data=data).properties(**properties)``, the same spec
    without its copies.

    Altair's constructor deep-copies every layer twice to merge their selection parameters and
    lift their sizes, which these charts never have, and ``properties`` copies the chart
    through that constructor again; that copying is most of the time a report spends on its
    figures. What the constructor does to these charts is done here: data that every layer
    shares (the same object) moves up to the layered chart.
    """
    chart = alt.LayerChart(**properties) if data is None else alt.LayerChart(data, **properties)
    shared = layers[0].data
    if data is None and shared is not alt.Undefined and all(c.data is shared for c in layers):
        chart.data = shared
        layers = tuple(c.copy(deep=False) for c in layers)
        for layer in layers:
            layer.data = alt.Undefined
    chart.layer = list(layers)
    return chart


def _chance_rule(base: alt.Chart, scale: alt.Scale) -> alt.Chart:
    """Dashed rule at 0.5 on the layer's x scale (a bare datum would widen the domain to 0)."""
    rule: alt.Chart = base.mark_rule(color="#616161", strokeDash=[4, 3]).encode(
        x=alt.XDatum(0.5, scale=scale)
    )
    return rule


def _panel_header(order: list[str], channel: type[_Channel]) -> _Channel:
    """Facet on the ``panel`` column (a granularity label), headers bold and left-aligned."""
    return channel(
        "panel:N",
        sort=order,
        title=None,
        header=alt.Header(labelAnchor="start", labelFontWeight="bold"),
    )


def _model_colour(result: AuditResult, *, legend: bool = True) -> alt.Color:
    """The one model → colour scale every chart shares (no legend where y names the model)."""
    models = model_order(result)
    return alt.Color(
        "model:N",
        title="model",
        scale=alt.Scale(domain=models, scheme="tableau10" if len(models) <= 10 else "tableau20"),
        legend=alt.Legend(orient="bottom", columns=3, labelLimit=_LABEL_LIMIT) if legend else None,
    )


def _tooltip(fields: list[str]) -> list[alt.Tooltip]:
    return [
        alt.Tooltip("model:N"),
        alt.Tooltip("family:N"),
        *(alt.Tooltip(f"{field}:Q", format=".4f") for field in fields),
    ]


def _title(text: str, *subtitle: str) -> alt.TitleParams:
    return alt.TitleParams(text, subtitle=list(subtitle), anchor="start")


def _finish(chart: _Chart) -> _Chart:
    """Shared look: readable fonts, long labels kept, titles left-aligned, designed size.

    The size is padded, not fitted: a host that fits a chart into a box (Streamlit does, to
    its own width) would squeeze the plot behind the labels and legend, clip the titles, and
    draw nothing at all for a chart sized in steps per category.
    """
    # Set in place: every chart here is built for this call alone, and copying a layered or
    # faceted chart (what properties() and configure_*() do) deep-copies all its layers.
    chart.autosize = alt.AutoSizeParams(type="pad", contains="padding")
    chart.config = alt.Config(
        axis=alt.AxisConfig(labelFontSize=12, titleFontSize=13, labelLimit=_LABEL_LIMIT),
        header=alt.HeaderConfig(labelFontSize=13),
        legend=alt.LegendConfig(labelFontSize=12, titleFontSize=12),
        title=alt.TitleConfig(fontSize=17, subtitleFontSize=13, subtitleColor="#555555", offset=12),
    )
    return chart


NO_INTERVALS = "no bootstrap intervals were computed (B = 0)"
"""What the report says where it would name its intervals, when the run drew no replicates."""


def has_intervals(result: AuditResult) -> bool:
    """False when the run drew no bootstrap replicates (B = 0), so no 95 % interval exists."""
    return (result.conventions.get("bootstrap") or {}).get("replicates") != 0


def interval_words(result: AuditResult, sentence: str, without: str = "") -> str:
    """``sentence`` (naming the run's 95 % intervals) unless the run drew no bootstrap
    replicates; then the sentence saying that none were computed, ``without`` added."""
    return sentence if has_intervals(result) else f"Point estimates only: {NO_INTERVALS}{without}."


def is_finite_number(value: object) -> TypeGuard[float]:
    """A real, finite number, numpy scalars included (not a bool: that is a flag, not a value).

    Type checkers take a true answer to mean a ``float``, which is how such a value is used.
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


# --- definition-conditioned probes and the prototype readout -----------------------------------

READOUT_LABELS: dict[str, str] = {
    "global": "global — read with micro",
    "per_category": "per-category — read with per-category",
    "within_video": "within-video (leave-one-out) — read with macro",
}
"""Prototype readouts in display order (docs/metrics.md, "Representation readout")."""


def d5_decomposition_chart(result: AuditResult) -> alt.Chart | None:
    """D@5 per model stacked into its normal part mean(ω·D@5ᴺ) and its excluded-anomaly part
    mean((1 − ω)·D@5ˣ): the two stacks add up to D@5 exactly ([definitions] Eq. 3)."""
    queries = result.definition_queries
    if queries.empty:
        return None
    parts = queries.assign(
        normal=queries["omega"] * queries["d5_normal_auroc"],
        excluded=(1 - queries["omega"]) * queries["d5_excluded_auroc"],
    )
    means = parts.groupby("model", sort=False)[["normal", "excluded", "omega"]].mean()
    parts_labels = {
        "normal": "ω·D@5ᴺ — target vs normal frames",
        "excluded": "(1 − ω)·D@5ˣ — target vs excluded anomalies",
    }
    data = pd.concat(
        [
            pd.DataFrame(
                {
                    "model": means.index,
                    "part": label,
                    "value": means[column].to_numpy(),
                    "omega": means["omega"].to_numpy(),
                }
            )
            for column, label in parts_labels.items()
        ]
    )
    chart: alt.Chart = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("model:N", sort=list(means.index), title=None),
            x=alt.X("value:Q", stack="zero", title="D@5 AUROC", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(
                    domain=list(parts_labels.values()), range=[NORMAL_COLOUR, ANOMALOUS_COLOUR]
                ),
                legend=alt.Legend(orient="bottom", labelLimit=_LABEL_LIMIT),
            ),
            order=alt.Order("part:N", sort="descending"),
            tooltip=[
                alt.Tooltip("model:N"),
                alt.Tooltip("part:N"),
                alt.Tooltip("value:Q", format=".4f"),
                alt.Tooltip("omega:Q", format=".4f", title="mean ω"),
            ],
        )
        .properties(
            width=420,
            height=alt.Step(26),
            title=_title(
                "How much of D@5 tests the definition?",
                "D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ per query, ω = normal share of the negatives; "
                "only the red part compares the target with anomalies the definition excludes.",
            ),
        )
    )
    return _finish(chart)


def definition_delta_chart(result: AuditResult) -> alt.LayerChart | None:
    """DC-DetΔ per class and model: the matching definition's gain in target-vs-normal AUROC
    over the other definitions (0 for a definition-blind scorer)."""
    classes = result.definition_classes
    if classes.empty:
        return None
    data = classes[["model", "class", "det_delta_auroc", "det_matching_auroc", "det_other_auroc"]]
    models = list(dict.fromkeys(data["model"]))
    base = alt.Chart(data)
    zero = base.mark_rule(color="#616161", strokeDash=[4, 3]).encode(x=alt.datum(0))
    points = base.mark_point(filled=True, size=70, opacity=1).encode(
        y=alt.Y("class:N", title=None),
        x=alt.X("det_delta_auroc:Q", title="DC-DetΔ (AUROC difference)"),
        color=alt.Color(
            "model:N",
            sort=models,
            scale=alt.Scale(scheme="tableau10"),
            legend=alt.Legend(orient="bottom", labelLimit=_LABEL_LIMIT),
        ),
        yOffset=alt.YOffset("model:N", sort=models),
        tooltip=[
            alt.Tooltip("model:N"),
            alt.Tooltip("class:N"),
            *(
                alt.Tooltip(f"{f}:Q", format=".4f")
                for f in ("det_delta_auroc", "det_matching_auroc", "det_other_auroc")
            ),
        ],
    )
    chart = _layers(
        zero,
        points,
        width=420,
        height=alt.Step(14),
        title=_title(
            "Does the matching definition find its class better?",
            "AUROC(s^c; class c vs normal) − mean over other definitions k of AUROC(s^k; same "
            "frames). Dashed: 0, what a definition-blind scorer gets exactly.",
        ),
    )
    return _finish(chart)


def readout_chart(result: AuditResult) -> alt.FacetChart | None:
    """Prototype AUROC (from features) beside the score AUROC of the matching granularity, per
    model and readout ([audit] Table 2)."""
    readout = result.readout
    if readout.empty:
        return None
    proto = readout.assign(source="prototype (features)")[
        ["model", "readout", "granularity", "auroc", "ci_low", "ci_high", "source"]
    ]
    scores = result.metrics.rename(columns={"value": "auroc"})
    scores = scores[scores["model"].isin(set(proto["model"]))].merge(
        proto[["model", "readout", "granularity"]], on=["model", "granularity"]
    )
    data = pd.concat(
        [proto, scores.assign(source="model scores")[proto.columns]], ignore_index=True
    )
    data["panel"] = data["readout"].map(READOUT_LABELS)
    models = list(dict.fromkeys(proto["model"]))
    scale = alt.Scale(domain=[min(0.4, float(data[["auroc", "ci_low"]].min().min())), 1.0])
    common = {
        "y": alt.Y("model:N", sort=models, title=None),
        "color": alt.Color(
            "source:N",
            title=None,
            scale=alt.Scale(range=[ANOMALOUS_COLOUR, NORMAL_COLOUR]),
            legend=alt.Legend(orient="bottom"),
        ),
        "yOffset": alt.YOffset("source:N"),
    }
    rule = (
        alt.Chart()
        .mark_rule(strokeWidth=2)
        .encode(x=alt.X("ci_low:Q", scale=scale, title="AUROC"), x2="ci_high:Q", **common)
    )
    point = (
        alt.Chart()
        .mark_point(filled=True, size=70, opacity=1)
        .encode(
            x=alt.X("auroc:Q", scale=scale, title="AUROC"),
            tooltip=[
                alt.Tooltip("model:N"),
                alt.Tooltip("source:N"),
                *(alt.Tooltip(f"{f}:Q", format=".4f") for f in ("auroc", "ci_low", "ci_high")),
            ],
            **common,
        )
    )
    chance = _chance_rule(alt.Chart(), scale)
    layered = _layers(chance, rule, point, data=data, width=300, height=alt.Step(20))
    chart = layered.facet(
        facet=_panel_header([READOUT_LABELS[r] for r in READOUT_LABELS], alt.Facet),
        columns=3,
        title=_title(
            "Is the anomaly in the representation, and does the head use it?",
            "Prototype readout of the features vs the model's own scores at the same "
            "granularity. Dashed: chance. "
            + interval_words(result, "Bars: 95 % video-bootstrap CI."),
        ),
    )
    return _finish(chart)


def interval_ap_chart(result: AuditResult) -> alt.Chart | None:
    """Mean interval AP per model for the original scores, after video-mean replacement and
    for one whole-video interval per video ([inside] Table 18)."""
    further = result.further
    if further.empty or further["interval_ap"].isna().all():
        return None
    labels = {
        "interval_ap": "proposals from the scores",
        "interval_ap_video_mean": "proposals after video-mean replacement",
        "interval_ap_whole_video": "one whole-video interval per video",
    }
    data = further.melt(
        id_vars=["model"], value_vars=list(labels), var_name="construction", value_name="ap"
    )
    data["construction"] = data["construction"].map(labels)
    chart: alt.Chart = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("model:N", sort=model_order(result), title=None),
            yOffset=alt.YOffset("construction:N", sort=list(labels.values())),
            x=alt.X("ap:Q", title="interval AP (mean over tIoU 0.1–0.5)"),
            color=alt.Color(
                "construction:N",
                sort=list(labels.values()),
                title=None,
                legend=alt.Legend(orient="bottom", labelLimit=_LABEL_LIMIT),
            ),
            tooltip=[
                alt.Tooltip("model:N"),
                alt.Tooltip("construction:N"),
                alt.Tooltip("ap:Q", format=".4f"),
            ],
        )
        .properties(
            width=420,
            height=alt.Step(12),
            title=_title(
                "Interval AP depends on how intervals are built",
                "Released VadCLIP proposal rule; video-mean replacement leaves no proposal "
                "(AP 0), while whole-video intervals need no localisation at all.",
            ),
        )
    )
    return _finish(chart)


def support_chart(result: AuditResult) -> alt.Chart | None:
    """Videos at each pole of every contrast (with normal frames, as bias-AUC reads them;
    [audit] Fig. 3): each factor has its own support, ambiguous videos left out."""
    bias = result.bias
    if bias.empty:
        return None
    first = bias[bias["model"] == bias["model"].iloc[0]]
    labels = contrast_labels(first)
    data = pd.concat(
        [
            pd.DataFrame(
                {
                    "contrast": labels,
                    "pole": first["positive"],
                    "side": "⊕",
                    "videos": first["n_positive"],
                }
            ),
            pd.DataFrame(
                {
                    "contrast": labels,
                    "pole": first["negative"],
                    "side": "⊖",
                    "videos": first["n_negative"],
                }
            ),
        ]
    )
    chart: alt.Chart = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("contrast:N", sort=contrast_order(first), title=None),
            x=alt.X("videos:Q", stack="zero", title="videos"),
            color=alt.Color(
                "side:N",
                title="pole",
                scale=alt.Scale(domain=["⊕", "⊖"], range=[ANOMALOUS_COLOUR, NORMAL_COLOUR]),
            ),
            tooltip=[alt.Tooltip("contrast:N"), alt.Tooltip("pole:N"), alt.Tooltip("videos:Q")],
        )
        .properties(
            width=420,
            height=alt.Step(18),
            title=_title(
                "Support of each scene contrast",
                "Videos with normal frames at each pole; ambiguous and unlabelled videos are "
                "left out of that contrast only.",
            ),
        )
    )
    return _finish(chart)
