"""The values a Python script a shell command carries names: ``python -c SCRIPT`` and ``python - <<'EOF'`` bodies.

A coding agent checks a value with a one-off script (``python -c "import json;
print(json.load(open('config/settings.json'))['db_host'])"``): the script whole is said by no earlier event, and a
long one is free text by the spec, while the file, the key and the module it names were printed by an earlier
listing or given by the issue. The labelling rule traces what the script names from outside itself, as a command
line's words are traced: its string literals (paths, keys, ids, messages, as ``echo``'s and ``cat``'s words) and the
modules and names it imports that are no standard library's (``from app.billing import compute_vat``: ``app.billing``
and ``compute_vat``, as a grep for ``def compute_vat`` traces ``compute_vat``). Its code is the agent's own writing,
as a patch's hunks are: the names it binds (``df``, ``row``), calls and attributes (``print``, ``pd.read_csv``) and
keywords are syntax or its own, and traced they would be any earlier output that says ``data`` or ``print``. Nor are
the literals Python reads as settings (``open``'s mode, an ``encoding=`` or ``sep=``, ``"__main__"``), nor an
f-string's or bytes' (what an f-string prints is composed, as a command substitution's word is). The script is parsed
(:func:`ast.parse`: nothing in it runs); one that does not parse is read as before, one text.
"""

from __future__ import annotations

import ast
import sys

# keyword arguments whose string value is how Python reads or writes, not a value the agent looked up
SETTING_KEYWORDS = frozenset({"mode", "encoding", "errors", "newline", "sep", "end", "delimiter", "dtype", "how",
                              "orient", "format", "level", "indent"})
STANDARD = frozenset(sys.stdlib_module_names) | {"__future__"}


def python_words(script: str, limit: int) -> list[str] | None:
    """The traced words of a Python script, in source order: its plain string literals and the modules and names it
    imports from outside the standard library (the module doc); None where it does not parse or is longer than
    ``limit`` characters (read whole, as before)."""
    if len(script) > limit:
        return None
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, a NUL, nested past the parser
        return None
    skipped: set[int] = set()  # literals that are settings or parts of an f-string
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.Call):
            skipped.update(id(k.value) for k in node.keywords if k.arg in SETTING_KEYWORDS)
            if isinstance(node.func, ast.Name) and node.func.id == "open":
                skipped.update(id(a) for a in node.args[1:2])
        elif isinstance(node, ast.Import):
            found += [(node.lineno, node.col_offset, a.name) for a in node.names
                      if a.name.split(".")[0] not in STANDARD]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] not in STANDARD:
            found += [(node.lineno, node.col_offset, n) for n in
                      [node.module, *(a.name for a in node.names if a.name != "*")]]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped \
                and not (node.value.startswith("__") and node.value.endswith("__")):
            found.append((node.lineno, node.col_offset, node.value))
    return [word for _, _, word in sorted(found, key=lambda f: (f[0], f[1])) if word]
