"""The tool calls in a smolagents ``CodeAgent``'s code, read with Python's ``ast`` without running it.

A CodeAgent does not call tools by name: it writes Python (``user = get_user(user_id="ann")``) that its executor
runs, and records one call, ``python_interpreter`` with the code as its argument. What the labelling rule needs is
the calls to the agent's tools inside that code and the values given to them, so each call of a tool's name is read
as a tool call, its arguments by keyword (a positional one named from the tool's ``def NAME(...)`` line in the
system prompt, else ``arg1``, ``arg2``, ...). Only values written in the code are read: a literal (``"QX7Z9A"``,
``120.5``, ``["a", "b"]``), or a name bound to a literal by an earlier plain assignment (``rid = "QX7Z9A"``, in this
step or an earlier one: the executor keeps its variables across steps). An argument computed at run time (a
variable holding an earlier tool's output, ``user["id"]``, an f-string, another call) holds a value the log never
shows: it is left out of the call and counted, never guessed.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

FINAL = "final_answer"  # smolagents' tool that ends a run: its argument is the answer, words said to the user
INTERPRETER = "python_interpreter"  # the one call a CodeAgent step records: the code as its argument
NOT_LITERAL = "code argument computed at run time"
# a tool as a CodeAgent's system prompt lists it: "def get_user(user_id: string) -> object:"
_DEF = re.compile(r"^def ([A-Za-z_]\w*)\(([^)]*)\)\s*->", re.MULTILINE)
_MISSING = object()


@dataclass
class Calls:
    """What a conversation's code said so far: the tools' parameters (from the system prompt), the names bound to
    literals and the functions the code defined or imported itself (no tool calls), across its steps."""

    params: dict[str, list[str]] = field(default_factory=dict)
    bound: dict[str, Any] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    ignored: Counter = field(default_factory=Counter)

    def learn_prompt(self, prompt: str) -> None:
        """The tools a CodeAgent's system prompt lists, with their parameters in order."""
        for name, params in _DEF.findall(prompt):
            self.params[name] = [p.split(":")[0].strip() for p in params.split(",") if p.strip()]

    def is_tool(self, name: str) -> bool:
        if self.params:
            return name in self.params
        return name not in self.defined and not hasattr(builtins, name)

    def read(self, code: str) -> tuple[list[tuple[str, dict[str, Any]]], Any] | None:
        """The tool calls of one step's code in the order they run, as (name, arguments), and the literal given to
        ``final_answer`` (``_MISSING`` when none); None when the code does not parse (smolagents could not run it)."""
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            return None
        calls: list[tuple[str, dict[str, Any]]] = []
        answer: Any = _MISSING
        for node in _in_run_order(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):  # a module's function is no tool of the agent's
                self.defined.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.Assign):
                value = self._literal(node.value)
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        if value is _MISSING:
                            self.bound.pop(target.id, None)
                        else:
                            self.bound[target.id] = value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if name == FINAL:
                    given = node.args[0] if node.args else next(
                        (k.value for k in node.keywords if k.arg == "answer"), None)
                    answer = _MISSING if given is None else self._literal(given)
                elif self.is_tool(name):
                    calls.append((name, self._arguments(name, node)))
        return calls, answer

    def _arguments(self, name: str, node: ast.Call) -> dict[str, Any]:
        params = self.params.get(name, [])
        given: list[tuple[str, ast.expr]] = [
            (params[i] if i < len(params) else f"arg{i + 1}", a) for i, a in enumerate(node.args)]
        given += [(k.arg, k.value) for k in node.keywords if k.arg is not None]
        args = {}
        for key, expr in given:
            value = self._literal(expr)
            if value is _MISSING:
                self.ignored[NOT_LITERAL] += 1
            else:
                args[key] = value
        return args

    def _literal(self, expr: ast.expr) -> Any:
        if isinstance(expr, ast.Name):
            return self.bound.get(expr.id, _MISSING)
        try:
            return ast.literal_eval(expr)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _MISSING


def answered(answer: Any) -> bool:
    return answer is not _MISSING


def _in_run_order(node: ast.AST) -> list[ast.AST]:
    """The nodes in the order the code runs them, near enough: statements in order, a call after the calls in its
    arguments (``cancel(rid=find(x))`` runs ``find`` first), an assignment after its value."""
    out: list[ast.AST] = []
    stack: list[tuple[ast.AST, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        if done:
            out.append(current)
            continue
        stack.append((current, True))
        stack.extend((child, False) for child in reversed(list(ast.iter_child_nodes(current))))
    return out
