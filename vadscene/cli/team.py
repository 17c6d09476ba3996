"""Team commands: register the campaign's ``annotators`` (add, list, rename, merge, revoke,
role, link) and ``assign`` them videos with overlap.

The command line has no login, so what it writes is recorded without a person (``by`` is
empty): whoever can run it can open the store's file anyway."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

import typer

from vadscene.cli.console import out
from vadscene.cli.options import ROLES, WorkspaceArg, require_choice

if TYPE_CHECKING:
    from vadscene.annotate.assignment import Replan
    from vadscene.store.team import Annotator, Role
    from vadscene.store.workspace import Workspace

commands = typer.Typer()
annotators = typer.Typer(
    name="annotators",
    help="Register the team's annotators: add, list, rename, merge, revoke, role, link.",
    no_args_is_help=True,
    epilog="Example: vadscene annotators add ucf-ws Ana --email ana@lab.org",
)
commands.add_typer(annotators)

DEFAULT_BASE_URL = "http://127.0.0.1:8501"

NameArg = Annotated[
    str,
    typer.Argument(
        help="An annotator's name or id (matched without regard to case and spacing).",
        show_default=False,
    ),
]
BaseUrlOption = Annotated[
    str,
    typer.Option(
        help="The app's address as the annotators open it (scheme, host, port), the start of "
        "their link: `vadscene app --team` serves there."
    ),
]
_STRATIFY_BY: tuple[str, ...] = ("category",)


def _open(workspace: Path, *, read_only: bool = False) -> Workspace:
    from vadscene.store.workspace import Workspace

    return Workspace.open(workspace, read_only=read_only)


def _say(text: str) -> None:
    out.print(text, markup=False, highlight=False, emoji=False)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A table: boxed on a terminal; piped, tab-separated lines under a header line."""
    if out.is_terminal:
        from rich.table import Table
        from rich.text import Text

        table = Table(*headers)
        for row in rows:
            table.add_row(*(Text(str(cell)) for cell in row))
        out.print(table)
        return
    for line in [headers, *rows]:  # typer, not rich: rich would turn the tabs into spaces
        typer.echo("\t".join(str(cell).replace("\t", " ") for cell in line))


def _base_url(value: str) -> str:
    parsed = urlsplit(value)
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or parsed.query
        or parsed.fragment
    ):
        from vadscene.core.errors import VadsceneError

        raise VadsceneError(
            f"--base-url {value!r}: expected the app's address as annotators open it, "
            "e.g. http://lab-server:8501 or https://annotate.lab.org"
        )
    return value


def _print_link(workspace: Path, entry: Annotator, base_url: str, secret: str) -> None:
    from vadscene.annotate.campaign import access_link

    again = (
        f"vadscene annotators link {shlex.quote(str(workspace))} {shlex.quote(entry.annotator_id)}"
    )
    _say(f"{entry.display_name}'s personal access link — shown only this once, send it privately:")
    _say(access_link(base_url, secret))
    _say(
        f"It keeps working until the annotator is revoked; a new one: {again}"
        + ("" if base_url != DEFAULT_BASE_URL else " (add --base-url for a lab server's address)")
    )


@annotators.command("add", epilog="Example: vadscene annotators add ucf-ws Ana --email ana@lab.org")
def add(
    workspace: WorkspaceArg,
    name: Annotated[
        str,
        typer.Argument(
            help="Their name as shown; their id is it with case, spacing and Unicode forms "
            "folded (Ana and ANA are one person).",
            show_default=False,
        ),
    ],
    lead: Annotated[
        bool,
        typer.Option(
            "--lead", help="A lead: also adjudicates, assigns, exports, manages annotators."
        ),
    ] = False,
    email: Annotated[
        str | None,
        typer.Option(help="Their e-mail: an identity provider's login maps onto it."),
    ] = None,
    base_url: BaseUrlOption = DEFAULT_BASE_URL,
) -> None:
    """Register an annotator and print their personal access link (once)."""
    base = _base_url(base_url)
    role: Role = "lead" if lead else "annotator"
    with _open(workspace) as ws:
        entry = ws.store.register_annotator(name, role=role, email=email, by=None)
        secret = ws.store.issue_access_link(entry.annotator_id, by=None)
    mail = f", e-mail {entry.email}" if entry.email else ""
    _say(
        f"registered annotator '{entry.annotator_id}' (shown as {entry.display_name}), "
        f"role {entry.role}{mail}"
    )
    _print_link(workspace, entry, base, secret)


