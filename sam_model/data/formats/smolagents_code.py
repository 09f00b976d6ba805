"""The tool calls in a smolagents ``CodeAgent``'s code, read with Python's ``ast`` without running it.

A CodeAgent does not call tools by name: it writes Python (``user = get_user(user_id="ann")``) that its executor
runs, and records one call, ``python_interpreter`` with the code as its argument. What the labelling rule needs is
the calls to the agent's tools inside that code and the values given to them, so each call of a tool's name is read
as a tool call, its arguments by keyword (a positional one named from the tool's ``def NAME(...)`` line in the
system prompt, else ``arg1``, ``arg2``, ...). Only values written in the code are read: a literal (``"QX7Z9A"``,
``120.5``, ``["a", "b"]``), or a name bound to a literal by an earlier plain assignment (``rid = "QX7Z9A"``, in this
step or an earlier one: the executor keeps its variables across steps), an item of such a value (``ids[i]``) or
its ``len``, where that binding surely holds when the
call runs (not a loop variable, but for a loop over a literal list, ``range``, ``enumerate`` or ``zip`` of literals,
read pass by pass with its item, up to 100 passes, but not in a part of a pass that may not run, where only a name
the pass bound before it to the same literal each pass is known; not a branch's binding, a parameter, a name bound again otherwise, a list changed through a value not traced). An argument
computed at run time (a variable holding an earlier tool's output, ``user["id"]``, an f-string, another call) holds
a value the log never shows: it is left out of the call and counted, never guessed. A tool call inside a function
the code defines runs where the function is called, so it is read there, once per call, the parameters the call
gives literals bound to them (a function never called made none); one passed as a value or calling itself is counted.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FINAL = "final_answer"  # smolagents' tool that ends a run: its argument is the answer, words said to the user
INTERPRETER = "python_interpreter"  # the one call a CodeAgent step records: the code as its argument
NOT_LITERAL = "code argument computed at run time"
NOT_RUN = "tool call in a function not traced"  # the code's own function passed as a value, or calling itself
PASSES = 100  # the passes of a loop over a literal list, range, ... read one by one (a longer one: read once)
RUNS, DEPTH = 1000, 50  # the function calls one step's code is read through (each function calling the last twice
# is 2**N), and how deep in each other (Python's own stack is the limit of a deeper chain)
LONG = f"loop read once, over {PASSES} passes or {RUNS} in a step"  # counted: its calls' loop variable unknown
# a tool as a CodeAgent's system prompt lists it: "def get_user(user_id: string) -> object:"
_DEF = re.compile(r"^def ([A-Za-z_]\w*)\(([^)]*)\)\s*->", re.MULTILINE)
_MISSING = object()
_ITERATORS = ("range", "enumerate", "zip")  # the builtins whose passes a for loop over them is read by
_READ = (*_ITERATORS, "len")  # the builtins read without running the code (the code may bind their names to its own)
_TRY_STAR = (ast.TryStar,) if hasattr(ast, "TryStar") else ()  # except* (Python 3.11)
# the methods of str, bytes, list, tuple, dict and set that change nothing in place: ``user.get("name")`` on a
# tool's output changes no list the code let out (_kinds)
READS = frozenset((
    "capitalize casefold center count decode encode endswith expandtabs find format format_map hex index isalnum "
    "isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join "
    "ljust lower lstrip partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip "
    "split splitlines startswith strip swapcase title translate upper zfill get items keys values copy difference "
    "intersection union symmetric_difference isdisjoint issubset issuperset").split())


@dataclass
class Calls:
    """What a conversation's code said so far: the tools' parameters (from the system prompt), the names bound to
    literals and the functions the code defined or imported itself (no tool calls), across its steps."""

    params: dict[str, list[str]] = field(default_factory=dict)
    bound: dict[str, Any] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    ignored: Counter = field(default_factory=Counter)
    final_called: bool = False  # the last code read calls final_answer somewhere (its value maybe not a literal)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)  # the code's own
    _running: set[str] = field(default_factory=set)  # the functions whose call is being read (one calling itself)
    _hidden: Counter = field(default_factory=Counter)  # the builtins read (range, len) a scope being read binds
    _changed: dict[int, Any] = field(default_factory=dict)  # the lists, dicts and sets bound that the code changed
    # in place, by id (kept here, so no id is reused): a name whose value holds one is unknown (_literal)
    _held: dict[int, tuple[Any, set[int]]] = field(default_factory=dict)  # a bound value's containers (_holds)
    _walked: dict[tuple[str, int], Any] = field(default_factory=dict)  # what a node of the code read holds (_walk)
    _escaped: set[int] = field(default_factory=set)  # the bound lists, dicts and sets a value not traced may hold
    # (_let_out; alive in _held): changed in place through a name not traced, they are unknown (_change)
    _out: set[int] = field(default_factory=set)  # the bound values whose containers are in _escaped
    _kept: set[int] = field(default_factory=set)  # the names (ast.Name ids) the code read read for a value not kept
    _varying: set[str] = field(default_factory=set)  # the names each pass of the loops being read binds anew
    _own: set[str] = field(default_factory=set)  # the names whose value is a list, dict or set the code wrote, or a
    # tool's output, changed since by its own methods alone (``results.append(x)``): no list let out (_change)

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
        ``final_answer`` (``_MISSING`` when none, or when it is called in a branch, loop or function, which may not
        run it); None when the code does not parse (smolagents could not run it)."""
        self.final_called = False
        self._walked, self._hidden, self._kept, self._varying = {}, Counter(), set(), set()
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            return None
        self._calls: list[tuple[str, dict[str, Any]]] = []
        self._answer: Any = _MISSING
        self._runs = 0  # the calls of the code's own functions read so far
        self._depth = 0  # the branches, loops and scopes around the node: a final_answer there may not run
        try:
            self._visit(tree)
        except RecursionError:
            return None
        return self._calls, self._answer

    def _visit(self, node: ast.AST) -> None:
        """``node`` in the order it runs. A name is bound to a literal only where the binding surely holds when it is
        read: a value bound in one branch, one pass of a loop, a function's or comprehension's own scope (parameters,
        loop variables), or by anything but a plain assignment of a literal (``for rid in ...``, ``rid, x = ...``,
        ``rid += ...``, ``with ... as rid``, ``ids.append(...)``) is not known, so an argument naming it is left out,
        never given a value an earlier line bound (which labelled the call with a value it was not made with)."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            self._scope(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):  # the name is what is called, no value
            if self.is_tool(node.func.id) or node.func.id == FINAL or (
                    node.func.id in ("len", "print") and not self._taken(node.func.id)):
                self._read_only(*node.args, *(k.value for k in node.keywords))
            for part in [*node.args, *node.keywords]:
                self._visit(part)
            self._after(node)
        elif isinstance(node, ast.IfExp):  # one of its values is made, which one the log does not say
            self._read_only(node.test)
            self._visit(node.test)
            self._maybe([node.body])
            self._maybe([node.orelse])
        elif isinstance(node, ast.BoolOp):  # x and tool(...): the values after the first may not be made
            self._visit(node.values[0])
            self._maybe(node.values[1:])
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            first = node.generators[0]
            body = [*first.ifs, *node.generators[1:],
                    *([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])]
            items = not isinstance(node, ast.GeneratorExp) and bool(self._items(first.iter))  # runs on this pass
            sure = 0 if not items else 1 if first.ifs else len(body) if len(node.generators) == 1 else 0
            self._visit(first.iter)  # the first iterable runs in the enclosing scope
            self._local(node, body, sure)
        elif isinstance(node, ast.For) and (passes := self._unrolled(node)) is not None:
            self._passes(node, passes)
        elif isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, *_TRY_STAR, ast.Match)):
            self._branches(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets) and (
                    self._literal(node.value) is not _MISSING):  # alias = ids: the name holds the list traced
                self._read_only(node.value)
            if node.value is not None:  # the value runs before the names are bound
                self._visit(node.value)
            if isinstance(node, ast.AugAssign):  # alias += [...] extends the list in place
                self._change(_changes(node), _kinds(node))
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self._visit(target)
            value = self._literal(node.value) if isinstance(node, ast.Assign) else _MISSING
            if isinstance(node, ast.Assign) and value is not _MISSING:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.bound[target.id] = value
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(
                    node.value.func, ast.Name) and self.is_tool(node.value.func.id):  # the tool's value (_own)
                self._own.update(t.id for t in node.targets if isinstance(t, ast.Name))
        else:
            if isinstance(node, ast.Compare):  # x in ids: a bool
                self._read_only(node.left, *node.comparators)
            elif isinstance(node, ast.Subscript):  # ids[i]: a key holds no list (it is hashable)
                self._read_only(node.slice)
            elif isinstance(node, (ast.FormattedValue, ast.Assert)):
                self._read_only(node.value if isinstance(node, ast.FormattedValue) else node.test)
            for child in ast.iter_child_nodes(node):
                self._visit(child)
            self._after(node)

    def _read_only(self, *exprs: ast.expr | None) -> None:
        """``exprs`` are read where their value is given to no value the reader does not trace (a tool's argument, a
        comparison, a test, a plain assignment traced): the lists they name do not escape (:meth:`_let_out`)."""
        for expr in exprs:
            self._kept.update(id(n) for n in _read_names(expr))

    def _let_out(self, name: ast.Name) -> None:
        """A name read for a value the reader does not trace (``box["r"] = rid``, ``out.append(rid)``, ``f(rid)``,
        ``return rid``): that value may hold the lists, dicts and sets bound to it, which a change in place through
        a name not traced may change (:meth:`_change`)."""
        value = self.bound.get(name.id, _MISSING)
        if value is not _MISSING and id(value) not in self._out and id(name) not in self._kept:
            self._escaped |= self._holds(value)
            self._out.add(id(value))

    def _maybe(self, parts: Sequence[ast.AST]) -> None:
        """``parts`` of a pass of a loop read pass by pass that may not run on that pass (an ``if``'s branch, an
        ``except``, ``y if c else z``, ``c and tool(rid)``): the names each pass binds anew (:attr:`_varying`) are
        unknown in them, as a call there may have been made on some passes only; until conversion version 193
        ``for rid in ids: if rid == "A": get_user(rid)`` was read as a call of each item. Outside them, they are
        known again."""
        kept = {k: v for k, v in self.bound.items() if k in self._varying}
        for k in kept:
            del self.bound[k]
        for part in parts:
            self._visit(part)
        stored = set().union(*(self._walk("stored", p) for p in parts))
        self.bound.update({k: v for k, v in kept.items() if k not in stored})

    def _after(self, node: ast.AST) -> None:
        """A node whose parts have run: a name stored or deleted is no longer known, a method called on a name may
        change it (``ids.append(x)``), an import is no tool, a call of a tool's name is a call."""
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            self.bound.pop(node.id, None)
            self._own.discard(node.id)
            self.functions.pop(node.id, None)
            if node.id in _READ:  # range = ...: no longer the builtin read
                self.defined.add(node.id)
        elif isinstance(node, ast.Name) and node.id in self.functions:  # passed as a value (map(f, ...)): its calls
            self.ignored[NOT_RUN] += self._tool_calls(self.functions[node.id])  # run where, how often, is unknown
        elif isinstance(node, ast.Name):
            self._let_out(node)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and _root(node.value) and not isinstance(
                node.ctx, ast.Load):
            self._change({_root(node.value)}, _kind(node))
            self.bound.pop(_root(node.value), None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # a module's function is no tool of the agent's
            for a in node.names:
                self.defined.add((a.asname or a.name).split(".")[0])
                self.bound.pop(a.asname or a.name.split(".")[0], None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _root(node.func.value):
            if _root(node.func.value) in self.defined:  # random.shuffle(ids): a module's function
                self._given_away(node)
            self._change({_root(node.func.value)}, _kind(node))
            self.bound.pop(_root(node.func.value), None)
        elif kinds := _kind(node):  # through a method's value (d.get("k").append(x)): what d holds is changed
            self._change(set(kinds), kinds)
            for name in kinds:
                self.bound.pop(name, None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name == FINAL:
                self.final_called = True
                given = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg == "answer"), None)
                self._answer = _MISSING if given is None or self._depth else self._literal(given)
            elif self.is_tool(name):
                self._calls.append((name, self._arguments(name, node)))
            elif name in self.defined and name not in self.functions:  # shuffle(ids), imported; a class the code made
                self._given_away(node)
            elif name in self.functions:
                self._run(name, node)

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef,
               method: bool = False) -> None:
        """A def, lambda or class: its decorators, defaults and bases run now; a function's body runs where it is
        called (:meth:`_run`: never called, its tool calls were never made), a class's now, a lambda's and a
        method's (``method``: no name the code calls) read once here, in a scope of its own, whose parameters and
        locals hide the names bound outside; then the name is the code's own, no tool."""
        ahead = [*getattr(node, "decorator_list", []), *getattr(node, "bases", []),
                 *(k.value for k in getattr(node, "keywords", []))]
        if not isinstance(node, ast.ClassDef):
            ahead += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        for expr in ahead:
            self._visit(expr)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not method:
            self.functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            self._local(node, [b for b in node.body if not isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))])
            for b in node.body:
                if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._scope(b, method=True)
        else:
            self._local(node, node.body if isinstance(node.body, list) else [node.body])
        if not isinstance(node, ast.Lambda):
            self.defined.add(node.name)
            self.bound.pop(node.name, None)
            if method or isinstance(node, ast.ClassDef):
                self.functions.pop(node.name, None)

    def _run(self, name: str, call: ast.Call) -> None:
        """A call of the code's own function: its body runs now, each call once, in a scope of its own; a parameter
        given a literal (or a literal default) is bound to it when the call names each parameter plainly (no
        ``*args``, ``**kw``), others unknown; the names it binds are gone outside after it, as are those whose
        items or methods it touches (``ids.append(x)`` on a global list). One calling itself is not traced again."""
        fn = self.functions[name]
        if name in self._running or self._runs >= RUNS or len(self._running) >= DEPTH:
            self.ignored[NOT_RUN] += self._tool_calls(fn)
            return
        self._runs += 1
        given = self._parameters(fn, call)
        self._change(self._walk("changes", fn), self._walk("kinds", fn))
        self._own -= self._walk("rebound", fn)
        outside, functions = dict(self.bound), dict(self.functions)
        for stored in _stored(fn):
            self.bound.pop(stored, None)
        self.bound.update(given)
        self._running.add(name)
        self._depth += 1
        self._hide(fn, 1)
        varying = self._varying  # in a pass read pass by pass, the names it binds it binds anew each pass: unknown
        if varying:  # in its branches (_maybe; until conversion version 207 a branch's call knew its parameters)
            self._varying = varying | self._walk("stored", fn)
        for part in fn.body:
            self._visit(part)
        self._varying = varying
        self._hide(fn, -1)
        self._depth -= 1
        self._running.discard(name)
        self.bound, self.functions = outside, functions
        self._own -= self._walk("rebound", fn)  # its own locals' lists are not the names' outside
        for name in _escaping(fn):
            self.bound.pop(name, None)

    def _parameters(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> dict[str, Any]:
        """The parameters of ``fn`` this call surely binds to literals (read where the call is), by name."""
        a = fn.args
        if a.vararg or a.kwarg or any(isinstance(x, ast.Starred) for x in call.args) or any(
                k.arg is None for k in call.keywords):
            return {}
        positional = [*a.posonlyargs, *a.args]
        values: dict[str, Any] = {}
        late = (ast.Name, ast.Subscript, ast.Call)  # a default runs where the def is, not where it is called
        for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
            values[p.arg] = self._literal(d) if not isinstance(d, late) else _MISSING
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            values[p.arg] = _MISSING if d is None or isinstance(d, late) else self._literal(d)
        for p, x in zip(positional, call.args):
            values[p.arg] = self._literal(x)
        for k in call.keywords:
            values[k.arg] = self._literal(k.value)
        return {k: v for k, v in values.items() if v is not _MISSING}

    def _tool_calls(self, fn: ast.AST) -> int:
        """How many calls of the agent's tools ``fn``'s code holds, with those of the code's functions it calls (each
        function once): what a call of it not traced would have read."""
        count, todo, seen = 0, [fn], {id(fn)}
        while todo:
            for n in ast.walk(todo.pop()):
                name = n.func.id if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) else None
                if name is not None and name != FINAL and self.is_tool(name):
                    count += 1
                elif name in self.functions and id(self.functions[name]) not in seen:
                    seen.add(id(self.functions[name]))
                    todo.append(self.functions[name])
        return count

    def _local(self, node: ast.AST, body: list[ast.AST], sure: int = 0) -> None:
        """``body`` run in a scope of its own: the names it binds (parameters, loop variables, locals) hide those
        bound outside while it runs, and are gone after it, but for what outlives it (:func:`_escaping`). A
        comprehension, lambda or method may not run on a pass of a loop read pass by pass, so the names each pass
        binds are unknown in it (:meth:`_maybe`), but in a class's body and the first ``sure`` parts of a
        comprehension's that surely run (over a literal list or range not empty: its first filter, or, unfiltered,
        all; from conversion version 193 to 202 an unfiltered one read as one that may not, and until 211 a filter's
        call did not know the pass's item, the filter run on each pass)."""
        self._change(self._walk("changes", node), self._walk("kinds", node))
        self._own -= self._walk("rebound", node)
        outside = dict(self.bound)
        sure = len(body) if isinstance(node, ast.ClassDef) else sure
        for name in _stored(node) | (set() if sure else self._varying):
            self.bound.pop(name, None)
        self._depth += 1
        self._hide(node, 1)
        for i, part in enumerate(body):
            if i == sure and sure:  # the parts that may not run: the pass's names unknown there
                for name in self._varying:
                    self.bound.pop(name, None)
            self._visit(part)
        self._hide(node, -1)
        self._depth -= 1
        self.bound = outside
        self._own -= self._walk("rebound", node)  # its own locals' lists are not the names' outside
        for name in _escaping(node):
            self.bound.pop(name, None)

    def _walk(self, what: str, node: ast.AST) -> Any:
        """What ``node`` holds, walked once a code read: the names it may change (:func:`_stored`, "stored"), those
        whose value it may change in place (:func:`_changes`, "changes") or whether a loop's body may stop or skip a
        pass (:func:`_stops`, "stops"). A loop read pass by pass reads the
        loops in it once a pass: walked again each time, 20 loops of 100 items inside each other took half a
        minute."""
        key = (what, id(node))  # the tree read is alive while it is read: no id is reused
        if key not in self._walked:
            self._walked[key] = {"stored": _stored, "stops": _stops, "changes": _changes, "kinds": _kinds,
                                 "rebound": _rebound}[what](node)
        return self._walked[key]

    def _unrolled(self, node: ast.For) -> list[dict[str, Any]] | None:
        """The names each pass of a for loop binds, where the code says what it goes through (:meth:`_items`: a
        literal list or tuple, a name bound to one, ``range``, ``enumerate`` or ``zip`` of those), its target a name
        or a tuple of names each item fills: the loop runs its body once per item, in order. None where the passes
        cannot be told so, and the loop is read once, its variable unknown (:meth:`_branches`): another iterable, a
        body that may stop or skip a pass (``break``, ``continue``, ``return``, ``raise``, ``final_answer``) or
        changes a name the iterable reads, an ``else``, more than :data:`PASSES` items (counted, :data:`LONG`)."""
        if node.orelse or self._walk("stops", node):
            return None
        read = {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)}
        items = None if read & self._walk("stored", node) else self._items(node.iter)
        if items is None:
            return None
        if len(items) > PASSES or self._runs + len(items) > RUNS:
            self.ignored[LONG] += 1
            return None
        passes = [_bind(node.target, item) for item in items]
        return None if None in passes else passes

    def _items(self, expr: ast.expr) -> Sequence[Any] | None:
        """What a for loop over ``expr`` goes through, where the code says it: a literal list or tuple (or a name
        bound to one; a set's order is Python's hash's), ``range`` of integers, ``enumerate`` or ``zip`` of such
        (the builtins, not a name the code or the agent's tools took). At most :data:`PASSES` + 1 items: a longer
        one is read once, and ``range(10**12)`` is never listed. None when unknown."""
        value = self._literal(expr)
        if isinstance(value, (list, tuple)):
            return value[:PASSES + 1]  # enumerate() of a list of 10,000 made 10,000 pairs to read the loop once
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in _ITERATORS) or (
                self._taken(expr.func.id) or any(isinstance(a, ast.Starred) for a in expr.args)):
            return None
        name, keywords = expr.func.id, {k.arg: self._literal(k.value) for k in expr.keywords}
        if name == "range":
            bounds = [self._literal(a) for a in expr.args]
            if keywords or not 1 <= len(bounds) <= 3 or any(type(b) is not int for b in bounds) or bounds[2:] == [0]:
                return None  # range(1, 10, 0) raises
            return range(*bounds)[:PASSES + 1]
        if name == "enumerate":
            start = self._literal(expr.args[1]) if len(expr.args) == 2 else keywords.pop("start", 0)
            inner = self._items(expr.args[0]) if 1 <= len(expr.args) <= 2 else None
            if inner is None or keywords or type(start) is not int:
                return None
            return [(start + i, item) for i, item in enumerate(inner)]
        inners = [self._items(a) for a in expr.args]
        strict = keywords.pop("strict", False)
        if keywords or strict not in (True, False) or any(i is None for i in inners) or (
                strict and len({len(i) for i in inners}) > 1):
            return None  # zip(a, b, strict=True) of lengths unlike raises
        return list(zip(*inners))

    def _taken(self, name: str) -> bool:
        """Whether ``name`` is no longer Python's builtin: the code bound, defined or imported it, it is a tool, or a
        scope being read binds it (a parameter: ``def look(range): ...`` called with the code's own)."""
        return name in self.bound or name in self.functions or name in self.defined or name in self.params or (
            self._hidden[name] > 0)

    def _hide(self, scope: ast.AST, by: int) -> None:
        """Count the builtins read (:data:`_READ`) that ``scope``, a function, lambda, comprehension or class body
        entered (``by`` 1) or left (-1), binds for itself: its parameters hold what each call gives, never known as
        the builtin (until conversion 176 ``def look(range): for i in range(3): ...`` read range's passes)."""
        for name in _stored(scope) & set(_READ):
            self._hidden[name] += by

    def _change(self, names: set[str], kinds: dict[str, bool]) -> None:
        """The values bound to ``names`` are changed in place (``alias.append(x)``, ``order["ids"][0] = x``): every
        name holding one of their lists, dicts or sets is unknown from now on, as Python's names share one object
        (``alias = ids``, ``ids = order["ids"]``, a loop's item, a parameter; until conversion 177 ``len(ids)`` after
        ``alias.append(x)`` read the length first written). A name not traced (a tool's output, ``box = dict()``, a
        list changed already) may hold any list the code let out into a value not traced (:meth:`_let_out`:
        ``box["r"] = rid``, ``out.append(rid)``, ``return rid``): changed, each such list is unknown too (until
        conversion version 193 ``box["r"].append(x)`` left ``rid`` as first written). A module the code imported is
        no such value (``random.shuffle(ids)``: :meth:`_given_away`). Nor is a read (``user.get("name")``), nor a
        change of a list the code wrote, or of a tool's output, by its own methods (``results.append(x)``,
        ``info["seen"] = True``, :attr:`_own`; a tool's output since conversion version 205), which changes that
        value alone (``kinds``, :func:`_kinds`: whether the change reaches through the value's items; until
        conversion version 201 each made every list let out unknown, ``", ".join(ids)`` then ``results.append(x)``
        losing ``ids``)."""
        for name in names | kinds.keys():
            value = self.bound.get(name, _MISSING)
            before = value is _MISSING or not self._changed.keys().isdisjoint(self._holds(value))  # changed since
            for key, held in _containers(value).items():
                self._changed[key] = held
            if name in self.defined or name not in kinds:
                continue
            if kinds[name]:  # through an item: it reaches a list let out if the value is not traced, or changed since
                reaches = before
            else:  # its own methods: a list let out only if the value may be one (not traced, not the code's own)
                reaches = value is _MISSING and name not in self._own
                if value is not _MISSING:
                    self._own.add(name)
            if reaches:
                self._changed.update(dict.fromkeys(self._escaped - self._changed.keys()))

    def _given_away(self, call: ast.Call) -> None:
        """The values a call of a function the code imported (``random.shuffle(ids)``, ``heapq.heappush(h, x)``) is
        given by name or item may be changed in place by it: unknown from now on (until conversion 179 ``ids[0]``
        after ``random.shuffle(ids)`` read the first item as written)."""
        given = {r for a in [*call.args, *(k.value for k in call.keywords)] if (r := _root(a))}
        self._change(given, dict.fromkeys(given, True))

    def _holds(self, value: Any) -> set[int]:
        """The ids of the lists, dicts and sets ``value`` is or holds (:func:`_containers`), walked once a value: a
        list of 20,000 items read in each of 1,000 passes took 5 s walked at each read."""
        if id(value) not in self._held:  # the value is kept beside its ids, so its id is never another's
            self._held[id(value)] = (value, set(_containers(value)))
        return self._held[id(value)][1]

    def _passes(self, node: ast.For, passes: list[dict[str, Any]]) -> None:
        """A for loop whose items the code says, each pass read in turn with its item bound (:meth:`_unrolled`): a tool
        called in it is read once per item, with that item (it had been read once, its argument unknown). What a
        pass binds is known to the next, as the passes run one after another; after the loop its variable holds
        the last item, as in Python."""
        self._read_only(*(n for n in ast.walk(node.iter) if isinstance(n, ast.Name)))  # items bound as they are
        self._visit(node.iter)
        self._runs += len(passes)
        self._own -= self._walk("rebound", node)
        varying, steady = self._varying, _steady(node)
        for given in passes:
            self._varying = varying | self._walk("stored", node)
            for name in given:
                self.bound.pop(name, None)
                self.functions.pop(name, None)
            self.bound.update(given)
            self._depth += 1
            for part in node.body:
                self._visit(part)
                self._varying = self._varying - steady.get(id(part), set())  # the same each pass from here: known
            self._depth -= 1
        self._varying = varying

    def _branches(self, node: ast.AST) -> None:
        """An if, loop, try or match: its test (a for's iterable) runs first; each branch (a loop's body: each pass)
        starts not knowing the names any of them binds, which nothing knows after it either. In a pass of a loop read
        pass by pass, a branch that may not run (all but a try's body, ``else`` and ``finally``) does not know the
        names each pass binds anew either (:meth:`_maybe`). A loop's later passes change in place what an earlier
        one let out (:meth:`_let_out`): changed again after it."""
        stored = self._walk("stored", node)
        self._change(self._walk("changes", node), self._walk("kinds", node))
        self._own -= self._walk("rebound", node)
        if isinstance(node, ast.While):
            self.bound = {k: v for k, v in self.bound.items() if k not in stored}
        head = {ast.If: "test", ast.For: "iter", ast.AsyncFor: "iter", ast.While: "test", ast.Match: "subject"}
        if isinstance(node, (ast.If, ast.While)):
            self._read_only(node.test)
        if type(node) in head:
            self._visit(getattr(node, head[type(node)]))
        surely = isinstance(node, (ast.Try, *_TRY_STAR))
        blocks: list[tuple[list[ast.AST], bool]] = [
            (getattr(node, f), surely) for f in ("body", "orelse", "finalbody") if hasattr(node, f)]
        blocks += [([*([h.type] if h.type else []), *h.body], False) for h in getattr(node, "handlers", [])]
        blocks += [([*([c.guard] if c.guard else []), *c.body], False) for c in getattr(node, "cases", [])]
        kept = {k: v for k, v in self.bound.items() if k in self._varying and k not in stored}
        self._depth += 1
        for block, runs in blocks:
            self.bound = {k: v for k, v in self.bound.items() if k not in stored and (runs or k not in kept)}
            for part in block:
                self._visit(part)
        self._depth -= 1
        self.bound = {k: v for k, v in self.bound.items() if k not in stored}
        self.bound.update(kept)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self._change(self._walk("changes", node), self._walk("kinds", node))

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
        """The value ``expr`` surely holds where it runs, or ``_MISSING``: a literal, a name bound to one, an item of
        one (``ids[i]``, ``order["id"]``, both parts so known; no slice) or its ``len`` (``range(len(ids))``)."""
        if isinstance(expr, ast.Name):
            value = self.bound.get(expr.id, _MISSING)
            return _MISSING if self._changed and not self._changed.keys().isdisjoint(self._holds(value)) else value
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
            value, key = self._literal(expr.value), self._literal(expr.slice)
            try:
                return _MISSING if value is _MISSING or key is _MISSING else value[key]
            except (LookupError, TypeError):  # ids[9], a str's item by a str: Python raises there
                return _MISSING
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len" and len(
                expr.args) == 1 and not expr.keywords and not self._taken("len"):
            value = self._literal(expr.args[0])
            return len(value) if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) else _MISSING
        try:
            return ast.literal_eval(expr)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _MISSING


