"""Report writer and figures, on hand-written AuditResult tables that follow result.py exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
from altair.vegalite.v6.schema import load_schema

from vadscene.audit.compute import result as result_module
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report import vega as vega_module
from vadscene.audit.report.writer import write_report

MODELS = ("RTFM", "UR-DMU", "VadCLIP")
FAMILY = {"RTFM": "I3D", "UR-DMU": "I3D", "VadCLIP": "CLIP"}
CONVENTIONS = {  # the shape engine.py writes
    "ground_truth": "annotations/Temporal_Anomaly_Annotation.txt",
    "format": "ucf-crime",
    "interval_end": "exclusive",
    "frame_counts": "counts file frame_counts.csv",
    "normal_category": "Normal",
    "bootstrap": {"replicates": 200, "seed": 7, "bias_margin": 0.05},
    "models": [
        {"name": "RTFM", "family": "I3D", "source": "scores/rtfm.npy", "notes": []},
        {"name": "UR-DMU", "family": "I3D", "source": "scores/urdmu.npy", "notes": []},
        {
            "name": "VadCLIP",
            "family": "CLIP",
            "source": "scores/vadclip.npy",
            "notes": ["snippet scores repeated x16"],
        },
    ],
    "scene_labels": None,
}
SUMMARY = {
    "videos": 6,
    "frames": 1200,
    "anomalous_frames": 240,
    "normal_frames": 960,
    "anomalous_videos": 3,  # written by engine.py, not (yet) listed in result.py
    "prevalence": 0.2,
    "mixed_videos": 3,
    "within_pair_fraction": 0.1471,
    "max_within_gain": 0.0736,
    "oracle_video_constant_auroc": 0.8906,
    "one_bit_auroc": 0.7865,
    "within_effective_videos": 2.3832,  # 33900² / (18900² + 10000² + 5000²) from composition
}
COLUMNS = {
    "composition": ["video", "category", "frames", "anomalous", "normal", "mixed"],
    "metrics": ["model", "family", "granularity", "value", "ci_low", "ci_high", "clustered_se"],
    "controls": [
        "model", "family", "micro", "micro_video_mean", "retention_mean", "retention_mean_note",
        "within_video_mean", "ap", "ap_video_mean", "ap_retention", "ap_retention_note",
        "prevalence", "obuchowski_se", "micro_permuted", "retention_permuted",
        "retention_permuted_note",
    ],
    "per_category": [
        "model", "category", "videos", "anomalous_frames", "normal_frames",
        "same_category_auroc", "category_vs_normal_auroc",
    ],
    "comparisons": [
        "model_a", "model_b", "family_a", "family_b", "scope", "granularity", "difference",
        "ci_low", "ci_high", "resolved",
    ],
    "resolved": ["granularity", "scope", "family", "resolved", "pairs"],
    "bias": [
        "model", "family", "factor", "positive", "negative", "primary", "role", "n_positive",
        "n_negative", "bias_auroc", "ci_low", "ci_high", "p_bias", "p_permutation", "p_holm",
        "significant", "supported", "anomalous_share_positive", "anomalous_share_negative",
        "n_positive_leak_free", "n_negative_leak_free", "bias_auroc_leak_free",
        "ci_low_leak_free", "ci_high_leak_free", "p_bias_leak_free", "p_permutation_leak_free",
        "p_holm_leak_free", "significant_leak_free", "supported_leak_free", "leakage_warning",
    ],
    "scene_pairs": ["model", "factor", "positive", "negative", "pair_type", "auroc", "weight"],
    "scene_conditioned": [
        "model", "family", "factor", "positive", "negative", "auroc_ref", "auroc_cond",
        "delta_scene",
    ],
}  # fmt: skip
# factor, positive, negative, primary, role, n_positive, n_negative
CONTRASTS = (
    ("color", "color", "grayscale", True, "scene", 4, 2),
    ("location", "residential", "commercial", True, "scene", 2, 3),
    ("activity", "single", "multiple", True, "control", 3, 3),
    ("location", "residential", "fuel-station", False, "scene", 2, 1),
)
METRICS = [
    ("RTFM", "I3D", "micro", 0.8412, 0.8120, 0.8690, 0.0290),
    ("RTFM", "I3D", "within", 0.6305, 0.5511, 0.7020, 0.0385),
    ("RTFM", "I3D", "cross", 0.8461, 0.8150, 0.8744, np.nan),
    ("RTFM", "I3D", "macro", 0.6950, 0.6011, 0.7802, 0.0460),
    ("RTFM", "I3D", "per_category", 0.7104, 0.6530, 0.7650, np.nan),
    ("RTFM", "I3D", "category_vs_normal", 0.8003, 0.7612, 0.8390, np.nan),
    ("UR-DMU", "I3D", "micro", 0.8630, 0.8301, 0.8912, 0.0281),
    ("UR-DMU", "I3D", "within", 0.7410, 0.6703, 0.8025, 0.0342),
    ("UR-DMU", "I3D", "cross", 0.8660, 0.8322, 0.8951, np.nan),
    ("UR-DMU", "I3D", "macro", 0.7512, 0.6800, 0.8217, 0.0392),
    ("UR-DMU", "I3D", "per_category", 0.7630, 0.7015, 0.8190, np.nan),
    ("UR-DMU", "I3D", "category_vs_normal", 0.8301, 0.7902, 0.8688, np.nan),
    ("VadCLIP", "CLIP", "micro", 0.8801, 0.8502, 0.9077, 0.0270),
    ("VadCLIP", "CLIP", "within", 0.5904, 0.5120, 0.6655, 0.0390),
    ("VadCLIP", "CLIP", "cross", 0.8852, 0.8560, 0.9120, np.nan),
    ("VadCLIP", "CLIP", "macro", 0.6420, 0.5533, 0.7290, 0.0450),
    ("VadCLIP", "CLIP", "per_category", 0.6981, 0.6402, 0.7560, np.nan),
    ("VadCLIP", "CLIP", "category_vs_normal", 0.8410, 0.8015, 0.8801, np.nan),
]
CONTROLS = [  # notes missing: every retention defined; R_perm = (micro_permuted − ½) / (micro − ½)
    ("RTFM", "I3D", 0.8412, 0.8350, 0.9815, np.nan, 0.5, 0.4120, 0.4010, 0.9482, np.nan, 0.2,
     0.0290, 0.8052, 0.8945, np.nan),
    ("UR-DMU", "I3D", 0.8630, 0.8555, 0.9793, np.nan, 0.5, 0.4533, 0.4390, 0.9442, np.nan, 0.2,
     0.0281, 0.8267, 0.9000, np.nan),
    ("VadCLIP", "CLIP", 0.8801, 0.8790, 0.9971, np.nan, 0.5, 0.4801, 0.4785, 0.9942, np.nan, 0.2,
     0.0270, 0.8453, 0.9084, np.nan),
]  # fmt: skip
PER_CATEGORY = [
    (model, category, 1, anomalous, normal, round(auc - shift, 4), round(auc - shift + 0.1, 4))
    for model, shift in (("RTFM", 0.0), ("UR-DMU", -0.03), ("VadCLIP", 0.05))
    for category, anomalous, normal, auc in (
        ("Abuse", 90, 210, 0.7012),
        ("Arson", 100, 100, 0.6550),
        ("Robbery", 50, 100, 0.7750),
    )
]
COMPARISONS = [
    ("RTFM", "UR-DMU", "I3D", "I3D", "within_family", "micro", -0.0218, -0.0501, 0.0052, False),
    ("RTFM", "VadCLIP", "I3D", "CLIP", "cross_family", "micro", -0.0389, -0.0710, -0.0101, True),
    ("UR-DMU", "VadCLIP", "I3D", "CLIP", "cross_family", "micro", -0.0171, -0.0460, 0.0110, False),
    ("RTFM", "UR-DMU", "I3D", "I3D", "within_family", "within", -0.1105, -0.1902, -0.0320, True),
    ("RTFM", "VadCLIP", "I3D", "CLIP", "cross_family", "within", 0.0401, -0.0380, 0.1150, False),
    ("UR-DMU", "VadCLIP", "I3D", "CLIP", "cross_family", "within", 0.1506, 0.0720, 0.2260, True),
]
RESOLVED = [
    ("micro", "all", "all", 1, 3),
    ("micro", "within_family", "within-family", 0, 1),
    ("micro", "cross_family", "cross-family", 1, 2),
    ("micro", "family", "I3D", 0, 1),
    ("within", "all", "all", 2, 3),
    ("within", "within_family", "within-family", 1, 1),
    ("within", "cross_family", "cross-family", 1, 2),
    ("within", "family", "I3D", 1, 1),
]
BIAS_AUROC = {"color": 0.31, "residential": 0.58, "single": 0.74}


def _bias_rows() -> list[tuple]:
    rows = []
    for i, model in enumerate(MODELS):
        for contrast in CONTRASTS:
            positive, primary = contrast[1], contrast[3]
            value = round(BIAS_AUROC[positive] + 0.04 * i - 0.02 * (not primary), 4)
            low, high = round(value - 0.12, 4), round(value + 0.11, 4)
            p_bias = round(min(1.0, abs(value - 0.5) * 4), 3)
            # population b: Normal videos only (half of each pole), closer to 0.5
            free = round(0.5 + (value - 0.5) / 2, 4)
            leak_free = (contrast[5] // 2, contrast[6] // 2, free, free - 0.2, free + 0.2)
            tests = (0.01, 0.03, True, False, 0.5, 0.25)  # p_perm, Holm, ✓, support, shares
            leak_free_tests = (0.2, 0.4, np.nan, False, False, False)
            row = (model, FAMILY[model], *contrast, value, low, high, p_bias, *tests)
            rows.append((*row, *leak_free, *leak_free_tests))
    return rows


def _scene_pair_rows() -> list[tuple]:
    weights = {"++": 0.4, "--": 0.1, "+-": 0.3, "-+": 0.2}
    shifts = {"++": 0.0, "--": -0.05, "+-": 0.08, "-+": -0.12}
    rows = []
    for i, model in enumerate(MODELS):
        for factor, positive, negative, *_ in CONTRASTS:
            for pair_type, shift in shifts.items():
                auroc = round(0.80 + shift - 0.03 * i, 4)
                rows.append(
                    (model, factor, positive, negative, pair_type, auroc, weights[pair_type])
                )
    return rows


def _scene_conditioned_rows() -> list[tuple]:
    rows = []
    for i, model in enumerate(MODELS):
        for factor, positive, negative, *_ in CONTRASTS:
            ref, cond = round(0.796 - 0.03 * i, 4), round(0.775 - 0.03 * i, 4)
            rows.append(
                (model, FAMILY[model], factor, positive, negative, ref, cond, round(ref - cond, 4))
            )
    return rows


def _table(name: str, rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS[name])


@pytest.fixture(scope="module")
def scored() -> AuditResult:
    """Three models (two I3D, one CLIP), four contrasts of three factors (one control)."""
    return AuditResult(
        conventions=CONVENTIONS,
        summary=SUMMARY,
        composition=_composition(),
        metrics=_table("metrics", METRICS),
        controls=_table("controls", CONTROLS),
        per_category=_table("per_category", PER_CATEGORY),
        comparisons=_table("comparisons", COMPARISONS),
        resolved=_table("resolved", RESOLVED),
        bias=_table("bias", _bias_rows()),
        scene_pairs=_table("scene_pairs", _scene_pair_rows()),
        scene_conditioned=_table("scene_conditioned", _scene_conditioned_rows()),
        models=MODELS,
    )


@pytest.fixture(scope="module")
def gt_only() -> AuditResult:
    """A ground-truth-only run: composition and summary, every score table empty."""
    empty = {name: _table(name, []) for name in COLUMNS if name != "composition"}
    conventions = {k: v for k, v in CONVENTIONS.items() if k != "models"}
    return AuditResult(
        conventions=conventions, summary=SUMMARY, composition=_composition(), **empty
    )


def _composition() -> pd.DataFrame:
    return _table(
        "composition",
        [
            ("Abuse001", "Abuse", 300, 90, 210, True),
            ("Arson002", "Arson", 200, 100, 100, True),
            ("Robbery003", "Robbery", 150, 50, 100, True),
            ("Normal_Videos_001", "Normal", 250, 0, 250, False),
            ("Normal_Videos_002", "Normal", 180, 0, 180, False),
            ("Normal_Videos_003", "Normal", 120, 0, 120, False),
        ],
    )


def _documented_columns(name: str) -> list[str]:
    """A table's columns as listed in result.py's module docstring (annotations removed)."""
    block = re.search(rf"``{name}`` —[^\n]*\n((?:    [^\n]*\n)+)", result_module.__doc__)
    assert block, f"result.py no longer documents table {name!r}"
    listed = re.sub(r"\([^)]*\)|∈ \{[^}]*\}|∈ \w+", "", block[1])
    return [column.strip() for column in listed.split(",")]


@pytest.mark.parametrize("name", AuditResult.TABLES)
def test_fixture_tables_follow_the_documented_columns(name: str):
    """Guards the hand-written fixtures against drift from the engine's documented contract."""
    assert COLUMNS[name] == _documented_columns(name)


