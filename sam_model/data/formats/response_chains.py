"""Responses API requests chained by ``previous_response_id``, logged one a line, joined into their conversation.

An app on the stateful Responses API sends each request with ``previous_response_id`` and only the new items (the
user's next message, the outputs of the calls the last response made); OpenAI keeps the rest. Logged as it is
sent, ``{"id": response.id, "previous_response_id": ..., "instructions", "input", "output"}`` a line, each line
holds a turn alone: read one conversation a line, every value said in an earlier request traced to nothing (a
walkthrough's property-management agent, 224 requests of 20 conversations: 224 conversations, 0 decision points,
and 116 "tool results answer no earlier tool call"). A line whose ``previous_response_id`` names another line's
``id`` continues that line's conversation: its items follow the earlier line's input and output, as the API
reads them. The chain is one conversation, named by its first request's id (and its ``group``), its policy the
last request's ``instructions`` (the API does not carry them over: each request states its own). A request sent
again with the same ``previous_response_id`` (a retry, a regenerated answer, best-of-n, a line logged twice)
branches the chain: the branch followed is the one whose last request was written last, the chain from the last
leaf back (as a Claude Code session's is read, claude_code.abandoned), and the lines of the branches left are
reported (``Conversation.abandoned``), as a Claude Code rewind's are. (Following the try written last at each fork
instead cut a conversation at a line logged twice, or at a best-of-n request whose first try the app went on
from: every later request was reported as a branch left.) A line whose ``previous_response_id`` names no line of
the file (its start logged elsewhere) starts a conversation of its own, as before; so does each line whose
``previous_response_id`` leads round a loop of ids (made up by the app), none of them a first request, and the
import report names the first such line and the ids (:func:`looping`). Each later request's items follow
a :data:`responses.REQUEST` item naming its line, so an error or a report names an item by its own line
(``FILE:1, line 6, item 0``), not by its place in the joined list (``FILE:1, item 57``), which no line holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.responses import REQUEST

PREVIOUS = "previous_response_id"


def _link(doc: Any) -> str | None:
    """The response a line continues: a Responses line's ``previous_response_id``, when it is a string."""
    if not isinstance(doc, Mapping) or "messages" in doc or "contents" in doc or "items" in doc:
        return None
    prev = doc.get(PREVIOUS)
    return prev if isinstance(prev, str) and prev else None


def _items(doc: Mapping[str, Any]) -> list[Any] | None:
    """A line's items, input then output, as the reader reads them; None where they are not lists (the reader
    then refuses the line, naming the field)."""
    raw, out = doc.get("input"), doc.get("output") or []
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw if raw is not None else []
    return [*items, *out] if isinstance(items, list) and isinstance(out, list) else None


def join(docs: list[tuple[Any, str]]) -> list[tuple[Any, str, tuple[str, ...]]]:
    """Each chain of lines as one document, at its first line's place: ``(doc, where, abandoned)``, ``abandoned``
    the places of the lines of branches the chain left. A file with no line continuing another comes back as it
    is (every ``abandoned`` empty)."""
    parent, children = _links(docs)
    if not children:
        return [(doc, where, ()) for doc, where in docs]
    joined: dict[int, tuple[Any, str, tuple[str, ...]]] = {}
    taken: set[int] = set()
    for root in range(len(docs)):
        if root in parent or root not in children or _items(docs[root][0]) is None:
            continue
        tree = _subtree(children, root)
        node = max(i for i in tree if i not in children)  # the last request written that none continues
        chain = [node]
        while node != root:  # back to the first request: one parent each, so no cycle is reached from a root
            node = parent[node]
            chain.append(node)
        chain.reverse()
        taken.update(tree)
        left = sorted(tree - set(chain))
        first = docs[root][0]
        items = [*(_items(first) or [])]
        for i in chain[1:]:  # each later request's items after a mark naming its line (responses.REQUEST)
            items += [{"type": REQUEST, "at": _at(docs[i][1])}, *(_items(docs[i][0]) or [])]
        policy = next((docs[i][0]["instructions"] for i in reversed(chain)
                       if isinstance(docs[i][0].get("instructions"), str)), None)
        doc = {k: v for k, v in first.items() if k not in ("input", "output", PREVIOUS)}
        doc.update({"input": items, "output": []}, **({"instructions": policy} if policy is not None else {}))
        joined[root] = (doc, docs[root][1], tuple(docs[i][1] for i in left))
    return [joined[i] if i in joined else (doc, where, ()) for i, (doc, where) in enumerate(docs)
            if i in joined or i not in taken]


