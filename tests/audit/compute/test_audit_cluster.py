"""The audit on a Dask cluster (issue 25, part 2): a real LocalCluster of two worker processes
with a memory limit each, results equal to the local run to the last bit, and the one-line
errors ``vadscene measure --scheduler`` gives for an unreachable scheduler or a missing extra.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import copy_demo, write_demo_soft_labels
from support.cluster import WORKERS, local_cluster, unused_address

from vadscene.audit.compute.cluster import cluster_summary, dask_runner
from vadscene.audit.compute.engine import run_audit
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.io.scene_labels import SceneContrast, SceneLabels
from vadscene.audit.io.scores import ModelScores
from vadscene.audit.request import AuditRequest, prepare
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.cli import run

CLUSTER_CONVENTION = "cluster"
"""The conventions' entry naming where the run ran: the one thing a cluster run may differ in."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Any, Any]]:
    with local_cluster() as started:
        yield started


@pytest.fixture(scope="module")
def demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(demo_template, tmp_path_factory.mktemp("cluster") / "demo")


# --- the runner ------------------------------------------------------------------------------


def test_the_summary_names_the_workers_threads_and_memory_limit(cluster: tuple[Any, Any]) -> None:
    local, client = cluster
    assert cluster_summary(client) == (
        f"Dask cluster at {local.scheduler_address}: 2 workers, 2 threads, "
        "memory limit 1 GiB per worker"
    )


def test_a_put_value_is_one_piece_on_every_worker(cluster: tuple[Any, Any]) -> None:
    _, client = cluster
    runner = dask_runner(client)
    pieces = [np.arange(5), {"k": 3}]
    handle = runner.put(pieces)  # a list: scatter alone would send it as two values
    assert runner.gather([runner.submit(len, handle)]) == [2]
    holders = client.who_has([handle])[handle.key]
    assert len(holders) == WORKERS


def test_tasks_run_in_the_worker_processes_with_handles_as_arguments(
    cluster: tuple[Any, Any],
) -> None:
    _, client = cluster
    runner = dask_runner(client)
    first = runner.submit(operator.add, runner.put(np.arange(3)), 1)
    second = runner.submit(operator.mul, first, 2)
    pid = runner.submit(os.getpid)
    np.testing.assert_array_equal(runner.gather([second])[0], [2, 4, 6])
    worker_pids = set(client.run(os.getpid).values())
    assert len(worker_pids) == WORKERS
    assert runner.gather([pid])[0] in worker_pids and os.getpid() not in worker_pids


def test_a_task_error_is_raised_as_the_task_raised_it(cluster: tuple[Any, Any]) -> None:
    _, client = cluster
    runner = dask_runner(client)
    # the project's own check, raised in a worker process
    task = runner.submit(ModelScores, " ", np.zeros(3), "bad.npy")
    with pytest.raises(
        AuditInputError, match=r"^bad\.npy: a model needs a non-empty name, got ' '$"
    ):
        runner.gather([task])


# --- the audit: equal to the local run to the last bit ---------------------------------------

CATEGORIES = ("Abuse", "Arson", "Fighting")


