"""Vega-Lite figures of an audit result: the report embeds them (vega-embed draws them in
``report.html``, vl-convert renders them to SVG files with ``--svg``) and the app shows them live.

Every chart function takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns a
Vega-Lite v6 spec (a plain ``dict``), or ``None`` when the table it needs is empty, so callers
never special-case a ground-truth-only run. A model keeps one colour in every chart: the colour
scale's domain is the run's model list, in order, whatever subset of models a table holds.

The specs are written out as dicts, not built with Altair, whose import and chart building
weigh on every audit's report (docs/decisions.md, "figures are Vega-Lite specs written as
dicts"). They are the specs Altair built (its default view size included), each table inlined
as the data of the chart or layer that reads it.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, TypeGuard

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.compute.tables import overlap_band

Spec = dict[str, Any]
"""A Vega-Lite spec, or a part of one (a mark, an encoding channel, a scale, a title)."""

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
"""The Vega-Lite release the specs are written for: the one the report's script bundle draws
(:data:`vadscene.audit.report.vega.VEGA_LITE`), and the one Altair, which draws the app's other
pages, writes for."""

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
sorted order) as one bar each: a spec carries every row it draws, and the 4,754 videos of
XD-Violence would be bars under a pixel wide."""
_LABEL_LIMIT = 340


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


