"""Vega-Lite specs drawn offline by vl-convert: the HTML's script bundle and SVG figure files.

The bundle (Vega, Vega-Lite and vega-embed as one script) is kept in the user's cache, one file
per vl-convert release and Vega-Lite version. An SVG figure file opens with a stamp naming the
spec and vl-convert release it was rendered from, so a report written over an earlier one keeps
each figure whose stamp still matches instead of rendering it again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import altair as alt
import vl_convert

from vadscene.core.files import atomic_write
from vadscene.core.paths import user_cache_dir

_VL_CONVERT: str = vl_convert.__version__  # type: ignore[attr-defined]  # the stub omits it
"""The installed vl-convert release: a new one may draw a spec differently."""

VEGA_LITE: str | None = next(
    (v for v in vl_convert.get_vegalite_versions() if alt.SCHEMA_VERSION.startswith(f"v{v}.")),
    None,
)
"""The Vega-Lite release Altair writes specs for, as vl-convert names it (None: its default)."""


def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, for the HTML to draw its figures with.

    vl-convert builds it once per vl-convert release and Vega-Lite version; it is kept in the
    user's cache. An unwritable cache only costs the rebuild.
    """
    cached = user_cache_dir() / f"vega-embed-{_VL_CONVERT}-{VEGA_LITE}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    # The stub makes ``snippet`` required; vl-convert's default one puts vegaEmbed on window.
    bundle = vl_convert.javascript_bundle(vl_version=VEGA_LITE)  # type: ignore[call-arg]
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cached, bundle)
    except OSError:
        pass
    return bundle


def figure_svg(spec: dict[str, Any], previous: Path) -> str:
    """A figure file's text: a stamp line, then the chart's SVG.

    The stamp names the Vega-Lite spec and vl-convert release it was rendered from and the
    SVG's own digest. When ``previous`` (the same figure of the report being replaced) carries
    the same stamp, its text is returned instead of rendering again; a hand-edited SVG no
    longer matches its digest and is rendered anew.
    """
    key = hashlib.sha256(json.dumps([_VL_CONVERT, spec], sort_keys=True).encode()).hexdigest()
    try:
        kept = previous.read_text(encoding="utf-8")
        stamp, _, svg = kept.partition("\n")
        if stamp == _stamp(key, svg):
            return kept
    except (OSError, UnicodeDecodeError):
        pass  # no such figure before (or unreadable): render it
    svg = vl_convert.vegalite_to_svg(spec, vl_version=VEGA_LITE)
    return f"{_stamp(key, svg)}\n{svg}"


def _stamp(spec_digest: str, svg: str) -> str:
    svg_digest = hashlib.sha256(svg.encode()).hexdigest()
    return f"<!-- vadscene figure: spec sha256 {spec_digest}, svg sha256 {svg_digest} -->"
