"""A SQL query's values are traced by its literals (sam_model.data.sqlwords), not as one string.

Found by a walkthrough on a data-platform agent's logs (run_sql, get_pods, restart_deployment, open_ticket): the
agent writes the tenant, merchant or date the user gave into a query, ``WHERE tenant = 'acme-eu'``, and a query of
more than 8 words is free text to the spec, so it was never traced (a shorter one was traced whole, said by no event).
"""

from __future__ import annotations

import json

from sam_model.data.sqlwords import sql_literals
from sam_model.data.transcripts import Conversation, convert_conversation, live_state


def convert(messages: list[dict]) -> list[dict]:
    return convert_conversation(Conversation("ops-1", messages, "ops.jsonl:1", "ops-1"))


def sql(call_id: str, query: str, database: str = "orders_prod", tool: str = "run_sql") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {
        "name": tool, "arguments": json.dumps({"query": query, "database": database})}}]}


# the user gives a tenant, a threshold and a day, then corrects the threshold; the agent re-runs its query
TENANT = [
    {"role": "user", "content": "how many orders over $5,000 did tenant acme-eu have on 2026-12-03? db is orders_prod"},
    sql("t1", "SELECT count(*) FROM orders WHERE tenant = 'acme-eu' AND total > 5000 AND created_at::date = "
              "'2026-12-03'"),
    {"role": "tool", "tool_call_id": "t1", "content": " count\n-------\n   131\n(1 row)"},
    {"role": "user", "content": "hmm correction, the threshold should be $2,500, not 5,000"},
    sql("t2", "SELECT count(*) FROM orders WHERE tenant = 'acme-eu' AND total > 2500 AND created_at::date = "
              "'2026-12-03'"),
    {"role": "tool", "tool_call_id": "t2", "content": " count\n-------\n   412\n(1 row)"},
]


def test_a_query_is_traced_by_its_literals():
    events = convert(TENANT)
    decision = events[3]  # the correction, the observation of the second query
    assert decision["text"].startswith("hmm correction")
    assert decision["useful_memory_steps"] == [0]
    # the tenant and the day the user gave first; 2500 is the correction's own ($2,500), 5000 no longer used
    assert decision["meta"]["needed"] == {"query": ["acme-eu", "2026-12-03"], "database": ["orders_prod"]}
    assert decision["state"]["uncertainty_flags"] == ["database", "query"]


def test_an_id_a_result_printed_is_traced_to_that_result_three_calls_later():
    events = convert([
        {"role": "user", "content": "merchant M-20931 says their payouts are missing. can you look?"},
        sql("s1", "SELECT payout_id, status FROM payouts WHERE merchant_id = 'M-20931'", "billing_prod"),
        {"role": "tool", "tool_call_id": "s1",
         "content": " payout_id | status\n-----------+--------\n PO-883120 | failed\n PO-884002 | pending\n(2 rows)"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "k1", "type": "function", "function": {
            "name": "get_pods", "arguments": '{"namespace": "billing", "selector": "app=payout-worker"}'}}]},
        {"role": "tool", "tool_call_id": "k1", "content": "NAME  READY  STATUS\npayout-worker-6c9d4  1/1  Running"},
        {"role": "user", "content": "ok, and how often was the failed one retried? it's billing_prod"},
        sql("s2", "SELECT count(*) FROM payout_attempts WHERE payout_id = 'PO-883120' -- the failed one\n"
                  "  AND attempted_at >= now() - interval '7 days' LIMIT 100", "billing_prod"),
    ])
    decision = events[5]
    assert decision["meta"]["needed"] == {"query": ["po-883120"]}  # the comment's words and the LIMIT are no values
    assert decision["useful_memory_steps"] == [2]  # the result that printed the payout id


def test_literals_of_a_query():
    assert sql_literals("SELECT * FROM t WHERE a = 'it''s' AND b IN ('x', 'y') AND c > 2500.5") == \
        ["it's", "x", "y", 2500.5]
    assert sql_literals("select x from t where name ilike '%acme%' and v = 'a%b' -- 'no'\n/* 'none' */ limit 20") \
        == ["acme", "a%b"]
    assert sql_literals('SELECT "Tenant Id", t2.col3 FROM "orders" t2 WHERE x = $1 OFFSET 400') is None  # no value
    assert sql_literals("WITH r AS (SELECT 1) SELECT * FROM r WHERE name = 'acme'") == [1, "acme"]
    assert sql_literals("SELECT * FROM t WHERE a = 'open") is None  # a quote that does not close: read whole
    assert sql_literals("show me the revenue of 'acme'") is None  # SHOW with words after it: no SQL of a value
    assert sql_literals("check the 'acme' tenant") is None  # words, no SQL


def test_only_a_query_argument_of_a_sql_tool_is_read_so():
    query = "SELECT count(*) FROM job_queue WHERE queue_name = 'checkout-settle' AND state = 'ready'"
    said = {"role": "user", "content": "check the checkout-settle queue in orders_prod"}
    for tool, argument, traced in (("run_sql", "query", True), ("query_db", "sql", True),
                                   ("execute_query", "statement", True), ("sql_exec", "command", True),
                                   ("search_docs", "query", False), ("deploy", "command", False),
                                   ("run_sql", "title", False)):
        events = convert([said, {"role": "assistant", "content": "ok"},
                          {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
                           "function": {"name": tool, "arguments": json.dumps({argument: query})}}]}])
        assert ("useful_memory_steps" in events[1]) is traced, (tool, argument)


def test_the_live_state_before_a_query_reads_it_alike():
    call = {"name": "run_sql", "arguments": json.loads(TENANT[4]["tool_calls"][0]["function"]["arguments"])}
    state = live_state(TENANT[:4], call)
    assert state["uncertainty_flags"] == ["database", "query"]


def test_a_status_a_query_filters_by_is_the_schemas_word():
    """``state = 'ready'`` is a word of the schema, as its column is: traced, the walkthrough's four checkout
    conversations each got a decision point labelled with a get_pods listing whose header says READY."""
    assert sql_literals("SELECT count(*) FROM job_queue WHERE queue_name = 'checkout-settle' AND state = 'ready'") \
        == ["checkout-settle"]
    assert sql_literals("SELECT * FROM p WHERE p.order_status IN ('failed', 'pending') AND lower(name) = 'acme' "
                        "AND kind <> 'test' AND type = 'T-800' AND status_code = 502") == ["acme", "T-800", 502]
    events = convert([
        {"role": "user", "content": "check pods for cart-worker in shop-eu"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "p1", "type": "function", "function": {
            "name": "get_pods", "arguments": '{"namespace": "shop-eu", "selector": "app=cart-worker"}'}}]},
        {"role": "tool", "tool_call_id": "p1", "content": "NAME   READY   STATUS\ncart-worker-66f8c   0/1   Pending"},
        {"role": "user", "content": "check the queue depth in orders_eu, table job_queue, queue 'cart-expire'"},
        sql("p2", "SELECT count(*) FROM job_queue WHERE queue_name = 'cart-expire' AND state = 'ready'", "orders_eu"),
    ])
    assert "useful_memory_steps" not in events[3], events[3]
