"""A scripted chat client for Microsoft Agent Framework (agent-framework-core 1.26): each model call answers the
next step of a script (words, or function calls), through the framework's own function-invocation layer, so an
Agent runs its tools and keeps its session as it does with a real model, with no network. Imported only where the
package is installed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)


def say(text: str) -> list[Any]:
    """A step of the script: the model says ``text``."""
    return [Content.from_text(text)]


def call(call_id: str, name: str, arguments: dict[str, Any]) -> list[Any]:
    """A step of the script: the model calls ``name`` (its call id ``call_id``)."""
    return [Content.from_function_call(call_id=call_id, name=name, arguments=arguments)]


def shipment_desk() -> tuple[list[Any], list[list[Any]]]:
    """An exceptions desk's two tools (the second raising) and the script of a session that calls both, then
    answers: what the readers' tests save in every way the framework keeps a session."""

    @tool
    def track_shipment(tracking_number: str) -> str:
        """Where a shipment is."""
        return f"{tracking_number}: customs hold at Rotterdam on container MSCU1234567"

    @tool
    def rebook(container_id: str) -> str:
        """Rebook a container on the next vessel."""
        raise ValueError("no vessel with space")

    script = [call("c1", "track_shipment", {"tracking_number": "TRK123"}),
              call("c2", "rebook", {"container_id": "MSCU1234567"}), say("Rebooking failed.")]
    return [track_shipment, rebook], script


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


class LayeredClient(ChatMiddlewareLayer, ScriptedClient):
    """ScriptedClient with the framework's chat middleware layer outside its function loop, as the framework's own
    clients (OpenAIChatClient's) are layered: what a context provider's chat middleware reaches."""

    def __init__(self, script: Sequence[list[Any]], **kwargs: Any) -> None:
        super().__init__(script=script, **kwargs)
