"""The script bundle the HTML report ships: made by vl-convert for the Vega-Lite release Altair
writes specs for, and read without vl-convert."""

from __future__ import annotations

import re
import subprocess
import sys

import altair as alt
import pytest

from vadscene.audit.report import figures
from vadscene.audit.report.vega import BUNDLE, VEGA_LITE, vega_bundle

HEADER = re.compile(
    r"/\* Vega (?P<vega>[\d.]+), Vega-Lite (?P<vega_lite>[\d.]+) and vega-embed as one script, "
    r"made by vl-convert-python (?P<vl_convert>[\d.]+): "
    r'javascript_bundle\(vl_version="(?P<asked>[\d.]+)"\)\. Licences: vega-bundle-licenses\.txt \*/'
)


def _parts() -> tuple[re.Match[str], str]:
    header, _, body = BUNDLE.read_text(encoding="utf-8").partition("\n")
    match = HEADER.fullmatch(header)
    assert match, header
    return match, body


def test_the_bundle_draws_the_vega_lite_release_altair_writes() -> None:
    header, body = _parts()
    schema = re.fullmatch(r"v(\d+\.\d+)\.\d+", alt.SCHEMA_VERSION)
    assert schema and header["asked"] == VEGA_LITE == schema[1]
    assert header["vega_lite"].startswith(f"{VEGA_LITE}.")
    # The versions the header names are the ones compiled in (Vega's and Vega-Lite's `version`).
    assert f'="{header["vega_lite"]}"' in body and f'="{header["vega"]}"' in body
    assert body.endswith("window.vegaEmbed=$t6;window.vega=__default;window.vegaLite=__default1;")
    assert (BUNDLE.parent / "vega-bundle-licenses.txt").is_file()


def test_the_figures_are_written_for_the_release_the_bundle_draws() -> None:
    # and for the schema the tests validate them against (Altair's)
    assert figures.VEGA_LITE_SCHEMA == alt.SCHEMA_URL
    release = re.search(r"/v(\d+\.\d+)\.\d+\.json$", figures.VEGA_LITE_SCHEMA)
    assert release and release[1] == VEGA_LITE


def test_the_bundle_is_what_vl_convert_makes() -> None:
    """Regenerate it, after an Altair release that writes a newer Vega-Lite, with
    ``vl_convert.javascript_bundle(vl_version=…)`` and the header line updated."""
    vl_convert = pytest.importorskip("vl_convert")
    header, body = _parts()
    assert VEGA_LITE in vl_convert.get_vegalite_versions()
    if vl_convert.__version__ != header["vl_convert"]:
        pytest.skip(
            f"vl-convert {vl_convert.__version__} is installed; the bundle was made by "
            f"{header['vl_convert']}"
        )
    assert body == vl_convert.javascript_bundle(vl_version=VEGA_LITE)


def test_the_html_report_needs_no_vl_convert() -> None:
    script = (
        "import sys; sys.modules['vl_convert'] = None\n"
        "from vadscene.audit.report.vega import vega_bundle, figure_svg\n"
        "print(len(vega_bundle()))\n"
        "try:\n    figure_svg({}, __import__('pathlib').Path('nowhere.svg'))\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    length, refusal = result.stdout.splitlines()
    assert int(length) == len(vega_bundle()) > 500_000
    assert refusal == "VadsceneError --svg needs vl-convert: pip install 'vadscene[svg]'"