def bias_dot_plot(result: AuditResult, population: str = "all") -> Spec | None:
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
    scale = {"domain": [0, 1]}
    # the datum-only layers draw their mark once per row of their data: give them one row
    one_row = {"values": [{"row": 0}]}
    band = {
        "data": one_row,
        "mark": _mark("rect", color="#bdbdbd", opacity=0.35),
        "encoding": {"x": {"datum": NULL_BAND[0], "scale": scale}, "x2": {"datum": NULL_BAND[1]}},
    }
    points = _point_ci(
        data,
        result,
        value="bias_auroc",
        title=heading[0],
        scale=scale,
        y=_nominal("contrast", sort=contrast_order(bias), title=None, axis={"grid": True}),
        dodge=True,
        extra={
            "shape": _nominal(
                "role",
                title="factor role",
                scale={"domain": ["scene factor", "control"], "range": ["circle", "square"]},
            )
        },
    )
    spec = {
        "layer": [band, {"data": one_row, **_chance_rule(scale)}, points],
        "width": 560,
        # one sub-band per model: shrink them as models multiply so the chart stays on a page
        "height": {"step": max(5, min(14, 96 // len(model_order(result))))},
        "title": _title(
            f"{heading[1]} separate videos by scene?",
            "bias-AUC = P(a ⊕ video's mean normal-frame score > a ⊖ video's); 0.5 = no "
            "response to the factor.",
            f"Grey band {NULL_BAND[0]}–{NULL_BAND[1]}: practically unbiased. "
            + interval_words(result, "Bars: 95 % video-bootstrap CI.")
            + " Squares: control factors (correlated with anomaly class).",
        ),
    }
    return _finish(spec)


def granularity_forest_plot(result: AuditResult) -> Spec | None:
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
    scale = {"domain": [start, 1.0]}
    y = _nominal("model", sort=model_order(result), title=None)
    # Each panel's rows aggregated to one, so the rule and band are drawn once per panel.
    chance = _chance_rule(scale) | {"transform": [_per_panel({"op": "count", "as": "rows"})]}
    points = _point_ci(
        None, result, value="value", title="AUROC", scale=scale, y=y, axis={"values": ticks}
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
    band = {
        "mark": _mark("rect", color=NORMAL_COLOUR, opacity=0.15),
        "encoding": {"x": _quantitative("band_low", scale=scale), "x2": {"field": "band_high"}},
        "transform": [
            _per_panel(
                {"op": "min", "field": "band_low", "as": "band_low"},
                {"op": "min", "field": "band_high", "as": "band_high"},
            )
        ],
    }
    spec = {
        "data": _values(data),
        "facet": _panel_header([GRANULARITY_LABELS[g] for g in GRANULARITY_LABELS if g in present]),
        "columns": 2,
        "spec": {
            "layer": [band, chance, points],
            "width": 380,
            "height": {"step": 26 if len(model_order(result)) <= 6 else 16},
        },
        "title": _title(
            "The same scores read under different pairing rules",
            "Only within and macro compare frames of the same video, i.e. test temporal "
            "localisation. Dashed: chance. "
            + interval_words(
                result, "Bars: 95 % video-bootstrap CI; shaded: where most intervals overlap."
            ),
        ),
    }
    return _finish(spec)


def decomposition_bars(result: AuditResult) -> Spec | None:
    """micro, within and cross AUROC per model, titled with the within-pair fraction w (L Eq. 2)."""
    parts = ["micro", "within", "cross"]
    metrics = result.metrics
    rows = metrics[metrics["granularity"].isin(parts)]
    if rows.empty:
        return None
    data = rows.assign(panel=rows["granularity"].map(GRANULARITY_LABELS))[
        ["panel", "model", "family", "value", "ci_low", "ci_high"]
    ]
    y = _nominal("model", sort=model_order(result), title=None)
    bars = {
        "mark": _mark("bar", opacity=0.55),
        "encoding": {
            "y": y,
            "x": _quantitative("value", title="AUROC", scale={"domain": [0, 1]}),
            "color": _model_colour(result, legend=False),
            "tooltip": _tooltip(["value", "ci_low", "ci_high"]),
        },
    }
    ci = {
        "mark": _mark("rule", color="#212121"),
        "encoding": {"y": y, "x": _quantitative("ci_low"), "x2": {"field": "ci_high"}},
    }
    # Values sit at the bar's base so they never collide with the CI rule at its end.
    labels = {
        "mark": _mark("text", align="left", dx=4, color="#212121"),
        "encoding": {"y": y, "x": {"datum": 0}, "text": _quantitative("value", format=".3f")},
    }
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
    spec = {
        "data": _values(data),
        "facet": {"column": _panel_header([GRANULARITY_LABELS[g] for g in parts])},
        "spec": {"layer": [bars, ci, labels], "width": 280, "height": {"step": 24}},
        "title": _title("How much of pooled AUROC is within-video?", *subtitle),
    }
    return _finish(spec)


def scene_pair_heatmap(result: AuditResult, model: str | None = None) -> Spec | None:
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
    rows = pairs[pairs["model"] == model]
    return _heatmap(_heatmap_cells(rows), contrast_order(pairs), model)


def scene_pair_heatmap_specs(result: AuditResult) -> dict[str, Spec]:
    """Every model's :func:`scene_pair_heatmap`, in model order."""
    pairs = result.scene_pairs
    present = set(pairs["model"])
    models = [m for m in model_order(result) if m in present]
    if not models:
        return {}
    cells = _heatmap_cells(pairs)  # every model's at once (row by row), split below
    contrasts = contrast_order(pairs)
    return {model: _heatmap(cells[pairs["model"] == model], contrasts, model) for model in models}


def _heatmap(cells: pd.DataFrame, contrasts: list[str], model: str) -> Spec:
    """The heatmap of one ``model``'s :func:`_heatmap_cells`, contrasts in the order given."""
    x = _nominal(
        "pair",
        sort=list(PAIR_TYPES.values()),
        title="pole of the anomalous frame's video, then of the normal frame's video",
        axis={"labelAngle": 0, "orient": "top", "labelFontSize": 14},
    )
    y = _nominal("contrast", sort=contrasts, title=None)
    # on both layers: the text covers the middle of its cell
    tooltip = [
        _nominal("contrast"),
        _nominal("pair"),
        _quantitative("auroc", format=".4f"),
        _quantitative("weight"),
    ]
    colour = {"scheme": "redblue", "domain": [0, 1], "domainMid": 0.5}
    cells_layer = {
        "mark": _mark("rect", stroke="white"),
        "encoding": {
            "x": x,
            "y": y,
            "tooltip": tooltip,
            "color": _quantitative("auroc", title="AUROC", scale=colour),
        },
    }
    text = {
        "mark": _mark("text", lineBreak="\n", fontSize=11),
        "encoding": {
            "x": x,
            "y": y,
            "tooltip": tooltip,
            "text": _nominal("label"),
            # white on the darkest cells
            "color": {
                "condition": {"test": "abs(datum.auroc - 0.5) > 0.3", "value": "white"},
                "value": "#212121",
            },
        },
    }
    spec = {
        "data": _values(cells),
        "layer": [cells_layer, text],
        "width": {"step": 80},
        "height": {"step": 38},
        "title": _title(
            f"{model}: AUROC by scene pair type",
            "⊕⊕ and ⊖⊖ compare frames within one pole (AUC_cond is their mean); ⊕⊖ and ⊖⊕ "
            "cross poles.",
            "w: share of the factor's anomalous–normal pairs of that type.",
        ),
    }
    return _finish(spec)


def _heatmap_cells(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(
        contrast=contrast_labels(rows),
        pair=rows["pair_type"].map(PAIR_TYPES),
        label=rows["auroc"].map(lambda v: f"{v:.3f}" if is_finite_number(v) else "—")
        + "\nw "
        + rows["weight"].map(lambda v: f"{v:.2f}"),
    )[["contrast", "pair", "auroc", "weight", "label"]]


def composition_chart(result: AuditResult) -> Spec | None:
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
    spec = {
        "data": _values(data),
        "mark": _mark("bar"),
        "encoding": {
            "x": _nominal(
                "video",
                sort=list(videos["video"]),
                title=f"{n} videos, sorted by anomalous fraction"
                + (f", in bars of {per_bar}" if per_bar > 1 else ""),
                axis={"labels": named, "ticks": named, "labelAngle": -60},
            ),
            "y": _quantitative("count", stack="zero", title="frames"),
            "color": _nominal(
                "label",
                title=None,
                scale={
                    "domain": ["anomalous", "normal"],
                    "range": [ANOMALOUS_COLOUR, NORMAL_COLOUR],
                },
                legend={"orient": "top"},
            ),
            "order": _nominal("label"),
            "tooltip": [
                _nominal("video"),
                _nominal("category"),
                _nominal("label"),
                _quantitative("count"),
                _quantitative("frames"),
                _quantitative("fraction", format=".1%", title="anomalous fraction"),
            ],
        },
        "width": {"step": max(2, min(18, 900 // bars))},
        "height": 220,
        "title": _title(
            "Benchmark composition: anomalous and normal frames per video",
            f"{mixed} of {n} videos hold both kinds of frame; only these give within-video pairs.",
        ),
    }
    return _finish(spec)


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
    scale: Spec,
    y: Spec,
    dodge: bool = False,
    axis: Spec | None = None,
    extra: dict[str, Spec] | None = None,
) -> Spec:
    """Point at ``value`` with a ci_low–ci_high rule, coloured by model.

    ``dodge`` spreads the models of one y band apart (and then needs the colour legend, since
    y no longer names the model); ``data=None`` lets the layers inherit their parent's data
    (required inside a facet).
    """
    common: Spec = {"y": y, "color": _model_colour(result, legend=dodge)}
    if dodge:
        common["yOffset"] = _nominal("model", sort=model_order(result))
    axis = axis or {}
    rule = {
        "mark": _mark("rule", strokeWidth=2),
        "encoding": {
            "x": _quantitative("ci_low", scale=scale, title=title, axis=axis),
            "x2": {"field": "ci_high"},
            **common,
        },
    }
    fields = [value, "ci_low", "ci_high"]
    if data is not None and "p_bias" in data:
        fields.append("p_bias")
    point = {
        "mark": _mark("point", filled=True, size=70, opacity=1),
        "encoding": {
            "x": _quantitative(value, scale=scale, title=title, axis=axis),
            "tooltip": _tooltip(fields),
            **common,
            **(extra or {}),
        },
    }
    layered: Spec = {"layer": [rule, point]}
    if data is not None:
        layered["data"] = _values(data)
    return layered


def _chance_rule(scale: Spec) -> Spec:
    """Dashed rule at 0.5 on the layer's x scale (a bare datum would widen the domain to 0)."""
    return _dashed_rule({"datum": 0.5, "scale": scale})


def _dashed_rule(x: Spec) -> Spec:
    return {"mark": _mark("rule", color="#616161", strokeDash=[4, 3]), "encoding": {"x": x}}


def _per_panel(*aggregates: Spec) -> Spec:
    """An aggregate transform to one row per facet panel."""
    return {"aggregate": list(aggregates), "groupby": ["panel"]}


def _panel_header(order: list[str]) -> Spec:
    """Facet on the ``panel`` column (a granularity label), headers bold and left-aligned."""
    return _nominal(
        "panel",
        sort=order,
        title=None,
        header={"labelAnchor": "start", "labelFontWeight": "bold"},
    )


def _model_colour(result: AuditResult, *, legend: bool = True) -> Spec:
    """The one model → colour scale every chart shares (no legend where y names the model)."""
    models = model_order(result)
    return _nominal(
        "model",
        title="model",
        scale={"domain": models, "scheme": "tableau10" if len(models) <= 10 else "tableau20"},
        legend={"orient": "bottom", "columns": 3, "labelLimit": _LABEL_LIMIT} if legend else None,
    )


def _tooltip(fields: list[str]) -> list[Spec]:
    return [
        _nominal("model"),
        _nominal("family"),
        *(_quantitative(field, format=".4f") for field in fields),
    ]


def _mark(kind: str, **properties: Any) -> Spec:
    return {"type": kind, **properties}


def _nominal(field: str, **properties: Any) -> Spec:
    """An encoding channel of a categorical field (``properties``: sort, scale, title, …)."""
    return {"field": field, "type": "nominal", **properties}


def _quantitative(field: str, **properties: Any) -> Spec:
    """An encoding channel of a numeric field."""
    return {"field": field, "type": "quantitative", **properties}


def _title(text: str, *subtitle: str) -> Spec:
    return {"text": text, "subtitle": list(subtitle), "anchor": "start"}


def _values(table: pd.DataFrame) -> Spec:
    """A table as a spec's inline data, a record per row: JSON has no NaN or infinity, so
    those become null, as Altair wrote them."""
    return {"values": [_record(row) for row in table.to_dict(orient="records")]}


def _record(row: dict[Any, Any]) -> dict[str, Any]:
    # to_dict has made every number a Python one; only the missing ones need replacing
    return {
        str(column): None if isinstance(value, float) and not math.isfinite(value) else value
        for column, value in row.items()
    }


def _finish(spec: Spec) -> Spec:
    """Shared look: readable fonts, long labels kept, titles left-aligned, designed size.

    The size is padded, not fitted: a host that fits a chart into a box (Streamlit does, to
    its own width) would squeeze the plot behind the labels and legend, clip the titles, and
    draw nothing at all for a chart sized in steps per category.
    """
    return {
        "$schema": VEGA_LITE_SCHEMA,
        **spec,
        "autosize": {"type": "pad", "contains": "padding"},
        "config": {
            "view": {"continuousWidth": 300, "continuousHeight": 300},  # Altair's default
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "labelLimit": _LABEL_LIMIT},
            "header": {"labelFontSize": 13},
            "legend": {"labelFontSize": 12, "titleFontSize": 12},
            "title": {
                "fontSize": 17,
                "subtitleFontSize": 13,
                "subtitleColor": "#555555",
                "offset": 12,
            },
        },
    }


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


def d5_decomposition_chart(result: AuditResult) -> Spec | None:
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
    spec = {
        "data": _values(data),
        "mark": _mark("bar"),
        "encoding": {
            "y": _nominal("model", sort=list(means.index), title=None),
            "x": _quantitative("value", stack="zero", title="D@5 AUROC", scale={"domain": [0, 1]}),
            "color": _nominal(
                "part",
                title=None,
                scale={
                    "domain": list(parts_labels.values()),
                    "range": [NORMAL_COLOUR, ANOMALOUS_COLOUR],
                },
                legend={"orient": "bottom", "labelLimit": _LABEL_LIMIT},
            ),
            "order": _nominal("part", sort="descending"),
            "tooltip": [
                _nominal("model"),
                _nominal("part"),
                _quantitative("value", format=".4f"),
                _quantitative("omega", format=".4f", title="mean ω"),
            ],
        },
        "width": 420,
        "height": {"step": 26},
        "title": _title(
            "How much of D@5 tests the definition?",
            "D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ per query, ω = normal share of the negatives; "
            "only the red part compares the target with anomalies the definition excludes.",
        ),
    }
    return _finish(spec)


def definition_delta_chart(result: AuditResult) -> Spec | None:
    """DC-DetΔ per class and model: the matching definition's gain in target-vs-normal AUROC
    over the other definitions (0 for a definition-blind scorer)."""
    classes = result.definition_classes
    if classes.empty:
        return None
    data = classes[["model", "class", "det_delta_auroc", "det_matching_auroc", "det_other_auroc"]]
    models = list(dict.fromkeys(data["model"]))
    points = {
        "mark": _mark("point", filled=True, size=70, opacity=1),
        "encoding": {
            "y": _nominal("class", title=None),
            "x": _quantitative("det_delta_auroc", title="DC-DetΔ (AUROC difference)"),
            "color": _nominal(
                "model",
                sort=models,
                scale={"scheme": "tableau10"},
                legend={"orient": "bottom", "labelLimit": _LABEL_LIMIT},
            ),
            "yOffset": _nominal("model", sort=models),
            "tooltip": [
                _nominal("model"),
                _nominal("class"),
                *(
                    _quantitative(f, format=".4f")
                    for f in ("det_delta_auroc", "det_matching_auroc", "det_other_auroc")
                ),
            ],
        },
    }
    spec = {
        "data": _values(data),
        "layer": [_dashed_rule({"datum": 0}), points],
        "width": 420,
        "height": {"step": 14},
        "title": _title(
            "Does the matching definition find its class better?",
            "AUROC(s^c; class c vs normal) − mean over other definitions k of AUROC(s^k; same "
            "frames). Dashed: 0, what a definition-blind scorer gets exactly.",
        ),
    }
    return _finish(spec)


def readout_chart(result: AuditResult) -> Spec | None:
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
    scale = {"domain": [min(0.4, float(data[["auroc", "ci_low"]].min().min())), 1.0]}
    common = {
        "y": _nominal("model", sort=models, title=None),
        "color": _nominal(
            "source",
            title=None,
            scale={"range": [ANOMALOUS_COLOUR, NORMAL_COLOUR]},
            legend={"orient": "bottom"},
        ),
        "yOffset": _nominal("source"),
    }
    rule = {
        "mark": _mark("rule", strokeWidth=2),
        "encoding": {
            "x": _quantitative("ci_low", scale=scale, title="AUROC"),
            "x2": {"field": "ci_high"},
            **common,
        },
    }
    point = {
        "mark": _mark("point", filled=True, size=70, opacity=1),
        "encoding": {
            "x": _quantitative("auroc", scale=scale, title="AUROC"),
            "tooltip": [
                _nominal("model"),
                _nominal("source"),
                *(_quantitative(f, format=".4f") for f in ("auroc", "ci_low", "ci_high")),
            ],
            **common,
        },
    }
    spec = {
        "data": _values(data),
        "facet": _panel_header([READOUT_LABELS[r] for r in READOUT_LABELS]),
        "columns": 3,
        "spec": {"layer": [_chance_rule(scale), rule, point], "width": 300, "height": {"step": 20}},
        "title": _title(
            "Is the anomaly in the representation, and does the head use it?",
            "Prototype readout of the features vs the model's own scores at the same "
            "granularity. Dashed: chance. "
            + interval_words(result, "Bars: 95 % video-bootstrap CI."),
        ),
    }
    return _finish(spec)


def interval_ap_chart(result: AuditResult) -> Spec | None:
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
    spec = {
        "data": _values(data),
        "mark": _mark("bar"),
        "encoding": {
            "y": _nominal("model", sort=model_order(result), title=None),
            "yOffset": _nominal("construction", sort=list(labels.values())),
            "x": _quantitative("ap", title="interval AP (mean over tIoU 0.1–0.5)"),
            "color": _nominal(
                "construction",
                sort=list(labels.values()),
                title=None,
                legend={"orient": "bottom", "labelLimit": _LABEL_LIMIT},
            ),
            "tooltip": [
                _nominal("model"),
                _nominal("construction"),
                _quantitative("ap", format=".4f"),
            ],
        },
        "width": 420,
        "height": {"step": 12},
        "title": _title(
            "Interval AP depends on how intervals are built",
            "Released VadCLIP proposal rule; video-mean replacement leaves no proposal "
            "(AP 0), while whole-video intervals need no localisation at all.",
        ),
    }
    return _finish(spec)


def support_chart(result: AuditResult) -> Spec | None:
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
    spec = {
        "data": _values(data),
        "mark": _mark("bar"),
        "encoding": {
            "y": _nominal("contrast", sort=contrast_order(first), title=None),
            "x": _quantitative("videos", stack="zero", title="videos"),
            "color": _nominal(
                "side",
                title="pole",
                scale={"domain": ["⊕", "⊖"], "range": [ANOMALOUS_COLOUR, NORMAL_COLOUR]},
            ),
            "tooltip": [_nominal("contrast"), _nominal("pole"), _quantitative("videos")],
        },
        "width": 420,
        "height": {"step": 18},
        "title": _title(
            "Support of each scene contrast",
            "Videos with normal frames at each pole; ambiguous and unlabelled videos are "
            "left out of that contrast only.",
        ),
    }
    return _finish(spec)