def answered(answer: Any) -> bool:
    return answer is not _MISSING


def _bind(target: ast.expr, item: Any) -> dict[str, Any] | None:
    """The names a for loop's target binds to one item, as Python unpacks it (``for i, (rid, why) in ...``): None
    where the target is no name nor tuple of names (``for ids[0] in``, ``*rest``) or the item does not fill it."""
    if isinstance(target, ast.Name):
        return {target.id: item}
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(item, (list, tuple)) or len(item) != len(
            target.elts):
        return None
    names: dict[str, Any] = {}
    for t, part in zip(target.elts, item):
        bound = _bind(t, part)
        if bound is None:
            return None
        names.update(bound)
    return names


def _steady(node: ast.For) -> dict[int, set[str]]:
    """The names a loop's body binds the same on every pass, by the statement (its id) that binds them: a plain
    assignment of its own (``uid = "ann"``, not in a branch) of a literal holding no list, dict or set, the name bound
    nowhere else in the loop. Past that statement a pass's branch knows it: whichever passes the branch ran, it holds
    that value (until conversion version 211 unknown there, as the names each pass binds anew, :meth:`_maybe`)."""
    out: dict[int, set[str]] = {}
    for part in node.body:
        if not (isinstance(part, ast.Assign) and all(isinstance(t, ast.Name) for t in part.targets)):
            continue
        try:
            value = ast.literal_eval(part.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if _containers(value):
            continue
        elsewhere = set().union(_stored(node.target), *(_stored(p) for p in node.body if p is not part))
        names = {t.id for t in part.targets} - elsewhere
        if names:
            out[id(part)] = names
    return out


def _read_names(expr: ast.expr | None) -> list[ast.Name]:
    """The names ``expr`` reads where it is a name or an item of one (``ids``, ``order["ids"][i]``, ``ids[0:n]``): its
    value is then one of theirs, or a key."""
    if isinstance(expr, ast.Name):
        return [expr]
    if isinstance(expr, ast.Subscript):
        return [*_read_names(expr.value), *_read_names(expr.slice)]
    if isinstance(expr, ast.Slice):
        return [n for part in (expr.lower, expr.upper, expr.step) for n in _read_names(part)]
    if isinstance(expr, ast.Tuple):  # a key of parts, d[a, b]
        return [n for part in expr.elts for n in _read_names(part)]
    return []


def _holder(node: ast.expr) -> str | None:
    """The name whose value may hold ``node``'s: :func:`_root`, through a method's value too (``d.get("k")``, a value
    ``d`` holds, or one a module's function made: ``datetime.now()``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        node = node.func.value if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _root(node: ast.expr) -> str | None:
    """The name an item or attribute chain starts from (``order["ids"][0]``: order), None for another value."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _containers(value: Any) -> dict[int, Any]:
    """The lists, dicts and sets ``value`` is or holds (a literal's: tuples, strings and numbers hold no others), by
    id: what a change in place of one of them changes."""
    out: dict[int, Any] = {}
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, (list, dict, set)) and id(v) not in out:
            out[id(v)] = v
        if isinstance(v, (list, tuple, set, frozenset)):
            todo.extend(x for x in v if isinstance(x, (list, tuple, dict, set, frozenset)))
        elif isinstance(v, dict):
            todo.extend(x for x in v.values() if isinstance(x, (list, tuple, dict, set, frozenset)))
    return out


