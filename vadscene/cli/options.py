"""The options several commands share, declared once, the vocabularies their help lists, and
the check of a choice option."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from vadscene.benchmark.formats import GROUND_TRUTH_FORMATS as GROUND_TRUTH_FORMATS

if TYPE_CHECKING:
    from vadscene.core.catalogue import ThresholdRule
    from vadscene.store.team import Role
    from vadscene.store.workspace import CategoryRule

# The library's vocabularies that live beside pydantic models, spelled here because a help
# text is built when its module is imported and `vadscene --help` must not import the
# library; tests/cli/test_startup.py checks that they equal the library's.
THRESHOLD_RULES: tuple[ThresholdRule, ...] = ("median", "terciles", "explicit")
ROLES: tuple[Role, ...] = ("annotator", "lead")
CATEGORY_RULES: tuple[CategoryRule, ...] = ("ucf-crime", "folder", "regex", "none")

WorkspaceArg = Annotated[Path, typer.Argument(help="Workspace folder.", show_default=False)]
GroundTruthOption = Annotated[
    Path | None,
    typer.Option(help="Temporal ground truth (default: the --workspace's, if configured)."),
]
IntervalEndOption = Annotated[
    str, typer.Option(help="Interval ends in the ground truth: exclusive or inclusive.")
]
FrameCountsOption = Annotated[
    Path | None,
    typer.Option(help="Frame counts file (id count per line) when the GT has no counts."),
]
EventsOption = Annotated[
    Path | None,
    typer.Option(
        help="Events table video, start, end, class giving the classes of anomalous "
        "frames (default: each video's category)."
    ),
]

_Choice = TypeVar("_Choice", bound=str)


def require_choice(option: str, value: str, choices: tuple[_Choice, ...]) -> _Choice:
    """``value`` as one of ``choices`` (typed as they are), or a :class:`VadsceneError`
    naming the option and listing them."""
    from vadscene.core.errors import VadsceneError

    for choice in choices:
        if value == choice:
            return choice
    raise VadsceneError(f"unknown {option} '{value}' (expected one of: {', '.join(choices)})")
