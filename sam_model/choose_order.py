"""Choose a store's ``used_order`` and ``lexical`` weight on validation data: "tune for the task".

``used_order`` (sam_model.storeconfig.StoreConfig) puts the memories the task's earlier calls took values from
first. Whether that helps is a property of an agent's logs: coding agents reuse what earlier calls read (it lifts
them), agents whose tasks turn to new requests (SGD, the demo) fall with it. So it is chosen as the best epoch is:
on the run's validation decisions, never a test set. The store's lexical re-rank (``StoreConfig.lexical``: BM25 of
the state text) is the same kind of property: it lifts agents whose tool results name the needed values under the
next call's argument names (the freight walkthrough) and lowers others (SGD, the claims desk), so no fixed weight
ships; it is chosen jointly with the ordering, over :data:`LEXICALS`, where the log has
:data:`~sam_model.training.split_report.MIN_VAL_DECISIONS` decisions or more (below that the store's own weight is
kept and a warning says so: a four-times larger grid over a handful of decisions picks noise). Each setting
(ordering, weight) is scored by sam_model.evaluation.run.score_settings, the search evaluate.py's ``sam`` /
``sam+used`` / ``sam+used-latest`` rows make for a store with that weight (one code path, the vectors encoded
once), and :data:`RULE` picks. The choice is written into an export's ``config.json`` (``store.used_order``,
``store.lexical``), which SAMRetriever.load / from_pretrained, ScopedMemory and sam-serve then serve, and the
figures of every setting into its ``training.json`` (``used_order_chosen``) and model card. ::

    python -m sam_model.choose_order checkpoints/mine/export --choose-on runs/mine_val.jsonl            # table only
    python -m sam_model.choose_order checkpoints/mine/export --choose-on runs/mine_val.jsonl --out OUT  # + export

``train.py fit`` does it at export with ``--export.used_order auto`` (sam_model.training.export_order). This
module needs the [eval] extra only where it scores; serving never imports it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from sam_model.card import order_table
from sam_model.io import SAMFileError, cli_name, run_cli

ORDERS = ("off", "model", "latest")  # the tie order too: off first, the rule with the model's order before latest
CHOICES = (*ORDERS, "auto")
LEXICALS = (0.0, 0.1, 0.3, 0.5)  # the lexical weights tried (StoreConfig.lexical): off and the README's measured mixes
RULE = ("the highest validation MRR (equal to 9 decimals: a tie); a tie goes to the smaller lexical weight, then to "
        "off, then model, then latest")


def pick(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row :data:`RULE` picks among ``rows`` (each ``{"used_order", "mrr", ...}``, with ``"lexical"`` where the
    weight was chosen too)."""
    rank = {o: i for i, o in enumerate(ORDERS)}
    return max(rows, key=lambda r: (round(r["mrr"], 9), -r.get("lexical", 0.0), -rank[r["used_order"]]))


def why(record: dict[str, Any]) -> str:
    """Why ``record``'s chosen setting won, in words: its MRR and the runner-up's, or the settings it tied with and
    the tie order. :data:`RULE` alone after every choice read as a tie where the winner led by 0.07."""
    key = lambda r: round(r["mrr"], 9)  # noqa: E731 - pick's tie test
    chosen = pick(record["table"])
    others = [r for r in record["table"] if r is not chosen]
    tied = [r for r in others if key(r) == key(chosen)]
    if tied:
        return (f"validation MRR {chosen['mrr']:.3f}, tied (equal to 9 decimals) with {len(tied)} other "
                f"setting{'s' * (len(tied) > 1)}; {RULE.split('; ', 1)[1]}")
    if not others:
        return f"the highest validation MRR, {chosen['mrr']:.3f}"
    best, next_ = chosen["mrr"], max(others, key=key)["mrr"]
    # the digits the lead is in: a lead under 0.0005 printed "0.972 against 0.972", read as the tie it is not
    places = next((n for n in range(3, 10) if f"{best:.{n}f}" != f"{next_:.{n}f}"), 9)
    return f"the highest validation MRR, {best:.{places}f} against {next_:.{places}f} next"


