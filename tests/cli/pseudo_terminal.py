"""Run `vadscene` in a pseudo-terminal: what a person at a terminal of a given width sees."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_a_terminal(args: list[str], columns: int = 100) -> str:
    """The output of ``python -m vadscene ARGS`` in a terminal ``columns`` wide (stdout and
    stderr, ANSI escapes removed); the command must succeed."""
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR", "COLUMNS", "LINES")
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "vadscene", *args],
        stdin=child,
        stdout=child,
        stderr=child,
        env={**env, "TERM": "xterm-256color"},
    )
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # EIO: the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(parent)
    assert process.wait(timeout=60) == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")