def _links(docs: list[tuple[Any, str]]) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Each line that continues another -> that line; each line -> the lines continuing it (in file order)."""
    ids, twice = _ids(docs)
    children: dict[int, list[int]] = {}
    parent: dict[int, int] = {}
    for i, (doc, _) in enumerate(docs):
        prev = _link(doc)
        if prev is not None and prev not in twice and ids.get(prev, i) != i and _items(doc) is not None:
            children.setdefault(ids[prev], []).append(i)
            parent[i] = ids[prev]
    return parent, children


def looping(docs: list[tuple[Any, str]]) -> dict[str, str]:
    """The places of the requests whose ``previous_response_id`` leads back round to them (ids an app made up:
    ``a`` continues ``b``, ``b`` continues ``a``, or a request its own id) or into such a loop -> the ids followed,
    ``resp_a -> resp_b -> resp_a``. No first request starts them, so :func:`join` reads each alone, as it did
    unsaid; the import report says so, naming the first, where before nothing told why they were not joined."""
    parent, _ = _links(docs)
    reaches: dict[int, bool] = {}  # a line -> whether following previous_response_id from it reaches a first request
    for start in parent:
        path, seen, node = [], set(), start
        while node in parent and node not in reaches and node not in seen:
            seen.add(node)
            path.append(node)
            node = parent[node]
        ok = reaches.get(node, node not in parent)  # a node seen on this path: a loop
        reaches.update(dict.fromkeys(path, ok))
    loops = [i for i in parent if not reaches[i]]
    loops += [i for i, (doc, _) in enumerate(docs) if i not in parent and _link(doc) is not None
              and _link(doc) == _rid(doc) and _items(doc) is not None]  # its own id: continues nothing (join)
    return {docs[i][1]: _followed(docs, parent, i) for i in sorted(loops)}


def _rid(doc: Any) -> str | None:
    """A line's response id as a string (the API's are strings; an app's counter may be a number)."""
    rid = doc.get("id") if isinstance(doc, Mapping) else None
    return str(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _followed(docs: list[tuple[Any, str]], parent: dict[int, int], i: int, most: int = 6) -> str:
    """The ids from line ``i`` back through its previous responses until one comes again (at most ``most``)."""
    out, seen, node = [str(_rid(docs[i][0]))], {i}, i
    while node in parent and len(out) <= most:
        node = parent[node]
        out.append(str(_rid(docs[node][0])))
        if node in seen:
            return " -> ".join(out)
        seen.add(node)
    return " -> ".join(out + ([str(_link(docs[node][0]))] if node not in parent else ["..."]))


def _ids(docs: list[tuple[Any, str]]) -> tuple[dict[str, int], set[str]]:
    """Each line's id -> the first line of it; and the ids two lines of different content hold. Such an id (an
    app's own counter, restarting in each conversation, logged for ``response.id``) cannot tell which line a
    request continues: none is continued through it, so its lines are read alone, the repeats refused as
    duplicate ids (as before chains were read), where following the first line of the id mixed two
    conversations into one. The same line logged twice is one response: its copy is a branch left."""
    ids: dict[str, int] = {}
    twice: set[str] = set()
    for i, (doc, _) in enumerate(docs):
        if isinstance(doc, Mapping) and isinstance(doc.get("id"), (str, int)) and not isinstance(doc.get("id"), bool):
            rid = str(doc["id"])
            if ids.setdefault(rid, i) != i and docs[ids[rid]][0] != doc:
                twice.add(rid)
    return ids, twice


def lacking(docs: list[tuple[Any, str]]) -> dict[str, str]:
    """The places of the requests that continue a response no line holds -> that response's id: each starts a
    conversation, whatever was said before it unread (its values then trace to nothing). The import report says
    so: a log rotated by day, or a line lost, otherwise looked like conversations that begin mid-way."""
    ids, _ = _ids(docs)
    return {where: prev for doc, where in docs if (prev := _link(doc)) is not None and prev not in ids}


def _at(where: str) -> str:
    """A request's place within its file, as its items are named: ``line 6`` (FILE:6), ``conversation 5`` (FILE:
    conversation 5, an item of a .json list)."""
    tail = where.rsplit(":", 1)[-1].strip()
    return f"line {tail}" if tail.isdigit() else tail


def _subtree(children: dict[int, list[int]], root: int) -> set[int]:
    seen, todo = set(), [root]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += children.get(node, [])
    return seen