@annotators.command(
    "list", epilog="Example: vadscene annotators list ucf-ws --json > annotators.json"
)
def list_(
    workspace: WorkspaceArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the registered annotators, and names in the logs that nobody registered."""
    from vadscene.core.records import AUTO_ANNOTATOR

    with _open(workspace, read_only=True) as ws:
        store = ws.store
        decided: dict[str, int] = {}
        for d in store.current_decisions():
            if d.value is not None and d.annotator != AUTO_ANNOTATOR:
                decided[d.annotator] = decided.get(d.annotator, 0) + 1
        assigned = {name: len(videos) for name, videos in store.assignments().items()}
        registry = store.annotator_registry()
        registered = {entry.annotator_id for entry in registry}
        loose = sorted((set(store.annotators()) | set(assigned)) - registered)
    entries = [
        _Listed(
            id=entry.annotator_id,
            display_name=entry.display_name,
            registered=True,
            role=entry.role,
            email=entry.email,
            added_at=entry.added_at,
            revoked_at=entry.revoked_at,
            aliases=list(entry.aliases),
            decisions=decided.get(entry.annotator_id, 0),
            assigned=assigned.get(entry.annotator_id, 0),
        )
        for entry in registry
    ] + [
        _Listed(
            id=name,
            display_name=name,
            registered=False,
            decisions=decided.get(name, 0),
            assigned=assigned.get(name, 0),
        )
        for name in loose
    ]
    if as_json:
        typer.echo(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        _say(f"no annotator yet: vadscene annotators add {shlex.quote(str(workspace))} NAME")
        return
    _table(
        ["id", "name", "role", "e-mail", "added", "revoked", "aliases", "decisions", "assigned"],
        [
            [
                e.id,
                e.display_name,
                e.role or "(not registered)",
                e.email or "",
                e.added_at or "",
                e.revoked_at or "",
                ", ".join(e.aliases),
                e.decisions,
                e.assigned,
            ]
            for e in entries
        ],
    )
    if loose and out.is_terminal:
        _say(
            "not registered: names found only in the logs; fold a typo into its annotator "
            f"with vadscene annotators merge {shlex.quote(str(workspace))} NAME INTO"
        )


@dataclass(frozen=True, kw_only=True)
class _Listed:
    """One line of ``annotators list`` (its JSON object)."""

    id: str
    display_name: str
    registered: bool
    role: str | None = None
    email: str | None = None
    added_at: str | None = None
    revoked_at: str | None = None
    aliases: list[str] = field(default_factory=list)
    decisions: int
    assigned: int


@annotators.command("rename", epilog="Example: vadscene annotators rename ucf-ws 'Ana' 'Ana López'")
def rename(
    workspace: WorkspaceArg,
    old: NameArg,
    new: Annotated[str, typer.Argument(help="The new name.", show_default=False)],
) -> None:
    """Rename an annotator: their decisions, marks and assignments follow the new id."""
    with _open(workspace) as ws:
        before = ws.store.annotator(old)
        entry = ws.store.rename_annotator(old, new, by=None)
    _say(
        f"renamed '{before.annotator_id}' to '{entry.annotator_id}' (shown as "
        f"{entry.display_name}); history, agreement and releases follow, and rows written "
        f"under '{before.annotator_id}' (a colleague's release too) land on the new id"
    )


@annotators.command("merge", epilog="Example: vadscene annotators merge ucf-ws ANNA ana")
def merge(
    workspace: WorkspaceArg,
    source: Annotated[
        str,
        typer.Argument(
            help="The name to fold in: a registered annotator, or a name found only in the "
            "logs (a typo).",
            show_default=False,
        ),
    ],
    into: Annotated[
        str, typer.Argument(help="The registered annotator it becomes.", show_default=False)
    ],
) -> None:
    """Merge a name into a registered annotator: its decisions count as theirs."""
    with _open(workspace) as ws:
        entry = ws.store.merge_annotators(source, into, by=None)
    _say(
        f"merged '{source}' into '{entry.annotator_id}': its decisions, marks and assignments "
        f"count as {entry.annotator_id}'s (where both decided a factor, the later decision "
        "is current)"
    )


@annotators.command("revoke", epilog="Example: vadscene annotators revoke ucf-ws ana")
def revoke(workspace: WorkspaceArg, name: NameArg) -> None:
    """Revoke an annotator: their links and sessions stop working on the next request."""
    from vadscene.core.errors import VadsceneError

    with _open(workspace) as ws:
        entry = ws.store.annotator(name)
        if not entry.active:
            raise VadsceneError(
                f"annotator '{entry.annotator_id}' is already revoked (since {entry.revoked_at})"
            )
        ws.store.revoke_annotator(entry.annotator_id, by=None)
    _say(
        f"revoked '{entry.annotator_id}': their links and sessions stop working on the next "
        "request; their decisions stay"
    )


@annotators.command("role", epilog="Example: vadscene annotators role ucf-ws ana lead")
def role(
    workspace: WorkspaceArg,
    name: NameArg,
    new_role: Annotated[
        str, typer.Argument(help=f"One of: {', '.join(ROLES)}.", show_default=False)
    ],
) -> None:
    """Give an annotator the role annotator or lead."""
    chosen = require_choice("role", new_role, ROLES)
    with _open(workspace) as ws:
        entry = ws.store.annotator(name)
        if entry.role == chosen:
            _say(f"'{entry.annotator_id}' already has the role {chosen}; nothing changed")
            return
        ws.store.set_annotator_role(entry.annotator_id, chosen, by=None)
    _say(f"'{entry.annotator_id}' now has the role {chosen} (was {entry.role})")


@annotators.command(
    "link",
    epilog="Example: vadscene annotators link ucf-ws ana --base-url https://annotate.lab.org",
)
def link(
    workspace: WorkspaceArg, name: NameArg, base_url: BaseUrlOption = DEFAULT_BASE_URL
) -> None:
    """Issue a new personal access link for an annotator (printed once)."""
    base = _base_url(base_url)
    with _open(workspace) as ws:
        entry = ws.store.annotator(name)
        secret = ws.store.issue_access_link(entry.annotator_id, by=None)
    _print_link(workspace, entry, base, secret)


@commands.command(
    epilog="Example: vadscene assign ucf-ws --annotators ana,bo,cy --overlap 2 "
    "--stratify category --seed 7"
)
def assign(
    workspace: WorkspaceArg,
    team: Annotated[
        str,
        typer.Option(
            "--annotators",
            help="The team, comma-separated: registered annotators, each video goes to "
            "--overlap of them.",
            show_default=False,
        ),
    ],
    overlap: Annotated[int, typer.Option(help="Annotators per video (k).", show_default=False)],
    stratify: Annotated[
        str | None,
        typer.Option(help="Spread each category over everyone in proportion: category."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the plan's tie-breaking.")] = 0,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan and its changes; write nothing.")
    ] = False,
) -> None:
    """Assign every video to k annotators, balanced; a re-plan moves only unstarted work."""
    from vadscene.annotate.assignment import replan
    from vadscene.core.errors import VadsceneError

    if stratify is not None:
        require_choice("--stratify", stratify, _STRATIFY_BY)
    names = [name.strip() for name in team.split(",") if name.strip()]
    if not names:
        raise VadsceneError("--annotators: name at least one registered annotator, e.g. ana,bo")
    with _open(workspace, read_only=dry_run) as ws:
        if not ws.store.video_ids():
            raise VadsceneError(
                f"{ws.root}: the workspace has no videos; nothing to assign "
                f"(vadscene scan {shlex.quote(str(workspace))})"
            )
        planned = replan(ws.store, names, overlap, stratify=stratify is not None, seed=seed)
        written = 0 if dry_run else ws.store.record_assignments(planned.changes, by=None)
    _print_plan(planned, overlap, stratify, seed)
    assigned = sum(1 for change in planned.changes if change[2])
    withdrawn = len(planned.changes) - assigned
    if not planned.changes:
        _say("the plan is the current assignment; nothing to write")
    elif dry_run:
        _say(f"dry run: would assign {assigned} and withdraw {withdrawn}; nothing written")
    else:
        _say(
            f"written in one transaction: {written} changes ({assigned} assigned, "
            f"{withdrawn} withdrawn)"
        )


def _print_plan(planned: Replan, overlap: int, stratify: str | None, seed: int) -> None:
    how = f", stratified by {stratify}" if stratify else ""
    _say(
        f"plan: {len(planned.plan)} videos, {overlap} of {len(planned.team)} annotators "
        f"each{how}, seed {seed}"
    )
    beyond = sum(1 for names in planned.plan.values() if len(names) > overlap)
    if beyond:
        _say(f"{beyond} videos keep more than {overlap} annotators: more of the team started them")
    _table(
        ["annotator", "assigned", "started", "new", "withdrawn"],
        [[r.annotator, r.assigned, r.started, r.added, r.withdrawn] for r in planned.annotators],
    )
    _say("videos per category:")
    _table(
        ["category", *(r.annotator for r in planned.annotators)],
        [
            [category, *(r.by_category[category] for r in planned.annotators)]
            for category in planned.categories
        ],
    )
