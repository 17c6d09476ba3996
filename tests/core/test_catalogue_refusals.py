"""Catalogues refused with a message naming the factor: a non-finite threshold, a key given
twice (JSON or YAML), a value spelling "ambiguous" in any case or spacing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import DUPLICATED_KEY

from vadscene.core.catalogue import load_catalogue, parse_catalogue
from vadscene.core.errors import CatalogueError


def test_a_catalogue_with_a_non_finite_threshold_is_refused(tmp_path: Path) -> None:
    data = load_catalogue().model_dump(mode="json")
    auto = next(f for f in data["factors"] if f["source"] == "auto")
    auto["auto"] = {**auto["auto"], "rule": "explicit", "thresholds": [float("nan")]}
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(CatalogueError, match=rf"factor '{auto['key']}'.*thresholds"):
        load_catalogue(path)


def test_a_json_catalogue_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    text = json.dumps(load_catalogue().model_dump(mode="json"))
    path = tmp_path / "catalogue.json"
    text = text.replace('"key": "color"', '"key": "color", "key": "colour"', 1)
    path.write_text(text)
    with pytest.raises(CatalogueError) as error:
        load_catalogue(path)
    assert str(error.value).startswith(f"{path}: not valid JSON: ")
    factor_brace = text.rfind("{", 0, text.index('"key": "color", "key"'))
    assert DUPLICATED_KEY.format(line=1, column=factor_brace + 1) in str(error.value)


@pytest.mark.parametrize("spelling", ["ambiguous", "Ambiguous", " ambiguous", "AMBIGUOUS\t"])
def test_a_catalogue_value_spelling_ambiguous_is_refused(spelling: str) -> None:
    data = load_catalogue().model_dump(mode="json")
    color = next(f for f in data["factors"] if f["key"] == "color")
    color["values"] = [*color["values"], spelling]
    with pytest.raises(CatalogueError) as error:
        parse_catalogue(data, origin="cat.yaml")
    assert f"factor 'color': $.factors[0]: '{spelling}' is reserved" in str(error.value)


def test_a_value_that_only_contains_the_word_is_allowed() -> None:
    data = load_catalogue().model_dump(mode="json")
    color = next(f for f in data["factors"] if f["key"] == "color")
    color["values"] = [*color["values"], "ambiguously lit"]
    assert "ambiguously lit" in parse_catalogue(data).factor("color").values


def test_a_yaml_catalogue_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.yaml"
    text = yaml.safe_dump(load_catalogue().model_dump(mode="json"), sort_keys=False)
    # the second "source" would silently win with yaml.safe_load
    path.write_text(text.replace("  source: manual\n", "  source: auto\n  source: manual\n", 1))
    with pytest.raises(CatalogueError) as error:
        load_catalogue(path)
    assert str(error.value).startswith(f"{path}: not valid YAML: ")
    assert "a key appears twice in one mapping" in str(error.value)
    second_source = text.index("  source: manual\n")  # the inserted line precedes it
    assert f"at line {text.count(chr(10), 0, second_source) + 2} column 3" in str(error.value)
