"""Audit: choose score files, run the audit engine on the workspace's ground truth and scene
labels, see the figures and tables, download the report.

The page describes its run as an :class:`~vadscene.audit.request.AuditRequest`, as
``vadscene audit`` does, and offers the same options; paths typed here, and those the chosen
models and probes files list, are server paths, read only inside the workspace
(:meth:`~vadscene.store.workspace.Workspace.server_path`; the lists' through the request's
``confine_to``).
"""

import io
import tempfile
import zipfile
from pathlib import Path

import streamlit as st
from app_state import current_workspace

from vadscene.audit.compute.intervals import EVENT_RULES
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.compute.uncertainty import CATEGORY_BOOTSTRAPS
from vadscene.audit.io.scores import ModelSpec, parse_scores_argument
from vadscene.audit.io.sources import INTERVAL_ENDS
from vadscene.audit.protocols import PROTOCOLS
from vadscene.audit.report import figures
from vadscene.audit.report.summary import summary_line
from vadscene.audit.report.writer import bias_warnings
from vadscene.audit.request import AuditRequest, prepare, write_outputs
from vadscene.benchmark.ground_truth import GROUND_TRUTH_FORMATS, NORMAL_WITH_ANOMALY
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
format_column, end_column = st.columns(2)
ground_truth_format = format_column.selectbox(
    "Ground-truth format",
    FORMATS,
    index=FORMATS.index(configured.format) if configured and configured.format in FORMATS else 0,
    key="audit_ground_truth_format",
)
interval_end = end_column.radio(
    "Interval ends",
    INTERVAL_ENDS,
    index=INTERVAL_ENDS.index(configured.interval_end) if configured else 0,
    horizontal=True,
    help="exclusive: frames s ≤ f < e are anomalous; inclusive: s ≤ f ≤ e.",
    key="audit_interval_end",
)
st.caption(
    "Scene labels: this workspace's consensus values; frame counts: the ground truth's "
    "own, else the workspace's probed videos (unless given under More options)"
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
protocol = st.selectbox(
    "Protocol: one paper's conventions (docs/papers.md)",
    ("none", *PROTOCOLS),
    help="look-inside: inclusive interval ends, interval AP by the VadCLIP rule; "
    "scene-bias: B = 1000, unstratified per-category bootstrap. A setting changed from its "
    "default on this page wins over the protocol.",
    key="audit_protocol",
)
left, middle, right = st.columns(3)
snippet_repeat = left.number_input("Snippet repeat", 1, 64, 1, key="audit_snippet_repeat")
bootstrap = middle.number_input("Bootstrap replicates", 0, 10_000, 1000, 100, key="audit_bootstrap")
seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="audit_seed")

with st.expander("More options (those of `vadscene audit`)"):
    st.caption(
        "Server paths, inside the workspace or its configured folders, relative to it or "
        "absolute; empty = not given. The report is offered as a download below rather than "
        "written to a folder (--out), and the workspace is the one this app serves "
        "(--workspace)."
    )
    frame_counts = st.text_input(
        "Frame counts file (id count per line), when the ground truth has no counts",
        key="audit_frame_counts",
    )
    video_order = st.text_input(
        "Video list giving the order of a concatenated .npy score file", key="audit_video_order"
    )
    release_column, labels_column, catalogue_column = st.columns(3)
    release = release_column.text_input("Scene labels from a release file", key="audit_release")
    labels = labels_column.text_input(
        "Scene labels from a table (CSV/TSV/Parquet)",
        help="Long (video, factor, value), wide (a video column and one column per factor), "
        "or an `export --csv` file.",
        key="audit_labels",
    )
    catalogue = catalogue_column.text_input(
        "Catalogue the label table is checked against (empty = UCF-Crime's)",
        key="audit_catalogue",
    )
    definition_scores = st.text_area(
        "Definition scores, one NAME=PATH[@FAMILY] per line: a table video, frame, "
        "definition, score or a folder of (T × D) .npy with definitions.txt (with those of "
        "the probes.json chosen above)",
        key="audit_definition_scores",
    )
    events_column, queries_column = st.columns(2)
    events = events_column.text_input(
        "Events table video, start, end, class (default: each video's category)",
        key="audit_events",
    )
    queries = queries_column.text_input(
        'D@5 queries: JSON list of {"definition", "classes"}', key="audit_queries"
    )
    features = st.text_area(
        "Features, one NAME=PATH[@FAMILY] per line: a folder of per-video (snippets × d) .npy "
        "(with those of the probes.json chosen above)",
        key="audit_features",
    )
    feature_snippet_frames = st.number_input(
        "Frames per feature snippet (0 = the probes.json's, else 16)",
        0,
        4096,
        0,
        key="audit_feature_snippet_frames",
    )
    soft_labels = st.text_input(
        "Soft frame labels in [0, 1] (table video, frame, label): adds each model's Prob-AUC",
        key="audit_soft_labels",
    )
    ap_column, latex_column, svg_column = st.columns(3)
    interval_ap = ap_column.checkbox(
        "Interval AP",
        help="By the released VadCLIP rule (original, video-mean, whole-video intervals; "
        "tIoU 0.1–0.9; all and anomaly-containing videos; class-wise mAP with definition "
        "scores).",
        key="audit_interval_ap",
    )
    events_rule_column, normal_rule_column = st.columns(2)
    interval_ap_events = events_rule_column.selectbox(
        "Interval AP events",
        EVENT_RULES,
        help="vadclip: each annotated segment, end-exclusive, kept apart (the released VadCLIP "
        "code); merged: the runs of frame labels.",
        key="audit_interval_ap_events",
    )
    normal_with_anomaly = normal_rule_column.selectbox(
        "A Normal video with anomalous frames",
        NORMAL_WITH_ANOMALY,
        help="error: refuse the ground truth, naming the videos; anomalous: count them as "
        "anomalous videos (listed in the conventions).",
        key="audit_normal_with_anomaly",
    )
    category_bootstrap = st.selectbox(
        "Per-category bootstrap",
        CATEGORY_BOOTSTRAPS,
        help="stratified: replicates resample videos within each category, so every category "
        "is in every replicate; unstratified: the shared video resamples (a replicate may miss "
        "a small category and average the others).",
        key="audit_category_bootstrap",
    )
    latex = latex_column.checkbox(
        "LaTeX tables in the report",
        help="Booktabs tables (metrics, bias, resolved pairs) under latex/ in the download.",
        key="audit_latex",
    )
    svg = svg_column.checkbox(
        "SVG figures in the report",
        help="Every figure rendered to figures/NAME.svg and shown in report.md; the page and "
        "report.html draw them either way.",
        key="audit_svg",
    )


