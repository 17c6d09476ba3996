"""Measure: run the measurement, see each auto factor's distribution and threshold rule, and
preview how many videos change pole before applying a new rule."""

from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st
from app_state import current_workspace
from identity import current_user, require_lead

from vadscene.core.catalogue import THRESHOLD_RULES
from vadscene.core.errors import VadsceneError
from vadscene.measure.run import measure_workspace
from vadscene.measure.thresholds import apply_rule, preview_rule

workspace = current_workspace()
require_lead(current_user(), "measure videos and set threshold rules")
store = workspace.store
st.title("Measure")
st.caption(
    "Sharpness (mean Laplacian variance of the grayscale frame) and motion (mean absolute "
    "frame difference over normal frames) per video; cached, so only new or changed videos "
    "are decoded."
)

if st.button("Measure new and changed videos", key="measure_run", type="primary"):
    bar = st.progress(0.0, text="Starting…")

    def show(done: int, total: int, footage: float, current: str) -> None:
        bar.progress(
            done / total if total else 1.0,
            text=f"{done}/{total} videos · {footage / 3600:.2f} h of footage · {current}",
        )

    try:
        report = measure_workspace(workspace, progress=show)
    except VadsceneError as exc:
        st.error(str(exc))
    else:
        bar.empty()
        st.success(
            f"Measured {len(report.measured)} videos, reused {len(report.reused)}, "
            f"{len(report.failed)} failed."
        )
        if report.missing:
            st.warning(
                f"{len(report.missing)} videos have no file and were not measured (their stored "
                "measurements are kept):\n\n"
                + "\n".join(f"- {video}: {reason}" for video, reason in report.missing)
            )
        for change in report.rules:
            st.info(f"{change.factor}: {len(change.changed)} videos changed pole.")

failures = store.measurement_failures()
if failures:
    st.subheader("Videos that could not be measured")
    st.dataframe(
        pd.DataFrame(
            [(video, reason, str(workspace.video_path(video))) for video, reason in failures],
            columns=["video", "reason", "file"],
        ),
        hide_index=True,
    )

measurements = store.measurements()
in_force: dict[str, tuple[str, Sequence[float]]] = {
    factor: (rule, values) for factor, _s, rule, values, _at in store.thresholds()
}
for factor in workspace.catalogue.factors:
    auto = factor.auto
    if auto is None:
        continue
    statistic = auto.statistic
    values = pd.DataFrame(
        [
            {"video": v, statistic: stats[statistic].value}
            for v, stats in measurements.items()
            if statistic in stats
        ]
    )
    st.subheader(f"{factor.name} ({factor.key}) — {statistic}")
    if values.empty:
        st.info("Not measured yet.")
        continue
    rule, explicit = in_force.get(factor.key, (auto.rule, auto.thresholds))
    left, right = st.columns([1, 2])
    with left:
        chosen = st.radio(
            "Threshold rule",
            THRESHOLD_RULES,
            index=THRESHOLD_RULES.index(rule),
            key=f"measure_rule_{factor.key}",
            horizontal=True,
        )
        chosen_values: tuple[float, ...] = ()
        if chosen == "explicit":
            text = st.text_input(
                "Threshold value(s), comma-separated",
                value=", ".join(f"{t:g}" for t in explicit),
                key=f"measure_values_{factor.key}",
            )
            try:
                chosen_values = tuple(float(t) for t in text.split(",") if t.strip())
            except ValueError:
                st.error("Thresholds must be numbers, e.g. 120 or 0.5, 4.1")
        try:
            preview = preview_rule(store, factor.key, chosen, chosen_values)
        except VadsceneError as exc:
            st.error(str(exc))
            continue
        counts = ", ".join(f"{pole}: {n}" for pole, n in preview.counts().items())
        st.write(f"Thresholds {[round(t, 3) for t in preview.thresholds]} → {counts}")
        st.write(f"**{len(preview.changed)} videos change pole** with this rule.")
        if st.button(
            "Apply rule",
            key=f"measure_apply_{factor.key}",
            disabled=not preview.changed and chosen == rule,
        ):
            applied = apply_rule(store, factor.key, chosen, chosen_values)
            st.toast(f"{factor.key}: {len(applied.changed)} videos changed pole")
            st.rerun()
    with right:
        histogram = (
            alt.Chart(values)
            .mark_bar()
            .encode(
                x=alt.X(f"{statistic}:Q", bin=alt.Bin(maxbins=40), title=statistic),
                y=alt.Y("count():Q", title="videos"),
            )
        )
        lines = (
            alt.Chart(pd.DataFrame({"threshold": preview.thresholds}))
            .mark_rule(color="#d62728", strokeDash=[4, 3])
            .encode(x="threshold:Q")
        )
        st.altair_chart(histogram + lines, width="stretch")
