"""What the adapters of agent frameworks (AutoGen's memory, smolagents' callback and tool, LlamaIndex's block) share
of their scopes: checked when made, the filter of a memory of no user, and the recall's numbered text. One rule for
all: each wrote its own, and the no-user filter is what keeps one user's memories out of another's context. Imports
no framework."""

from __future__ import annotations

from typing import Any

from sam_model.limits import check_scope

NO_USER = {"user_id": {"eq": None}}  # a memory of no user reads (and clears) no user's memories


def fixed_scopes(owner: str, user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str | None]:
    """The scopes, checked when made as ScopedMemory checks them (check_scope): a bad one was refused only at the
    first add or search, inside the agent's run, or, empty, taken for none. ``owner`` names the adapter in the
    error of no scope."""
    scopes = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    for name, value in scopes.items():
        check_scope(value, name)
    if not any(scopes.values()):
        raise ValueError(f"{owner} needs a scope (user_id, agent_id or run_id): a memory of no scope would hold or "
                         "search every user's")
    return scopes


def user_filter(user_id: str | None) -> dict[str, Any] | None:
    """The filters of an adapter's searches: none for a user's (the scopes say it), NO_USER for one of no user, as
    ScopedMemory's scopes are filters and ``agent_id`` alone matched every user's memories with that agent."""
    return None if user_id is not None else NO_USER


def numbered(found: list[dict[str, Any]]) -> str:
    """Search results' memories numbered, best first, a memory's lines after its first indented under its number:
    written as is, a memory of several lines read as several, and its own line "2. ..." as the second memory."""
    return "\n".join(f"{i}. " + hit["memory"].replace("\n", "\n" + " " * len(f"{i}. "))
                     for i, hit in enumerate(found, start=1))
