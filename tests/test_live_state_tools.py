"""live_state before the call, given the tool as an agent holds it: an OpenAI agent keeps its tools as
``{"type": "function", "function": {"name", "parameters"}}``, an Anthropic one as ``{"name", "input_schema"}``, a
Bedrock one as ``{"toolSpec": ...}``. Given as ``arguments`` such a definition was read as a schema without
``properties`` and the state flagged no argument; given as ``tool`` it became the phase, a dict; a string of one
argument name was flagged character by character. Each now reads as its name and parameters, or is refused in one
line saying what to give."""

from __future__ import annotations

import pytest

from sam_model.data.toolstate import live_state

CHAT = [
    {"role": "user", "content": "My account is NM-111111 and invoice INV-55502 is wrong"},
    {"role": "assistant", "content": "I can refund $39.99 on INV-55502. Shall I?"},
    {"role": "user", "content": "ok go ahead"},
]
PARAMS = {"type": "object", "properties": {"account_id": {"type": "string"}, "invoice_id": {"type": "string"},
                                           "amount": {"type": "number"}}, "required": ["account_id"]}
FLAGS = ["account_id", "amount", "invoice_id"]
DEFINITIONS = {
    "openai chat completions": {"type": "function", "function": {"name": "issue_refund", "description": "Refund.",
                                                                 "parameters": PARAMS}},
    "openai responses": {"type": "function", "name": "issue_refund", "description": "Refund.", "parameters": PARAMS},
    "function declaration": {"name": "issue_refund", "description": "Refund.", "parameters": PARAMS},
    "anthropic": {"name": "issue_refund", "description": "Refund.", "input_schema": PARAMS},
    "bedrock": {"toolSpec": {"name": "issue_refund", "description": "Refund.", "inputSchema": {"json": PARAMS}}},
}


@pytest.mark.parametrize("shape", sorted(DEFINITIONS))
def test_a_tool_definition_as_arguments_flags_its_parameters(shape):
    state = live_state(CHAT, tool="issue_refund", arguments=DEFINITIONS[shape])
    assert state["phase"] == "issue_refund"
    assert state["uncertainty_flags"] == FLAGS
    assert state == live_state(CHAT, tool="issue_refund", arguments=PARAMS)


@pytest.mark.parametrize("shape", sorted(DEFINITIONS))
def test_a_tool_definition_as_tool_gives_the_phase_and_the_flags(shape):
    state = live_state(CHAT, tool=DEFINITIONS[shape])
    assert state == live_state(CHAT, tool="issue_refund", arguments=PARAMS)


def test_arguments_given_beside_a_definition_win():
    state = live_state(CHAT, tool=DEFINITIONS["anthropic"], arguments=["invoice_id"])
    assert state["phase"] == "issue_refund" and state["uncertainty_flags"] == ["invoice_id"]


def test_a_tool_without_parameters_flags_nothing():
    state = live_state(CHAT, tool={"type": "function", "function": {"name": "list_plans"}})
    assert state["phase"] == "list_plans" and state["uncertainty_flags"] == []
    assert live_state(CHAT, tool="list_plans", arguments={"type": "object"})["uncertainty_flags"] == []


@pytest.mark.parametrize("arguments, said", [
    ("account_id", "arguments is a string"),
    ({"account_id": {"type": "string"}}, "neither 'properties' nor 'type'"),
    ({"parameters": PARAMS}, "not a tool definition"),
    ({"name": "issue_refund", "input_schema": "account_id"}, "input_schema is a string"),
    ([1, 2], "argument names"),
])
def test_arguments_it_would_misread_are_refused(arguments, said):
    with pytest.raises(ValueError, match=said) as err:
        live_state(CHAT, tool="issue_refund", arguments=arguments)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("tool, said", [
    ({"name": "issue_refund", "arguments": {"account_id": "NM-111111"}}, "not a tool definition"),
    ({"description": "Refund."}, "not a tool definition"),
    ("", "give the tool's name"),
    (3, "give the tool's name"),
])
def test_a_tool_that_is_no_name_and_no_definition_is_refused(tool, said):
    with pytest.raises(ValueError, match=said):
        live_state(CHAT, tool=tool, arguments=["account_id"])
