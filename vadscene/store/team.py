"""The team's state in the annotation store: registered annotators, access links, login
sessions and video assignments.

Annotator ids are canonical (:func:`canonical_annotator`: Unicode NFKC, spaces collapsed,
case folded), so "Ana", "ANA" and "ana" are one person. The registry can change — a rename, a
merge, a revocation — but every change is also appended to ``annotator_events``, and the
decision log is never rewritten: a rename or merge adds an alias (old id → new id) that every
read of the store applies, so history, agreement and releases follow it, and a release from a
colleague who still has the old name lands on the new one.

A personal access link carries a random secret; the store keeps only its SHA-256, and a login
session likewise. Revoking an annotator revokes their links and sessions in one transaction,
so the next request of theirs is refused.

Assignments (video → annotator, made or withdrawn) are logged with their time and merge by it
like every other piece of state (:mod:`vadscene.store.database`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from vadscene.core.errors import StoreError
from vadscene.core.instants import canonical, now, stored_time
from vadscene.core.records import AUTO_ANNOTATOR

Role = Literal["annotator", "lead"]
ROLES: tuple[Role, ...] = ("annotator", "lead")
"""annotator: labels their own videos; lead: also adjudicates, assigns, exports and manages
annotators."""

SECRET_BYTES = 24
"""Random bytes in an access-link secret or a session token (URL-safe base64 of them)."""


def canonical_annotator(name: object) -> str:
    """The canonical id of an annotator name: NFKC, outer spaces stripped, inner runs of white
    space one space, case folded. Refuses (``StoreError``) a name that is empty, holds a
    control character, or is the reserved ``auto``.

    >>> canonical_annotator("  Ana   López ")
    'ana lópez'
    """
    if not isinstance(name, str):
        raise StoreError(f"an annotator name must be text, got {type(name).__name__}")
    normal = unicodedata.normalize("NFKC", name)
    # format characters hide or reorder text (U+200B, U+202E), but ZWNJ and ZWJ spell names
    # in Persian and Indic scripts
    control = next(
        (
            c
            for c in normal
            if unicodedata.category(c) == "Cc"
            or (unicodedata.category(c) == "Cf" and c not in "\u200c\u200d")
        ),
        None,
    )
    if control is not None:
        raise StoreError(f"annotator name {name!r} holds U+{ord(control):04X}, a control character")
    folded = re.sub(r"\s+", " ", normal).strip().casefold()
    if not folded:
        raise StoreError("an annotator name is required (got an empty name)")
    if folded == AUTO_ANNOTATOR:
        raise StoreError(f"'{AUTO_ANNOTATOR}' is reserved for measured decisions")
    return folded


def secret_hash(secret: str) -> str:
    """What the store keeps of a link secret or session token."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Annotator:
    """A registered annotator."""

    annotator_id: str
    display_name: str
    role: Role
    email: str | None
    added_at: str
    revoked_at: str | None
    aliases: tuple[str, ...] = ()
    """Former ids (renamed or merged into this one)."""

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class AnnotatorEvent:
    """One change of the registry, as logged."""

    event_id: int
    kind: str
    annotator: str
    target: str | None
    at: str
    by: str | None


@dataclass(frozen=True)
class AssignmentRow:
    """The current assignment state of one (video, annotator), with its time."""

    video_id: str
    annotator: str
    assigned: bool
    assigned_at: str
    assigned_by: str | None


