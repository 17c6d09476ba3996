"""Audit: choose score files, run the audit engine on the workspace's ground truth and scene
labels, see the figures and tables, download the report."""

import io
import tempfile
import zipfile
from pathlib import Path

import streamlit as st
from app_state import current_workspace

from vadscene.audit import run_audit
from vadscene.audit.io.scores import ModelSpec, parse_scores_argument
from vadscene.audit.io.sources import (
    gather_inputs,
    gather_probe_inputs,
    read_model_list,
    read_probe_list,
)
from vadscene.audit.report import figures
from vadscene.audit.report.writer import bias_warnings, write_report
from vadscene.benchmark.ground_truth import GROUND_TRUTH_FORMATS
from vadscene.core.errors import VadsceneError

workspace = current_workspace()
st.title("Audit")
ground_truth = st.text_input(
    "Ground-truth file (server path inside the workspace or its configured folders; empty = "
    "the workspace's)",
    placeholder=str(workspace.ground_truth_path or "this workspace has none configured"),
    key="audit_ground_truth",
).strip()
configured = workspace.config.ground_truth
FORMATS = ("detect", *GROUND_TRUTH_FORMATS)
ENDS = ("exclusive", "inclusive")
format_column, end_column = st.columns(2)
ground_truth_format = format_column.selectbox(
    "Ground-truth format",
    FORMATS,
    index=FORMATS.index(configured.format) if configured and configured.format in FORMATS else 0,
    key="audit_ground_truth_format",
)
interval_end = end_column.radio(
    "Interval ends",
    ENDS,
    index=ENDS.index(configured.interval_end) if configured else 0,
    horizontal=True,
    help="exclusive: frames s ≤ f < e are anomalous; inclusive: s ≤ f ≤ e.",
    key="audit_interval_end",
)
st.caption(
    "Scene labels: this workspace's consensus values; frame counts: the ground truth's "
    "own, else the workspace's probed videos"
)

model_lists = sorted(p for p in workspace.root.glob("**/models.json") if p.is_file())
chosen_lists = st.multiselect(
    "Model lists found in the workspace",
    model_lists,
    default=model_lists,
    format_func=lambda p: str(p.relative_to(workspace.root)),
    key="audit_model_lists",
)
probe_lists = sorted(p for p in workspace.root.glob("**/probes.json") if p.is_file())
chosen_probes = st.multiselect(
    "Definition scores and features found in the workspace (probes.json)",
    probe_lists,
    default=probe_lists,
    format_func=lambda p: str(p.relative_to(workspace.root)),
    key="audit_probe_lists",
)
extra = st.text_area(
    "More models, one NAME=PATH[@FAMILY][:K] per line (server paths inside the workspace, "
    "relative to it or absolute: .npy folder, .npy, CSV; :K = scores per snippet of K frames)",
    key="audit_extra_models",
)
uploads = st.file_uploader(
    "Or upload score tables (CSV/TSV/Parquet: video, [frame,] score; the file name is the "
    "model name)",
    type=["csv", "tsv", "parquet"],
    accept_multiple_files=True,
    key="audit_uploads",
)
left, middle, right = st.columns(3)
snippet_repeat = left.number_input("Snippet repeat", 1, 64, 1, key="audit_snippet_repeat")
bootstrap = middle.number_input("Bootstrap replicates", 0, 10_000, 1000, 100, key="audit_bootstrap")
seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="audit_seed")


def _run(folder: Path) -> None:
    """One audit run; uploads are saved into this run's own ``folder``."""
    specs = [spec for path in chosen_lists for spec in read_model_list(path)]
    for line in (line.strip() for line in extra.splitlines() if line.strip()):
        spec = parse_scores_argument(line)
        where = f"model scores {spec.name}:"
        specs.append(spec._replace(path=workspace.server_path(str(spec.path), where)))
    for upload in uploads or []:
        saved = folder / Path(upload.name).name
        saved.write_bytes(upload.getvalue())
        specs.append(ModelSpec(saved.stem, saved))
    truth, models, scene = gather_inputs(
        # the workspace's file read with the page's format and interval-end controls
        ground_truth=workspace.server_path(ground_truth, "ground-truth file")
        if ground_truth
        else workspace.ground_truth_path,
        ground_truth_format=None if ground_truth_format == "detect" else ground_truth_format,
        interval_end=interval_end,
        models=specs,
        snippet_repeat=int(snippet_repeat),
        workspace=workspace.root,
    )
    listed = [read_probe_list(path) for path in chosen_probes]
    definition_models, classes, queries, features = gather_probe_inputs(
        truth,
        definition_scores=[s for entry in listed for s in entry["definition_scores"]],
        features=[s for entry in listed for s in entry["features"]],
        queries=next((entry["queries"] for entry in listed if "queries" in entry), None),
        events=next((entry["events"] for entry in listed if "events" in entry), None),
        snippet_repeat=int(snippet_repeat),
        feature_snippet_frames=next(
            (e["feature_snippet_frames"] for e in listed if "feature_snippet_frames" in e), 16
        ),
    )
    st.session_state["audit_result"] = run_audit(
        truth,
        models,
        scene,
        definition_scores=definition_models,
        classes=classes,
        queries=queries,
        features=features,
        n_bootstrap=int(bootstrap),
        seed=int(seed),
        progress=lambda step, done, total: bar.progress(
            done / total if total else 1.0, text=f"{step}: {done}/{total}"
        ),
    )


if st.button("Run audit", type="primary", key="audit_run"):
    bar = st.progress(0.0, text="Loading scores…")
    # Each run its own folder: two people uploading files of the same name never mix.
    with tempfile.TemporaryDirectory(prefix="vadscene-uploads-") as uploaded:
        try:
            _run(Path(uploaded))
        except VadsceneError as exc:
            st.session_state.pop("audit_result", None)  # no stale results under the error
            st.error(str(exc).replace(f"{uploaded}/", "uploaded "))
    bar.empty()

result = st.session_state.get("audit_result")
if result is None:
    st.stop()

summary = result.summary
st.write(
    f"**{summary['videos']} videos**, {summary['frames']:,} frames; "
    f"w = {100 * summary['within_pair_fraction']:.3f} % of pairs are within a video; "
    f"oracle video-constant AUROC {summary['oracle_video_constant_auroc']:.4f}."
)
for warning in bias_warnings(result):
    st.warning(warning)
if empty := result.conventions.get("empty_contrasts"):
    st.caption(f"Left out, no labelled video at either pole: {', '.join(empty)}")
for chart in (
    figures.granularity_forest_plot(result),
    figures.decomposition_bars(result),
    figures.bias_dot_plot(result),
    figures.bias_dot_plot(result, "leak_free"),
    figures.scene_pair_heatmap(result) if not result.scene_pairs.empty else None,
    figures.composition_chart(result),
    figures.d5_decomposition_chart(result),
    figures.definition_delta_chart(result),
    figures.readout_chart(result),
):
    if chart is not None:
        st.altair_chart(chart, width="content")
for name in (
    "metrics",
    "controls",
    "resolved",
    "bias",
    "scene_conditioned",
    "definition_probes",
    "definition_queries",
    "readout",
):
    table = getattr(result, name)
    if not table.empty:
        with st.expander(name.replace("_", " ").capitalize()):
            st.dataframe(table, hide_index=True)

with tempfile.TemporaryDirectory() as folder:
    written = write_report(result, Path(folder))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, path in written.items():
            bundle.write(path, name)
st.download_button(
    "Download the report (HTML, Markdown, JSON, CSV)",
    archive.getvalue(),
    "audit-report.zip",
    "application/zip",
    key="audit_download",
)
