"""Reading JSON (and YAML) strictly: a key given twice in one object is an error, never "the
last wins".

Python's :func:`json.loads` and ``yaml.safe_load`` keep the last value of a repeated key (other
readers keep the first, or fail), so a release, ground truth, catalogue or model list whose
author pasted a key twice would be read as something nobody can tell from the file. Every JSON
input vadscene reads goes through :func:`loads`, every YAML one through :func:`load_yaml`; the
refusals are a :class:`json.JSONDecodeError` and a ``yaml.YAMLError``, so each reader reports
them as the file not being valid JSON or YAML, naming the file.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

_SHOWN_KEYS = 8


class DuplicateKeyError(json.JSONDecodeError):
    """A key appears twice in one JSON object; ``key`` is that key."""

    def __init__(self, key: str, keys: list[str]) -> None:
        distinct = list(dict.fromkeys(keys))
        shown = ", ".join(distinct[:_SHOWN_KEYS]) + (", …" if len(distinct) > _SHOWN_KEYS else "")
        message = (
            f'key "{key}" appears twice in one object (its keys: {shown}); each key may appear '
            "once, since readers disagree on which value counts"
        )
        ValueError.__init__(self, message)  # no position: the hook sees the object, not the text
        self.msg, self.doc, self.pos, self.lineno, self.colno = message, "", 0, 0, 0
        self.key, self.keys = key, keys

    def __reduce__(self) -> tuple[type[DuplicateKeyError], tuple[str, list[str]]]:
        return (type(self), (self.key, self.keys))


def loads(text: str | bytes) -> Any:
    """:func:`json.loads`, refusing a key repeated in one object (:class:`DuplicateKeyError`)."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) < len(pairs):
        keys = [key for key, _ in pairs]
        seen: set[str] = set()
        duplicate = next(key for key in keys if key in seen or seen.add(key))
        raise DuplicateKeyError(duplicate, keys)
    return result


class _StrictYamlLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` whose mappings refuse a key written twice (merge keys may override)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, list | dict):
                continue  # unhashable: the base class says so
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f'key "{key}" appears twice in one mapping', key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, refusing a key repeated in one mapping (a ``yaml.YAMLError`` that
    gives the line of the second one)."""
    return yaml.load(text, Loader=_StrictYamlLoader)  # a SafeLoader: plain data only
