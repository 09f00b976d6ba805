"""Dependencies point one way: the inference path (export, encoder, store, retriever, index, memory bank, memory
API, Janus controller) never imports Lightning; data never imports models or training; and ``langchain_core`` is
imported only by the LangChain integration module."""

from __future__ import annotations

import importlib.util
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sam_model

INFERENCE = ["sam_model", "sam_model.retriever", "sam_model.export", "sam_model.index", "sam_model.encoder",
             "sam_model.store", "sam_model.memory", "sam_model.memory.scoped", "sam_model.janus",
             "sam_model.janus.controller", "sam_model.janus.trigger", "sam_model.janus.evalset"]
INTEGRATIONS = ["sam_model.integrations.langchain", "sam_model.integrations.langgraph"]
PACKAGE = Path(sam_model.__file__).parent


def _imported_after(modules: list[str]) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_inference_path_never_imports_lightning():
    loaded = _imported_after(INFERENCE)
    assert not {m for m in loaded if "lightning" in m}, "the inference path imported Lightning"


def test_langchain_integration_never_imports_lightning():
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed (pip install -e '.[langchain]')")
    loaded = _imported_after(INTEGRATIONS)
    assert not {m for m in loaded if "lightning" in m}, "the LangChain / LangGraph integration imported Lightning"


@pytest.mark.parametrize("module", ["sam_model.data", "sam_model.data.reader", "sam_model.data.sgd"])
def test_data_layer_does_not_import_models_or_training(module):
    loaded = _imported_after([module])
    assert not {m for m in loaded if m.startswith(("sam_model.models", "sam_model.training"))}
    assert "torch" not in loaded


def test_only_the_integration_module_imports_langchain():
    """No other module of the package names langchain in an import, and importing all of them (but the
    integrations) loads no langchain module."""
    pattern = re.compile(r"^\s*(?:from|import)\s+(langchain|langgraph)", re.MULTILINE)
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.parent != PACKAGE / "integrations" and pattern.search(p.read_text(encoding="utf-8"))]
    assert not offenders, f"modules other than {INTEGRATIONS} import langchain: {offenders}"
    modules = sorted(m.name for m in pkgutil.walk_packages([str(PACKAGE)], "sam_model.")
                     if m.name not in INTEGRATIONS and not m.name.startswith("sam_model.training"))
    loaded = _imported_after(modules)
    assert not {m for m in loaded if m.startswith(("langchain", "langgraph"))}


def test_run_time_modules_import_the_labelling_rule_not_the_importer():
    """The scoped memory, the metrics and the integration need the rule (sam_model.data.toolstate), never the
    transcript importer with its files, splits and CLI."""
    modules = ["sam_model.memory.scoped", "sam_model.evaluation.metrics"]
    if importlib.util.find_spec("langchain_core") is not None:
        modules += INTEGRATIONS
    loaded = _imported_after(modules)
    assert "sam_model.data.toolstate" in loaded and "sam_model.data.transcripts" not in loaded
