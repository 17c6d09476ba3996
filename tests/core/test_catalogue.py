"""The scene-factor catalogue: the shipped default, custom catalogues, and rejected ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from helpers import REALDATA

from vadscene.core.catalogue import (
    AMBIGUOUS,
    Catalogue,
    load_catalogue,
    parse_catalogue,
)
from vadscene.core.errors import CatalogueError
from vadscene.core.paths import default_catalogue_path

SPEC = REALDATA.parent / "spec" / "factors.md"


def _default_data() -> dict:
    return yaml.safe_load(default_catalogue_path().read_text())


def test_default_catalogue_has_twelve_primary_contrasts(catalogue: Catalogue) -> None:
    assert len(catalogue.factors) == 12
    assert len(catalogue.primary_contrasts()) == 12
    location = catalogue.factor("location")
    assert location.values == ("residential", "commercial", "fuel-station")
    assert [(c.positive, c.negative, c.primary) for c in location.contrasts] == [
        ("residential", "commercial", True),
        ("residential", "fuel-station", False),
        ("fuel-station", "commercial", False),
    ]
    assert catalogue.factor("activity").role == "control"
    assert {f.key for f in catalogue.factors if f.source == "auto"} == {"resolution", "motion"}
    assert catalogue.factor("resolution").auto.rule == "median"
    assert catalogue.factor("motion").auto.rule == "terciles"


def test_default_catalogue_matches_the_spec_table(catalogue: Catalogue) -> None:
    """Keys, levels, poles and sources agree with the table in spec/factors.md."""
    if not SPEC.is_file():
        pytest.skip(f"{SPEC} is absent")
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in SPEC.read_text().splitlines()
        if re.match(r"^\| [a-z_]+ \| (recording|content) \|", line)
    ]
    assert len(rows) == 12
    for key, level, poles, _criterion, source, _support in rows:
        factor = catalogue.factor(key)
        assert factor.level == level
        spec_values = [p.split("(")[0].strip() for p in re.split(r" / ", poles)]
        assert list(factor.values) == spec_values
        assert factor.source == source.split()[0]


def test_every_factor_admits_ambiguous(catalogue: Catalogue) -> None:
    for factor in catalogue.factors:
        assert factor.allows(AMBIGUOUS)
        assert all(factor.allows(v) for v in factor.values)
        assert not factor.allows("not-a-value")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_custom_catalogue_loads_from_yaml_and_json(tmp_path: Path, suffix: str) -> None:
    data = {
        "name": "shanghaitech",
        "factors": [
            {
                "key": "lighting",
                "name": "Lighting",
                "level": "recording",
                "values": ["day", "night"],
                "criterion": "Daylight vs artificial light.",
                "source": "manual",
            },
        ],
    }
    path = tmp_path / f"custom{suffix}"
    path.write_text(json.dumps(data) if suffix == ".json" else yaml.safe_dump(data))
    catalogue = load_catalogue(path)
    assert catalogue.name == "shanghaitech"
    [contrast] = catalogue.factor("lighting").contrasts  # two values: one default contrast
    assert (contrast.positive, contrast.negative) == ("day", "night")


def _broken(mutate) -> dict:
    data = _default_data()
    mutate(data)
    return data


def _set(data: dict, index: int, **fields) -> None:
    data["factors"][index].update(fields)


@pytest.mark.parametrize(
    ("mutate", "fragments"),
    [
        (lambda d: d["factors"].append(dict(d["factors"][0])), ["duplicate factor keys", "color"]),
        (
            lambda d: _set(d, 9, contrasts=[{"positive": "residential", "negative": "shop"}]),
            ["factor 'location'", "unknown value 'shop'"],
        ),
        (
            lambda d: _set(d, 2, values=["single-view"]),
            ["factor 'continuity'", "at least two values"],
        ),
        (
            lambda d: _set(d, 3, source="clicked"),
            ["factor 'elevation'", "source", "'manual' or 'auto'", "(got a str)"],
        ),
        (lambda d: _set(d, 0, values=["color", AMBIGUOUS]), ["factor 'color'", "reserved"]),
        (lambda d: _set(d, 5, auto=None), ["factor 'motion'", "needs an 'auto' rule"]),
        (lambda d: _set(d, 1, key="Resolution!"), ["factor 'Resolution!'", "key"]),
    ],
    ids=[
        "duplicate-key",
        "unknown-contrast-value",
        "one-value",
        "unknown-source",
        "ambiguous-value",
        "auto-without-rule",
        "bad-key",
    ],
)
def test_invalid_catalogue_names_factor_and_problem(mutate, fragments: list[str]) -> None:
    with pytest.raises(CatalogueError) as caught:
        parse_catalogue(_broken(mutate), origin="custom.yaml")
    message = str(caught.value)
    assert message.startswith("custom.yaml: invalid catalogue")
    for fragment in fragments:
        assert fragment in message


def test_all_problems_are_reported_together() -> None:
    def mutate(d: dict) -> None:
        _set(d, 3, source="clicked")
        _set(d, 2, values=["one"])
        d["factors"].append(dict(d["factors"][0]))

    with pytest.raises(CatalogueError) as caught:
        parse_catalogue(_broken(mutate))
    message = str(caught.value)
    for fragment in ("factor 'elevation'", "factor 'continuity'", "duplicate factor keys"):
        assert fragment in message


def test_unreadable_catalogue_files(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="catalogue file not found"):
        load_catalogue(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CatalogueError, match=r"bad.json: not valid JSON"):
        load_catalogue(bad)


def test_unknown_factor_lookup_lists_known_keys(catalogue: Catalogue) -> None:
    with pytest.raises(CatalogueError, match=r"unknown factor 'colour'.*color, resolution"):
        catalogue.factor("colour")


def test_listed_contrasts_are_primary_only_when_marked() -> None:
    """A custom catalogue's listed contrasts corroborate unless marked ``primary: true``; the
    one contrast implied by a two-valued factor is primary."""
    data = _default_data()
    location = next(f for f in data["factors"] if f["key"] == "location")
    location["contrasts"] = [
        {"positive": "residential", "negative": "commercial"},
        {"positive": "fuel-station", "negative": "commercial", "primary": True},
    ]
    color = next(f for f in data["factors"] if f["key"] == "color")
    color.pop("contrasts", None)
    catalogue = parse_catalogue(data)
    assert [c.primary for c in catalogue.factor("location").contrasts] == [False, True]
    assert [c.primary for c in catalogue.factor("color").contrasts] == [True]
