"""``export.used_order``: the store ordering a fit's export serves, chosen on the run's own validation decisions.

The used memories first (StoreConfig.used_order) lifts agents whose tasks reuse what earlier calls took (coding)
and lowers those whose tasks turn to new requests (SGD, the demo): a property of the logs trained on, so with
``auto`` the export's ordering is chosen on the run's validation conversations (its holdout, or data.val), as
the best epoch is, by sam_model.choose_order (evaluate's own search, its rule: the highest validation MRR, a tie
to off). ``export.lexical auto`` chooses the store's lexical weight jointly with it (choose_order's grid, rule
and code path, on the same decisions; fewer than MIN_VAL_DECISIONS keep the config's weight with its warning),
a weight sets it; unset, the config's weight is exported as it is. Each held-out conversation is one episode, the scope a deployed store searches, also where the run
trained on lives of several (data.lives).
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from sam_model.choose_order import CHOICES, LEXICALS, choose_order, order_table, why, with_order
from sam_model.io import SAMFileError
from sam_model.training.split_report import MIN_VAL_DECISIONS

HELP = ("the store ordering the export serves (StoreConfig.used_order: the memories the task's earlier calls took "
        "values from first): off, model (in the model's order), latest (by their latest use), or auto (each of the "
        "three scored on the run's validation conversations as sam-eval scores them, the highest validation MRR "
        "kept, a tie to off; the figures in the card); default: unset, model.store.used_order as the configs give "
        "it (off unless set)")


ON_HELP = ("with export.used_order auto, the sources whose validation conversations it chooses on: ends of "
           "data.train paths (a file name is enough), for a mixture trained for one of its domains (configs/"
           "coding.yaml: the coding agent's); default: every source (or data.val)")


LEXICAL_HELP = ("the store's lexical weight the export serves (StoreConfig.lexical: BM25 of the state text mixed into "
                "the re-rank): a weight >= 0, or auto (chosen jointly with the ordering, with export.used_order "
                f"auto, over {', '.join(f'{w:g}' for w in LEXICALS)} on the run's validation conversations by "
                f"python -m sam_model.choose_order's rule; fewer than {MIN_VAL_DECISIONS} held-out decisions keep the "
                "config's weight and say so); default: unset, model.store.lexical as the configs give it (0 unless set)")


def lexical_choice(value, order: str | None) -> float | str | None:
    """``export.lexical`` read: None (unset), "auto" or a weight; a value that is neither, or auto without
    ``export.used_order auto`` (the weight is chosen jointly with the ordering), refused in one line."""
    if value is None:
        return None
    if str(value).strip() == "auto":
        if order != "auto":
            raise SAMFileError(f"export.lexical auto chooses the weight jointly with the ordering: give "
                               f"export.used_order auto too (it is {order or 'unset'}), or a fixed weight")
        return "auto"
    try:
        weight = float(value)
    except (TypeError, ValueError):
        weight = -1.0
    if not (weight >= 0 and weight != float("inf")):
        raise SAMFileError(f"export.lexical: {value!r} is neither auto nor a weight >= 0; give auto or a weight "
                           f"such as {', '.join(f'{w:g}' for w in LEXICALS)}")
    return weight


def chosen_sources(dm, on: list[str] | None) -> list[str] | None:
    """The data.train (or data.val) paths ``on`` names, each end matching exactly one; None: every source."""
    if not on:
        return None
    given = [str(p) for p in (dm.hparams.val or dm.hparams.train)]
    out = []
    for end in on:
        match = [p for p in given if p.endswith(str(end))]
        if len(match) != 1:
            raise SAMFileError(f"export.used_order_on: {end!r} names {len(match)} of the run's sources {given}; give "
                               "the end of exactly one")
        out.append(match[0])
    return out


def validation_data(dm, on: list[str] | None = None):
    """The run's validation conversations (sam_model.training.val_log.held_lines) of the sources ``on`` names
    (default: all) as evaluate's EvalData."""
    from sam_model.evaluation.data import load_eval_data
    from sam_model.training.val_log import held_lines

    lines, conversations = held_lines(dm, chosen_sources(dm, on))
    if not lines:
        raise SAMFileError("export.used_order auto: the run has no validation conversation to choose on; give "
                           "data.val or a larger data.val_fraction, or set export.used_order off, model or latest "
                           "(with export.lexical a weight, not auto: it is chosen with the ordering)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "validation.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        return load_eval_data(path, "episode", progress=False)


def export_order(retriever, dm, order: str | None, on: list[str] | None = None, say=print, lexical=None):
    """(network, store settings) to export with ``order`` (one of :data:`CHOICES`, None: the config's) and
    ``lexical`` (:func:`lexical_choice`'s): a fixed ordering or weight set as given; ``auto`` chosen on ``dm``'s
    validation conversations (of the sources ``on`` names), its record kept in the network's training record
    (and so the card)."""
    if order is not None and order not in CHOICES:
        raise SAMFileError(f"export.used_order: {order!r} is not one of {', '.join(CHOICES)}")
    lexical = lexical_choice(lexical, order)
    if isinstance(lexical, float):  # a fixed weight: the ordering (if auto) is chosen at the weight served
        from sam_model.retriever import SAMRetriever

        retriever = SAMRetriever(retriever.net, retriever.store.config.with_lexical(lexical))
    if order != "auto":
        config = retriever.store.config
        if order is not None:
            config = dataclasses.replace(config, used_order=None if order == "off" else order)
        return retriever.net, config
    try:
        data = validation_data(dm, on)
    except SAMFileError as exc:  # after hours of training: the export is written all the same, the reason said
        keep = f"store.used_order {retriever.store.config.used_order or 'off'}" + (
            f" and store.lexical {retriever.store.config.lexical:g}" if lexical == "auto" else "")
        say(f"export.used_order auto: nothing to choose on ({exc}); the export keeps {keep}: "
            "choose later on a validation log, python -m sam_model.choose_order EXPORT --choose-on LOG --out EXPORT")
        return retriever.net, retriever.store.config
    from sam_model.evaluation.run import few_decisions_warning

    label = "the run's validation conversations" + (f" of {', '.join(map(str, on))}" if on else "")
    joint = lexical == "auto"
    weights = (f" at lexical weights {', '.join(f'{w:g}' for w in LEXICALS)}"  # else grid's warning says it is kept
               if joint and len(data.examples) >= MIN_VAL_DECISIONS else "")
    say(f"export.used_order auto: scoring off, model and latest{weights} on {len(data.examples)} decisions of "
        f"{label}")
    if (few := few_decisions_warning(data)) is not None:  # as choose_order's CLI says it: a choice on a handful
        say(f"export.used_order auto: {few}")
    # without export.lexical auto the ordering alone: the store's lexical weight stays what is given
    record = choose_order(retriever, data, label=label, say=say,
                          lexicals=LEXICALS if joint else None)
    say("\n".join(order_table(record)))
    chose = f", lexical {record['lexical']:g}" if joint else ""
    say(f"export.used_order auto: chose {record['used_order']}{chose} ({why(record)})")
    return with_order(retriever, record)