# --- report files -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report(scored: AuditResult, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The scored run's report, written once."""
    return write_report(scored, tmp_path_factory.mktemp("report") / "out")


@pytest.fixture(scope="module")
def svg_report(scored: AuditResult, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The scored run's report with SVG figures, written once (vl-convert is the slow part)."""
    return write_report(scored, tmp_path_factory.mktemp("report") / "out", svg=True)


def test_writes_every_file_and_reports_progress(scored: AuditResult, tmp_path: Path):
    steps: list[str] = []
    written = write_report(scored, tmp_path / "out", progress=steps.append)

    tables = {f"{name}.csv" for name in AuditResult.TABLES}
    assert tables | {"report.json", "report.md", "report.html"} <= set(written)
    assert steps == ["json", "tables", "figures", "markdown", "html"]
    for name, path in written.items():
        assert path == tmp_path / "out" / name and path.stat().st_size > 0
    on_disk = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.*")}
    assert on_disk == set(written)  # no temp files left behind


def test_rewriting_a_report_keeps_its_unchanged_figures(
    scored: AuditResult, gt_only: AuditResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A figure is rendered again only when its spec changed or its SVG was edited; kept
    figures read exactly as rendered, and the HTML is the same either way."""
    rendered: list[dict] = []
    render = vega_module.vl_convert.vegalite_to_svg

    def counting(spec: dict, **options: object) -> str:
        rendered.append(spec)
        return render(spec, **options)

    monkeypatch.setattr(vega_module.vl_convert, "vegalite_to_svg", counting)
    out = tmp_path / "out"
    first = write_report(scored, out, svg=True)
    figures_written = sorted(n for n in first if n.endswith(".svg"))
    before = {name: first[name].read_text() for name in [*figures_written, "report.html"]}
    assert len(rendered) == len(figures_written)

    rendered.clear()
    again = write_report(scored, out, svg=True)
    assert rendered == []
    assert {name: again[name].read_text() for name in before} == before

    edited = again[figures_written[0]]
    edited.write_text(edited.read_text().replace("<svg", "<svg data-edited='1'", 1))
    again = write_report(scored, out, svg=True)
    assert (
        len(rendered) == 1 and again[figures_written[0]].read_text() == before[figures_written[0]]
    )

    rendered.clear()
    other = write_report(gt_only, out, svg=True)  # the same ground truth: its figure is kept
    assert rendered == []
    assert [n for n in other if n.endswith(".svg")] == ["figures/composition.svg"]
    write_report(scored, out, svg=True)  # the figures the last report lacked are rendered
    assert len(rendered) == len(figures_written) - 1


def test_without_svg_no_figure_is_rendered_offline(
    scored: AuditResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    def renderer_called(spec: dict, **options: object) -> str:
        raise AssertionError("vl-convert rendered a figure")

    monkeypatch.setattr(vega_module.vl_convert, "vegalite_to_svg", renderer_called)
    written = write_report(scored, tmp_path / "out")
    assert not [name for name in written if name.endswith(".svg")]
    assert len([name for name in written if name.endswith(".vl.json")]) == 5 + len(MODELS)


def test_json_equals_the_result(scored: AuditResult, report: dict[str, Path]):
    assert json.loads(report["report.json"].read_text()) == scored.to_dict()


@pytest.mark.parametrize("name", AuditResult.TABLES)
def test_each_csv_round_trips(scored: AuditResult, report: dict[str, Path], name: str):
    table = getattr(scored, name)
    pd.testing.assert_frame_equal(pd.read_csv(report[f"{name}.csv"]), table, check_exact=True)


def test_html_is_self_contained_with_every_figure_spec_inline(report: dict[str, Path]):
    written = report
    page = written["report.html"].read_text()
    spec_files = {
        name.removeprefix("figures/").removesuffix(".vl.json"): json.loads(path.read_text())
        for name, path in written.items()
        if name.endswith(".vl.json")
    }

    # composition, forest, decomposition, bias (both populations), one heatmap per model
    assert len(spec_files) == 5 + len(MODELS)
    (inline,) = re.findall(
        r'<script type="application/json" id="figure-specs">(.*?)</script>', page, re.S
    )
    assert json.loads(inline) == spec_files  # "<\/" in the page reads back as "</"
    for name in spec_files:
        assert page.count(f'<figure id="figure-{name}"') == 1
    # every script is inline (the Vega bundle included), and nothing outside the scripts
    # points at the network
    assert not re.search(r"<script[^>]*\bsrc=", page)
    markup = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)
    assert not re.search(r"<(link|img|iframe)\b", markup)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", markup)
    assert "@import" not in markup and "url(http" not in markup
    ids = re.findall(r'\bid="([^"]+)"', markup)
    assert len(ids) == len(set(ids))


def test_every_figure_spec_is_valid_vega_lite(report: dict[str, Path]):
    """The report skips Altair's validation for speed; the specs are checked here instead."""
    schema = load_schema()
    names = [name for name in report if name.endswith(".vl.json")]
    assert names
    for name in names:
        jsonschema.validate(json.loads(report[name].read_text()), schema)


def test_each_model_has_its_own_valid_heatmap_spec(scored: AuditResult):
    """The report's heatmaps, one per model: valid Vega-Lite, each the model's own heatmap,
    titled with it and drawing its rows only."""
    schema = load_schema()
    specs = figures.scene_pair_heatmap_specs(scored)
    assert list(specs) == list(MODELS)
    for model, spec in specs.items():
        jsonschema.validate(spec, schema)
        assert spec == figures.scene_pair_heatmap(scored, model), model
        assert spec["title"]["text"] == f"{model}: AUROC by scene pair type"
        assert len(spec["data"]["values"]) == (scored.scene_pairs["model"] == model).sum()


CHARTS = (
    figures.bias_dot_plot,
    lambda result: figures.bias_dot_plot(result, "leak_free"),
    figures.granularity_forest_plot,
    figures.decomposition_bars,
    figures.scene_pair_heatmap,
    figures.composition_chart,
    figures.d5_decomposition_chart,
    figures.definition_delta_chart,
    figures.readout_chart,
    figures.interval_ap_chart,
    figures.support_chart,
)
"""Every public chart function, as the report and the app call them."""


def test_every_figure_dict_is_valid_vega_lite(scored: AuditResult, gt_only: AuditResult):
    """What the app draws (the figures' dicts, not the report's files) is valid Vega-Lite too,
    and strict JSON: a NaN would make the browser refuse the whole spec."""
    schema = load_schema()
    specs = [spec for result in (scored, gt_only) for build in CHARTS if (spec := build(result))]
    assert len(specs) == 8  # scored: 7 (no probes, no interval AP); gt_only: the composition
    for spec in specs:
        jsonschema.validate(spec, schema)
        json.dumps(spec, allow_nan=False)


def test_html_has_contents_and_formatted_metrics(report: dict[str, Path]):
    page = report["report.html"].read_text()
    text = re.sub(r"<[^>]+>", "", page)

    for model, _family, _g, value, low, high, _se in METRICS:
        assert f"{value:.4f} [{low:.4f}, {high:.4f}]" in text, model
    assert '0.8412 <span class="ci">[0.8120, 0.8690]</span>' in page  # interval on its own line
    for anchor in re.findall(r'<a href="#([^"]+)">', page):
        assert f'<section id="{anchor}">' in page
    assert "<h2>Contents</h2>" in page


def test_markdown_states_conventions_and_every_section(report: dict[str, Path]):
    text = report["report.md"].read_text()

    for value in ("Temporal_Anomaly_Annotation.txt", "exclusive", "frame_counts.csv"):
        assert value in text
    assert "Bootstrap replicates (B): 200" in text and "Bootstrap seed: 7" in text
    assert "Scene labels: n/a" in text and "Normal category: Normal" in text
    assert "VadCLIP — family CLIP, scores scores/vadclip.npy; notes: snippet scores" in text
    assert "14.7 %" in text  # w
    assert "0.8412 [0.8120, 0.8690]" in text
    assert "| RTFM | UR-DMU | -0.0218 [-0.0501, +0.0052] | -0.1105 [-0.1902, -0.0320] ✓ |" in text
    assert "Δscene" in text and "p_bias" in text and "R_mean" in text
    assert text.count("How to read this.") == 8  # every section but the inputs
    for section in (
        "Benchmark composition",
        "AUROC at each granularity",
        "Video-level controls",
        "Per-category AUROC",
        "Paired model comparisons",
        "Clustered standard errors and model covariance",
        "Scene bias on normal footage",
        "Scene-conditioned AUROC",
    ):
        assert f"\n## {section}\n" in text
    assert (
        "*Figure: bias-AUC per scene factor and model* — drawn in "
        "[report.html](report.html#figure-bias_dot_plot)" in text
    )


def test_markdown_shows_the_svg_figures_when_asked(svg_report: dict[str, Path]):
    text = svg_report["report.md"].read_text()
    svg_files = [name for name in svg_report if name.endswith(".svg")]
    assert len(svg_files) == 5 + len(MODELS)
    assert "![bias-AUC per scene factor and model](figures/bias_dot_plot.svg)" in text
    for name in svg_files:
        assert f"]({name})" in text
        assert svg_report[name].read_text().split("\n", 1)[1].startswith("<svg")


def test_ground_truth_only_report(gt_only: AuditResult, tmp_path: Path):
    written = write_report(gt_only, tmp_path)
    text = written["report.md"].read_text()
    page = written["report.html"].read_text()

    csvs = {name for name in written if name.endswith(".csv")}
    assert csvs == {"composition.csv"}
    assert "No model scores were given" in text
    assert "## Benchmark composition" in text and "exclusive" in text
    for absent in ("granularity", "controls", "Paired", "Scene bias", "Scene-conditioned"):
        assert f"## {absent}" not in text
    assert page.count('<figure id="figure-') == 1
    assert json.loads(written["report.json"].read_text()) == gt_only.to_dict()


def test_comparisons_are_left_out_when_no_pair_was_compared(gt_only: AuditResult, tmp_path: Path):
    # what the engine writes for fewer than two models: counts of zero pairs
    zero_pairs = _table("resolved", [("micro", "all", "all", 0, 0), ("within", "all", "all", 0, 0)])
    result = AuditResult(
        **{name: getattr(gt_only, name) for name in AuditResult.TABLES if name != "resolved"},
        resolved=zero_pairs,
        conventions=gt_only.conventions,
        summary=gt_only.summary,
    )
    text = write_report(result, tmp_path)["report.md"].read_text()
    assert "Paired model comparisons" not in text


def test_numpy_scalars_in_the_summary_are_formatted(gt_only: AuditResult, tmp_path: Path):
    numpy_summary = {
        k: np.float64(v) if isinstance(v, float) else np.int64(v) for k, v in SUMMARY.items()
    }
    result = AuditResult(
        **{name: getattr(gt_only, name) for name in AuditResult.TABLES},
        conventions=gt_only.conventions,
        summary=numpy_summary,
    )
    text = write_report(result, tmp_path)["report.md"].read_text()
    assert "| Frames | 1,200 |" in text and "| Within-video pair fraction w | 14.7 % |" in text
    assert "| n/a |" not in text


def test_sections_follow_the_tables_present(scored: AuditResult, tmp_path: Path):
    # a run without a scene catalogue: score tables present, scene tables empty
    no_scene = AuditResult(
        **{
            **{name: getattr(scored, name) for name in AuditResult.TABLES},
            "bias": _table("bias", []),
            "scene_pairs": _table("scene_pairs", []),
            "scene_conditioned": _table("scene_conditioned", []),
        },
        conventions=scored.conventions,
        summary=scored.summary,
        models=scored.models,
    )
    text = write_report(no_scene, tmp_path)["report.md"].read_text()
    assert "## AUROC at each granularity" in text
    assert "## Scene bias" not in text and "## Scene-conditioned" not in text


# --- figures ----------------------------------------------------------------------------------


def _layers(spec: dict) -> list[dict]:
    """Every unit spec inside a (possibly faceted, nested) layer spec."""
    if "layer" in spec:
        return [unit for layer in spec["layer"] for unit in _layers(layer)]
    if "spec" in spec:
        return _layers(spec["spec"])
    return [spec]


def _mark(unit: dict) -> str:
    mark = unit["mark"]
    return mark["type"] if isinstance(mark, dict) else mark


def test_bias_dot_plot_encodings(scored: AuditResult):
    spec = figures.bias_dot_plot(scored)
    units = _layers(spec)

    band = next(u for u in units if _mark(u) == "rect")
    assert band["encoding"]["x"]["datum"] == 0.45 and band["encoding"]["x2"]["datum"] == 0.55
    chance = next(u for u in units if _mark(u) == "rule" and "datum" in u["encoding"]["x"])
    assert chance["encoding"]["x"]["datum"] == 0.5
    point = next(u for u in units if _mark(u) == "point")
    enc = point["encoding"]
    assert enc["x"]["field"] == "bias_auroc" and enc["x"]["scale"]["domain"] == [0, 1]
    assert enc["color"]["field"] == "model"
    assert enc["color"]["scale"]["domain"] == list(MODELS)
    assert enc["shape"]["field"] == "role"
    # primary contrasts first, the secondary one last
    assert enc["y"]["sort"] == [
        "color: color vs grayscale",
        "location: residential vs commercial",
        "activity: single vs multiple",
        "location: residential vs fuel-station",
    ]
    ci = next(u for u in units if _mark(u) == "rule" and u["encoding"]["x"].get("field"))
    assert ci["encoding"]["x"]["field"] == "ci_low" and ci["encoding"]["x2"]["field"] == "ci_high"


def test_model_colours_are_shared_across_figures(scored: AuditResult):
    for build in (
        figures.bias_dot_plot,
        figures.granularity_forest_plot,
        figures.decomposition_bars,
    ):
        colours = [
            u["encoding"]["color"]
            for u in _layers(build(scored))
            if "color" in u.get("encoding", {})
        ]
        assert colours and all(c["scale"]["domain"] == list(MODELS) for c in colours), build


def test_forest_plot_has_a_panel_per_granularity(scored: AuditResult):
    spec = figures.granularity_forest_plot(scored)
    assert spec["facet"]["field"] == "panel"
    assert spec["facet"]["sort"] == list(figures.GRANULARITY_LABELS.values())
    point = next(u for u in _layers(spec) if _mark(u) == "point")
    assert point["encoding"]["y"]["field"] == "model"
    assert point["encoding"]["x"]["scale"]["domain"][0] <= 0.45


def test_decomposition_bars_title_states_w(scored: AuditResult):
    spec = figures.decomposition_bars(scored)
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "w = 14.7 % of anomalous–normal pairs are within-video" in subtitle
    assert "w/2 = 0.0736" in subtitle
    assert spec["facet"]["column"]["sort"] == [
        figures.GRANULARITY_LABELS[g] for g in ("micro", "within", "cross")
    ]


def test_scene_pair_heatmap_defaults_to_first_model(scored: AuditResult):
    spec = figures.scene_pair_heatmap(scored)
    assert spec["title"]["text"].startswith("RTFM")
    rect = next(u for u in _layers(spec) if _mark(u) == "rect")
    assert rect["encoding"]["x"]["sort"] == ["⊕⊕", "⊖⊖", "⊕⊖", "⊖⊕"]
    assert rect["encoding"]["color"]["scale"]["domainMid"] == 0.5
    other = figures.scene_pair_heatmap(scored, "VadCLIP")
    assert other["title"]["text"].startswith("VadCLIP")
    with pytest.raises(ValueError, match="Unknown"):
        figures.scene_pair_heatmap(scored, "Unknown")


def test_composition_chart_sorts_videos_by_anomalous_fraction(scored: AuditResult):
    spec = figures.composition_chart(scored)
    assert spec["encoding"]["x"]["sort"][:3] == ["Arson002", "Robbery003", "Abuse001"]
    assert spec["encoding"]["y"]["stack"] == "zero"
    assert "3 of 6 videos" in spec["title"]["subtitle"][0]


@pytest.mark.parametrize(
    "build",
    [
        figures.bias_dot_plot,
        figures.granularity_forest_plot,
        figures.decomposition_bars,
        figures.scene_pair_heatmap,
    ],
)
def test_figures_of_empty_tables_are_none(gt_only: AuditResult, build):
    assert build(gt_only) is None


def test_composition_chart_of_empty_composition_is_none(gt_only: AuditResult):
    empty = AuditResult(
        **{name: getattr(gt_only, name) for name in AuditResult.TABLES if name != "composition"},
        composition=_table("composition", []),
        conventions={},
        summary={},
    )
    assert figures.composition_chart(empty) is None
    assert figures.composition_chart(gt_only) is not None
