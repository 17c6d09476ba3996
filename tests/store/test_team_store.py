"""Registered annotators, renames and merges that history follows, access links and sessions
kept as hashes (issue 23, items 1 and 2: the store's part)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from helpers import ABUSE, ARSON

from vadscene.annotate.review import agreement
from vadscene.core.errors import StoreError
from vadscene.release.releases import build_release
from vadscene.store.team import canonical_annotator, secret_hash
from vadscene.store.workspace import Workspace

HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("Ana", "ana"),
        ("ANA", "ana"),
        ("  Ana   López ", "ana lópez"),
        ("Ａｎａ", "ana"),  # full-width letters: NFKC
        ("Ana Lo\u0301pez", "ana lópez"),  # a combining accent: NFKC composes it
        (
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        ),  # ZWNJ spells Persian
    ],
)
def test_annotator_ids_are_canonical(given: str, canonical: str) -> None:
    assert canonical_annotator(given) == canonical


@pytest.mark.parametrize(
    "name", ["", "   ", "auto", "AUTO", "ana\nben", "a\u200bb", "ana\u202eneb"]
)
def test_a_name_that_cannot_be_an_id_is_refused(name: str) -> None:
    with pytest.raises(StoreError):
        canonical_annotator(name)


def test_one_person_however_spelled(small_workspace: Workspace) -> None:
    store = small_workspace.store
    store.register_annotator("Ana")
    with pytest.raises(StoreError, match="'ana' is already registered"):
        store.register_annotator("ANA")
    store.record_decision(ABUSE, "crowd", "few", annotator="ANA")
    store.record_decision(ARSON, "crowd", "many", annotator="ana")
    assert store.annotators() == ["ana"]
    assert store.current_values("Ana") == {(ABUSE, "crowd"): "few", (ARSON, "crowd"): "many"}


def test_a_rename_is_logged_and_history_follows_it(small_workspace: Workspace) -> None:
    store = small_workspace.store
    store.register_annotator("ana")
    store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    store.set_mark(ABUSE, "flag", True, annotator="ana")
    before = [(d.decision_id, d.annotator) for d in store.decision_log()]

    store.rename_annotator("ana", "Ana López")

    assert store.decision_log() and [
        (d.decision_id, d.annotator) for d in store.decision_log()
    ] == (before)  # the log is not rewritten
    assert store.annotators() == ["ana lópez"]
    assert store.current_values("ana lópez") == {(ABUSE, "crowd"): "few"}
    assert store.marks()[(ABUSE, "ana lópez")]["flag"] is True
    # a write under the former name lands on the new id
    store.record_decision(ARSON, "crowd", "many", annotator="ana")
    assert store.decision_log()[-1].annotator == "ana lópez"
    release = build_release(small_workspace)
    assert release.annotators == ("ana lópez",)
    assert [e.kind for e in store.annotator_events()] == ["add", "rename"]
    with pytest.raises(StoreError, match="former name"):
        store.register_annotator("ana")


def test_a_merge_folds_a_typo_into_the_registered_annotator(small_workspace: Workspace) -> None:
    store = small_workspace.store
    now = datetime.now(UTC)
    store.register_annotator("ana")
    store.register_annotator("ben")
    # "anna" is a typo nobody registered; ana's later decision on the same key wins the merge
    store.record_decision(ABUSE, "color", "grayscale", annotator="anna", decided_at=now - 2 * HOUR)
    store.record_decision(ABUSE, "color", "color", annotator="ana", decided_at=now - HOUR)
    store.record_decision(ARSON, "color", "grayscale", annotator="anna", decided_at=now - HOUR)
    store.record_decision(ARSON, "color", "grayscale", annotator="ben")
    store.record_decision(ABUSE, "color", "color", annotator="ben")
    assert store.annotators() == ["ana", "anna", "ben"]

    store.merge_annotators("anna", "ana")

    assert store.annotators() == ["ana", "ben"]
    assert store.current_values("ana") == {(ABUSE, "color"): "color", (ARSON, "color"): "grayscale"}
    (color,) = [f for f in agreement(store) if f.factor == "color"]
    assert color.annotators == ("ana", "ben")
    assert color.kappa == pytest.approx(1.0)  # both agree on both videos, both values used
    assert store.annotator("anna").annotator_id == "ana"


def test_links_and_sessions_are_kept_as_hashes_and_revoke_ends_them(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    store.register_annotator("ana")
    secret = store.issue_access_link("ana")
    token = store.open_session("ana", via="link")
    assert store.annotator_for_secret(secret).annotator_id == "ana"
    assert store.session_annotator(token).annotator_id == "ana"
    with sqlite3.connect(store.path) as db:
        dump = "\n".join(db.iterdump())
    assert secret not in dump and token not in dump
    assert secret_hash(secret) in dump and secret_hash(token) in dump

    store.revoke_annotator("ana")

    assert store.annotator_for_secret(secret) is None
    assert store.session_annotator(token) is None
    with pytest.raises(StoreError, match="revoked"):
        store.open_session("ana", via="link")
    assert store.annotator_for_secret("not-a-secret") is None


def test_assignments_need_registered_annotators_and_log_only_changes(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    with pytest.raises(StoreError, match="no registered annotator 'ana'"):
        store.record_assignments([(ABUSE, "ana", True)])
    store.register_annotator("ana")
    assert store.record_assignments([(ABUSE, "ana", True), (ARSON, "ana", True)]) == 2
    assert store.record_assignments([(ABUSE, "ana", True)]) == 0  # already so
    assert store.record_assignments([(ARSON, "ana", False)]) == 1
    assert store.assignments() == {"ana": [ABUSE]}
    with pytest.raises(StoreError, match="unknown video 'nope'"):
        store.record_assignments([(ABUSE, "ana", False), ("nope", "ana", True)])
    assert store.assignments() == {"ana": [ABUSE]}  # the refused batch wrote nothing


def test_a_colleagues_spelling_or_former_name_lands_on_the_registered_id(
    small_workspace: Workspace, tmp_path
) -> None:
    from vadscene.release.releases import import_release

    with Workspace.create(tmp_path / "colleague", video_root=None, dataset="small") as colleague:
        colleague.store.register_videos(small_workspace.store.videos())
        colleague.store.record_decision(ABUSE, "crowd", "few", annotator="Ana")  # unregistered
        colleague.store.record_decision(ARSON, "crowd", "many", annotator="benito")
        theirs = build_release(colleague)
    store = small_workspace.store
    store.register_annotator("ana")
    store.register_annotator("benito")
    store.rename_annotator("benito", "Ben")

    counts = import_release(theirs, small_workspace)

    assert counts.decisions_added == 2
    assert store.annotators() == ["ana", "ben"]
    assert store.current_values("ana") == {(ABUSE, "crowd"): "few"}
    assert store.current_values("ben") == {(ARSON, "crowd"): "many"}
    assert import_release(theirs, small_workspace).decisions_added == 0  # and idempotent