def _changes(node: ast.AST) -> set[str]:
    """The names whose value ``node`` may change in place: an item or attribute set or deleted (``order["ids"][0] =
    x``), a method called (``alias.append(x)``), ``+=`` and the like."""
    names: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load) and _root(n.value):
            names.add(_root(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _root(n.func.value):
            names.add(_root(n.func.value))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
    return names


def _kind(node: ast.AST) -> dict[str, bool]:
    """The name ``node`` changes in place, if it does, and whether through an item, attribute or method's value of
    its value (``box["r"].append(x)``, ``out[0].x = 1``, ``d.get("k").append(x)``: True) or by the value's own methods
    or items (``out.append(x)``, ``out["k"] = x``, ``out += [x]``: False); a method that only reads (:data:`READS`)
    changes nothing."""
    if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load) and (
            root := _holder(node.value)):
        return {root: not isinstance(node.value, ast.Name)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (root := _holder(node.func.value)) and (
            node.func.attr not in READS):
        return {root: not isinstance(node.func.value, ast.Name)}
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return {node.target.id: False}
    return {}


def _kinds(node: ast.AST) -> dict[str, bool]:
    """The names ``node`` changes in place anywhere in it (:func:`_kind`), True for one it may change through an
    item."""
    out: dict[str, bool] = {}
    for n in ast.walk(node):
        for name, deep in _kind(n).items():
            out[name] = out.get(name, False) or deep
    return out


def _escaping(node: ast.AST) -> set[str]:
    """The names a scope of its own (a function's body, a lambda, a comprehension, a class body) binds or changes
    outside it: ``global`` / ``nonlocal`` names, ``:=`` targets, and a name whose item or attribute is set or whose
    method is called (``[ids.append(x) for x in ...]`` changes the ``ids`` outside). Restoring the names bound
    before the scope kept these at the literal an earlier line bound, which the scope had changed."""
    names: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and _root(n.value) and not isinstance(n.ctx, ast.Load):
            names.add(_root(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _root(n.func.value):
            names.add(_root(n.func.value))
    return names


def _stops(node: ast.For) -> bool:
    """Whether a for loop's body may stop or skip a pass (``break``, ``continue``, ``return``, ``raise``,
    ``final_answer``)."""
    return any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Raise)) or (
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == FINAL)
        for part in node.body for n in ast.walk(part))


def _stored(node: ast.AST) -> set[str]:
    """The names ``node`` binds, deletes or may change anywhere in it: those it binds anew (:func:`_rebound`), and a
    name whose item or attribute is set or whose method is called (``ids.append(x)``)."""
    names = _rebound(node)
    for n in ast.walk(node):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and _root(n.value) and not isinstance(n.ctx, ast.Load):
            names.add(_root(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _root(n.func.value):
            names.add(_root(n.func.value))
    return names


def _rebound(node: ast.AST) -> set[str]:
    """The names ``node`` binds anew or deletes anywhere in it: assigned, loop and ``with`` variables, parameters,
    ``except ... as`` and ``case`` captures, defs and imports."""
    names: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.FunctionDef, ast.AsyncFunctionDef,
                            ast.ClassDef)) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
    return names
