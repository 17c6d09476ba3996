"""The report's probe sections: definition following and the representation readout.

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the tables it reads are empty.
"""

from __future__ import annotations

import pandas as pd

from vadscene.audit.compute.definitions import PROBES
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import Block, Figure, Note, Section, Table, Text
from vadscene.audit.report.formatting import ci, count, num


def definition_section(result: AuditResult) -> Section | None:
    """Section "Definition following": the D@5 and DC probes per model, query and class."""
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
                    ci(*auroc.loc[(m, name), ["value", "ci_low", "ci_high"]], signed="Δ" in name)
                    for m in models
                ]
                for name in names
            },
            **{f"{name} AP": [num(ap.at[(m, name), "value"]) for m in models] for name in names},
        }
    )
    queries = result.definition_queries
    query_table = pd.DataFrame(
        {
            "model": queries["model"],
            "definition": queries["definition"],
            "classes Γ": queries["classes"],
            "ω": queries["omega"].map(num),
            "D@5": queries["d5_auroc"].map(num),
            "D@5ᴺ": queries["d5_normal_auroc"].map(num),
            "D@5ˣ": queries["d5_excluded_auroc"].map(num),
            "D@5 − ω·D@5ᴺ − (1−ω)·D@5ˣ": queries["identity_gap"].map(
                lambda v: f"{v:.1e}" if figures.is_finite_number(v) else "n/a"
            ),
            "D@5 AP": queries["d5_ap"].map(num),
        }
    )
    classes = result.definition_classes
    class_table = pd.DataFrame(
        {
            "model": classes["model"],
            "class": classes["class"],
            "DC-Disc": classes["disc_auroc"].map(num),
            "matching": classes["det_matching_auroc"].map(num),
            "other definitions": classes["det_other_auroc"].map(num),
            "DC-DetΔ": classes["det_delta_auroc"].map(lambda v: num(v, signed=True)),
        }
    )
    blocks: list[Block] = [
        Figure(name, chart, alt_text)
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
        Table(table, labels=1),
        Note(
            "Each model scored every frame once per definition. D@5 ranks the queried classes' "
            "frames against all other frames; it splits exactly into D@5ᴺ (against normal "
            "frames) and D@5ˣ (against anomalies of classes the definition excludes) weighted "
            "by ω, the normal share of the negatives — when ω is near 1, D@5 is mostly generic "
            "anomaly detection. DC-Disc ranks a class's frames against other anomalies only. "
            "DC-DetΔ and DC-SelΔ are gains from the matching definition over the others, on "
            "the same frames: a scorer that ignores the definition gets exactly 0. A high D@5 "
            "with DC-DetΔ ≈ 0 is the signature of definition blindness. "
            + figures.interval_words(
                result,
                "Brackets: 95 % interval, paired video bootstrap (DC-SelΔ: clusters of videos "
                "sharing one class set); AP values have no interval.",
            )
        ),
        Text(
            "Mean ω over the queries (the normal frames' share of D@5's negatives): "
            + "; ".join(
                f"{model} {num(omega)}"
                for model, omega in queries.groupby("model", sort=False)["omega"].mean().items()
            )
            + "."
        ),
        Text(
            "Per query (the identity D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ holds to "
            f"{worst:.1e} in the worst query):"
            if figures.is_finite_number(worst)
            else "Per query:"
        ),
        Table(query_table, labels=3),
        Text("Per class (DC-Disc and the two terms of DC-DetΔ):"),
        Table(class_table, labels=2),
    ]
    return Section("Definition following", tuple(blocks))


def readout_section(result: AuditResult) -> Section | None:
    """Section "Representation readout": prototype AUROC of the features per readout."""
    readout = result.readout
    if readout.empty:
        return None
    rule = result.conventions.get("features", {}).get("snippet_label_rule", "")
    table = pd.DataFrame(
        {
            "model": readout["model"],
            "readout": readout["readout"].map(figures.READOUT_LABELS),
            "prototype AUROC": [ci(*r) for r in readout[["auroc", "ci_low", "ci_high"]].to_numpy()],
            "videos": readout["videos"].map(count),
            "left out": readout["left_out_reasons"],
        }
    )
    blocks: list[Block] = []
    if (chart := figures.readout_chart(result)) is not None:
        blocks.append(Figure("readout", chart, "prototype vs score AUROC per readout"))
    blocks += [
        Table(table, labels=2),
        Note(
            "Without the model's head: each snippet's feature is scored by cos(z, p⁺) − cos(z, "
            "p⁻), its cosine to the mean anomalous feature minus that to the mean normal one. "
            "global builds the means from video labels only; per-category and within-video use "
            "snippet labels (within-video leaves the query snippet out), so they are oracle "
            "ceilings on what the features make linearly accessible, not detectors. A high "
            "within-video prototype AUROC beside a low within-video score AUROC means the head "
            "does not use the localisation the representation holds. Snippet labels: "
            f"{rule}. Left out: every video a readout does not read, counted by reason — "
            "per-category has no prototype for the Normal category or a category lacking "
            "either snippet label; within-video reads only mixed videos (within-video pairs "
            "exist only there) with at least two snippets of each label (the leave-one-out "
            "prototypes need two)."
        ),
    ]
    return Section("Representation readout", tuple(blocks))
