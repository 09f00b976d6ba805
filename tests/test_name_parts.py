"""A value said alone is labelled by the events that say it alone, before those that say it inside a longer name.

Found by a walkthrough on a DevOps agent's logs: the user asked who owns ``ledger-api``, the service catalog's row
gave its namespace ``"namespace": "ledger"``, and every later call in namespace ``ledger`` was labelled with the
user's question, since the spec's whole-token rule reads ``ledger`` in ``ledger-api`` (a hyphen is no word
character); the catalog row that gave it was never the label (6 of the walkthrough's 80 needed values). A name that
only holds the value (``payments-api-7f9c6d8b5-2xkqp``, a pod of deployment ``payments-api``) still says it where
nothing says it alone.
"""

from __future__ import annotations

import json

from sam_model.data.sayings import says_alone
from sam_model.data.transcripts import Conversation, convert_conversation


def convert(messages: list[dict], **kw) -> list[dict]:
    return convert_conversation(Conversation("ops-1", messages, "ops.jsonl:1", "ops-1"), **kw)


def call(call_id: str, tool: str, **arguments) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}]}


CATALOG = [
    {"role": "user", "content": "who owns ledger-api and where's its dashboard? it's in the service catalog"},
    call("k1", "run_sql", query="SELECT owner, namespace FROM services WHERE name = 'ledger-api'", database="catalog"),
    {"role": "tool", "tool_call_id": "k1", "content": json.dumps([{"owner": "rhea.p", "namespace": "ledger"}])},
    {"role": "user", "content": "check its pods"},
    call("k2", "get_pods", namespace="ledger", selector="app=ledger-api"),
    {"role": "tool", "tool_call_id": "k2", "content": "NAME                    READY\nledger-api-8d7f6-p2q9r  1/1"},
    {"role": "user", "content": "ledger is the right namespace, yes. restart it"},
    call("k3", "restart_deployment", name="ledger-api", namespace="ledger"),
]


def test_a_value_is_labelled_by_the_event_that_says_it_alone():
    events = convert(CATALOG)
    decision = events[3]
    assert decision["text"] == "check its pods"
    assert decision["meta"]["needed"] == {"namespace": ["ledger"]}
    assert decision["useful_memory_steps"] == [2]  # the catalog's row, not the question about ledger-api


def test_every_label_mode_prefers_the_events_that_say_it_alone():
    messages = CATALOG[:3] + [{"role": "assistant", "content": "ledger-api runs in namespace ledger."},
                              {"role": "user", "content": "check its pods"}, CATALOG[4]]
    # the question and the catalog query say ledger-api only (steps 0, 1)
    assert convert(messages, label="all")[4]["useful_memory_steps"] == [2, 3]
    assert convert(messages, label="latest")[4]["useful_memory_steps"] == [3]
    assert convert(messages, label="origin")[4]["useful_memory_steps"] == [2]


def test_a_name_that_holds_the_value_still_says_it_where_nothing_else_does():
    events = convert([
        {"role": "user", "content": "pods in prod keep crashing"},
        call("p1", "get_pods", namespace="prod", selector="tier=web"),
        {"role": "tool", "tool_call_id": "p1", "content": "NAME                            READY   STATUS\n"
                                                         "payments-api-7f9c6d8b5-2xkqp    0/1     CrashLoopBackOff"},
        {"role": "user", "content": "ok, go ahead and restart it"},
        call("p2", "restart_deployment", name="payments-api", namespace="prod"),
    ])
    assert events[3]["meta"]["needed"] == {"name": ["payments-api"], "namespace": ["prod"]}
    assert events[3]["useful_memory_steps"] == [0, 2]  # the deployment from its pod's name, prod from the user


def test_says_alone():
    assert says_alone("namespace ledger", "ledger") and says_alone('{"namespace": "ledger"}', "ledger")
    assert not says_alone("who owns ledger-api?", "ledger") and not says_alone("the old-ledger", "ledger")
    assert says_alone("ledger-api, and ledger", "ledger")  # once alone is enough
    assert says_alone("it's prod-eu-west, not prod-eu", "prod-eu") and not says_alone("prod-eu-west", "prod-eu")
    assert says_alone("deploy -ledger", "ledger") and says_alone("ledger- ", "ledger")  # a dash of no name
    assert says_alone("ledger api", "ledger_api")  # the spec's variants, as says reads them


def test_a_number_or_code_inside_a_range_or_route_keeps_the_spec_first_event():
    """A hyphen between numbers is a range (a budget of 800-1200), between capitals a route or key (JFK-LAX): the
    hyphenated mention is what gave the value, and a later event that says it alone by chance (a loyalty balance
    of 1200, the user's home airport) is no better label; the spec's first event stays the label."""
    events = convert([
        {"role": "user", "content": "I need a laptop for video editing, budget is 800-1200 dollars. Also JFK-LAX "
                                    "flight on 2026-05-03 for the trip. user id u_4411"},
        call("u1", "get_user", user_id="u_4411"),
        {"role": "tool", "tool_call_id": "u1",
         "content": json.dumps({"user_id": "u_4411", "loyalty_points": 1200, "home_airport": "JFK"})},
        {"role": "assistant", "content": "Thanks, looking now."},
        call("s1", "search_products", category="laptops", max_price=1200),
        {"role": "tool", "tool_call_id": "s1", "content": "[]"},
        {"role": "assistant", "content": "No laptops found; now the flight."},
        call("f1", "search_flights", origin="JFK", destination="LAX", date="2026-05-03"),
    ])
    assert events[3]["meta"]["needed"] == {"max_price": ["1200"]}
    assert events[3]["useful_memory_steps"] == [0]  # the user's budget, not the loyalty balance
    assert events[6]["meta"]["needed"] == {"origin": ["jfk"], "destination": ["lax"], "date": ["2026-05-03"]}
    assert events[6]["useful_memory_steps"] == [0]  # the user's route, not the profile's home airport
