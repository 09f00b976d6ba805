"""An export's files all follow the umask: safetensors writes model.safetensors as a temporary file of mode 0600
renamed into place, so an export made by one user (a training job) could not be loaded by a service running as
another (sam-serve, a container's user) while its config.json and vocab.json could be read."""

from __future__ import annotations

import os
import stat

import pytest

from sam_model.export import save_exported
from sam_model.models.sam import SAMConfig, SAMNet


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_the_weights_get_the_mode_of_the_other_files(tiny_bert_dir, tmp_path, umask):
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32,
                           time_features=4, phases=["search"], kinds=["user"])).eval()
    old = os.umask(umask)
    try:
        out = save_exported(net, tmp_path / "export")
    finally:
        os.umask(old)
    want = 0o666 & ~umask
    assert _mode(out / "config.json") == want
    assert _mode(out / "model.safetensors") == want
    for f in out.rglob("*"):
        if f.is_file():
            assert _mode(f) == want, f
