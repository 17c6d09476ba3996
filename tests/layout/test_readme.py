"""The README a newcomer reads: its first screen, and every relative link in it and in docs/.

The first screen is the two commands, the picture of the Annotate page and the five-minute
walkthrough (which tests/layout/test_walkthrough.py runs), in that order, before the reference.
Every relative link in README.md and docs/*.md must name a file that exists and, with a
``#fragment``, a heading of that file as GitHub spells its anchor.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from browser import require_chromium

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PICTURE = "docs/images/annotate.png"

_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, inline markup and punctuation dropped
    (letters, digits, ``_`` and ``-`` kept), each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for _level, text in _HEADING.findall(_FENCE.sub("", markdown)):
        anchor = github_anchor(text)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def broken_links(document: Path) -> list[str]:
    """The relative links of ``document`` that name no existing file, or no heading of it."""
    prose = _CODE.sub("", _FENCE.sub("", document.read_text(encoding="utf-8")))
    broken = []
    for target in _LINK.findall(prose):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: …
            continue
        path_part, _, fragment = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif fragment and fragment not in anchors(linked.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading with the anchor #{fragment} in {linked.name}")
    return broken


DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_points_to_a_file_and_heading(document: Path) -> None:
    assert broken_links(document) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## The release format (schema v2)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Team mode\n\n"
        "[ok](other.md#the-release-format-schema-v2) [ok too](#team-mode) [web](https://x.org/y)\n"
        "[gone](missing.md) [no heading](other.md#schema) [not here](#team)\n"
        "`[in code](nowhere.md)`\n\n```\n[in a block](nowhere.md)\n```\n"
    )
    assert broken_links(page) == [
        f"missing.md: no file {tmp_path / 'missing.md'}",
        "other.md#schema: no heading with the anchor #schema in other.md",
        "#team: no heading with the anchor #team in page.md",
    ]


def test_anchors_are_spelled_as_github_spells_them() -> None:
    # worked by hand from GitHub's rendering of these headings
    text = "## The store: nothing is lost\n## `--json` output\n## Ünïcode & co\n## Two\n## Two\n"
    assert anchors(text) == {
        "the-store-nothing-is-lost",
        "--json-output",
        "ünïcode--co",
        "two",
        "two-1",
    }


def _headings(markdown: str, level: int) -> list[str]:
    return [
        text for hashes, text in _HEADING.findall(_FENCE.sub("", markdown)) if len(hashes) == level
    ]


def test_the_first_screen_is_the_two_commands_the_picture_and_the_walkthrough() -> None:
    text = README.read_text(encoding="utf-8")
    assert _headings(text, 2)[:3] == [
        "Two commands",
        "Your first video, in five minutes",
        "Reference",
    ]
    first_block = _FENCE.search(text)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group().splitlines()[1:-1]]
    assert commands == ["make app", "make test"]
    picture = text.index(f"]({PICTURE})")
    walkthrough = text.index("## Your first video, in five minutes")
    assert first_block.end() < picture < walkthrough < text.index("## Reference")
    # how to reach the command line is said before the walkthrough needs it
    assert text.index("`. .venv/bin/activate`") < walkthrough


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_the_picture_is_the_annotate_page_at_the_size_it_is_laid_out_for() -> None:
    assert _png_size(ROOT / PICTURE) == (1440, 900)


@pytest.mark.browser
def test_the_picture_script_takes_the_picture(tmp_path: Path) -> None:
    require_chromium()
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "screenshots.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"wrote {tmp_path / 'annotate.png'}" in done.stdout
    assert _png_size(tmp_path / "annotate.png") == (1440, 900)
