"""The strict JSON and YAML readers (:mod:`vadscene.core.jsonio`) read what the standard readers
read, only refusing a key given twice."""

from __future__ import annotations

import json

import yaml

from vadscene.core import jsonio


def test_the_strict_reader_reads_what_json_reads() -> None:
    text = '{"a": [1, {"b": null, "c": 2.5}], "d": {"a": "x"}, "e": "\\u00e9"}'
    assert jsonio.loads(text) == json.loads(text)


def test_yaml_merge_keys_may_still_override() -> None:
    text = "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n"
    assert jsonio.load_yaml(text) == yaml.safe_load(text)