def _benchmark(seed: int) -> tuple[GroundTruth, list[ModelScores], SceneLabels]:
    """Random, multi-category and full of ties: 4 anomaly categories and Normal videos (one
    anomaly category holding a single video; a fully anomalous video), 3 models (two of one
    family) on coarse score grids, two scene factors with unlabelled and ambiguous videos."""
    rng = np.random.default_rng(seed)
    n_videos = 36
    counts = rng.integers(10, 60, n_videos)
    categories, labels = [], []
    for i, count in enumerate(counts):
        frame_labels = np.zeros(count, bool)
        if i % 3 == 2:
            categories.append("Normal")
        else:
            categories.append("Stealing" if i == 0 else CATEGORIES[(i // 3) % len(CATEGORIES)])
            start = 0 if i == 1 else int(rng.integers(0, count - 1))
            stop = count if i == 1 else int(rng.integers(start + 1, count + 1))
            frame_labels[start:stop] = True
        labels.append(frame_labels)
    gt = GroundTruth(
        video_ids=tuple(f"v{i:02d}" for i in range(n_videos)),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source="synthetic",
    )
    models = [
        ModelScores(
            name,
            np.round(rng.random(gt.n_frames) * levels + gt.labels * lift) / levels,
            "synthetic",
            family,
        )
        for name, family, levels, lift in (
            ("a", "one", 5, 2),
            ("b", "one", 9, 1),
            ("c", "two", 3, 0),
        )
    ]
    poles = {
        "color": {
            v: str(rng.choice(["color", "grayscale", "ambiguous"]))
            for v in gt.video_ids
            if rng.random() < 0.85
        },
        "light": {v: str(rng.choice(["day", "night"])) for v in gt.video_ids},
    }
    contrasts = (
        SceneContrast("color", "color", "grayscale", True, "scene"),
        SceneContrast("light", "day", "night", False, "scene"),
    )
    return gt, models, SceneLabels(contrasts, poles, "synthetic labels")


def assert_same_audit(cluster_run: AuditResult, local_run: AuditResult) -> None:
    """Every table equal to the last bit, the summary and models too, and the conventions but
    for the entry that names where each ran."""
    for name in (*AuditResult.TABLES, *AuditResult.OPTIONAL_TABLES):
        pd.testing.assert_frame_equal(
            getattr(cluster_run, name), getattr(local_run, name), check_exact=True, obj=name
        )
    assert cluster_run.summary == local_run.summary
    assert cluster_run.models == local_run.models
    assert _without_cluster(cluster_run.conventions) == _without_cluster(local_run.conventions)


def _without_cluster(conventions: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in conventions.items() if key != CLUSTER_CONVENTION}


def test_a_random_benchmark_on_the_cluster_equals_the_local_run(
    cluster: tuple[Any, Any],
) -> None:
    from dask.utils import key_split
    from distributed import get_task_stream

    _, client = cluster
    gt, models, scene = _benchmark(7)
    # blocks of a few replicates, so that several blocks of each model are on the workers
    settings: dict[str, Any] = {"n_bootstrap": 50, "seed": 5, "replicate_memory": 20_000}
    local_run = run_audit(gt, models, scene, **settings)
    with get_task_stream(client) as stream:
        cluster_run = run_audit(gt, models, scene, client=client, **settings)
    assert_same_audit(cluster_run, local_run)
    assert not local_run.metrics.empty and not local_run.bias.empty
    assert local_run.metrics["ci_low"].notna().any()
    # not the equality of a run that stayed here: the workers counted the pairs and the blocks
    tasks = [key_split(task["key"]) for task in stream.data]  # "count_model-<uuid>"
    assert tasks.count("count_model") == len(models)
    blocks = tasks.count("replicate_block")
    assert blocks > len(models) and blocks % len(models) == 0
    assert {task["worker"] for task in stream.data} <= set(client.scheduler_info()["workers"])
    assert cluster_run.conventions["cluster"] == cluster_summary(client)
    assert "cluster" not in local_run.conventions


def test_the_demo_on_the_cluster_equals_the_local_run(cluster: tuple[Any, Any], demo: Path) -> None:
    local, _ = cluster
    benchmark = demo / "benchmark"
    request = AuditRequest(
        workspace=demo,
        model_lists=(benchmark / "models.json",),
        probe_lists=(benchmark / "probes.json",),
        soft_labels=write_demo_soft_labels(demo),
        interval_ap=True,
        bootstrap=50,
    )
    local_run = prepare(request).run()
    on_cluster = prepare(dataclasses.replace(request, scheduler=local.scheduler_address))
    cluster_run = on_cluster.run()
    assert_same_audit(cluster_run, local_run)
    assert not local_run.prob_auc.empty and not local_run.class_wise_map.empty
    assert cluster_run.conventions["cluster"].startswith(
        f"Dask cluster at {local.scheduler_address}:"
    )


# --- through the CLI -------------------------------------------------------------------------


def _audit_cli(demo: Path, out: Path, *options: str) -> int:
    benchmark = demo / "benchmark"
    return run(
        [
            "audit",
            *("--workspace", str(demo), "--models", str(benchmark / "models.json")),
            *("--bootstrap", "50", "--out", str(out), *options),
        ]
    )


def test_vadscene_audit_scheduler_writes_the_same_report(
    cluster: tuple[Any, Any], demo: Path, tmp_path: Path
) -> None:
    local, client = cluster
    assert _audit_cli(demo, tmp_path / "local") == 0
    assert _audit_cli(demo, tmp_path / "cluster", "--scheduler", local.scheduler_address) == 0
    files = {p.relative_to(tmp_path / "local") for p in (tmp_path / "local").rglob("*")}
    assert {p.relative_to(tmp_path / "cluster") for p in (tmp_path / "cluster").rglob("*")} == files
    summary = cluster_summary(client)
    for name in sorted(str(p) for p in files if (tmp_path / "local" / p).is_file()):
        local_text = (tmp_path / "local" / name).read_text(encoding="utf-8")
        cluster_text = (tmp_path / "cluster" / name).read_text(encoding="utf-8")
        if name == "report.json":
            local_json, cluster_json = json.loads(local_text), json.loads(cluster_text)
            assert cluster_json["conventions"].pop(CLUSTER_CONVENTION) == summary
            assert CLUSTER_CONVENTION not in local_json["conventions"]
            assert cluster_json == local_json
        else:  # a text differs in the one line stating the cluster, if in any
            lines = cluster_text.splitlines()
            stated = [line for line in lines if summary in line]
            assert len(stated) == (name in ("report.md", "report.html")), name
            assert [line for line in lines if line not in stated] == local_text.splitlines()


# --- the one-line errors, before any input is read -------------------------------------------


def _missing_input_args(tmp_path: Path) -> list[str]:
    """An audit whose ground truth does not exist: had it been read first, its error would win."""
    return ["audit", "--gt", str(tmp_path / "absent.txt"), "--out", str(tmp_path / "report")]


def test_an_unreachable_scheduler_is_one_line_before_any_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = unused_address()
    args = [*_missing_input_args(tmp_path), "--scheduler", address, "--scheduler-timeout", "1"]
    assert run(args) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f"error: --scheduler {address}: cannot connect to the Dask scheduler within 1 s ("
    )
    assert lines[0].endswith("expected a running scheduler at an address like tcp://host:8786")
    assert sorted(tmp_path.iterdir()) == []


def test_a_missing_dask_extra_is_one_line_before_any_input(tmp_path: Path) -> None:
    args = [*_missing_input_args(tmp_path), "--scheduler", "tcp://127.0.0.1:8786"]
    script = (
        "import sys; sys.modules['distributed'] = None  # what `import` sees when absent\n"
        "from vadscene.cli import run; sys.exit(run(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: --scheduler tcp://127.0.0.1:8786: running on a Dask cluster needs the optional "
        "package 'distributed'; install it with: pip install 'vadscene[dask]'"
    ]
    assert done.stdout == "" and sorted(tmp_path.iterdir()) == []


def test_a_timeout_that_is_not_positive_is_refused() -> None:
    with pytest.raises(AuditInputError, match=r"^scheduler_timeout 0: expected seconds above 0$"):
        AuditRequest(scheduler="tcp://127.0.0.1:8786", scheduler_timeout=0)
