"""Definition-conditioned probes against brute-force pair loops and sklearn on small random data.

Scores sit on a coarse grid (many ties); classes come from video categories or from an events
table with overlapping events (several classes per video, frames holding two classes).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score
from support.dense_pairs import video_multiplicities

from vadscene.audit.compute.definitions import audit_definitions
from vadscene.audit.io.definitions import (
    DefinitionScores,
    FrameClasses,
    Query,
    classes_from_categories,
    load_definition_scores,
    load_events,
    load_queries,
)
from vadscene.benchmark.frames import AuditInputError, GroundTruth

TOL = 1e-12
CLASSES = ("Abuse", "Arson", "Fighting")


def make_benchmark(seed: int, videos: int = 12) -> GroundTruth:
    rng = np.random.default_rng(seed)
    counts = rng.integers(6, 30, videos)
    categories, labels = [], []
    for i, count in enumerate(counts):
        frame_labels = np.zeros(count, bool)
        if i % 3 == 2:
            categories.append("Normal")
        else:
            categories.append(CLASSES[(i // 3) % len(CLASSES)])
            start = rng.integers(0, count - 3)
            frame_labels[start : rng.integers(start + 2, count + 1)] = True
        labels.append(frame_labels)
    return GroundTruth(
        video_ids=tuple(f"v{i:02d}" for i in range(videos)),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source="synthetic",
    )


def definition_scores(
    gt: GroundTruth, seed: int, definitions: tuple[str, ...], name: str = "m"
) -> DefinitionScores:
    rng = np.random.default_rng(seed)
    scores = np.round(rng.random((gt.n_frames, len(definitions))) * 5 + gt.labels[:, None]) / 5
    return DefinitionScores(name, definitions, scores, source="synthetic")


def tau_sum(positive: np.ndarray, negative: np.ndarray, wp=None, wn=None) -> tuple[float, float]:
    """Brute-force Σ τ over pairs and the number of pairs (weighted)."""
    wp = np.ones(positive.size) if wp is None else wp
    wn = np.ones(negative.size) if wn is None else wn
    total = 0.0
    for i, j in itertools.product(range(positive.size), range(negative.size)):
        tau = 1.0 if positive[i] > negative[j] else 0.5 if positive[i] == negative[j] else 0.0
        total += wp[i] * wn[j] * tau
    return total, float(wp.sum() * wn.sum())


def brute_auroc(scores, positive, negative, weights=None) -> float:
    w = np.ones(scores.size) if weights is None else weights
    pairs, count = tau_sum(scores[positive], scores[negative], w[positive], w[negative])
    return pairs / count if count else float("nan")


def sk_auroc(scores, positive, negative, weights=None) -> float:
    keep = positive | negative
    w = None if weights is None else weights[keep]
    return roc_auc_score(positive[keep], scores[keep], sample_weight=w)


def sk_ap(scores, positive, negative) -> float:
    keep = positive | negative
    return average_precision_score(positive[keep], scores[keep])


def class_masks(classes: FrameClasses) -> dict[str, np.ndarray]:
    """Frames whose class set is exactly {c}."""
    return {
        c: np.isin(classes.codes, [i for i, s in enumerate(classes.class_sets) if s == {c}])
        for c in classes.classes
    }


def probe(result, name: str, metric: str = "auroc", model: str = "m") -> pd.Series:
    table = result.probes
    return table[(table.model == model) & (table.probe == name) & (table.metric == metric)].iloc[0]


def test_probes_match_brute_force_and_sklearn_from_categories() -> None:
    gt = make_benchmark(1)
    classes = classes_from_categories(gt)
    model = definition_scores(gt, 2, (*CLASSES, "violence"))
    queries = [
        Query("violence", frozenset({"Abuse", "Fighting"})),
        Query("Arson", frozenset({"Arson"})),
    ]
    result = audit_definitions(gt, [model], classes, queries)
    anomalous, normal = gt.labels, ~gt.labels
    masks = class_masks(classes)

    d5, d5n, d5x, d5ap = [], [], [], []
    for query, row in zip(queries, result.queries.itertuples(), strict=True):
        s = model.of(query.definition)
        target = np.logical_or.reduce([masks[c] for c in query.classes])
        excluded = anomalous & ~target
        d5.append(brute_auroc(s, target, normal | excluded))
        d5n.append(brute_auroc(s, target, normal))
        d5x.append(brute_auroc(s, target, excluded))
        d5ap.append(sk_ap(s, target, normal | excluded))
        assert row.d5_auroc == pytest.approx(sk_auroc(s, target, normal | excluded), abs=TOL)
        assert row.d5_auroc == pytest.approx(d5[-1], abs=TOL)
        assert row.d5_normal_auroc == pytest.approx(d5n[-1], abs=TOL)
        assert row.d5_excluded_auroc == pytest.approx(d5x[-1], abs=TOL)
        assert row.omega == pytest.approx(normal.sum() / (normal.sum() + excluded.sum()), abs=TOL)
        assert abs(row.identity_gap) < TOL
        assert row.d5_ap == pytest.approx(d5ap[-1], abs=TOL)
        assert row.d5_normal_ap == pytest.approx(sk_ap(s, target, normal), abs=TOL)
        assert row.d5_excluded_ap == pytest.approx(sk_ap(s, target, excluded), abs=TOL)
    assert probe(result, "D@5").value == pytest.approx(np.mean(d5), abs=TOL)
    assert probe(result, "D@5N").value == pytest.approx(np.mean(d5n), abs=TOL)
    assert probe(result, "D@5X").value == pytest.approx(np.mean(d5x), abs=TOL)
    assert probe(result, "D@5", "ap").value == pytest.approx(np.mean(d5ap), abs=TOL)

    disc = [brute_auroc(model.of(c), masks[c], anomalous & ~masks[c]) for c in CLASSES]
    det = [
        brute_auroc(model.of(c), masks[c], normal)
        - np.mean([brute_auroc(model.of(k), masks[c], normal) for k in CLASSES if k != c])
        for c in CLASSES
    ]
    det_ap = [
        sk_ap(model.of(c), masks[c], normal)
        - np.mean([sk_ap(model.of(k), masks[c], normal) for k in CLASSES if k != c])
        for c in CLASSES
    ]
    assert probe(result, "DC-Disc").value == pytest.approx(np.mean(disc), abs=TOL)
    assert probe(result, "DC-DetΔ").value == pytest.approx(np.mean(det), abs=TOL)
    assert probe(result, "DC-DetΔ", "ap").value == pytest.approx(np.mean(det_ap), abs=TOL)
    disc_ap = [sk_ap(model.of(c), masks[c], anomalous & ~masks[c]) for c in CLASSES]
    assert probe(result, "DC-Disc", "ap").value == pytest.approx(np.mean(disc_ap), abs=TOL)
    per_class = result.classes.set_index("class")
    assert per_class.loc[list(CLASSES), "det_delta_auroc"].to_numpy() == pytest.approx(det, abs=TOL)
    # One class per video: no multi-event input, DC-SelΔ is undefined.
    assert probe(result, "DC-SelΔ").terms == 0


def test_bootstrap_replicate_is_the_weighted_metric() -> None:
    """A replicate's D@5 parts equal sklearn with sample_weight = the video's multiplicity;
    the interval is the percentile interval of exactly those replicates."""
    gt = make_benchmark(3)
    classes = classes_from_categories(gt)
    model = definition_scores(gt, 4, CLASSES)
    resamples = video_multiplicities(gt.n_videos, 40, np.random.default_rng(5))
    result = audit_definitions(gt, [model], classes, resamples=resamples)
    masks = class_masks(classes)
    replicate_d5 = []
    replicate_disc = []
    for k in resamples:
        weights = k[gt.video_index()]
        parts, discs = [], []
        for c in CLASSES:
            s = model.of(c)
            positive = masks[c] & (weights > 0)
            negative = (~masks[c]) & (weights > 0)
            parts.append(sk_auroc(s, positive, negative, weights) if positive.any() else np.nan)
            rest = gt.labels & ~masks[c] & (weights > 0)
            discs.append(
                sk_auroc(s, positive, rest, weights) if positive.any() and rest.any() else np.nan
            )
        replicate_d5.append(np.nanmean(parts))
        replicate_disc.append(np.nanmean(discs))
    low, high = np.quantile(replicate_d5, [0.025, 0.975])
    assert probe(result, "D@5").ci_low == pytest.approx(low, abs=TOL)
    assert probe(result, "D@5").ci_high == pytest.approx(high, abs=TOL)
    low, high = np.quantile(replicate_disc, [0.025, 0.975])
    assert probe(result, "DC-Disc").ci_low == pytest.approx(low, abs=TOL)
    assert probe(result, "DC-Disc").ci_high == pytest.approx(high, abs=TOL)


def events_benchmark(tmp_path: Path) -> tuple[GroundTruth, Path]:
    """Videos with two or three overlapping events: frames with one class and with two."""
    gt = make_benchmark(7, videos=9)
    rows = []
    rng = np.random.default_rng(8)
    for i, video in enumerate(gt.video_ids):
        labels = gt.labels_of(video)
        anomalous = np.flatnonzero(labels)
        if not anomalous.size:
            continue
        start, end = int(anomalous[0]), int(anomalous[-1]) + 1
        first, second = rng.choice(CLASSES, 2, replace=False)
        if i % 2 and end - start >= 4:
            middle = (start + end) // 2
            rows += [(video, start, middle + 1, first), (video, middle, end, second)]
        else:
            rows.append((video, start, end, first))
    path = tmp_path / "events.csv"
    pd.DataFrame(rows, columns=["video", "start", "end", "class"]).to_csv(path, index=False)
    return gt, path


def test_selection_and_overlap_from_events(tmp_path: Path) -> None:
    gt, events = events_benchmark(tmp_path)
    classes = load_events(events, gt)
    assert any(len(s) == 2 for s in classes.class_sets)  # the overlapping frames
    model = definition_scores(gt, 9, CLASSES)
    resamples = video_multiplicities(gt.n_videos, 30, np.random.default_rng(1))
    result = audit_definitions(gt, [model], classes, resamples=resamples)
    masks = class_masks(classes)

    terms, ap_terms = [], []
    for p in range(gt.n_videos):
        frames = slice(gt.offsets[p], gt.offsets[p + 1])
        present = sorted(
            set().union(*(classes.class_sets[c] for c in classes.codes[frames] if c >= 0))
        )
        if len(present) < 2:
            continue
        for c in present:
            own = masks[c][frames]
            rest = (classes.codes[frames] >= 0) & ~own
            if not own.any() or not rest.any():
                continue

            def selection(definition: str, own=own, rest=rest, frames=frames) -> float:
                return brute_auroc(model.of(definition)[frames], own, rest)

            def selection_ap(definition: str, own=own, rest=rest, frames=frames) -> float:
                return sk_ap(model.of(definition)[frames], own, rest)

            others = [k for k in present if k != c]
            terms.append(selection(c) - np.mean([selection(k) for k in others]))
            ap_terms.append(selection_ap(c) - np.mean([selection_ap(k) for k in others]))
    assert terms
    sel = probe(result, "DC-SelΔ")
    assert sel.terms == len(terms)
    assert sel.value == pytest.approx(np.mean(terms), abs=TOL)
    assert probe(result, "DC-SelΔ", "ap").value == pytest.approx(np.mean(ap_terms), abs=TOL)
    # Overlapping frames are excluded from every singleton target set.
    normal = ~gt.labels
    for c in CLASSES:
        row = result.classes.set_index("class").loc[c]
        expected = brute_auroc(model.of(c), masks[c], gt.labels & ~masks[c])
        assert row.disc_auroc == pytest.approx(expected, abs=TOL)
        assert row.det_matching_auroc == pytest.approx(
            sk_auroc(model.of(c), masks[c], normal), abs=TOL
        )
    # The cluster bootstrap: whole class-set clusters resampled, same seed → same interval.
    again = audit_definitions(gt, [model], classes, resamples=resamples)
    assert probe(again, "DC-SelΔ").ci_low == sel.ci_low
    assert sel.ci_low <= sel.value <= sel.ci_high


def test_multi_class_query_replicates_are_the_weighted_metric(tmp_path: Path) -> None:
    """Events (frames holding two classes) and a query of two classes: every replicate of
    D@5, D@5ᴺ, D@5ˣ and DC-Disc equals sklearn with sample_weight = the video's
    multiplicity, so the intervals are the percentile intervals of those replicates."""
    gt, events = events_benchmark(tmp_path)
    classes = load_events(events, gt)
    model = definition_scores(gt, 11, CLASSES)
    queries = [
        Query("Abuse", frozenset({"Abuse", "Arson"})),
        Query("Fighting", frozenset({"Fighting"})),
    ]
    resamples = video_multiplicities(gt.n_videos, 25, np.random.default_rng(2))
    result = audit_definitions(gt, [model], classes, queries, resamples=resamples)
    masks = class_masks(classes)
    inside = {
        q.definition: np.isin(
            classes.codes, [i for i, s in enumerate(classes.class_sets) if s <= q.classes]
        )
        for q in queries
    }
    expected: dict[str, list[float]] = {"D@5": [], "D@5N": [], "D@5X": [], "DC-Disc": []}
    for k in resamples:
        weights = k[gt.video_index()]
        drawn = weights > 0

        def auroc(scores, positive, negative, weights=weights, drawn=drawn) -> float:
            positive, negative = positive & drawn, negative & drawn
            if not positive.any() or not negative.any():
                return np.nan
            return sk_auroc(scores, positive, negative, weights)

        parts: dict[str, list[float]] = {"D@5": [], "D@5N": [], "D@5X": []}
        for q in queries:
            s, target = model.of(q.definition), inside[q.definition]
            excluded = gt.labels & ~target
            parts["D@5"].append(auroc(s, target, ~target))
            parts["D@5N"].append(auroc(s, target, ~gt.labels))
            parts["D@5X"].append(auroc(s, target, excluded))
        for name, values in parts.items():
            expected[name].append(np.nanmean(values) if not np.isnan(values).all() else np.nan)
        discs = [auroc(model.of(c), masks[c], gt.labels & ~masks[c]) for c in CLASSES]
        expected["DC-Disc"].append(np.nanmean(discs) if not np.isnan(discs).all() else np.nan)
    for name, values in expected.items():
        values = np.array(values)
        low, high = np.quantile(values[~np.isnan(values)], [0.025, 0.975])
        assert probe(result, name).ci_low == pytest.approx(low, abs=TOL), name
        assert probe(result, name).ci_high == pytest.approx(high, abs=TOL), name


def test_query_independent_scorer_gives_exact_zeros(tmp_path: Path) -> None:
    gt, events = events_benchmark(tmp_path)
    classes = load_events(events, gt)
    rng = np.random.default_rng(0)
    shared = np.round(rng.random(gt.n_frames) * 4 + gt.labels) / 4
    blind = DefinitionScores("m", CLASSES, np.repeat(shared[:, None], 3, 1), "synthetic")
    resamples = video_multiplicities(gt.n_videos, 25, np.random.default_rng(2))
    result = audit_definitions(gt, [blind], classes, resamples=resamples)
    for metric in ("auroc", "ap"):
        for name in ("DC-DetΔ", "DC-SelΔ"):
            row = probe(result, name, metric)
            assert row.value == 0.0, (name, metric)
            if metric == "auroc":
                assert row.ci_low == 0.0 and row.ci_high == 0.0
    assert (result.classes.det_delta_auroc == 0.0).all()


def test_loaders_agree_and_repeat_snippets(tmp_path: Path) -> None:
    gt = make_benchmark(11)
    definitions = ("Abuse", "Arson", "Fighting", "violence")
    rng = np.random.default_rng(3)
    rows = []
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "definitions.txt").write_text("\n".join(definitions) + "\n")
    expected = []
    for video, n in zip(gt.video_ids, gt.frame_counts, strict=True):
        snippets = -(-int(n) // 4)
        values = rng.random((snippets, len(definitions)))
        np.save(folder / f"{video}.npy", values)
        expected.append(np.repeat(values, 4, axis=0)[:n])
        rows += [
            (video, t, d, values[t, j]) for t in range(snippets) for j, d in enumerate(definitions)
        ]
    table = tmp_path / "long.csv"
    pd.DataFrame(rows, columns=["video", "frame", "definition", "score"]).sample(
        frac=1, random_state=0
    ).to_csv(table, index=False)
    from_folder = load_definition_scores(folder, gt, name="a", snippet_repeat=4)
    from_table = load_definition_scores(table, gt, name="b", snippet_repeat=4)
    assert from_folder.definitions == definitions
    assert set(from_table.definitions) == set(definitions)
    for d in definitions:
        np.testing.assert_array_equal(
            from_folder.of(d), np.concatenate(expected)[:, definitions.index(d)]
        )
        np.testing.assert_array_equal(from_table.of(d), from_folder.of(d))


def test_missing_definition_frames_name_file_and_video(tmp_path: Path) -> None:
    gt = make_benchmark(12, videos=3)
    rows = [
        (video, t, d, 0.5)
        for video, n in zip(gt.video_ids, gt.frame_counts, strict=True)
        for t in range(n)
        for d in CLASSES
    ]
    table = pd.DataFrame(rows, columns=["video", "frame", "definition", "score"])
    last = table[(table.video == "v01") & (table.definition == "Arson")].index[-3:]
    path = tmp_path / "scores.csv"
    table.drop(last).to_csv(path, index=False)
    with pytest.raises(AuditInputError) as info:
        load_definition_scores(path, gt, name="m")
    message = str(info.value)
    assert message.startswith(str(path)) and "video v01" in message and "'Arson'" in message


def test_wrong_length_names_file_and_video(tmp_path: Path) -> None:
    gt = make_benchmark(13, videos=3)
    folder = tmp_path / "defs"
    folder.mkdir()
    for video, n in zip(gt.video_ids, gt.frame_counts, strict=True):
        np.save(folder / f"{video}.npy", np.zeros((n + (video == "v02") * 5, 3)))
    with pytest.raises(AuditInputError) as info:
        load_definition_scores(folder, gt, name="m", definitions=CLASSES)
    assert "video v02" in str(info.value) and str(folder) in str(info.value)
    np.save(folder / "v00.npy", np.zeros((gt.frame_counts[0], 2)))
    with pytest.raises(AuditInputError, match=r"v00\.npy: video v00: expected scores of shape"):
        load_definition_scores(folder, gt, name="m", definitions=CLASSES)


def test_event_class_without_definition_names_file_and_video(tmp_path: Path) -> None:
    gt, events = events_benchmark(tmp_path)
    table = pd.read_csv(events)
    table.loc[table.index[-1], "class"] = "Shooting"
    table.to_csv(events, index=False)
    classes = load_events(events, gt)
    model = definition_scores(gt, 1, CLASSES)
    video = table.iloc[-1].video
    with pytest.raises(AuditInputError) as info:
        audit_definitions(gt, [model], classes)
    message = str(info.value)
    assert "'Shooting'" in message and f"video {video}" in message and str(events) in message


def test_query_with_unknown_class_and_uncovered_frames(tmp_path: Path) -> None:
    gt, events = events_benchmark(tmp_path)
    classes = load_events(events, gt)
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([{"definition": "Abuse", "classes": ["Abuse", "Riot"]}]))
    model = definition_scores(gt, 1, CLASSES)
    with pytest.raises(
        AuditInputError, match=r"queries\.json: query 'Abuse' names classes \['Riot'\]"
    ):
        audit_definitions(gt, [model], classes, load_queries(queries))
    table = pd.read_csv(events)
    dropped = table.video.iloc[0]
    table[table.video != dropped].to_csv(events, index=False)
    with pytest.raises(AuditInputError, match=rf"events\.csv: video {dropped}: anomalous frames"):
        load_events(events, gt)


def test_run_audit_and_report_carry_the_new_sections(tmp_path: Path) -> None:
    """run_audit adds the probes and the readout with the models' paired bootstrap draws; the
    report writes their tables, figures and sections."""
    from vadscene.audit.compute.engine import bootstrap_draws, run_audit
    from vadscene.audit.compute.prototypes import audit_features
    from vadscene.audit.io.features import Features
    from vadscene.audit.io.scores import ModelScores
    from vadscene.audit.report.writer import write_report

    gt, events = events_benchmark(tmp_path)
    classes = load_events(events, gt)
    following = definition_scores(gt, 3, CLASSES, name="follows")
    rng = np.random.default_rng(4)
    features = Features(
        "follows", tuple(rng.normal(size=(n, 3)) for n in gt.frame_counts), 1, "synthetic"
    )
    plain = ModelScores("follows", following.of("Abuse"), "synthetic")
    result = run_audit(
        gt,
        [plain],
        n_bootstrap=20,
        seed=3,
        definition_scores=[following],
        classes=classes,
        features=[features],
    )
    shared, stratified = bootstrap_draws(3, gt.categories, 20)
    # the per-category readout reads the category-stratified draws
    resamples, by_category = shared.matrix(), stratified.matrix()
    direct = audit_definitions(gt, [following], classes, resamples=resamples, selection_seed=3)
    pd.testing.assert_frame_equal(result.definition_probes, direct.probes)
    pd.testing.assert_frame_equal(
        result.readout,
        audit_features(gt, [features], resamples=resamples, by_category=by_category),
    )
    written = write_report(result, tmp_path / "report")
    for name in (
        "definition_probes.csv",
        "readout.csv",
        "figures/d5_decomposition.vl.json",
        "figures/definition_delta.vl.json",
        "figures/readout.vl.json",
    ):
        assert name in written
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Definition following" in markdown and "## Representation readout" in markdown
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert {r["probe"] for r in report["definition_probes"]} >= {"D@5", "DC-DetΔ", "DC-SelΔ"}


def test_cli_bad_events_class_is_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.cli import run

    gt, events = events_benchmark(tmp_path)
    truth = tmp_path / "gt.csv"
    pd.DataFrame(
        {
            "video": np.repeat(gt.video_ids, gt.frame_counts),
            "frame": np.concatenate([np.arange(n) for n in gt.frame_counts]),
            "label": gt.labels.astype(int),
            "category": np.repeat(gt.categories, gt.frame_counts),
        }
    ).to_csv(truth, index=False)
    folder = tmp_path / "defs"
    folder.mkdir()
    (folder / "definitions.txt").write_text("Abuse\nArson\n")  # no Fighting definition
    for video, n in zip(gt.video_ids, gt.frame_counts, strict=True):
        np.save(folder / f"{video}.npy", np.zeros((n, 2)))
    code = run(
        [
            "audit",
            "--gt",
            str(truth),
            "--definition-scores",
            f"m={folder}",
            "--events",
            str(events),
            "--bootstrap",
            "0",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert str(folder) in err and "'Fighting'" in err and str(events) in err and "video v" in err
    assert not (tmp_path / "out").exists()  # nothing written