def grid(data, own: float, lexicals=LEXICALS) -> tuple[tuple[float, ...], str | None]:
    """The lexical weights to choose among on ``data`` and, where it is too small to choose one (fewer decisions
    than MIN_VAL_DECISIONS, the one rule for a choice on validation data), the warning that the store's own
    weight ``own`` is kept."""
    from sam_model.training.split_report import MIN_VAL_DECISIONS

    if len(data.examples) >= MIN_VAL_DECISIONS or len(set(lexicals)) <= 1:
        return tuple(sorted(set(lexicals))), None
    return (own,), (f"warning: the lexical weight is not chosen on {len(data.examples)} decision points (fewer than "
                    f"{MIN_VAL_DECISIONS}): the store's own, {own:g}, is kept; choose on a larger validation log")


def choose_order(retriever, data, *, label: str = "validation", scope: str = "episode", depth: int = 100,
                 seed: int = 0, batch_size: int = 64, chunking=None, say=None,
                 lexicals: tuple[float, ...] | None = LEXICALS) -> dict[str, Any]:
    """Score every ordering of :data:`ORDERS` at every lexical weight of ``lexicals`` (None: the store's own alone,
    the ordering chosen by itself; fewer decisions than MIN_VAL_DECISIONS: the same, with :func:`grid`'s warning
    said and kept in the record) on ``data`` (EvalData: validation decisions) and return the record: the chosen
    ``used_order`` and ``lexical``, the rule, the table (MRR and Recall@5 of each setting) and what it was measured
    on. ``chunking`` None: the retriever's store's own (StoreConfig.chunking), so each figure is of the search it
    serves. A store serving a network's weight per query (StoreConfig.lexical_per_query, lexical_state): its own is
    that weight, scored as served and kept (the record's ``lexical_per_query`` true; its rows say the fixed part, 0);
    a grid scores its fixed weights alone, and the one chosen replaces the per-query weight (said in one line; the
    record's ``lexical_per_query`` false, so :func:`order_alone` refuses it). Other stores' records have no such key."""
    from sam_model.evaluation.run import score_settings

    config = getattr(getattr(retriever, "store", None), "config", None)
    own = float(getattr(config, "lexical", 0.0) or 0.0)
    weights, kept = grid(data, own, lexicals if lexicals is not None else (own,))
    if kept is not None and say is not None:
        say(kept)
    # a network's per-query weight (lexical_state) is scored as served where the store's own is kept; a grid is of
    # fixed weights, the one chosen replacing it (with_order), which is said
    serves_per_query = bool(getattr(config, "lexical_per_query", False))
    per_query = serves_per_query and (lexicals is None or kept is not None)
    if serves_per_query and not per_query and say is not None:
        say(f"warning: this network serves a lexical weight per query, w(v_s) (lexical_state), which the grid "
            f"{', '.join(f'{w:g}' for w in weights)} of fixed weights does not score: the chosen fixed weight "
            "replaces it; to keep it, choose the ordering alone (--lexical keep, or export.lexical unset)")
    if (serves := getattr(config, "used_order", None)) not in (None, *ORDERS) and say is not None:  # "needed", the
        # packaged model's: replaced by the choice without a word, never scored beside it
        say(f"warning: this store serves used_order {serves!r}, which the choice does not score (it scores "
            f"{', '.join(ORDERS)}): the ordering chosen replaces it; to keep it, leave the ordering unchosen "
            "(export.used_order unset) and compare with python evaluate.py --plus-used")
    if chunking is None:  # what the store serves: a chunking store (configs/coding_chunks.yaml) searches chunks
        chunking = getattr(config, "chunker", None)
    t0 = time.perf_counter()
    settings = [(o, w) for w in weights for o in ORDERS]
    scores = score_settings(retriever, data, [(o, None if per_query else w) for o, w in settings], scope=scope,
                            depth=depth, seed=seed, batch_size=batch_size, chunking=chunking)
    rows = [{"used_order": o, "lexical": w, "mrr": scores[(o, None if per_query else w)]["mrr"],
             "recall@5": scores[(o, None if per_query else w)]["recall@5"]} for o, w in settings]
    if say is not None:
        say(f"  scored {', '.join(ORDERS)} at lexical {', '.join(f'{w:g}' for w in weights)} on {label} "
            f"({time.perf_counter() - t0:.1f} s)")
    best = pick(rows)
    return {"used_order": best["used_order"], "lexical": best["lexical"], "lexical_kept": kept, "lexical_own": own,
            **({"lexical_per_query": per_query} if serves_per_query else {}), "rule": RULE, "table": rows,
            "log": {"name": label, "decision_points": len(data.examples),
                    "conversations": len({e.episode_id for e in data.examples})},
            "options": {"scope": scope, "depth": depth, "seed": seed,
                        "chunking": chunking.to_dict() if chunking is not None else None}}


