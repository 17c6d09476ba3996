"""Where the commands write: the result on stdout, warnings, failures and progress on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr; yields ``update(done, total, current="")``."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[current]}", style="dim"),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None, current="")

        def update(done: int, total: int, current: str = "") -> None:
            bar.update(task, completed=done, total=total, current=current)

        yield update
