"""Dependencies point one way: the inference path (export, encoder, store, retriever, index, memory bank, memory
API, Janus controller) never imports Lightning; data never imports models or training; and ``langchain_core`` is
imported only by the LangChain integration module; the inference path runs with only the core install (no
training, evaluation or LangChain extra); and no module of the package imports, however indirectly and
even from inside a function, a module that imports it back (no import circles)."""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sam_model

INFERENCE = ["sam_model", "sam_model.retriever", "sam_model.export", "sam_model.interpolate", "sam_model.index",
             "sam_model.encoder", "sam_model.encoding", "sam_model.models.onnx_text", "sam_model.models.packing", "sam_model.models.call_cost",
             "sam_model.store", "sam_model.backends", "sam_model.memory", "sam_model.memory.scoped", "sam_model.janus",
             "sam_model.janus.controller", "sam_model.janus.trigger", "sam_model.janus.evalset"]
INTEGRATIONS = ["sam_model.integrations.langchain", "sam_model.integrations.langgraph"]
# The served memory and the Qdrant backend (the [serve] extra): inference path too, so no Lightning.
SERVING = ["sam_model.backends.qdrant", "sam_model.serve.wal", "sam_model.serve.tenants", "sam_model.serve.batching",
           "sam_model.serve.http", "sam_model.serve.mcp", "sam_model.serve.cli", "sam_model.serve.stdio",
           "sam_model.serve.jsonrpc"]
# Backend modules whose library comes from an extra that may be absent (their import then names the extra).
EXTRA_OF = {"sam_model.backends.qdrant_edge": "qdrant_edge", "sam_model.integrations.autogen": "autogen_core",
            "sam_model.integrations.smolagents": "smolagents", "sam_model.integrations.llamaindex": "llama_index",
            "sam_model.integrations.adk": "google.adk", "sam_model.integrations.openai_agents": "agents",
            "sam_model.integrations.pydantic_ai": "pydantic_ai"}
PACKAGE = Path(sam_model.__file__).parent
# Top-level modules of the [train], [eval], [langchain] and [onnx] extras (and of what they bring: scipy, pandas, pyarrow),
# refused in the core-install check below.
NOT_CORE = ["pytorch_lightning", "lightning", "lightning_fabric", "jsonargparse", "omegaconf", "datasets",
            "torchmetrics", "tensorboard", "bm25s", "sklearn", "scipy", "pandas", "pyarrow", "matplotlib", "rich",
            "langchain_core", "langgraph", "pydantic", "onnxruntime", "onnx"]


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


def test_the_qdrant_edge_backend_never_imports_lightning():
    pytest.importorskip("qdrant_edge", reason="the [qdrant-edge] extra is not installed (pip install -e '.[qdrant-edge]')")
    loaded = _imported_after(["sam_model.backends.qdrant_edge"])
    assert not {m for m in loaded if "lightning" in m}, "the Qdrant Edge backend imported Lightning"


def test_the_served_memory_never_imports_lightning():
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    loaded = _imported_after(SERVING)
    assert not {m for m in loaded if "lightning" in m}, "the served memory or the Qdrant backend imported Lightning"


def test_the_inference_path_runs_with_only_the_core_install(tmp_path, tiny_bert_dir):
    """With every non-core package made absent (``sys.modules[name] = None``: ``import`` fails and
    ``importlib.util.find_spec`` says "not installed", as in a fresh ``pip install '.[cpu]'``), the inference
    path imports, loads an export, adds memories and searches, through SAMRetriever and ScopedMemory."""
    from sam_model.export import save_exported
    from sam_model.models.sam import SAMConfig, SAMNet

    export = save_exported(SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16)),
                           tmp_path / "export")
    code = textwrap.dedent(f"""
        import sys
        for name in {NOT_CORE!r}:
            sys.modules[name] = None
        for module in {INFERENCE!r}:
            __import__(module)
        from sam_model import SAMRetriever
        from sam_model.data.schema import Event, State
        from sam_model.memory.scoped import ScopedMemory

        r = SAMRetriever.load({str(export)!r}, device="cpu")
        state = State(phase="search", constraints={{"city": "Paris"}})
        r.add_memories([Event("e1", i, "observation", t, state) for i, t in enumerate(["wants Paris", "budget 100"])])
        hits = r.search(state, "which city?", k=2, episode_id="e1")
        memory = ScopedMemory(r)
        memory.add("I live in Paris", user_id="mia")
        found = memory.search("where do I live?", user_id="mia", k=1)["results"]
        print(len(hits), found[0]["memory"])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["2", "I", "live", "in", "Paris"]


def test_the_core_install_check_would_see_a_training_import(tmp_path):
    """The check above can fail: a module that imports Lightning at the top does not import with it absent."""
    code = "import sys\nsys.modules['pytorch_lightning'] = None\nimport sam_model.training.module\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "pytorch_lightning" in out.stderr


def test_the_encoder_protocol_needs_no_torch():
    """The store's contract with a model can be named (typed, checked) without loading the network."""
    loaded = _imported_after(["sam_model.encoding"])
    assert "torch" not in loaded and not {m for m in loaded if m.startswith("sam_model.models")}


@pytest.mark.parametrize("module", ["sam_model.data", "sam_model.data.reader", "sam_model.data.sgd", "sam_model.data.chunks"])
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
                     if m.name not in INTEGRATIONS and not m.name.startswith("sam_model.training")
                     and importlib.util.find_spec(EXTRA_OF.get(m.name, "sys")))  # an absent extra: not imported
    loaded = _imported_after(modules)
    assert not {m for m in loaded if m.startswith(("langchain", "langgraph"))}


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its source (top level or inside a function, where
    circles hide). ``from a import b`` names the module ``a.b`` when there is one, else ``a``; a parent
    package's ``__init__`` that Python runs on the way is not an edge (it is not what the module asked for)."""
    modules: dict[str, Path] = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for a in node.names:
                    edges |= {f"{base}.{a.name}"} if f"{base}.{a.name}" in modules else {base} & modules.keys()
        graph[name] = edges - {name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circles_anywhere_in_the_package():
    circles = import_circles(module_graph())
    assert not circles, f"import circles (each group imports itself through the others): {circles}"


def test_the_circle_check_finds_a_circle_hidden_in_a_function(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    graph = module_graph(pkg)
    assert graph["pkg.c"] == {"pkg.a"} and graph["pkg.b"] == {"pkg.a"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"]]


def test_run_time_modules_import_the_labelling_rule_not_the_importer():
    """The scoped memory, the metrics and the integration need the rule (sam_model.data.toolstate), never the
    transcript importer with its files, splits and CLI."""
    modules = ["sam_model.memory.scoped", "sam_model.evaluation.metrics"]
    if importlib.util.find_spec("langchain_core") is not None:
        modules += INTEGRATIONS
    loaded = _imported_after(modules)
    assert "sam_model.data.toolstate" in loaded and "sam_model.data.transcripts" not in loaded
