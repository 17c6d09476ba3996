"""Where vadscene finds the files it ships outside the Python package proper.

In a source checkout the catalogues live in ``annotations/catalogues`` and the Streamlit app in
``app/``; a wheel carries copies inside the package (``vadscene/catalogues``, ``vadscene/app``,
see ``pyproject.toml``). Each lookup prefers the packaged copy.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from vadscene.core.errors import VadsceneError

_CHECKOUT = Path(__file__).resolve().parents[2]


def shipped(packaged: str, checkout: str) -> Path:
    """The packaged file ``vadscene/<packaged>`` if present, else ``<checkout root>/<checkout>``."""
    candidate = resources.files("vadscene").joinpath(packaged)
    if candidate.is_file():
        return Path(str(candidate))
    return _CHECKOUT / checkout


def default_catalogue_path() -> Path:
    """The default UCF-Crime catalogue."""
    return shipped("catalogues/ucf_crime.yaml", "annotations/catalogues/ucf_crime.yaml")


def app_entry_point() -> Path:
    """The Streamlit router script (what AppTest runs)."""
    return shipped("app/streamlit_app.py", "app/streamlit_app.py")


def app_server_script() -> Path:
    """The ASGI entry `vadscene app` serves: the router plus the video route."""
    return shipped("app/server.py", "app/server.py")


def user_cache_dir() -> Path:
    """vadscene's folder in the user's cache (``$XDG_CACHE_HOME``, else ``~/.cache``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vadscene"


def default_demo_workspace() -> Path:
    """Where ``vadscene app`` without a workspace builds and opens the demo."""
    return user_cache_dir() / "demo-workspace"


def output_folder(path: Path | str, what: str, *, create: bool = True) -> Path:
    """Create the folder ``what`` is written to (and its parents), or say why it cannot be.

    Call it (with ``create=False`` if the inputs may still be refused) before any long work,
    so a typo costs nothing: a file in the way, or a parent that is a file, is a
    :class:`~vadscene.core.errors.VadsceneError` naming the path.
    """
    path = Path(path)
    blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise VadsceneError(
            f"{path}: cannot write {what} there, {blocker} is a file (give a folder path)"
        )
    if not create:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VadsceneError(
            f"{path}: cannot create the folder for {what} ({exc.strerror})"
        ) from None
    return path
