"""A workspace's configuration file is read strictly: a key given twice is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.examples import registry_workspace

from vadscene.core.errors import WorkspaceError
from vadscene.store.workspace import Workspace


def test_a_workspace_configuration_with_a_duplicated_key_is_refused(tmp_path: Path) -> None:
    root = registry_workspace(tmp_path)
    config = root / "vadscene.yaml"
    config.write_text(config.read_text() + "dataset: other\n")
    with pytest.raises(WorkspaceError) as error:
        Workspace.open(root)
    assert str(error.value).startswith(f"{config}: not valid YAML: ")
    assert "a key appears twice in one mapping" in str(error.value)