def order_alone(record: dict[str, Any]) -> dict[str, Any]:
    """The row :data:`RULE` picks among ``record``'s rows at the store's own lexical weight: the ordering
    :func:`choose_order` picks with ``lexicals=None`` (the same figures, the same rule), so what an export choosing
    the ordering alone serves; a joint choice is measured against it (sam_model.bench.adapt_curve). Refused in one
    line where the record cannot say it: no row at the store's own weight (a weight off the grid), or a record
    written before ``lexical_own`` whose table holds several weights (its chosen one is not the store's)."""
    own = record.get("lexical_own")
    weights = sorted({r.get("lexical", 0.0) for r in record["table"]})
    if record.get("lexical_per_query") is False:  # the store's own is w(v_s), which the grid did not score
        raise SAMFileError("the choice's grid scored fixed lexical weights of a network that serves its own per "
                           "query (lexical_state), which no row holds: the ordering alone cannot be read off it; "
                           "choose it with --lexical keep")
    if own is None:
        if len(weights) > 1:
            raise SAMFileError("the choice's record does not record the store's own lexical weight (written before "
                               "lexical_own) and scored several: the ordering alone cannot be read off it; choose "
                               "again (python -m sam_model.choose_order)")
        own = weights[0] if weights else record.get("lexical", 0.0)
    rows = [r for r in record["table"] if r.get("lexical", own) == own]
    if not rows:
        raise SAMFileError(f"the choice's table holds no row at the store's own lexical weight {own:g} (it scored "
                           f"{', '.join(f'{w:g}' for w in weights)}): the ordering alone cannot be read off it; "
                           "choose with the store's weight in the grid (--lexical)")
    return pick(rows)


def with_order(retriever, record: dict[str, Any]):
    """``retriever``'s store settings with the chosen ``used_order`` (``off``: null, the store's default) and
    ``lexical`` weight (a record without one: the store's own; a network's per-query weight, lexical_state, kept
    where the record scored it, ``lexical_per_query``, and replaced by a grid's fixed one) and its network's training
    record with the choice, ready for sam_model.export.save_exported."""
    config = retriever.store.config
    config = dataclasses.replace(config, used_order=None if record["used_order"] == "off" else record["used_order"])
    if config.lexical_per_query and not record.get("lexical_per_query"):  # a grid's fixed weight wins
        config = config.with_lexical(record.get("lexical", config.lexical))
    else:  # a per-query weight kept, or a store without one: its chosen (or own) fixed weight
        config = dataclasses.replace(config, lexical=record.get("lexical", config.lexical))
    net = retriever.net
    info = dict(getattr(net, "training_info", None) or {})
    info["used_order_chosen"] = record
    net.training_info = info
    return net, config


def write_choice(retriever, record: dict[str, Any], out_dir: str | Path, head_only: bool) -> Path:
    """Write ``retriever`` as an export folder with the chosen ordering (atomically, sam_model.export)."""
    from sam_model.export import save_exported

    net, config = with_order(retriever, record)
    return save_exported(net, out_dir, config, head_only=head_only)


def _head_only(source: str, net) -> bool:
    """Whether the export read is head-only (kept so): its config says; a packaged name or a checkpoint: when
    its text encoder is the package's, as sam_model.interpolate decides."""
    from sam_model.export import _is_head_only, can_leave_encoder_out

    config = Path(source) / "config.json"
    return _is_head_only(config) if config.is_file() else can_leave_encoder_out(net)


def parse_lexicals(text: str) -> tuple[float, ...] | None:
    """``--lexical``'s weights (None for 'keep'); a bad one refused in one line naming the option."""
    if text.strip() == "keep":
        return None
    try:
        weights = tuple(float(w) for w in text.split(",") if w.strip())
    except ValueError:
        weights = ()
    if not weights or any(not (w >= 0 and w != float("inf")) for w in weights):
        raise SAMFileError(f"--lexical {text!r}: give weights >= 0 separated by commas (0,0.1,0.3,0.5) or 'keep'")
    return weights


