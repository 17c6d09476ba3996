"""Vega-Lite figures drawn offline: the HTML's script bundle and SVG figure files.

The bundle (Vega, Vega-Lite and vega-embed as one script, ``vega-bundle.js`` beside this
module, with its licences in ``vega-bundle-licenses.txt``) ships with vadscene, so every report
page draws its figures without network and without vl-convert. It was made by vl-convert
(``javascript_bundle``) for :data:`VEGA_LITE`, the Vega-Lite release the figures' specs are
written for (:data:`vadscene.audit.report.figures.VEGA_LITE_SCHEMA`);
``tests/packaging/test_vega_bundle.py`` checks both.

SVG figure files need vl-convert, the optional ``pip install 'vadscene[svg]'`` (84 MB, so not
every install carries it). An SVG file opens with a stamp naming the spec and vl-convert release
it was rendered from, so a report written over an earlier one keeps each figure whose stamp
still matches instead of rendering it again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from vadscene.core.errors import VadsceneError


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


vl_convert = _optional("vl_convert")
"""vl-convert where ``vadscene[svg]`` is installed, else None."""

VEGA_LITE = "6.4"
"""The Vega-Lite release of the shipped bundle, as vl-convert names it; SVG files are rendered
with the same release."""

BUNDLE = Path(__file__).with_name("vega-bundle.js")

SVG_NEEDS_VL_CONVERT = "--svg needs vl-convert: pip install 'vadscene[svg]'"


@functools.cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, for the HTML to draw its figures with."""
    return BUNDLE.read_text(encoding="utf-8")


def svg_renderer() -> ModuleType:
    """vl-convert, which renders SVG files; :class:`VadsceneError` saying how to install it
    where it is missing. Callers call it before long work, so that ``--svg`` fails at once."""
    if vl_convert is None:
        raise VadsceneError(SVG_NEEDS_VL_CONVERT)
    return vl_convert


def figure_svg(spec: dict[str, Any], previous: Path) -> str:
    """A figure file's text: a stamp line, then the chart's SVG.

    The stamp names the Vega-Lite spec and vl-convert release it was rendered from and the
    SVG's own digest. When ``previous`` (the same figure of the report being replaced) carries
    the same stamp, its text is returned instead of rendering again; a hand-edited SVG no
    longer matches its digest and is rendered anew.
    """
    renderer = svg_renderer()
    release = renderer.__version__  # a new release may draw a spec differently
    key = hashlib.sha256(json.dumps([release, spec], sort_keys=True).encode()).hexdigest()
    try:
        kept = previous.read_text(encoding="utf-8")
        stamp, _, svg = kept.partition("\n")
        if stamp == _stamp(key, svg):
            return kept
    except (OSError, UnicodeDecodeError):
        pass  # no such figure before (or unreadable): render it
    svg = renderer.vegalite_to_svg(spec, vl_version=VEGA_LITE)
    return f"{_stamp(key, svg)}\n{svg}"


def _stamp(spec_digest: str, svg: str) -> str:
    svg_digest = hashlib.sha256(svg.encode()).hexdigest()
    return f"<!-- vadscene figure: spec sha256 {spec_digest}, svg sha256 {svg_digest} -->"
