"""The models file of an audit (``--models``): a key given twice, a snippet repeat that is not an
integer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DUPLICATED_KEY

from vadscene.audit.io.sources import read_model_list
from vadscene.benchmark.frames import AuditInputError


def test_a_models_file_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text('[{"name": "rtfm", "path": "a.npy", "path": "b.npy"}]')
    with pytest.raises(AuditInputError) as error:
        read_model_list(path)
    assert str(error.value).startswith(f"{path}: not valid JSON (")
    assert DUPLICATED_KEY.format(line=1, column=2) in str(error.value)


def test_models_json_rejects_a_non_integer_snippet_repeat(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{"name": "m", "path": "s", "snippet_repeat": "16"}]))
    with pytest.raises(
        AuditInputError, match="model 1: snippet_repeat must be an integer, got a str"
    ):
        read_model_list(path)
