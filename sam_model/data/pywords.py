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
f-string's, a ``.format`` or ``%`` template's or bytes' (what an f-string prints is composed, as a command
substitution's word is), nor a codec or a time format a call takes first (``s.encode('utf-8')``,
``strftime('%Y-%m-%d')``), nor a literal of no letter or digit (``print('---')``, ``' | '.join``: a separator, traced
to any diff's ``--- a/x.py``). The script is parsed
(:func:`ast.parse`: nothing in it runs); one that does not parse, or nests deeper than the parser can build without
recursing past a thread's stack (:func:`_shallow`), is read as before, one text.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
import warnings

# keyword arguments whose string value is how Python reads or writes, not a value the agent looked up
SETTING_KEYWORDS = frozenset({"mode", "encoding", "errors", "newline", "sep", "end", "delimiter", "dtype", "how",
                              "orient", "format", "level", "indent"})
# methods whose first argument is a setting, not a value: a codec (s.encode('utf-8') traced utf-8 to the first
# earlier script that said encoding='utf-8') or a time format (strftime('%Y-%m-%d'); strptime's is its second)
SETTING_METHODS = {"encode": 0, "decode": 0, "read_text": 0, "strftime": 0, "strptime": 1}
STANDARD = frozenset(sys.stdlib_module_names) | {"__future__"}
# operators one statement holds (and elifs one script), past which its tree may nest too deep to build: ast.parse
# recurses in C a level for each (x = ------1, 1+1+...+1, a.b.b...b, elif chains), which CPython 3.11 refuses as a
# RecursionError on the main thread but a smaller thread's stack (a served add) or an older parser need not
MAX_NESTING = 500
_FLAT = frozenset({",", ":", ";", "=", ")", "]", "}", "->"})  # operators that open no deeper node
_NESTING_WORDS = frozenset({"not", "lambda", "if", "else", "await", "yield", "and", "or", "in", "is"})


def python_words(script: str, limit: int) -> list[str] | None:
    """The traced words of a Python script, in source order: its plain string literals and the modules and names it
    imports from outside the standard library (the module doc); None where it does not parse, is longer than
    ``limit`` characters or holds a statement of more than :data:`MAX_NESTING` operators (read whole, as before)."""
    if len(script) > limit or not _shallow(script):
        return None
    try:
        with warnings.catch_warnings():  # "invalid escape sequence '\d'": the agent's script, no warning of ours
            warnings.simplefilter("ignore")
            tree = ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, a NUL, nested past the parser
        return None
    skipped: set[int] = set()  # literals that are settings, templates or parts of an f-string
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.Call):
            skipped.update(id(k.value) for k in node.keywords if k.arg in SETTING_KEYWORDS)
            if isinstance(node.func, ast.Name) and node.func.id == "open":
                skipped.update(id(a) for a in node.args[1:2])
            elif isinstance(node.func, ast.Attribute) and node.func.attr in SETTING_METHODS:
                at = SETTING_METHODS[node.func.attr]
                skipped.update(id(a) for a in node.args[at:at + 1])
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "format":  # '{}: {}'.format(k, v)
                skipped.add(id(node.func.value))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
            skipped.add(id(node.left))  # '%s=%s' % (k, v): a template, composed as an f-string is
        elif isinstance(node, ast.Import):
            found += [(node.lineno, node.col_offset, a.name) for a in node.names
                      if a.name.split(".")[0] not in STANDARD]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] not in STANDARD:
            found += [(node.lineno, node.col_offset, n) for n in
                      [node.module, *(a.name for a in node.names if a.name != "*")]]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped \
                and not (node.value.startswith("__") and node.value.endswith("__")):
            found.append((node.lineno, node.col_offset, node.value))
    return [word for _, _, word in sorted(found, key=lambda f: (f[0], f[1])) if any(c.isalnum() for c in word)]


def _shallow(script: str) -> bool:
    """Whether no statement of ``script`` holds more than :data:`MAX_NESTING` operators (nor the script as many
    ``elif``), so its tree nests no deeper than that and :func:`ast.parse` builds it in a bounded stack; read by
    :mod:`tokenize`, which recurses on nothing. A script that does not tokenize is no Python: False."""
    count = elifs = brackets = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for token in tokenize.generate_tokens(io.StringIO(script).readline):
                if token.type == tokenize.NEWLINE or token.string == ";" and not brackets:
                    count = 0
                elif token.type == tokenize.OP:
                    brackets += (token.string in "([{") - (token.string in ")]}")
                    count += token.string not in _FLAT
                elif token.type == tokenize.NAME:
                    count += token.string in _NESTING_WORDS
                    elifs += token.string == "elif"
                if count > MAX_NESTING or elifs > MAX_NESTING:
                    return False
    except (tokenize.TokenError, SyntaxError, ValueError):
        return False
    return True