def _path(text: str, what: str) -> Path | None:
    """A typed server path, refused outside the workspace; ``None`` when left empty."""
    return workspace.server_path(text, what) if text.strip() else None


def _specs(text: str, what: str) -> tuple[ModelSpec, ...]:
    """The NAME=PATH[@FAMILY][:K] lines of ``text``, their paths as server paths."""
    specs = []
    for line in (line.strip() for line in text.splitlines() if line.strip()):
        spec = parse_scores_argument(line)
        specs.append(
            spec._replace(path=workspace.server_path(str(spec.path), f"{what} {spec.name}:"))
        )
    return tuple(specs)


def _request(folder: Path) -> AuditRequest:
    """This page's run as a request; uploads are saved into this run's own ``folder``."""
    typed = _specs(extra, "model scores")
    uploaded = []
    for upload in uploads or []:
        saved = folder / Path(upload.name).name
        saved.write_bytes(upload.getvalue())
        uploaded.append(ModelSpec(saved.stem, saved))
    return AuditRequest(
        # the workspace's file read with the page's format and interval-end controls
        ground_truth=_path(ground_truth, "ground-truth file") or workspace.ground_truth_path,
        ground_truth_format=None if ground_truth_format == "detect" else ground_truth_format,
        interval_end=interval_end,
        frame_counts=_path(frame_counts, "frame counts file"),
        workspace=workspace.root,
        scores=(*typed, *uploaded),
        model_lists=tuple(chosen_lists),
        snippet_repeat=int(snippet_repeat),
        video_order=_path(video_order, "video order file"),
        release=_path(release, "release file"),
        labels=_path(labels, "label table"),
        catalogue=_path(catalogue, "catalogue file"),
        probe_lists=tuple(chosen_probes),
        definition_scores=_specs(definition_scores, "definition scores"),
        events=_path(events, "events table"),
        queries=_path(queries, "queries file"),
        features=_specs(features, "features"),
        feature_snippet_frames=int(feature_snippet_frames) or None,
        soft_labels=_path(soft_labels, "soft labels file"),
        bootstrap=int(bootstrap),
        seed=int(seed),
        interval_ap=interval_ap,
        interval_ap_events=interval_ap_events,
        normal_with_anomaly=normal_with_anomaly,
        category_bootstrap=category_bootstrap,
        latex=latex,
        svg=svg,
        confine_to=workspace.root,
        protocol=None if protocol == "none" else protocol,
    )


def _report_archive(request: AuditRequest, result: AuditResult) -> bytes:
    """The report files the request asks for, zipped for the download."""
    with tempfile.TemporaryDirectory() as folder:
        written = write_outputs(result, Path(folder), request)
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name, path in written.items():
                bundle.write(path, name)
    return archive.getvalue()


if st.button("Run audit", type="primary", key="audit_run"):
    bar = st.progress(0.0, text="Loading scores…")

    def _show(step: str, done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"{step}: {done}/{total}")

    # Each run its own folder: two people uploading files of the same name never mix.
    with tempfile.TemporaryDirectory(prefix="vadscene-uploads-") as uploaded:
        try:
            request = _request(Path(uploaded))
            audited = prepare(request).run(progress=_show)
            st.session_state["audit_report"] = _report_archive(request, audited)
            st.session_state["audit_result"] = audited
        except VadsceneError as exc:
            # no stale results under the error
            st.session_state.pop("audit_result", None)
            st.session_state.pop("audit_report", None)
            st.error(str(exc).replace(f"{uploaded}/", "uploaded "))
    bar.empty()

result = st.session_state.get("audit_result")
if result is None:
    st.stop()

st.write(summary_line(result))
if stated := result.conventions.get("protocol"):
    st.caption(
        f"Protocol {stated['name']} ({stated['paper']}): set by it "
        f"{stated['settings_from_it']}; given on this page {stated['settings_given_explicitly']}"
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
    if chart is not None:  # a Vega-Lite spec (the report's figures), drawn at its own size
        st.vega_lite_chart(spec=chart, width="content")
for name in (
    "metrics",
    "controls",
    "retention_summary",
    "video_level",
    "resolved",
    "comparisons",
    "covariance",
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
for title, table in (
    ("Further metrics (AUCA; interval AP when asked for)", result.further),
    ("Interval AP per population, prediction and tIoU", result.interval_ap),
    ("Class-wise interval mAP (definition scores)", result.class_wise_map),
    ("Prob-AUC (soft labels)", result.prob_auc),
):
    if not table.empty:
        with st.expander(title):
            st.dataframe(table, hide_index=True)

st.download_button(
    "Download the report (HTML, Markdown, JSON, CSV)",
    st.session_state["audit_report"],
    "audit-report.zip",
    "application/zip",
    key="audit_download",
)
