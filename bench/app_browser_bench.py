"""The Annotate page as a person feels it, in headless Chromium, against baselines in the same run.

    python bench/app_browser_bench.py [--videos 2000] [--keys 30] [--switches 12] [--loads 12]

For the demo workspace and a generated workspace of ``--videos`` videos (hard links to the demo's
clips, registered under new ids, so every one plays; two annotators have decided every manual
factor), each served by ``vadscene app``:

- key → confirmation visible: a value key pressed (keydown in the page) until the surface shows
  the event confirmed (its ``data-acked`` reaches the key's sequence number), i.e. a commit and a
  round trip through Streamlit. Median and p90. Target: median ≤ 150 ms, p90 ≤ 300 ms.
- next video → first frame painted: ``n`` pressed until the new video element holds a decoded
  frame (``readyState ≥ 2``) and the browser has painted once since. Baseline: a bare page with
  one ``<video>`` whose ``src`` is swapped to the next clip, from the same server, timed the same
  way. Target: median ≤ 150 ms and ≤ 5× the baseline.
- page load → usable: navigation start until the surface takes keys and its video has a frame.
  Baseline: a bare Streamlit page (``st.write``) served the same way, until its text shows.
  Both are waited for the same way (a condition polled every animation frame), the loads of the
  two alternate (so both see the machine as it is at that moment), and the first of each is a
  warm-up, not counted. Target ≤ 1.5× the baseline.

The machine is shared and noisy: read the ratios, and run it once or twice, not in a loop.
"""

from __future__ import annotations

import argparse
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from vadscene.core.records import VideoInfo
from vadscene.demo import build_demo_workspace
from vadscene.store.workspace import Workspace

CHROMIUM = os.environ.get("VADSCENE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"]
READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"

# In the page: time from a keydown to a condition, painted (two animation frames after it holds).
_ARM = """
([key, condition]) => { window.__benchResult = new Promise((resolve) => {
  let start = null;
  const check = new Function("return (" + condition + ")();");
  const onKey = (event) => {
    if (event.key !== key || start !== null) return;
    start = performance.now();
    const poll = () => {
      if (check()) {
        const painted = () => resolve(performance.now() - start);
        requestAnimationFrame(() => requestAnimationFrame(painted));
      } else {
        requestAnimationFrame(poll);
      }
    };
    poll();
  };
  window.addEventListener("keydown", onKey, { capture: true, once: false });
  window.__benchDone = () => window.removeEventListener("keydown", onKey, { capture: true });
}); }
"""

# The armed measurement, or an error saying where the surface stands if it never completes
# (a bench that waits forever says nothing).
_RESULT = """
() => Promise.race([window.__benchResult, new Promise((_, reject) => setTimeout(() => {
  const root = document.querySelector(".vs-annotate");
  reject(new Error("not done in 30 s: " + JSON.stringify({
    acked: root && root.dataset.acked, pending: root && root.dataset.pending,
    seq: window.__vadsceneAnnotate && window.__vadsceneAnnotate.seq })));
}, 30000))])
"""

_SWAP = """
(src) => new Promise((resolve) => {
  const video = document.querySelector("video");
  const start = performance.now();
  const done = () => requestAnimationFrame(() => requestAnimationFrame(
    () => resolve(performance.now() - start)));
  video.addEventListener("loadeddata", done, { once: true });
  video.src = src;
  video.play().catch(() => {});
})
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.3)


def serve_workspace(root: Path, log: Path) -> tuple[str, subprocess.Popen]:
    port = free_port()
    command = [sys.executable, "-c", "from vadscene.cli import main; main()", "app", str(root)]
    with log.open("wb") as out:
        process = subprocess.Popen([*command, "--port", str(port)], stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, process, log)
    return url, process


def serve_bare_streamlit(folder: Path) -> tuple[str, subprocess.Popen]:
    script = folder / "bare.py"
    script.write_text("import streamlit as st\nst.write('bare page ready')\n")
    port = free_port()
    log = folder / "bare.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            stdout=out, stderr=out,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, process, log)
    return url, process


def big_workspace(demo: Workspace, root: Path, videos: int) -> Path:
    """``videos`` registrations, each a hard link to one of the demo's clips."""
    folder = root / "videos"
    folder.mkdir(parents=True)
    sources = demo.store.videos()
    infos = []
    for i in range(videos):
        source = sources[i % len(sources)]
        video_id = f"{source.category}{i:05d}_x264"
        os.link(demo.video_root / source.path, folder / f"{video_id}.mp4")
        infos.append(
            VideoInfo(**{**source.model_dump(), "video_id": video_id, "path": f"{video_id}.mp4"})
        )
    with Workspace.create(root / "ws", video_root=folder, dataset="bench") as workspace:
        workspace.store.register_videos(infos)
        manual = [f for f in workspace.catalogue.factors if f.source == "manual"]
        store_path = workspace.store.path
    # Two people have already decided every manual factor (bulk-loaded as rows, as
    # bench/app_bench.py does): the queue and support counts then cover a real history.
    with sqlite3.connect(store_path) as db:
        db.executemany(
            "INSERT INTO decisions (video_id, factor, value, annotator, source, decided_at) "
            "VALUES (?, ?, ?, ?, 'manual', '2026-01-01T00:00:00+00:00')",
            [
                (info.video_id, f.key, f.values[(i + j) % 2], annotator)
                for i, info in enumerate(infos)
                for f in manual
                for j, annotator in enumerate(("ana", "ben"))
            ],
        )
    return root / "ws"


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure_keys(page, count: int) -> list[float]:
    samples = []
    for i in range(count):
        key = "1" if i % 2 == 0 else "2"  # alternate, so every key changes the stored value
        seq = page.evaluate("() => window.__vadsceneAnnotate.seq") + 1
        condition = (
            "() => Number(document.querySelector('.vs-annotate').dataset.acked || 0) >= "
            f"{seq} && document.querySelector('.vs-annotate').dataset.pending === '0'"
        )
        page.evaluate(_ARM, [key, condition])
        page.keyboard.press(key)
        samples.append(page.evaluate(_RESULT))
        page.evaluate("() => window.__benchDone()")
        page.wait_for_timeout(150)
    return samples


