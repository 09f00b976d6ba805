"""``sam_model`` exposes the public types lazily: each name is the class of the module that defines it, and
``import sam_model`` alone loads neither torch nor transformers."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import sam_model


def test_import_sam_model_stays_cheap():
    code = "import sys, sam_model\nprint(sorted({m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'faiss')}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", sorted(set(sam_model.__all__) - {"__version__"}))
def test_each_public_name_is_its_module_s_own(name):
    module = importlib.import_module(sam_model._LAZY[name])
    assert getattr(sam_model, name) is getattr(module, name)
    assert name in dir(sam_model)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        sam_model.Nope  # noqa: B018
    from sam_model import Event, Hit, ScopedMemory, State  # noqa: F401 - the import form a user writes