class TeamStore:
    """The team methods of :class:`~vadscene.store.database.AnnotationStore` (a mixin: it uses
    the store's transaction and read helpers)."""

    if TYPE_CHECKING:
        _write: Callable[..., AbstractContextManager[sqlite3.Connection]]
        _read: Callable[..., list[tuple]]

    # --- names ----------------------------------------------------------------------------

    def aliases(self) -> dict[str, str]:
        """Former id → current id, resolved through chains (a renamed, then merged, name)."""
        direct = dict(self._read("SELECT alias, annotator FROM annotator_aliases"))
        resolved = {}
        for alias in direct:
            target, seen = direct[alias], {alias}
            while target in direct and target not in seen:
                seen.add(target)
                target = direct[target]
            resolved[alias] = target
        return resolved

    def resolve_annotator(self, name: str) -> str:
        """The id a name writes and reads under: the current id of a registered (or former)
        name, matched canonically; an unregistered name as given (stores of one annotator
        need no registry)."""
        if name == AUTO_ANNOTATOR:
            return name
        aliases = self.aliases()
        for candidate in (name, _canonical_or_none(name)):
            if candidate is None:
                continue
            candidate = aliases.get(candidate, candidate)
            if self._read("SELECT 1 FROM annotators WHERE annotator = ?", (candidate,)):
                return candidate
        return aliases.get(name, name)

    # --- the registry ---------------------------------------------------------------------

    def register_annotator(
        self,
        name: str,
        *,
        role: Role = "annotator",
        email: str | None = None,
        by: str | None = None,
    ) -> Annotator:
        """Add an annotator under the canonical id of ``name`` (shown as ``name``); refused
        when that id, or a former id renamed away, is taken."""
        annotator_id = canonical_annotator(name)
        _check_role(role)
        mail = _canonical_email(email)
        with self._write() as db:
            self._refuse_taken(db, annotator_id)
            if mail is not None:
                self._refuse_email_taken(db, mail)
            at = canonical(now())
            db.execute(
                "INSERT INTO annotators (annotator, display_name, role, email, added_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (annotator_id, " ".join(name.split()), role, mail, at),
            )
            _log(db, "add", annotator_id, role, at, by)
        return self.annotator(annotator_id)

    def annotator_registry(self) -> list[Annotator]:
        """Every registered annotator (revoked ones included), by id."""
        aliases: dict[str, list[str]] = {}
        for alias, target in sorted(self.aliases().items()):
            aliases.setdefault(target, []).append(alias)
        rows = self._read(
            "SELECT annotator, display_name, role, email, added_at, revoked_at FROM annotators "
            "ORDER BY annotator"
        )
        return [
            Annotator(
                annotator_id=row[0],
                display_name=row[1],
                role=row[2],
                email=row[3],
                added_at=row[4],
                revoked_at=row[5],
                aliases=tuple(aliases.get(row[0], ())),
            )
            for row in rows
        ]

    def annotator(self, name: str) -> Annotator:
        """The registered annotator ``name`` resolves to; ``StoreError`` listing the registered
        ones otherwise."""
        annotator_id = self.resolve_annotator(name)
        for entry in self.annotator_registry():
            if entry.annotator_id == annotator_id:
                return entry
        known = ", ".join(a.annotator_id for a in self.annotator_registry()) or "none yet"
        raise StoreError(f"no registered annotator '{name}' (registered: {known})")

    def annotator_events(self) -> list[AnnotatorEvent]:
        """The registry's log, in order."""
        return [
            AnnotatorEvent(*row)
            for row in self._read(
                "SELECT event_id, kind, annotator, target, at, by FROM annotator_events "
                "ORDER BY event_id"
            )
        ]

    def rename_annotator(self, old: str, new: str, *, by: str | None = None) -> Annotator:
        """Give a registered annotator a new id (and display name); the old id becomes an
        alias, so their decisions, marks and assignments follow."""
        entry = self.annotator(old)
        new_id = canonical_annotator(new)
        with self._write() as db:
            if new_id != entry.annotator_id:
                self._refuse_taken(db, new_id)
            at = canonical(now())
            db.execute(
                "UPDATE annotators SET annotator = ?, display_name = ? WHERE annotator = ?",
                (new_id, " ".join(new.split()), entry.annotator_id),
            )
            if new_id != entry.annotator_id:
                _alias(db, entry.annotator_id, new_id, at)
                self._move_credentials(db, entry.annotator_id, new_id)
            _log(db, "rename", entry.annotator_id, new_id, at, by)
        return self.annotator(new_id)

    def merge_annotators(self, source: str, into: str, *, by: str | None = None) -> Annotator:
        """Fold ``source`` (registered, or a name found only in the logs — a typo) into the
        registered ``into``: ``source`` becomes an alias, so its decisions count as ``into``'s
        (the later of two decisions on one key is current)."""
        target = self.annotator(into)
        logged = self._read(
            "SELECT 1 FROM decisions WHERE annotator = ? UNION SELECT 1 FROM marks "
            "WHERE annotator = ?",
            (source, source),
        )
        # a name found as written in the logs ("ANA" before "ana" was registered) is folded
        # as written; otherwise the name means whom it resolves to
        source_id = (
            source if logged and source not in self.aliases() else (self.resolve_annotator(source))
        )
        if source_id == target.annotator_id:
            raise StoreError(f"'{source}' already is '{target.annotator_id}'; nothing to merge")
        if source_id == AUTO_ANNOTATOR:
            raise StoreError(f"'{AUTO_ANNOTATOR}' is measurement, not an annotator")
        with self._write() as db:
            at = canonical(now())
            db.execute("DELETE FROM annotators WHERE annotator = ?", (source_id,))
            _alias(db, source_id, target.annotator_id, at)
            self._move_credentials(db, source_id, target.annotator_id)
            _log(db, "merge", source_id, target.annotator_id, at, by)
        return self.annotator(target.annotator_id)

    def revoke_annotator(self, name: str, *, by: str | None = None) -> Annotator:
        """Revoke an annotator: their links and sessions stop working on the next request;
        their decisions stay."""
        entry = self.annotator(name)
        with self._write() as db:
            at = canonical(now())
            db.execute(
                "UPDATE annotators SET revoked_at = ? WHERE annotator = ?",
                (at, entry.annotator_id),
            )
            db.execute(
                "UPDATE access_links SET revoked_at = ? WHERE annotator = ? AND revoked_at IS NULL",
                (at, entry.annotator_id),
            )
            db.execute("DELETE FROM sessions WHERE annotator = ?", (entry.annotator_id,))
            _log(db, "revoke", entry.annotator_id, None, at, by)
        return self.annotator(entry.annotator_id)

    def set_annotator_role(self, name: str, role: Role, *, by: str | None = None) -> Annotator:
        entry = self.annotator(name)
        _check_role(role)
        with self._write() as db:
            db.execute(
                "UPDATE annotators SET role = ? WHERE annotator = ?", (role, entry.annotator_id)
            )
            _log(db, "role", entry.annotator_id, role, canonical(now()), by)
        return self.annotator(entry.annotator_id)

    def set_annotator_email(
        self, name: str, email: str | None, *, by: str | None = None
    ) -> Annotator:
        """The e-mail an identity provider reports for this annotator (OpenID Connect login),
        also their Label Studio user."""
        entry = self.annotator(name)
        mail = _canonical_email(email)
        with self._write() as db:
            if mail is not None:
                self._refuse_email_taken(db, mail, except_for=entry.annotator_id)
            db.execute(
                "UPDATE annotators SET email = ? WHERE annotator = ?", (mail, entry.annotator_id)
            )
            _log(db, "email", entry.annotator_id, mail, canonical(now()), by)
        return self.annotator(entry.annotator_id)

    def annotator_by_email(self, email: str) -> Annotator | None:
        """The active registered annotator with this e-mail, if any."""
        mail = _canonical_email(email)
        rows = self._read(
            "SELECT annotator FROM annotators WHERE email = ? AND revoked_at IS NULL", (mail,)
        )
        return self.annotator(rows[0][0]) if rows else None

    def _refuse_taken(self, db: sqlite3.Connection, annotator_id: str) -> None:
        if db.execute("SELECT 1 FROM annotators WHERE annotator = ?", (annotator_id,)).fetchone():
            raise StoreError(f"annotator '{annotator_id}' is already registered")
        former = db.execute(
            "SELECT annotator FROM annotator_aliases WHERE alias = ?", (annotator_id,)
        ).fetchone()
        if former:
            raise StoreError(
                f"'{annotator_id}' is a former name of '{former[0]}' (renamed or merged); "
                "choose another name"
            )

    @staticmethod
    def _refuse_email_taken(
        db: sqlite3.Connection, email: str, except_for: str | None = None
    ) -> None:
        row = db.execute("SELECT annotator FROM annotators WHERE email = ?", (email,)).fetchone()
        if row and row[0] != except_for:
            raise StoreError(f"the e-mail {email} already belongs to annotator '{row[0]}'")

    @staticmethod
    def _move_credentials(db: sqlite3.Connection, old: str, new: str) -> None:
        db.execute("UPDATE access_links SET annotator = ? WHERE annotator = ?", (new, old))
        db.execute("UPDATE sessions SET annotator = ? WHERE annotator = ?", (new, old))

    # --- access links and sessions --------------------------------------------------------

    def issue_access_link(self, name: str, *, by: str | None = None) -> str:
        """A new secret for the annotator's personal link, returned once (the store keeps its
        hash); earlier links of theirs keep working until revoked."""
        entry = self.annotator(name)
        if not entry.active:
            raise StoreError(
                f"annotator '{entry.annotator_id}' is revoked, so no new link is issued; their "
                "decisions stay (a revoked name cannot be registered again: add them under "
                "another name and merge the two)"
            )
        secret = secrets.token_urlsafe(SECRET_BYTES)
        with self._write() as db:
            at = canonical(now())
            db.execute(
                "INSERT INTO access_links (secret_hash, annotator, created_at) VALUES (?, ?, ?)",
                (secret_hash(secret), entry.annotator_id, at),
            )
            _log(db, "link", entry.annotator_id, None, at, by)
        return secret

    def annotator_for_secret(self, secret: str) -> Annotator | None:
        """The active annotator a link secret belongs to; None for an unknown or revoked one."""
        rows = self._read(
            "SELECT l.annotator FROM access_links AS l JOIN annotators AS a "
            "ON a.annotator = l.annotator WHERE l.secret_hash = ? AND l.revoked_at IS NULL "
            "AND a.revoked_at IS NULL",
            (secret_hash(secret),),
        )
        return self.annotator(rows[0][0]) if rows else None

    def open_session(self, name: str, *, via: Literal["link", "oidc"]) -> str:
        """A new login session of an active annotator; returns its token (kept as a hash)."""
        entry = self.annotator(name)
        if not entry.active:
            raise StoreError(f"annotator '{entry.annotator_id}' is revoked")
        token = secrets.token_urlsafe(SECRET_BYTES)
        with self._write() as db:
            db.execute(
                "INSERT INTO sessions (session_hash, annotator, via, created_at) "
                "VALUES (?, ?, ?, ?)",
                (secret_hash(token), entry.annotator_id, via, canonical(now())),
            )
        return token

    def session_annotator(self, token: str) -> Annotator | None:
        """The active annotator of a session token; None for an unknown, closed or revoked
        one. Read on every request, so a revocation takes effect on the next."""
        rows = self._read(
            "SELECT s.annotator FROM sessions AS s JOIN annotators AS a "
            "ON a.annotator = s.annotator WHERE s.session_hash = ? AND a.revoked_at IS NULL",
            (secret_hash(token),),
        )
        return self.annotator(rows[0][0]) if rows else None

    def close_session(self, token: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM sessions WHERE session_hash = ?", (secret_hash(token),))

    def record_login_failure(self, remote: str, reason: str) -> None:
        """Log a refused login (bad or revoked link, unknown identity) from ``remote``."""
        with self._write() as db:
            db.execute(
                "INSERT INTO login_failures (at, remote, reason) VALUES (?, ?, ?)",
                (canonical(now()), remote, reason),
            )

    def login_failures_since(self, remote: str, since: str) -> int:
        """Refused logins from ``remote`` at or after ``since`` (canonical time)."""
        return int(
            self._read(
                "SELECT COUNT(*) FROM login_failures WHERE remote = ? AND at >= ?",
                (remote, since),
            )[0][0]
        )

    # --- assignments ----------------------------------------------------------------------

    def record_assignments(
        self,
        changes: Iterable[tuple[str, str, bool]],
        *,
        by: str | None = None,
        at: str | datetime | None = None,
    ) -> int:
        """Assign (True) or withdraw (False) videos to registered annotators, in one
        transaction at one time; only changes of the current state are logged. Returns how
        many were logged."""
        ids: dict[str, str] = {}  # a plan names each annotator thousands of times
        rows = []
        for video_id, name, assigned in changes:
            if name not in ids:
                ids[name] = self.annotator(name).annotator_id
            rows.append((video_id, ids[name], bool(assigned)))
        try:
            when = stored_time(at, field="assigned_at")
        except ValueError as exc:
            raise StoreError(str(exc)) from None
        current = {(r.video_id, r.annotator): r.assigned for r in self.assignment_rows()}
        logged = 0
        with self._write() as db:
            for video_id, annotator_id, assigned in rows:
                if current.get((video_id, annotator_id), False) == assigned:
                    continue
                if not db.execute(
                    "SELECT 1 FROM videos WHERE video_id = ?", (video_id,)
                ).fetchone():
                    raise StoreError(f"unknown video '{video_id}'")
                db.execute(
                    "INSERT INTO assignments (video_id, annotator, assigned, assigned_at, "
                    "assigned_by) VALUES (?, ?, ?, ?, ?)",
                    (video_id, annotator_id, int(assigned), when, by),
                )
                current[(video_id, annotator_id)] = assigned
                logged += 1
        return logged

    def assignment_rows(self) -> list[AssignmentRow]:
        """The current state of every (video, annotator) ever assigned, aliases applied (the
        latest time wins when two former names meet)."""
        aliases = self.aliases()
        rows = self._read(
            "SELECT a.video_id, a.annotator, a.assigned, a.assigned_at, a.assigned_by, "
            "a.assignment_id FROM current_assignment_ids AS c JOIN assignments AS a "
            "ON a.assignment_id = c.assignment_id ORDER BY a.video_id, a.annotator"
        )
        latest: dict[tuple[str, str], tuple] = {}
        for video_id, name, assigned, at, by, row_id in rows:
            key = (video_id, aliases.get(name, name))
            if key not in latest or (at, row_id) > (latest[key][2], latest[key][4]):
                latest[key] = (bool(assigned), by, at, name, row_id)
        return [
            AssignmentRow(video_id, annotator, assigned, at, by)
            for (video_id, annotator), (assigned, by, at, _name, _id) in sorted(latest.items())
        ]

    def team_revision(self) -> tuple[int, int]:
        """Changes whenever assignments or aliases (renames, merges) change: a cache key for
        views that depend on who is assigned what, and under which id."""
        row = self._read(
            "SELECT (SELECT COALESCE(MAX(assignment_id), 0) FROM assignments), "
            "(SELECT COUNT(*) FROM annotator_aliases)"
        )[0]
        return int(row[0]), int(row[1])

    def assignments(self) -> dict[str, list[str]]:
        """Annotator → the videos currently assigned to them, sorted."""
        result: dict[str, list[str]] = {}
        for row in self.assignment_rows():
            if row.assigned:
                result.setdefault(row.annotator, []).append(row.video_id)
        return result


def _canonical_or_none(name: str) -> str | None:
    try:
        return canonical_annotator(name)
    except StoreError:
        return None


def _canonical_email(email: str | None) -> str | None:
    if email is None or not email.strip():
        return None
    mail = email.strip().casefold()
    if "@" not in mail or any(c.isspace() for c in mail):
        raise StoreError(f"'{email}' is not an e-mail address")
    return mail


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise StoreError(f"unknown role '{role}' (expected one of: {', '.join(ROLES)})")


def _alias(db: sqlite3.Connection, old: str, new: str, at: str) -> None:
    db.execute(
        "INSERT OR REPLACE INTO annotator_aliases (alias, annotator, at) VALUES (?, ?, ?)",
        (old, new, at),
    )


def _log(
    db: sqlite3.Connection, kind: str, annotator: str, target: str | None, at: str, by: str | None
) -> None:
    db.execute(
        "INSERT INTO annotator_events (kind, annotator, target, at, by) VALUES (?, ?, ?, ?, ?)",
        (kind, annotator, target, at, by),
    )