def build_parser() -> argparse.ArgumentParser:
    from sam_model.evaluation.options import add_log_options, add_search_options
    from sam_model.training.split_report import MIN_VAL_DECISIONS

    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.choose_order"),
                                 description="Choose a retriever's store used_order (off, model, latest) and lexical "
                                             f"weight on validation data by {RULE}; print each setting's MRR and "
                                             "Recall@5 and, with --out, write the export with the choice in its "
                                             "config.json (store.used_order, store.lexical) and card.")
    ap.add_argument("retriever", help="an export folder, a .ckpt train.py wrote or a packaged name (sam-general)")
    ap.add_argument("--choose-on", required=True, metavar="LOG",
                    help="VALIDATION data the model did not train on (the fit's --data.val file, or its holdout "
                         "written by python -m sam_model.training.val_log; never a test set): any log sam-eval "
                         "--data reads")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="write the retriever with the chosen ordering as an export folder here (replaced atomically; "
                         "it may be RETRIEVER's own folder); default: nothing written, the choice printed")
    ap.add_argument("--record", default=None, metavar="JSON",
                    help="also write the choice's record (ordering, rule, table, log) to this JSON file")
    ap.add_argument("--lexical", default=",".join(f"{w:g}" for w in LEXICALS), metavar="W,W,...",
                    help="the store.lexical weights to choose among, jointly with the ordering (each >= 0), or "
                         "'keep' for the store's own weight alone; a log of fewer than "
                         f"{MIN_VAL_DECISIONS} decision points keeps the store's own with a warning; "
                         f"default {','.join(f'{w:g}' for w in LEXICALS)}")
    add_log_options(ap, split_help="for a transcript file: read only its fixed train split of task groups, or all "
                                   "(default); 'test' is refused (a choice made on the test split makes its test "
                                   "score no measure)")
    add_search_options(ap)
    ap._option_string_actions["--chunking"].help = (  # evaluate's default (whole memories) is not what a store serves
        "search the chunks of memories as sam-eval --chunking does (SIZE:OVERLAP, tokens:N[:OVERLAP], 'on' = 180:50); "
        "default (or off): the retriever's store's own chunking (store.chunking), what its export serves")
    return ap


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.split == "test":
        raise SAMFileError("--split test: an ordering chosen on the test split makes its test score no measure; "
                           "choose on validation data (python -m sam_model.training.val_log writes a run's holdout)")
    try:
        from sam_model.evaluation.options import read_log
    except ImportError as exc:
        raise SAMFileError(f"choosing scores as sam-eval does, which needs the [eval] extra ({exc.name} is not "
                           "installed): pip install 'sam_model[eval]'") from None
    from sam_model.evaluation.run import few_decisions_warning
    from sam_model.retriever import SAMRetriever

    if args.out:  # before the slow part: a wrong output fails in a second
        from sam_model.pretrained import check_not_packaged

        check_not_packaged(args.out)
    lexicals = parse_lexicals(args.lexical)
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731 - progress apart from the table
    data = read_log(args.choose_on, args, progress=False)  # before the model loads: a typo fails in a second
    if (few := few_decisions_warning(data)) is not None:
        say(few)
    weights = len(grid(data, 0.0, lexicals or (0.0,))[0])  # how many the scoring below tries (a small log: one)
    what = "used_order and lexical weight" if weights > 1 else "used_order"
    say(f"choosing the store's {what} on {args.choose_on} ({len(data.examples)} decision points): scoring "
        f"{len(ORDERS) * weights} settings ...")  # the slow part said first: silent for as long before
    retriever = SAMRetriever.load(args.retriever, args.device)
    from sam_model.evaluation.seen import CHOOSING, trained_on_warning

    if (seen := trained_on_warning(args.retriever, retriever, args.choose_on, args.split, CHOOSING)) is not None:
        say(seen)  # its training conversations favour whatever it learned there
    record = choose_order(retriever, data, label=str(args.choose_on), scope=args.scope, depth=args.depth,
                          seed=args.seed, batch_size=args.batch_size, chunking=args.chunking, say=say,
                          lexicals=lexicals)
    record["log"]["split"] = args.split
    print("\n".join(order_table(record)))
    print(f"chose used_order {record['used_order']}, lexical {record['lexical']:g}: {why(record)}")
    if args.record:
        from sam_model.io import atomic_write_text

        atomic_write_text(args.record, json.dumps({"retriever": str(args.retriever), **record}, indent=2) + "\n")
    if args.out:
        out = write_choice(retriever, record, args.out, _head_only(args.retriever, retriever.net))
        print(f"wrote {out}: store.used_order {record['used_order']}, store.lexical {record['lexical']:g}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
