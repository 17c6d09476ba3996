"""What the video stage needs of a workspace, as a protocol, so that it does not import the store.

Proxies and filmstrips are files derived from a workspace's videos and kept in its cache. They
need only where the videos and the cache are and which videos are registered;
:class:`vadscene.store.workspace.Workspace` provides exactly that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from vadscene.core.records import VideoInfo


class VideoRegistry(Protocol):
    """The registered videos of a workspace (the annotation store answers this)."""

    def videos(self) -> list[VideoInfo]: ...


class VideoFolder(Protocol):
    """A workspace as the video stage sees it."""

    @property
    def root(self) -> Path: ...

    @property
    def video_root(self) -> Path | None: ...

    @property
    def cache_dir(self) -> Path: ...

    @property
    def store(self) -> VideoRegistry: ...
