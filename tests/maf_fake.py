"""A scripted chat client for Microsoft Agent Framework (agent-framework-core 1.26): each model call answers the
next step of a script (words, or function calls), through the framework's own function-invocation layer, so an
Agent runs its tools and keeps its session as it does with a real model, with no network. Imported only where the
package is installed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_framework import BaseChatClient, ChatResponse, Content, FunctionInvocationLayer, Message


def say(text: str) -> list[Any]:
    """A step of the script: the model says ``text``."""
    return [Content.from_text(text)]


def call(call_id: str, name: str, arguments: dict[str, Any]) -> list[Any]:
    """A step of the script: the model calls ``name`` (its call id ``call_id``)."""
    return [Content.from_function_call(call_id=call_id, name=name, arguments=arguments)]


class ScriptedClient(FunctionInvocationLayer, BaseChatClient):
    """Answers each model call with the next step of ``script``; ``seen`` keeps each call's instructions (the
    system text), ``sent`` its messages as (role, text): where a context provider's words reached the model."""

    def __init__(self, script: Sequence[list[Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script, self.seen, self.sent = list(script), [], []

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        self.seen.append(options.get("instructions") if isinstance(options, dict) else None)
        self.sent.append([(str(m.role), m.text) for m in messages])
        self.seen_messages = list(messages)
        return ChatResponse(messages=[Message(role="assistant", contents=self.script.pop(0))], response_id="r")
