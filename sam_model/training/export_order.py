"""``export.used_order``: the store ordering a fit's export serves, chosen on the run's own validation decisions.

The used memories first (StoreConfig.used_order) lifts agents whose tasks reuse what earlier calls took (coding)
and lowers those whose tasks turn to new requests (SGD, the demo): a property of the logs trained on, so with
``auto`` the export's ordering is chosen on the run's validation conversations (its holdout, or data.val), as
the best epoch is, by sam_model.choose_order (evaluate's own search, its rule: the highest validation MRR, a tie
to off). Each held-out conversation is one episode, the scope a deployed store searches, also where the run
trained on lives of several (data.lives).
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from sam_model.choose_order import CHOICES, choose_order, order_table, with_order
from sam_model.io import SAMFileError

HELP = ("the store ordering the export serves (StoreConfig.used_order: the memories the task's earlier calls took "
        "values from first): off, model (in the model's order), latest (by their latest use), or auto (each of the "
        "three scored on the run's validation conversations as sam-eval scores them, the highest validation MRR "
        "kept, a tie to off; the figures in the card); default: unset, model.store.used_order as the configs give "
        "it (off unless set)")


def validation_data(dm):
    """The run's validation conversations (sam_model.training.val_log.held_lines) as evaluate's EvalData."""
    from sam_model.evaluation.data import load_eval_data
    from sam_model.training.val_log import held_lines

    lines, conversations = held_lines(dm)
    if not lines:
        raise SAMFileError("export.used_order auto: the run has no validation conversation to choose on; give "
                           "data.val or a larger data.val_fraction, or set export.used_order off, model or latest")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "validation.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        return load_eval_data(path, "episode", progress=False)


def export_order(retriever, dm, order: str, say=print):
    """(network, store settings) to export with ``order`` (one of :data:`CHOICES`): a fixed ordering set as
    given; ``auto`` chosen on ``dm``'s validation conversations, its record kept in the network's training record
    (and so the card)."""
    if order not in CHOICES:
        raise SAMFileError(f"export.used_order: {order!r} is not one of {', '.join(CHOICES)}")
    if order != "auto":
        config = dataclasses.replace(retriever.store.config, used_order=None if order == "off" else order)
        return retriever.net, config
    data = validation_data(dm)
    say(f"export.used_order auto: scoring off, model and latest on {len(data.examples)} validation decisions")
    record = choose_order(retriever, data, label="the run's validation conversations", say=say)
    say("\n".join(order_table(record)))
    say(f"export.used_order auto: chose {record['used_order']} ({record['rule']})")
    return with_order(retriever, record)
