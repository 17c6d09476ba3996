"""Output files, written atomically: the one path by which vadscene replaces a file.

Every output — release JSON and CSV, the JSON Schema, Label Studio files, audit reports,
browser proxies, the workspace configuration — goes through :func:`atomic_write`,
:func:`replace_together`, :func:`atomic_output` or, for a folder replaced as a whole (an audit
report), :class:`NewFolder`. A file on its own is replaced so:

1. the content goes to a temporary file in the target's folder,
   ``.<target name>.<process id>-<8 random hex digits>.tmp`` (:data:`TEMP_NAME`), created with
   mode 0666 so that the kernel applies the umask — 0644 under umask 022, readable by
   colleagues on a shared server; 0600 under 077 (``mkstemp`` would force 0600);
2. the temporary file is flushed and ``fsync``-ed, renamed over the target (atomic within a
   filesystem: a reader sees the old file or the new one, never half of one), and the folder
   is ``fsync``-ed so the rename itself survives a power cut.

Several files of one output (a release's JSON and CSV) are replaced together or not at all:
:func:`replace_together` writes every temporary first, then records the planned renames in an
intent file (``.<first target name>.<pid>-<hex>.intent``) before renaming. A process killed
between the renames leaves the intent behind, and the next write into that folder completes the
renames (rolls forward) — so a new JSON never stands beside an old CSV for longer than until
then. Temporaries of killed writers, which nothing else would remove, are deleted by the next
write into their folder (:func:`remove_stale_temporaries`) once their process is gone.

Failures become :class:`~vadscene.core.errors.OutputError` with one line naming the file and the
reason (disk full, read-only, permissions); the previous file, if any, is left unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from vadscene.core.errors import OutputError

TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$")
"""The name of a temporary file of this module (and of
:func:`vadscene.video.proxies.make_proxy`)."""

INTENT_NAME = re.compile(r"^\.(?P<target>.+)\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.intent$")
"""The name of an intent file of :func:`replace_together`: the renames it still has to do."""


def temporary_path(target: Path) -> Path:
    """A fresh temporary name beside ``target`` (unique per process and call)."""
    return target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def atomic_write(target: Path | str, data: str | bytes) -> Path:
    """Replace ``target`` by ``data`` (text is written as UTF-8, newlines untranslated)."""
    target = Path(target)
    replace_together([(target, data)])
    return target


def replace_together(files: Sequence[tuple[Path, str | bytes]]) -> None:
    """Replace several files so that either all of them change or none does (see the module
    docstring: a process killed between the renames is completed by the next write)."""
    targets = [Path(target) for target, _ in files]
    for folder in dict.fromkeys(target.parent for target in targets):
        remove_stale_temporaries(folder)
    temporaries: list[Path] = []
    intent: Path | None = None
    try:
        for target, (_, data) in zip(targets, files, strict=True):
            temporary = temporary_path(target)
            temporaries.append(temporary)
            _write_synced(temporary, data.encode("utf-8") if isinstance(data, str) else data)
        if len(targets) > 1:
            intent = targets[0].with_name(temporaries[0].name.removesuffix(".tmp") + ".intent")
            plan = [
                [str(t.resolve()), str(f.resolve())]
                for t, f in zip(temporaries, targets, strict=True)
            ]
            _write_synced(intent, json.dumps({"replace": plan}).encode("utf-8"))
            sync_folder(intent.parent)
    except BaseException as exc:
        for path in (*temporaries, *([intent] if intent else [])):
            _remove(path)
        if isinstance(exc, OSError):
            failed = targets[len(temporaries) - 1] if temporaries else targets[0]
            raise _output_error(failed, exc) from None
        raise
    try:
        for temporary, target in zip(temporaries, targets, strict=True):
            os.replace(temporary, target)
        for folder in dict.fromkeys(target.parent for target in targets):
            sync_folder(folder)
        if intent is not None:
            intent.unlink()
    except OSError as exc:
        raise _output_error(targets[0], exc) from None


@contextmanager
def atomic_output(target: Path) -> Iterator[Path]:
    """For producers that write a file by name (an encoder): yields a temporary path beside
    ``target``; when the block ends normally the file is synced and renamed over ``target``,
    otherwise it is removed."""
    remove_stale_temporaries(target.parent)
    temporary = temporary_path(target)
    try:
        yield temporary
        with temporary.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        sync_folder(target.parent)
    except BaseException as exc:
        _remove(temporary)
        if isinstance(exc, OSError):
            raise _output_error(target, exc) from None
        raise


class NewFolder:
    """A folder that does not exist yet, filled with files and then made durable as a whole.

    For an output that replaces a folder at once (an audit report is written into a hidden
    staging folder that is then renamed into place). No one reads the folder before that
    rename, so a file needs neither a temporary name nor a sync of its own: :meth:`write` only
    writes, and :meth:`make_durable` syncs every file's data in one pass and then every folder
    once (a folder's sync makes the names in it durable). The caller renames the folder into
    place only after :meth:`make_durable` and then syncs the folder holding it once
    (:func:`sync_folder`), so the rename survives a power cut too.

    The order is what makes the rename atomic across a power cut as well: if the rename
    reached the disk before the files' data, the folder could come back holding empty or
    truncated files. ``os.sync`` would order it too, but it waits for every dirty file of the
    machine, other people's included. The files are synced concurrently, from a few threads,
    so that the filesystem can commit them together (a journaling filesystem writes one
    commit for the syncs waiting on it) instead of one commit per file.

    Use it as a context manager: leaving the block closes what an error left open; the files
    stay for the caller to remove with the folder. Failures are
    :class:`~vadscene.core.errors.OutputError` naming the file or folder.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True)
        except OSError as exc:
            raise _output_error(self.root, exc) from None
        self._folders = [self.root]
        self._unsynced: list[int] = []

    def __enter__(self) -> NewFolder:
        return self

    def __exit__(self, *_exc: object) -> None:
        for descriptor in self._unsynced:
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self._unsynced = []

    def write(self, name: str, data: str | bytes) -> Path:
        """Write ``data`` (text as UTF-8, newlines untranslated) to the new file ``name``, a
        path relative to the folder (``"figures/a.vl.json"``); returns its path."""
        path = self.root / name
        try:
            self._make_folders(path.parent)
            content = data.encode("utf-8") if isinstance(data, str) else data
            self._unsynced.append(_write_new(path, content))
            if len(self._unsynced) >= _MAX_UNSYNCED:
                self._sync_files()
        except OSError as exc:
            raise _output_error(path, exc) from None
        return path

    def make_durable(self) -> None:
        """Sync every file written so far, then every folder of the tree."""
        try:
            self._sync_files()
            for folder in self._folders:
                sync_folder(folder)
        except OSError as exc:
            raise _output_error(self.root, exc) from None

    def _make_folders(self, folder: Path) -> None:
        missing = []
        while folder != self.root and not folder.is_dir():
            missing.append(folder)
            folder = folder.parent
        for new in reversed(missing):
            new.mkdir()
            self._folders.append(new)

    def _sync_files(self) -> None:
        pending, self._unsynced = self._unsynced, []
        try:
            if len(pending) == 1:
                os.fsync(pending[0])
            elif pending:
                with ThreadPoolExecutor(min(len(pending), _SYNC_THREADS)) as pool:
                    list(pool.map(os.fsync, pending))  # list(): raises a sync's error
        finally:
            for descriptor in pending:
                with contextlib.suppress(OSError):
                    os.close(descriptor)


