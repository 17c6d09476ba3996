"""Where vadscene finds the files it ships outside the Python package proper.

In a source checkout the catalogues live in ``annotations/catalogues`` and the Streamlit app in
``app/``; a wheel carries copies inside the package (``vadscene/catalogues``, ``vadscene/app``,
see ``pyproject.toml``). Each lookup prefers the packaged copy.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]


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


def default_demo_workspace() -> Path:
    """Where ``vadscene app`` without a workspace builds and opens the demo."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "vadscene" / "demo-workspace"