def measure_switches(page, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        page.wait_for_timeout(700)  # let the neighbours preload, as while a person watches
        current = page.evaluate("() => window.__vadsceneAnnotate.current")
        condition = (
            "() => { const v = document.querySelector('video:not([hidden])');"
            f" return v && v.dataset.video !== {current!r} && v.readyState >= 2; }}"
        )
        page.evaluate(_ARM, ["n", condition])
        page.keyboard.press("n")
        samples.append(page.evaluate(_RESULT))
        page.evaluate("() => window.__benchDone()")
    return samples


def measure_swaps(page, url: str, video_ids: list[str], count: int) -> list[float]:
    from vadscene.annotate.urls import video_url

    page.set_content('<video muted playsinline autoplay style="width:640px"></video>')
    samples = []
    for i in range(count):
        page.wait_for_timeout(700)
        samples.append(page.evaluate(_SWAP, f"{url}{video_url(video_ids[i % len(video_ids)])}"))
    return samples


USABLE = READY + " && document.querySelector('video:not([hidden])')?.readyState >= 2"
BARE_SHOWN = "() => document.body.innerText.includes('bare page ready')"


def timed_load(page, url: str, condition: str) -> float:
    """Navigation start until ``condition`` holds, polled every animation frame."""
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_function(condition, timeout=120_000)
    elapsed = page.evaluate("() => performance.now()")  # from navigation start
    page.goto("about:blank")  # a page left open would keep playing its video meanwhile
    return elapsed


def measure_loads(page, url: str, bare_url: str, loads: int) -> tuple[list[float], list[float]]:
    """``loads`` page loads of the app and of the bare page, alternating, which goes first
    changing every time; one warm-up load of each before."""
    app, bare = [], []
    for i in range(loads + 1):
        pair = [(app, url, USABLE), (bare, bare_url, BARE_SHOWN)]
        for samples, target, condition in pair if i % 2 else pair[::-1]:
            elapsed = timed_load(page, target, condition)
            if i:
                samples.append(elapsed)
    return app, bare


def report(name: str, samples: list[float]) -> str:
    return (
        f"{name}: median {statistics.median(samples):.0f} ms, "
        f"p90 {quantile(samples, 0.9):.0f} ms (n={len(samples)})"
    )


def run_workspace(browser, label: str, root: Path, folder: Path, args, bare_url: str) -> None:
    url, server = serve_workspace(root, folder / f"{label}.log")
    try:
        with Workspace.open(root) as workspace:
            video_ids = workspace.store.video_ids()
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/?annotator=bench&video={video_ids[0]}")
        page.wait_for_function(READY, timeout=120_000)
        keys = measure_keys(page, args.keys)
        switches = measure_switches(page, args.switches)
        swaps = measure_swaps(page, url, video_ids[1:], args.switches)
        target = f"{url}/?annotator=bench&video={video_ids[0]}"
        loads, bare_loads = measure_loads(page, target, bare_url, args.loads)
        page.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"\n{label} ({len(video_ids)} videos)")
    print("  " + report("key → confirmation visible", keys))
    print("  " + report("next video → first frame painted", switches))
    print("  " + report("baseline: bare <video> source swap", swaps))
    print(f"    ratio {statistics.median(switches) / statistics.median(swaps):.2f}× the bare swap")
    print("  " + report("page load → usable", loads))
    print("  " + report("baseline: bare Streamlit page load → text shown", bare_loads))
    ratio = statistics.median(loads) / statistics.median(bare_loads)
    print(f"    ratio {ratio:.2f}× a bare Streamlit page (target ≤ 1.5×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=30)
    parser.add_argument("--switches", type=int, default=12)
    parser.add_argument("--loads", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name, sync_playwright() as playwright:
        folder = Path(name)
        print("building the demo workspace …", flush=True)
        demo = build_demo_workspace(folder / "demo")
        print(f"building a {args.videos}-video workspace …", flush=True)
        big = big_workspace(demo, folder / "big", args.videos)
        demo.close()
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        bare_url, bare = serve_bare_streamlit(folder)
        try:
            run_workspace(browser, "demo", folder / "demo", folder, args, bare_url)
            run_workspace(browser, "generated", big, folder, args, bare_url)
        finally:
            browser.close()
            bare.terminate()
            bare.wait(timeout=20)


if __name__ == "__main__":
    main()
