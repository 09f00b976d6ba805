"""Dependencies point one way: the inference path (export, retriever, index, memory bank,
Janus controller) never imports Lightning, and data never imports models or training."""

from __future__ import annotations

import subprocess
import sys

import pytest

INFERENCE = ["sam_model", "sam_model.retriever", "sam_model.export", "sam_model.index", "sam_model.memory",
             "sam_model.janus", "sam_model.janus.controller", "sam_model.janus.trigger", "sam_model.janus.evalset"]


def _imported_after(modules: list[str]) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_inference_path_never_imports_lightning():
    loaded = _imported_after(INFERENCE)
    assert not {m for m in loaded if "lightning" in m}, "the inference path imported Lightning"


@pytest.mark.parametrize("module", ["sam_model.data", "sam_model.data.reader", "sam_model.data.sgd"])
def test_data_layer_does_not_import_models_or_training(module):
    loaded = _imported_after([module])
    assert not {m for m in loaded if m.startswith(("sam_model.models", "sam_model.training"))}
    assert "torch" not in loaded