_SYNC_THREADS = 8
"""Threads syncing the files of a :class:`NewFolder` at once (``fsync`` waits on the disk, not
on Python: it releases the GIL)."""

_MAX_UNSYNCED = 256
"""Files a :class:`NewFolder` keeps open for its pass of syncs; at this many it syncs them
early, which keeps it well under a process's limit of open files."""


def remove_stale_temporaries(folder: Path) -> list[str]:
    """Finish or delete what killed writers left in ``folder``; returns the names handled.

    An intent file of a process that is gone is rolled forward: its remaining temporaries are
    complete (they were synced before the intent was written), so they are renamed over their
    targets. Then every temporary (:data:`TEMP_NAME`) of a process that is gone is deleted. A
    file of a live process may be another write in progress, so it is left alone; process
    ids are this machine's (writers of one folder run on one machine).
    """
    if not folder.is_dir():
        return []
    handled = []
    for path in sorted(folder.iterdir()):
        match = INTENT_NAME.match(path.name)
        if match is None or process_exists(int(match["pid"])):
            continue
        try:
            plan = json.loads(path.read_text(encoding="utf-8"))["replace"]
            for temporary, target in plan:
                if Path(temporary).is_file():
                    os.replace(temporary, target)
            path.unlink()
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an intent cut short by the kill: its temporaries are deleted below
        handled.append(path.name)
    for path in sorted(folder.iterdir()):
        match = TEMP_NAME.match(path.name)
        if match is None or not path.is_file() or process_exists(int(match["pid"])):
            continue
        try:
            path.unlink(missing_ok=True)
        except OSError:
            continue
        handled.append(path.name)
    for path in folder.iterdir():  # intents whose rolling forward failed above: now inert
        match = INTENT_NAME.match(path.name)
        if match is not None and not process_exists(int(match["pid"])):
            path.unlink(missing_ok=True)
    return handled


def process_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (when unsure: yes)."""
    if pid <= 0 or pid == os.getpid() or sys.platform == "win32":
        # os.kill(pid, 0) would interrupt the process on Windows; our own pid may be another
        # thread's write. Both are kept, which is the safe side.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except (OverflowError, OSError):  # not a pid this system can have
        return False
    return True


def _remove(path: Path) -> None:
    """Remove a temporary file if it is there; on a read-only disk there is nothing to do."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _write_synced(path: Path, data: bytes) -> None:
    descriptor = _write_new(path, data)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_new(path: Path, data: bytes) -> int:
    """Create ``path`` holding ``data``; returns its open descriptor for the caller to sync
    and close."""
    # O_EXCL: never follow or reuse a name someone planted; 0o666: the umask decides the mode.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def sync_folder(folder: Path) -> None:
    """Make the names in ``folder`` (files created, renamed or removed there) durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _output_error(target: Path, exc: OSError) -> OutputError:
    """One line naming the file and the reason; the previous file is untouched."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return OutputError(f"{target}: the disk is full; nothing was written — free some space")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return OutputError(
            f"{target}: cannot write there ({str(exc.strerror or exc).lower()}); nothing was "
            "written"
        )
    if exc.errno == errno.ENOENT:
        return OutputError(f"{target}: folder {target.parent} does not exist")
    return OutputError(f"{target}: cannot write ({exc.strerror or exc})")
