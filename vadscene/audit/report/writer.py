"""Write an audit's report: JSON, one CSV per table, figures, Markdown and a self-contained HTML.

Markdown and HTML are rendered from one document model — sections of paragraphs, lists, tables
already formatted as text, and figures — so the two files never say different things. The HTML
needs no network: its CSS is inline, and its figures are drawn in the reader's browser from
their Vega-Lite specs by the Vega/Vega-Lite/vega-embed bundle inlined into the page (the one
vl-convert ships, kept in the user's cache), so their tooltips work and each can be saved as
SVG or PNG from its menu. Rendering 20-odd figures offline costs ≈ 0.15–0.25 s each (Vega's
dataflow and text layout), more than the whole audit, so SVG files are opt-in (``svg=True``,
``--svg``): then each figure is also written to ``figures/NAME.svg`` for the Markdown and for
papers, each file opening with a comment that stamps the spec it was rendered from, and
writing a report over an earlier one keeps the figures whose stamp still matches. Every
figure's spec is written to ``figures/NAME.vl.json`` either way. The report folder is replaced
as a whole, so an interrupted run never leaves a half-written file or a mixture of two reports.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import vl_convert

from vadscene.audit.compute.definitions import PROBES
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.core.errors import VadsceneError
from vadscene.core.files import atomic_write
from vadscene.core.paths import user_cache_dir

_CONVENTION_LABELS = {
    "ground_truth": "Ground truth file",
    "format": "Ground truth format",
    "interval_end": "Interval end convention",
    "frame_counts": "Frame counts from",
    "tie_convention": "Ties",
    "replicates": "replicates (B)",
    "scene_coverage": "scene labels cover",
    "empty_contrasts": "contrasts left out (no labelled video at either pole)",
}
"""Display names of convention keys (engine.py's); any other key is shown as "Its key"."""

_SHORT_GRANULARITY = {g: label.split(" — ")[0] for g, label in figures.GRANULARITY_LABELS.items()}
"""Table headers ("micro", "per-category", ...), in the figures' order."""


REPORT_STEPS = ("json", "tables", "figures", "markdown", "html")
"""The steps :func:`write_report` announces to its ``progress`` callback, in order."""


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Note:
    """A "how to read this" paragraph."""

    text: str


@dataclass(frozen=True)
class _List:
    items: tuple[str, ...]


@dataclass(frozen=True)
class _Table:
    """Cells already formatted; the first ``labels`` columns are text, the rest numbers."""

    frame: pd.DataFrame
    labels: int = 1


@dataclass(frozen=True)
class _Figure:
    name: str
    chart: alt.TopLevelMixin | dict[str, Any]
    """An Altair chart, or its Vega-Lite spec already made."""
    alt_text: str

    def spec(self) -> dict[str, Any]:
        # Tests check every figure against the Vega-Lite schema; each report doing it again
        # would cost ≈ 0.4 s.
        return self.chart if isinstance(self.chart, dict) else self.chart.to_dict(validate=False)


_Block = _Text | _Note | _List | _Table | _Figure


@dataclass(frozen=True)
class _Section:
    title: str
    blocks: tuple[_Block, ...]

    @property
    def anchor(self) -> str:
        """GitHub's heading anchor, so the Markdown contents links work there too."""
        return re.sub(r"[^a-z0-9 -]", "", self.title.lower()).replace(" ", "-")


def write_report(
    result: AuditResult,
    out_dir: Path,
    *,
    svg: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Path]:
    """Write every report file into ``out_dir``, replacing the folder as a whole.

    ``out_dir`` may be missing, empty, or an earlier report (it holds ``report.json``); a
    folder of other files is refused (:class:`VadsceneError` naming one), because it is
    replaced: the files are written into a hidden sibling folder, which is then renamed into
    place, so readers never see a mix of an old and a new report, and a run that fails half
    way leaves the previous report as it was.

    The HTML draws its figures in the browser; ``svg=True`` also renders each one to
    ``figures/NAME.svg`` (≈ 0.2 s a figure; an unchanged figure of the report being replaced
    is kept) and the Markdown shows them. Returns file name (relative to ``out_dir``, e.g.
    ``"metrics.csv"``, ``"figures/bias_dot_plot.vl.json"``) → path. ``progress`` is called
    with each step's name ("json", "tables", "figures", "markdown", "html") before it runs.
    """
    out_dir = Path(out_dir)
    check_report_folder(out_dir)
    _remove_stale_runs(out_dir)
    staging = out_dir.parent / f".{out_dir.name}.{os.getpid()}.{uuid.uuid4().hex}.new"
    try:
        written = _write_files(result, staging, progress, svg=svg, previous=out_dir)
        _swap_in(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {name: out_dir / name for name in written}


def check_report_folder(out_dir: Path) -> None:
    """A report replaces its folder: refuse one that holds anything but an earlier report.

    :func:`write_report` checks; callers call it too before long work, so a wrong folder costs
    nothing.
    """
    if not out_dir.is_dir() or (out_dir / "report.json").is_file():
        return
    entries = sorted(entry.name for entry in out_dir.iterdir())
    if entries:
        raise VadsceneError(
            f"{out_dir}: holds files that are not an audit report (e.g. {entries[0]}) and the "
            "report replaces its whole folder; give a new or empty folder, or an earlier report's"
        )


def _remove_stale_runs(out_dir: Path) -> None:
    """Remove the hidden folders a killed run left beside ``out_dir`` (``.<name>.<pid>.….new``
    or ``.old``): those of processes no longer running; a live run's are its own."""
    if not out_dir.parent.is_dir():
        return
    pattern = re.compile(rf"\.{re.escape(out_dir.name)}\.(\d+)\.[0-9a-f]+\.(?:new|old)")
    for sibling in out_dir.parent.iterdir():
        match = pattern.fullmatch(sibling.name)
        if match and sibling.is_dir() and not _running(int(match.group(1))):
            shutil.rmtree(sibling, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _swap_in(staging: Path, out_dir: Path) -> None:
    """Put the finished ``staging`` folder at ``out_dir``; an earlier report there is removed.

    Two renames, each atomic: the old folder steps aside, the new one takes its place. A
    reader sees the old report or the new one, never a mixture (between the renames, for an
    instant, neither).
    """
    if not out_dir.exists():
        staging.rename(out_dir)
        return
    retired = staging.with_name(staging.name.removesuffix(".new") + ".old")
    out_dir.rename(retired)
    staging.rename(out_dir)
    shutil.rmtree(retired, ignore_errors=True)


def _write_files(
    result: AuditResult,
    out_dir: Path,
    progress: Callable[[str], None] | None,
    *,
    svg: bool,
    previous: Path,
) -> dict[str, Path]:
    """Write every report file into ``out_dir`` (created if missing); file name → path.
    ``previous`` is the report being replaced, whose unchanged SVG figures are kept."""
    step = progress or (lambda _name: None)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}

    def write(name: str, text: str) -> None:
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        written[name] = path

    step("json")
    write("report.json", result.to_json())
    step("tables")
    for name in AuditResult.TABLES + AuditResult.OPTIONAL_TABLES:
        table: pd.DataFrame = getattr(result, name)
        if not table.empty:
            write(f"{name}.csv", table.to_csv(index=False, lineterminator="\n"))
    sections = _sections(result)
    step("figures")
    specs: dict[str, dict[str, Any]] = {}
    for figure in _figures(sections):
        specs[figure.name] = spec = figure.spec()
        write(f"figures/{figure.name}.vl.json", json.dumps(spec, ensure_ascii=False))
        if svg:
            name = f"figures/{figure.name}.svg"
            write(name, _svg(spec, previous / name))
    title, intro = _title(result)
    step("markdown")
    write("report.md", _markdown(title, intro, sections, svg=svg))
    step("html")
    write("report.html", _html(title, intro, sections, specs))
    return written


def _svg(spec: dict[str, Any], previous: Path) -> str:
    """A figure file's text: a stamp line, then the chart's SVG. The stamp names the
    Vega-Lite spec and vl-convert release it was rendered from and the SVG's own digest; when
    the same figure of the report being replaced carries the same stamp, its SVG is kept
    instead of rendered again (≈ 0.2 s a figure, one at a time per process, and a re-run after
    adding a model changes few figures); a hand-edited SVG no longer matches its digest and is
    rendered anew."""
    key = hashlib.sha256(
        json.dumps([vl_convert.__version__, spec], sort_keys=True).encode()
    ).hexdigest()
    try:
        kept = previous.read_text(encoding="utf-8")
        stamp, _, svg = kept.partition("\n")
        if stamp == _stamp(key, svg):
            return kept
    except (OSError, UnicodeDecodeError):
        pass  # no such figure before (or unreadable): render it
    svg = vl_convert.vegalite_to_svg(spec, vl_version=_VEGA_LITE)
    return f"{_stamp(key, svg)}\n{svg}"


_VEGA_LITE = next(
    (v for v in vl_convert.get_vegalite_versions() if alt.SCHEMA_VERSION.startswith(f"v{v}.")),
    None,
)
"""The Vega-Lite release Altair writes specs for, as vl-convert names it (None: its default)."""


def _vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, for the HTML to draw its figures with.

    vl-convert builds it (≈ 1.2 s, once per vl-convert release and Vega-Lite version); it is
    kept in the user's cache. An unwritable cache only costs the rebuild.
    """
    cached = user_cache_dir() / f"vega-embed-{vl_convert.__version__}-{_VEGA_LITE}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    bundle = vl_convert.javascript_bundle(vl_version=_VEGA_LITE)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cached, bundle)
    except OSError:
        pass
    return bundle


def _stamp(spec_digest: str, svg: str) -> str:
    svg_digest = hashlib.sha256(svg.encode()).hexdigest()
    return f"<!-- vadscene figure: spec sha256 {spec_digest}, svg sha256 {svg_digest} -->"


# --- the document -----------------------------------------------------------------------------


def _title(result: AuditResult) -> tuple[str, str]:
    summary = result.summary
    scope = f"{_count(summary.get('videos'))} videos, {_count(summary.get('frames'))} frames"
    models = figures.model_order(result)
    if not models:
        return "Benchmark audit (ground truth only)", (
            f"Ground truth of {scope}. No model scores were given, so this report describes "
            "the benchmark's composition only."
        )
    return "Audit report", (
        f"{len(models)} model{'s' if len(models) != 1 else ''} ({', '.join(models)}) on "
        f"{scope}: which frame-score comparisons each AUROC rewards, how much survives "
        "without within-video variation, and how the scores respond to scene factors."
    )


def _sections(result: AuditResult) -> list[_Section]:
    """The report's sections in reading order; sections whose tables are empty are left out."""
    builders = (
        _inputs_section,
        _composition_section,
        _granularity_section,
        _controls_section,
        _per_category_section,
        _comparisons_section,
        _bias_section,
        _scene_conditioned_section,
        _definition_section,
        _readout_section,
        _further_section,
    )
    return [section for build in builders if (section := build(result)) is not None]


def _inputs_section(result: AuditResult) -> _Section:
    conventions = dict(result.conventions)
    model_entries = conventions.pop("models", None)
    items = []
    for key, value in conventions.items():
        label = _convention_label(key).capitalize()
        if isinstance(value, dict):  # e.g. bootstrap: one line per setting
            items += [f"{label} {_convention_label(k)}: {_plain(v)}" for k, v in value.items()]
        else:
            items.append(f"{label}: {_plain(value)}")
    blocks: list[_Block] = [_List(tuple(items))] if items else []
    models = _model_lines(result, model_entries)
    blocks.append(_Text("Models:" if models else "No model scores were given."))
    if models:
        blocks.append(_List(tuple(models)))
    return _Section("Inputs and conventions", tuple(blocks))


def _convention_label(key: str) -> str:
    return _CONVENTION_LABELS.get(key, key.replace("_", " "))


def _model_lines(result: AuditResult, entries: Any) -> list[str]:
    """One line per model: name, family, score file and notes as the run recorded them.

    ``conventions["models"]`` (a list of dicts with name, family, source, notes) is preferred;
    without it the families come from the metrics table.
    """
    if entries:
        lines = []
        for entry in entries:
            line = f"{entry['name']} — family {entry.get('family') or 'n/a'}"
            if entry.get("source"):
                line += f", scores {entry['source']}"
            if entry.get("notes"):
                line += f"; notes: {'; '.join(map(str, entry['notes']))}"
            lines.append(line)
        return lines
    families = dict(zip(result.metrics["model"], result.metrics["family"], strict=True))
    return [f"{m} — family {families.get(m) or 'n/a'}" for m in figures.model_order(result)]


def _composition_section(result: AuditResult) -> _Section | None:
    s = result.summary
    if not s and result.composition.empty:
        return None
    w = s.get("within_pair_fraction")
    rows = [
        ("Videos", _count(s.get("videos"))),
        ("Frames", _count(s.get("frames"))),
        ("Anomalous frames", _count(s.get("anomalous_frames"))),
        ("Normal frames", _count(s.get("normal_frames"))),
        ("Anomalous videos", _count(s.get("anomalous_videos"))),
        ("Prevalence π (anomalous share of frames)", _pct(s.get("prevalence"))),
        ("Mixed videos (anomalous and normal frames)", _count(s.get("mixed_videos"))),
        ("Within-video pair fraction w", _pct(w)),
        ("Max gain of within on micro (w/2)", _num(s.get("max_within_gain"))),
        ("Oracle video-constant micro AUROC", _num(s.get("oracle_video_constant_auroc"))),
        ("One-bit control micro AUROC", _num(s.get("one_bit_auroc"))),
    ]
    blocks: list[_Block] = [_Table(pd.DataFrame(rows, columns=["quantity", "value"]))]
    if (chart := figures.composition_chart(result)) is not None:
        blocks.append(_Figure("composition", chart, "Anomalous and normal frames per video"))
    blocks.append(
        _Note(
            f"w is the share of anomalous–normal frame pairs whose two frames come from the same "
            f"video (here {_pct(w)}); only mixed videos contribute such pairs. Pooled (micro) "
            "AUROC = w·within + (1 − w)·cross, so perfect localisation can raise it by at most "
            "w/2. The oracle gives every frame of a video its video's anomalous fraction, the "
            "one-bit control scores 1 on anomalous videos and 0 on normal ones: neither "
            "localises anything, so a micro AUROC near theirs is reachable by ranking whole "
            "videos."
        )
    )
    return _Section("Benchmark composition", tuple(blocks))


def _granularity_section(result: AuditResult) -> _Section | None:
    metrics = result.metrics
    if metrics.empty:
        return None
    columns = [g for g in _SHORT_GRANULARITY if g in set(metrics["granularity"])]
    cells = metrics.assign(cell=[_ci(*r) for r in metrics[["value", "ci_low", "ci_high"]].values])
    wide = cells.pivot(index="model", columns="granularity", values="cell")
    families = metrics.groupby("model", sort=False)["family"].first()
    models = [m for m in figures.model_order(result) if m in wide.index]
    table = pd.DataFrame(
        {
            "model": models,
            "family": [_plain(families[m]) for m in models],
            **{_SHORT_GRANULARITY[g]: [_plain(wide.at[m, g]) for m in models] for g in columns},
        }
    )
    blocks: list[_Block] = [
        _Figure(name, chart, alt_text)
        for name, build, alt_text in (
            ("granularity_forest", figures.granularity_forest_plot, "AUROC per granularity"),
            ("decomposition", figures.decomposition_bars, "micro, within and cross AUROC"),
        )
        if (chart := build(result)) is not None
    ]
    blocks += [
        _Table(table, labels=2),
        _Note(
            "Every column reads the same frame scores; only the set of anomalous–normal frame "
            "pairs changes. micro pools all pairs, so it is dominated by pairs from different "
            "videos (cross). within-video AUROC compares frames of the same video only; it is "
            "the only granularity that tests temporal localisation (macro averages it per mixed "
            "video, each video counting equally). per-category compares frames of one anomaly "
            "category. Brackets: 95 % percentile interval over "
            f"{_replicates(result)} video-bootstrap replicates (videos resampled with all their "
            "frames); overlapping intervals do not rank models — see the paired comparisons."
        ),
    ]
    return _Section("AUROC at each granularity", tuple(blocks))


def _controls_section(result: AuditResult) -> _Section | None:
    controls = result.controls
    if controls.empty:
        return None
    table = pd.DataFrame(
        {
            "model": controls["model"],
            "family": controls["family"].map(_plain),
            "micro": controls["micro"].map(_num),
            "micro (video mean)": controls["micro_video_mean"].map(_num),
            "R_mean": controls["retention_mean"].map(_pct),
            "within (video mean)": controls["within_video_mean"].map(_num),
            "AP": controls["ap"].map(_num),
            "AP (video mean)": controls["ap_video_mean"].map(_num),
            "AP retention": controls["ap_retention"].map(_pct),
            "clustered SE (micro)": controls["obuchowski_se"].map(_num),
        }
    )
    return _Section(
        "Video-level controls",
        (
            _Table(table, labels=2),
            _Note(
                "Each frame score is replaced by its video's mean score: frames of one video "
                "can no longer be told apart, so within-video AUROC becomes exactly 0.5 and only "
                "the ranking of whole videos remains. R_mean is the share of micro's margin above "
                "chance that survives, (micro(video mean) − 0.5) / (micro − 0.5); near 100 % "
                "means the pooled score needs no within-video variation. AP retention is the "
                "same for frame AP above the prevalence. The clustered SE (Obuchowski) treats "
                "videos, not frames, as the independent units."
            ),
        ),
    )


def _per_category_section(result: AuditResult) -> _Section | None:
    per_category = result.per_category
    if per_category.empty:
        return None
    support = per_category.groupby("category", sort=False)[
        ["videos", "anomalous_frames", "normal_frames"]
    ].first()
    wide = per_category.pivot(index="category", columns="model", values="same_category_auroc")
    models = [m for m in figures.model_order(result) if m in wide.columns]
    table = pd.DataFrame(
        {
            "category": support.index,
            "videos": support["videos"].map(_count).to_numpy(),
            "anomalous frames": support["anomalous_frames"].map(_count).to_numpy(),
            "normal frames": support["normal_frames"].map(_count).to_numpy(),
            **{m: [_num(wide.at[c, m]) for c in support.index] for m in models},
        }
    )
    return _Section(
        "Per-category AUROC",
        (
            _Table(table),
            _Note(
                "Same-category AUROC per model: anomalous against normal frames, both from the "
                "videos of one category, so the comparison cannot be won by telling categories "
                "or Normal videos apart. The category-vs-Normal variant (normal frames of the "
                "category plus all Normal videos) is in per_category.csv."
            ),
        ),
    )


def _comparisons_section(result: AuditResult) -> _Section | None:
    resolved, comparisons = result.resolved, result.comparisons
    resolved = resolved[resolved["pairs"] > 0]  # with fewer than two models: nothing compared
    if resolved.empty and comparisons.empty:
        return None
    blocks: list[_Block] = []
    if not resolved.empty:
        cells = resolved.assign(
            cell=[f"{r} / {p}" for r, p in resolved[["resolved", "pairs"]].values]
        )
        wide = cells.pivot(index="family", columns="granularity", values="cell")
        families = ["all", *sorted(f for f in wide.index if f != "all")]
        columns = [g for g in _SHORT_GRANULARITY if g in wide.columns]
        table = pd.DataFrame(
            {
                "pairs compared": [
                    "all pairs" if f == "all" else f"within family {f}" for f in families
                ],
                **{
                    _SHORT_GRANULARITY[g]: [_plain(wide.at[f, g]) for f in families]
                    for g in columns
                },
            }
        )
        blocks.append(_Table(table))
    if not comparisons.empty:
        marked = comparisons.assign(
            cell=[
                _ci(d, lo, hi, signed=True) + (" ✓" if ok else "")
                for d, lo, hi, ok in comparisons[
                    ["difference", "ci_low", "ci_high", "resolved"]
                ].values
            ]
        )
        wide = marked.pivot(index=["model_a", "model_b"], columns="granularity", values="cell")
        columns = [g for g in _SHORT_GRANULARITY if g in wide.columns]
        pairs = list(
            dict.fromkeys(zip(comparisons["model_a"], comparisons["model_b"], strict=True))
        )
        table = pd.DataFrame(
            {
                "model A": [a for a, _ in pairs],
                "model B": [b for _, b in pairs],
                **{_SHORT_GRANULARITY[g]: [_plain(wide.at[p, g]) for p in pairs] for g in columns},
            }
        )
        blocks.append(_Table(table, labels=2))
    blocks.append(
        _Note(
            "Each pair of models is scored on the same bootstrap replicates (same resampled "
            "videos), and the 95 % interval of the difference A − B decides: a pair is resolved "
            '(✓) when it excludes 0. Counts "within family" keep only pairs of models sharing '
            "a backbone — the comparisons state-of-the-art claims rest on."
        )
    )
    return _Section("Paired model comparisons", tuple(blocks))


def _bias_section(result: AuditResult) -> _Section | None:
    """Both bias populations; contrasts without a labelled video are listed once, among the
    inputs (conventions["empty_contrasts"]), not as rows of n/a."""
    if result.bias.empty:
        return None
    blocks: list[_Block] = []
    if warnings := bias_warnings(result):
        blocks += [_Text("Warnings:"), _List(tuple(warnings))]
    return _Section("Scene bias on normal footage", tuple(blocks + _bias_blocks(result)))


def _bias_blocks(result: AuditResult) -> list[_Block]:
    ordered = _by_contrast_then_model(result, result.bias)
    table = pd.DataFrame(
        {
            "contrast": figures.contrast_labels(ordered),
            "role": ordered["role"],
            "primary": ordered["primary"].map(lambda p: "yes" if p else "no"),
            "model": ordered["model"],
            "n ⊕": ordered["n_positive"].map(_count),
            "n ⊖": ordered["n_negative"].map(_count),
        }
    )
    if "anomalous_share_positive" in ordered:
        table["anomalous ⊕ / ⊖"] = [
            f"{_pct(p)} / {_pct(n)}"
            for p, n in ordered[["anomalous_share_positive", "anomalous_share_negative"]].values
        ]
    two_populations = "bias_auroc_leak_free" in ordered
    for suffix, heading in (("", "all videos"), ("_leak_free", "Normal videos")):
        if suffix and not two_populations:
            continue
        name = f" ({heading})" if two_populations else ""
        if suffix:
            table[f"n ⊕ / ⊖{name}"] = [
                f"{_count(p)} / {_count(n)}"
                for p, n in ordered[[f"n_positive{suffix}", f"n_negative{suffix}"]].values
            ]
        table[f"bias-AUC [95 % CI]{name}"] = [
            _ci(*r)
            for r in ordered[[f"bias_auroc{suffix}", f"ci_low{suffix}", f"ci_high{suffix}"]].values
        ]
        table[f"p_bias{name}"] = [_p_bias(row, suffix) for _, row in ordered.iterrows()]
        if f"p_permutation{suffix}" in ordered:
            table[f"p_perm (Holm){name}"] = [_p_test(row, suffix) for _, row in ordered.iterrows()]
    blocks: list[_Block] = []
    for population, alt_text in (
        ("all", "bias-AUC per scene factor and model"),
        ("leak_free", "bias-AUC per scene factor and model, Normal videos only"),
    ):
        if (chart := figures.bias_dot_plot(result, population)) is not None:
            suffix = "" if population == "all" else f"_{population}"
            blocks.append(_Figure(f"bias_dot_plot{suffix}", chart, alt_text))
    bootstrap = result.conventions.get("bootstrap") or {}
    support = bootstrap.get("min_pole_support")
    level = bootstrap.get("significance_level")
    note = (
        "bias-AUC uses normal footage only: the probability that a ⊕ video's mean "
        "normal-frame score exceeds a ⊖ video's (n ⊕, n ⊖: videos at each pole). 0.5 means "
        "the scores do not respond to the factor; the band 0.45–0.55 counts as practically "
        "unbiased, and p_bias is the share of bootstrap replicates (videos resampled within "
        "each pole) falling outside it. bias-AUC does not depend on how many videos each "
        "pole has; a small pole only widens the interval. Control factors correlate with "
        "the anomaly class by construction: read them as a check, not as scene reliance."
    )
    if two_populations:
        note += (
            " Two populations, side by side. All videos (the paper's s̄⁰, the default) also "
            "averages the normal stretches of anomalous videos, where a scorer's anomaly "
            "evidence leaks in: a factor whose poles hold different shares of anomalous "
            "videos (anomalous ⊕ / ⊖) moves it without any scene response. Normal videos "
            "only cannot be moved that way. p_perm is a calibrated test of b = 0.5: the "
            "share of pole-label shuffles among the contrast's videos whose bias-AUC is at "
            "least as far from 0.5; ✓ marks cells significant after Holm correction across "
            f"contrasts (per model and population, family-wise level {_plain(level)}). "
            f"Below {_plain(support)} videos at either pole the cell reads "
            '"insufficient support" instead of p_bias and is left out of the correction.'
        )
    blocks += [_Table(table, labels=4), _Note(note)]
    return blocks


def _p_bias(row: pd.Series, suffix: str) -> str:
    if f"supported{suffix}" in row and not row[f"supported{suffix}"]:
        return "insufficient support"
    return _num(row[f"p_bias{suffix}"], 3)


def _p_test(row: pd.Series, suffix: str) -> str:
    text = _num(row[f"p_permutation{suffix}"], 3)
    # `in (True,)` accepts numpy booleans and rejects a missing (NaN) flag
    return text + (" ✓" if row.get(f"significant{suffix}") in (True,) else "")


def bias_warnings(result: AuditResult) -> list[str]:
    """One line per bias cell whose populations disagree beyond their 95 % intervals while
    the poles hold different shares of anomalous videos (the report's and the CLI's warning)."""
    bias = result.bias
    if bias.empty or "leakage_warning" not in bias:
        return []
    lines = []
    for row in _by_contrast_then_model(result, bias).itertuples():
        if not row.leakage_warning:
            continue
        lines.append(
            f"{row.model} on {row.factor} ({row.positive} vs {row.negative}): bias-AUC "
            f"{_ci(row.bias_auroc, row.ci_low, row.ci_high)} on all videos but "
            f"{_ci(row.bias_auroc_leak_free, row.ci_low_leak_free, row.ci_high_leak_free)} on "
            f"Normal videos only; anomalous videos make up {_pct(row.anomalous_share_positive)} "
            f"of ⊕ and {_pct(row.anomalous_share_negative)} of ⊖, so the all-videos value "
            "measures anomaly evidence leaking into normal frames, not the scene"
        )
    return lines


def _scene_conditioned_section(result: AuditResult) -> _Section | None:
    conditioned = result.scene_conditioned
    if conditioned.empty and result.scene_pairs.empty:
        return None
    blocks: list[_Block] = []
    if not conditioned.empty:
        ordered = _by_contrast_then_model(result, conditioned)
        table = pd.DataFrame(
            {
                "contrast": figures.contrast_labels(ordered),
                "model": ordered["model"],
                "AUC_ref": ordered["auroc_ref"].map(_num),
                "AUC_cond": ordered["auroc_cond"].map(_num),
                "Δscene": ordered["delta_scene"].map(lambda d: _num(d, signed=True)),
            }
        )
        blocks.append(_Table(table, labels=2))
    blocks.append(
        _Note(
            "On the videos labelled in a factor, AUC_ref is the pooled AUROC and AUC_cond the "
            "mean of the two same-pole AUROCs (⊕⊕, ⊖⊖). Δscene = AUC_ref − AUC_cond > 0 means "
            "pairs across poles inflate the pooled AUROC: part of it is earned by telling the "
            "poles apart rather than events. The heatmaps show the four pair-type AUROCs and the "
            "share of pairs (w) each carries."
        )
    )
    for i, (model, spec) in enumerate(figures.scene_pair_heatmap_specs(result).items()):
        slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
        blocks.append(_Figure(f"scene_pairs_{i + 1}_{slug}", spec, f"{model}: AUROC by pair type"))
    return _Section("Scene-conditioned AUROC", tuple(blocks))


def _definition_section(result: AuditResult) -> _Section | None:
    probes = result.definition_probes
    if probes.empty:
        return None
    auroc = probes[probes["metric"] == "auroc"].set_index(["model", "probe"])
    ap = probes[probes["metric"] == "ap"].set_index(["model", "probe"])
    models = list(dict.fromkeys(probes["model"]))
    names = [p for p in PROBES if p in set(probes["probe"])]
    table = pd.DataFrame(
        {
            "model": models,
            **{
                f"{name} AUROC": [
                    _ci(*auroc.loc[(m, name), ["value", "ci_low", "ci_high"]], signed="Δ" in name)
                    for m in models
                ]
                for name in names
            },
            **{f"{name} AP": [_num(ap.at[(m, name), "value"]) for m in models] for name in names},
        }
    )
    queries = result.definition_queries
    query_table = pd.DataFrame(
        {
            "model": queries["model"],
            "definition": queries["definition"],
            "classes Γ": queries["classes"],
            "ω": queries["omega"].map(_num),
            "D@5": queries["d5_auroc"].map(_num),
            "D@5ᴺ": queries["d5_normal_auroc"].map(_num),
            "D@5ˣ": queries["d5_excluded_auroc"].map(_num),
            "D@5 − ω·D@5ᴺ − (1−ω)·D@5ˣ": queries["identity_gap"].map(
                lambda v: f"{v:.1e}" if figures.is_finite_number(v) else "n/a"
            ),
            "D@5 AP": queries["d5_ap"].map(_num),
        }
    )
    classes = result.definition_classes
    class_table = pd.DataFrame(
        {
            "model": classes["model"],
            "class": classes["class"],
            "DC-Disc": classes["disc_auroc"].map(_num),
            "matching": classes["det_matching_auroc"].map(_num),
            "other definitions": classes["det_other_auroc"].map(_num),
            "DC-DetΔ": classes["det_delta_auroc"].map(lambda v: _num(v, signed=True)),
        }
    )
    blocks: list[_Block] = [
        _Figure(name, chart, alt_text)
        for name, build, alt_text in (
            (
                "d5_decomposition",
                figures.d5_decomposition_chart,
                "D@5 split into ω·D@5ᴺ and (1 − ω)·D@5ˣ",
            ),
            ("definition_delta", figures.definition_delta_chart, "DC-DetΔ per class and model"),
        )
        if (chart := build(result)) is not None
    ]
    worst = float(queries["identity_gap"].abs().max())
    blocks += [
        _Table(table, labels=1),
        _Note(
            "Each model scored every frame once per definition. D@5 ranks the queried classes' "
            "frames against all other frames; it splits exactly into D@5ᴺ (against normal "
            "frames) and D@5ˣ (against anomalies of classes the definition excludes) weighted "
            "by ω, the normal share of the negatives — when ω is near 1, D@5 is mostly generic "
            "anomaly detection. DC-Disc ranks a class's frames against other anomalies only. "
            "DC-DetΔ and DC-SelΔ are gains from the matching definition over the others, on "
            "the same frames: a scorer that ignores the definition gets exactly 0. A high D@5 "
            "with DC-DetΔ ≈ 0 is the signature of definition blindness. Brackets: 95 % "
            "interval, paired video bootstrap (DC-SelΔ: clusters of videos sharing one class "
            "set); AP values have no interval."
        ),
        _Text(
            "Mean ω over the queries (the normal frames' share of D@5's negatives): "
            + "; ".join(
                f"{model} {_num(omega)}"
                for model, omega in queries.groupby("model", sort=False)["omega"].mean().items()
            )
            + "."
        ),
        _Text(
            "Per query (the identity D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ holds to "
            f"{worst:.1e} in the worst query):"
            if figures.is_finite_number(worst)
            else "Per query:"
        ),
        _Table(query_table, labels=3),
        _Text("Per class (DC-Disc and the two terms of DC-DetΔ):"),
        _Table(class_table, labels=2),
    ]
    return _Section("Definition following", tuple(blocks))


def _readout_section(result: AuditResult) -> _Section | None:
    readout = result.readout
    if readout.empty:
        return None
    rule = result.conventions.get("features", {}).get("snippet_label_rule", "")
    table = pd.DataFrame(
        {
            "model": readout["model"],
            "readout": readout["readout"].map(figures.READOUT_LABELS),
            "prototype AUROC": [
                _ci(*r) for r in readout[["auroc", "ci_low", "ci_high"]].to_numpy()
            ],
            "videos": readout["videos"].map(_count),
            "left out": readout["left_out"].map(_count),
        }
    )
    blocks: list[_Block] = []
    if (chart := figures.readout_chart(result)) is not None:
        blocks.append(_Figure("readout", chart, "prototype vs score AUROC per readout"))
    blocks += [
        _Table(table, labels=2),
        _Note(
            "Without the model's head: each snippet's feature is scored by cos(z, p⁺) − cos(z, "
            "p⁻), its cosine to the mean anomalous feature minus that to the mean normal one. "
            "global builds the means from video labels only; per-category and within-video use "
            "snippet labels (within-video leaves the query snippet out), so they are oracle "
            "ceilings on what the features make linearly accessible, not detectors. A high "
            "within-video prototype AUROC beside a low within-video score AUROC means the head "
            "does not use the localisation the representation holds. Snippet labels: "
            f"{rule}. Left out: videos with fewer than two snippets of a label."
        ),
    ]
    return _Section("Representation readout", tuple(blocks))


def _further_section(result: AuditResult) -> _Section | None:
    further = result.further
    if further.empty:
        return None
    with_intervals = further["interval_ap"].notna().any()
    table = pd.DataFrame(
        {
            "model": further["model"],
            "AUCA": further["auca"].map(_num),
            "cross mass kept": further["cross_mass_kept"].map(_pct),
            "max AUCA": further["max_auca"].map(_num),
            **(
                {
                    "interval AP": further["interval_ap"].map(_num),
                    "AP@0.5": further["interval_ap_at_05"].map(_num),
                    "interval AP (video mean)": further["interval_ap_video_mean"].map(_num),
                    "interval AP (whole video)": further["interval_ap_whole_video"].map(_num),
                }
                if with_intervals
                else {}
            ),
        }
    )
    blocks: list[_Block] = []
    if (chart := figures.interval_ap_chart(result)) is not None:
        blocks.append(_Figure("interval_ap", chart, "interval AP per construction"))
    blocks += [
        _Table(table, labels=1),
        _Note(
            "AUCA pools only the videos that contain an anomaly; it still compares frames "
            "across videos (cross mass kept: the share of all cross-video pairs it keeps), and "
            "max AUCA is what one score per video reaches there. Interval AP (with "
            "--interval-ap) follows the released VadCLIP evaluation (proposals: runs above "
            "max − 0.6·(max − min) of the video's scores, at least 2 frames; greedy "
            "matching; mean over "
            "tIoU 0.1–0.5). Video-mean replacement yields no proposal, so its AP is 0; "
            "whole-video intervals ([0, T) per video, confidence = mean score) show how much AP "
            "needs no temporal localisation."
        ),
    ]
    agreement = result.agreement
    if not agreement.empty:
        blocks += [
            _Text("Agreement of every granularity with micro AUROC over the models:"),
            _Table(
                pd.DataFrame(
                    {
                        "granularity": agreement["granularity"],
                        "models": agreement["models"].map(_count),
                        "spread (max − min)": agreement["spread"].map(_num),
                        "pairs compared": agreement["pairs"].map(_count),
                        "reversals": agreement["reversals"].map(_count),
                        "Spearman ρ": agreement["spearman_rho"].map(_num),
                    }
                ),
                labels=1,
            ),
            _Note(
                "A reversal is a model pair that micro and the granularity order oppositely "
                "(pairs tied in either are left out). Many reversals or a low ρ mean a "
                "leaderboard ranked by micro would change under that reading."
            ),
        ]
    spread = result.spread
    if not spread.empty:
        wide = spread.pivot(index="granularity", columns="family", values="spread")
        families = list(dict.fromkeys(spread["family"]))
        order = [g for g in _SHORT_GRANULARITY if g in wide.index]
        blocks += [
            _Text("Spread (max − min of the point estimates) over all models and per family:"),
            _Table(
                pd.DataFrame(
                    {
                        "granularity": [_SHORT_GRANULARITY[g] for g in order],
                        **{f: [_num(wide.at[g, f]) for g in order] for f in families},
                    }
                ),
                labels=1,
            ),
        ]
    means = result.pair_type_means
    if not means.empty:
        wide = means.pivot(index="model", columns="pair_type", values="auroc")
        types = [t for t in figures.PAIR_TYPES if t in wide.columns]
        blocks += [
            _Text(
                f"Pair-type AUROC averaged over the {int(means['contrasts'].iloc[0])} contrasts "
                "with |mean Δscene| ≥ 0.01 (⊕⊖: anomalous frames of ⊕ videos against normal "
                "frames of ⊖ videos):"
            ),
            _Table(
                pd.DataFrame(
                    {
                        "model": list(wide.index),
                        **{
                            f"AUC {figures.PAIR_TYPES[k]}": [_num(v) for v in wide[k]]
                            for k in types
                        },
                    }
                ),
                labels=1,
            ),
        ]
    soft = result.prob_auc
    if not soft.empty:
        micro = result.metrics[result.metrics["granularity"] == "micro"].set_index("model")
        blocks += [
            _Text("Prob-AUC under the soft (multi-annotator) frame labels, beside micro AUROC:"),
            _Table(
                pd.DataFrame(
                    {
                        "model": soft["model"],
                        "Prob-AUC": soft["prob_auc"].map(_num),
                        "micro AUROC": [_num(micro["value"].get(m)) for m in soft["model"]],
                    }
                ),
                labels=1,
            ),
        ]
    if (chart := figures.support_chart(result)) is not None:
        blocks.append(_Figure("support", chart, "videos at each pole of every contrast"))
    return _Section("Further tables", tuple(blocks))


def _by_contrast_then_model(result: AuditResult, table: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted like the figures: primary contrasts first, then the run's model order."""
    contrast = pd.Categorical(
        figures.contrast_labels(table), categories=figures.contrast_order(table), ordered=True
    )
    models = figures.model_order(result)
    model = pd.Categorical(table["model"], categories=models, ordered=True)
    order = pd.DataFrame({"c": contrast, "m": model}).sort_values(["c", "m"], kind="stable")
    return table.loc[order.index]


def _figures(sections: Iterable[_Section]) -> list[_Figure]:
    return [b for s in sections for b in s.blocks if isinstance(b, _Figure)]


def _replicates(result: AuditResult) -> str:
    b = (result.conventions.get("bootstrap") or {}).get("replicates")
    return f"B = {b}" if b is not None else "the"


# --- formatting -------------------------------------------------------------------------------


def _num(value: Any, digits: int = 4, *, signed: bool = False) -> str:
    if not figures.is_finite_number(value):
        return "n/a"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _ci(value: Any, low: Any, high: Any, *, signed: bool = False) -> str:
    """``0.8412 [0.8120, 0.8690]``; the bracket is left out when the interval is undefined."""
    text = _num(value, signed=signed)
    if figures.is_finite_number(low) and figures.is_finite_number(high):
        text += f" [{_num(low, signed=signed)}, {_num(high, signed=signed)}]"
    return text


def _pct(value: Any) -> str:
    return figures.percent(value) if figures.is_finite_number(value) else "n/a"


def _count(value: Any) -> str:
    return f"{int(value):,}" if figures.is_finite_number(value) else "n/a"


def _plain(value: Any) -> str:
    """Any convention or cell value as one line of text (lists joined, mappings as k=v)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_plain(v) for v in value) or "none"
    return str(value)


# --- rendering --------------------------------------------------------------------------------


def _markdown(title: str, intro: str, sections: list[_Section], *, svg: bool) -> str:
    lines = [f"# {title}", "", intro, "", "## Contents", ""]
    lines += [f"{i}. [{s.title}](#{s.anchor})" for i, s in enumerate(sections, 1)]
    for section in sections:
        lines += ["", f"## {section.title}"]
        for block in section.blocks:
            lines += ["", *_markdown_block(block, svg=svg)]
    return "\n".join(lines) + "\n"


def _markdown_block(block: _Block, *, svg: bool) -> list[str]:
    match block:
        case _Text(text):
            return [text]
        case _Note(text):
            return [f"> **How to read this.** {text}"]
        case _List(items):
            return [f"- {item}" for item in items]
        case _Figure(name, _, alt_text) if svg:
            return [f"![{alt_text}](figures/{name}.svg)"]
        case _Figure(name, _, alt_text):
            return [
                f"*Figure: {alt_text}* — drawn in [report.html](report.html#figure-{name}); "
                f"`--svg` also writes it as `figures/{name}.svg`, shown here."
            ]
        case _Table(frame, labels):
            align = ["---" if i < labels else "---:" for i in range(frame.shape[1])]
            return [_markdown_row(frame.columns), _markdown_row(align)] + [
                _markdown_row(row) for row in frame.values
            ]
    raise TypeError(block)


def _markdown_row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _html(
    title: str, intro: str, sections: list[_Section], specs: dict[str, dict[str, Any]]
) -> str:
    esc = html.escape
    toc = "\n".join(f'<li><a href="#{s.anchor}">{esc(s.title)}</a></li>' for s in sections)
    body = "\n".join(
        f'<section id="{s.anchor}">\n<h2>{esc(s.title)}</h2>\n'
        + "\n".join(_html_block(b) for b in s.blocks)
        + "\n</section>"
        for s in sections
    )
    scripts = ""
    if specs:
        # "</" would end the script element early: JSON allows it escaped as "<\/"
        data = json.dumps(specs, ensure_ascii=False).replace("</", "<\\/")
        scripts = (
            f'<script type="application/json" id="figure-specs">{data}</script>\n'
            f"<script>{_vega_bundle()}</script>\n<script>{_DRAW_FIGURES}</script>"
        )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{esc(title)}</h1>
<p>{esc(intro)}</p>
</header>
<nav aria-label="Contents">
<h2>Contents</h2>
<ol>
{toc}
</ol>
</nav>
<main>
{body}
</main>
{scripts}
</body>
</html>
"""


def _html_block(block: _Block) -> str:
    esc = html.escape
    match block:
        case _Text(text):
            return f"<p>{esc(text)}</p>"
        case _Note(text):
            return f'<p class="note"><strong>How to read this.</strong> {esc(text)}</p>'
        case _List(items):
            return "<ul>\n" + "\n".join(f"<li>{esc(i)}</li>" for i in items) + "\n</ul>"
        case _Figure(name, _, alt_text):
            return (
                f'<figure id="figure-{name}" aria-label="{esc(alt_text)}"><div class="chart">'
                "</div><noscript>This figure is drawn by the script in this page: allow "
                "JavaScript, or write the report with --svg for figures/"
                f"{name}.svg.</noscript></figure>"
            )
        case _Table(frame, labels):
            return _html_table(frame, labels)
    raise TypeError(block)


def _html_table(frame: pd.DataFrame, labels: int) -> str:
    """A plain table; label columns left-aligned, number columns right-aligned (CSS classes)."""
    kinds = ["text" if i < labels else "num" for i in range(frame.shape[1])]

    def row(cells: Iterable[Any], tag: str) -> str:
        render = _html_cell if tag == "td" else html.escape
        return (
            "<tr>"
            + "".join(
                f'<{tag} class="{kind}">{render(str(cell))}</{tag}>'
                for kind, cell in zip(kinds, cells, strict=True)
            )
            + "</tr>"
        )

    body = "\n".join(row(values, "td") for values in frame.values)
    return (
        f'<div class="table-wrap"><table>\n<thead>{row(frame.columns, "th")}</thead>\n'
        f"<tbody>\n{body}\n</tbody>\n</table></div>"
    )


_CI_CELL = re.compile(r"^(\S+) (\[[^\]]+\])(.*)$")


def _html_cell(text: str) -> str:
    """Put a cell's interval on its own smaller line, so wide CI tables fit the page."""
    match = _CI_CELL.match(text)
    if match is None:
        return html.escape(text)
    value, interval, mark = (html.escape(part) for part in match.groups())
    return f'{value}{mark} <span class="ci">{interval}</span>'


_DRAW_FIGURES = """
(() => {
  const specs = JSON.parse(document.getElementById("figure-specs").textContent);
  const actions = { export: true, source: false, compiled: false, editor: false };
  // one figure at a time, so the page stays responsive while the later ones are drawn
  (async () => {
    for (const [name, spec] of Object.entries(specs)) {
      const target = document.getElementById(`figure-${name}`).querySelector(".chart");
      try {
        await vegaEmbed(target, spec, { renderer: "svg", actions });
        target.dataset.drawn = "true";
      } catch (error) {
        target.textContent = `This figure could not be drawn: ${error}`;
        target.dataset.drawn = "failed";
      }
    }
    document.body.dataset.figuresDrawn = "true";
  })();
})();
"""
"""Draws every figure into its placeholder; ``data-drawn`` on each and ``data-figures-drawn``
on the body say when it is done (for people's scripts and our tests)."""


_CSS = """
:root { color-scheme: light; }
body { font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; color: #212121; background: #fff; max-width: 1180px; margin: 0 auto;
  padding: 24px 32px 64px; }
h1 { font-size: 1.9em; margin: 0.2em 0 0.3em; }
h2 { font-size: 1.35em; margin: 2em 0 0.6em; padding-bottom: 0.2em; border-bottom: 1px solid #ddd; }
header p { color: #424242; max-width: 60em; }
nav { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 6px; padding: 4px 20px 8px;
  display: inline-block; }
nav h2 { font-size: 1em; margin: 0.8em 0 0.3em; border: none; }
nav ol { margin: 0; padding-left: 1.4em; }
a { color: #0b5cad; text-decoration: none; }
a:hover { text-decoration: underline; }
p.note { background: #fffbea; border-left: 4px solid #e6b800; padding: 8px 14px; max-width: 62em;
  color: #333; }
ul { padding-left: 1.4em; }
.table-wrap { overflow-x: auto; margin: 0.8em 0 1.2em; }
table { border-collapse: collapse; font-size: 13.5px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e5e5e5; white-space: nowrap; }
thead th { border-bottom: 2px solid #999; background: #fafafa; white-space: normal;
  vertical-align: bottom; min-width: 4em; }
tbody tr:nth-child(even) { background: #fbfbfb; }
.ci { display: block; color: #666; font-size: 0.9em; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.text, td.text { text-align: left; }
figure { margin: 1.2em 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figure .chart[data-drawn="failed"] { color: #b00020; }
"""
