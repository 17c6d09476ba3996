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
import json.scanner
from collections.abc import Callable
from typing import Any

import yaml


class DuplicateKeyError(json.JSONDecodeError):
    """A key appears twice in one JSON object; ``key`` is that key.

    The message gives the line and column where the object starts but not the key: the file
    may be any file a user can name, and its text stays out of messages.
    """

    def __init__(self, key: str, keys: list[str], lineno: int = 0, colno: int = 0) -> None:
        where = f" (the object starting at line {lineno} column {colno})" if lineno else ""
        message = (
            f"a key appears twice in one object{where}; each key may appear once, since "
            "readers disagree on which value counts"
        )
        ValueError.__init__(self, message)
        self.msg, self.doc, self.pos, self.lineno, self.colno = message, "", 0, lineno, colno
        self.key, self.keys = key, keys

    def __reduce__(self) -> tuple[type[DuplicateKeyError], tuple[str, list[str], int, int]]:
        return (type(self), (self.key, self.keys, self.lineno, self.colno))


def loads(text: str | bytes) -> Any:
    """:func:`json.loads`, refusing a key repeated in one object (:class:`DuplicateKeyError`)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except DuplicateKeyError:
        return _LocatingDecoder().decode(text)  # fails again, now with the object's position


class _LocatingDecoder(json.JSONDecoder):
    """A decoder whose objects refuse a repeated key and say where that object starts.

    The pairs hook sees the parsed pairs, not the text; wrapping the object parser gives the
    position of the object's opening brace, which the error reports instead of the key. Only
    the pure-Python scanner calls the wrapper, so it is used only once a duplicate is known.
    """

    # set by JSONDecoder.__init__; the stub does not declare them
    parse_object: Callable[..., Any]
    scan_once: Callable[[str, int], tuple[Any, int]]

    def __init__(self) -> None:
        super().__init__(object_pairs_hook=_unique_keys)
        parse = self.parse_object

        def parse_located(s_and_end: tuple[str, int], *args: Any) -> Any:
            try:
                return parse(s_and_end, *args)
            except DuplicateKeyError as exc:
                if exc.lineno:  # an inner object already gave its position
                    raise
                text, brace = s_and_end[0], s_and_end[1] - 1
                line = text.count("\n", 0, brace) + 1
                column = brace - (text.rfind("\n", 0, brace) + 1) + 1
                raise DuplicateKeyError(exc.key, exc.keys, line, column) from None

        self.parse_object = parse_located
        # the pure-Python scanner (the C one never calls parse_located); typeshed omits it
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) < len(pairs):
        keys = [key for key, _ in pairs]
        seen: set[str] = set()
        for key in keys:
            if key in seen:
                raise DuplicateKeyError(key, keys)
            seen.add(key)
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
                    None, None, "a key appears twice in one mapping", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, refusing a key repeated in one mapping (a ``yaml.YAMLError`` that
    gives the line of the second one)."""
    return yaml.load(text, Loader=_StrictYamlLoader)  # a SafeLoader: plain data only
