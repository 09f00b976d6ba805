"""shared/spec/tool-transcripts.md written out word for word, apart from the converter, to test it against: the
converter carries extensions for other logs (toolstate's doc) and caches, and a departure from the spec on an input
the golden file does not hold shows as a difference from this. It reproduces the golden file (with the 2,000
cut) and leaves out every extension, so the inputs it is compared on must not call for one (amounts said with
cents or separators, lowercase hyphenated names, coding agents' tools). One reading is the converter's where the
spec's words allow two: an id path's last part ends in id in any case (userId)."""

from __future__ import annotations

import json
import re
from typing import Any

_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")
_KEY = re.compile(r"[a-z][a-z_]*")
_TRIVIAL = {"yes", "no", "true", "false", "none", "null", "n/a"}


def norm(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return " ".join(str(v).lower().split())


def content(c: Any) -> str:
    return c if isinstance(c, str) else "" if c is None else "\n".join(p["text"] for p in c if p.get("type") == "text")


def leaves(v: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(v, dict):
        return [leaf for k, x in v.items() for leaf in leaves(x, f"{path}.{k}")]
    if isinstance(v, list):
        return [leaf for x in v for leaf in leaves(x, path)]
    return [(path, v)]


def free(s: str) -> bool:
    return len(s) > 100 or len(s.split()) > 8


def _token(text: str, s: str) -> bool:
    return bool(s) and re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", text) is not None


def says(text: str, s: str) -> bool:
    return _token(text, s) or (s.startswith("#") and len(s) > 2 and _token(text, s[1:])) or (
        "_" in s and _token(text, s.replace("_", " ")))


def trivial(path: str, v: Any) -> bool:
    if v is None or isinstance(v, bool):
        return True
    s = norm(v)
    if (isinstance(v, (int, float)) or _NUMBER.fullmatch(s)) and sum(c.isdigit() for c in s) < 3 \
            and not path.rsplit(".", 1)[-1].lower().endswith("id"):
        return True
    return len(s) < 2 or s in _TRIVIAL or free(s)


def summary(name: str, text: str) -> str:
    c = text.strip()
    if c[:5].lower() == "error":
        reason = " ".join(w for w in c.split() if not any(ch.isdigit() for ch in w))[:80]
        reason = re.sub(r"^error[:\s]*", "", reason, flags=re.IGNORECASE)
        return f"{name}: error" + (f" ({reason})" if reason else "")
    try:
        x = json.loads(c)
    except ValueError:
        x = None
    if isinstance(x, list):
        return f"{name}: {len(x)} results"
    if isinstance(x, dict):
        keys = [k for k in x if _KEY.fullmatch(k)][:6]
        return f"{name}: ok ({', '.join(keys)})" if keys else f"{name}: ok ({len(x)} entries)"
    return f"{name}: ok" if c else f"{name}: empty"


def _arguments(raw: Any) -> dict[str, Any] | str:
    if not isinstance(raw, str):
        return {} if raw is None else raw
    try:
        decoded = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw
    return decoded if isinstance(decoded, dict) else raw


def convert(messages: list[dict[str, Any]], label: str = "origin", masked: bool = True,
            cut: int | None = None) -> list[dict[str, Any]]:
    """The events (no episode_id) the spec derives from one conversation of OpenAI chat messages."""
    policy = norm("\n".join(content(m.get("content")) for m in messages if m["role"] == "system"))
    phase, stack, cons, last = "start", [], {}, "none"
    events: list[dict[str, Any]] = []
    names: dict[str, str] = {}

    def emit(kind: str, text: str) -> None:
        state = {"phase": phase, "subgoal_stack": list(stack),
                 "constraints": {k: list(v) if isinstance(v, list) else v for k, v in cons.items()},
                 "uncertainty_flags": [], "last_action_result": last}
        events.append({"step": len(events), "kind": kind, "text": text, "state": state})

    for m in messages:
        role, text = m["role"], content(m.get("content"))
        if role == "system":
            continue
        if role == "assistant":
            calls = [(c["function"]["name"], _arguments(c["function"].get("arguments")), c.get("id"))
                     for c in m.get("tool_calls") or []]
            if calls and events:
                _decide(events, calls, policy, label, masked)
            if text:
                emit("system", text)
            for name, args, call_id in calls:
                phase = name
                stack += [name] if name not in stack else []
                if call_id is not None:
                    names[call_id] = name
                if isinstance(args, str):
                    emit("action", f"CALL {name}({args})")
                    continue
                for k, v in args.items():
                    kept: dict[str, list[Any]] = {}
                    for path, x in leaves(v, k):
                        if not (isinstance(x, str) and free(norm(x))):
                            kept.setdefault(path, []).append(x)
                    cons.update({path: xs[0] if len(xs) == 1 else xs for path, xs in kept.items()})
                emit("action", f"CALL {name}(" + ", ".join(
                    f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in args.items()) + ")")
        elif role == "tool":
            name = m.get("name") or names.get(m.get("tool_call_id"), "tool")
            last = summary(name, text)
            shown = f"{name}: {text}"
            emit("result", shown if cut is None or len(shown) <= cut else
                 shown[:cut] + f" ...[+{len(shown) - cut} chars]")
        elif text:
            emit(role, text)
    return events


def _decide(events: list[dict[str, Any]], calls: list[tuple[str, Any, Any]], policy: str, label: str,
            masked: bool) -> None:
    """The spec's "Decision points and labels" for one assistant message's calls, on its decision event."""
    decision = events[-1]
    own = norm(decision["text"])
    needed: dict[str, list[str]] = {}
    labels: set[int] = set()
    for _, args, _ in calls:
        for k, v in args.items() if isinstance(args, dict) else ():
            for path, x in leaves(v, k):
                s = norm(x)
                if trivial(path, x) or says(own, s) or says(policy, s):
                    continue
                hits = [e["step"] for e in events[:-1] if says(norm(e["text"]), s)]
                if hits:
                    needed.setdefault(path, []).append(s)
                    labels.update({"origin": hits[:1], "latest": hits[-1:], "all": hits}[label])
    if not needed:
        return
    decision["useful_memory_steps"] = sorted(labels)
    state = decision["state"]
    state["phase"] = calls[0][0]
    if masked:
        values = [s for vs in needed.values() for s in vs]
        state["constraints"] = {k: v for k, v in state["constraints"].items() if k not in needed and not any(
            says(norm(x), s) for x in (v if isinstance(v, list) else [v]) for s in values)}
        state["uncertainty_flags"] = sorted(needed)
