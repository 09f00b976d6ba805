"""Interpolate two retrievers' weights (WiSE-FT): keep a fine-tune's gains without losing what it started from.

Fine-tuning the general model on some domains raises them and lowers the ones it no longer sees (README "Taught to
read 40 tokens from the shipped head": SGD dev +0.007, the demo −0.055). Wortsman et al. (2022, "Robust
fine-tuning of zero-shot models") found that for a fine-tune ``θ_1`` of a model ``θ_0`` the straight line between
them,

    θ(w) = (1 − w) · θ_0 + w · θ_1,      0 ≤ w ≤ 1,

often keeps most of the fine-tune's in-domain gain at a small ``w`` cost to the rest, because both ends lie in
one basin of the loss. It needs nothing but the two weight sets: no data, no training, one forward pass a query as
before. The two must share the architecture and the frozen text encoder (same fingerprint), as a warm start
(``model.init_from``) gives; anything else is refused with what differs. An adapted model's vocabularies extend
the first model's (new tools' phases appended, sam_model.models.adapt); the first is extended the same way
before mixing (each new row the unknown row 0, which is how it ranked those phases), so ``w = 0`` still ranks as
the first model. The second must be trained from the first (its training record's ``init_from`` names it), or
both from one start (a soup); two unrelated models that happen to line up are refused.

Which ``w`` to ship is chosen on validation data, never a test set: ``--choose-on LOG`` mixes at each of
``--weights`` (default 0, 0.25, 0.5, 0.75, 1) in memory, scores each mix on the log's decision points by the code
``sam-eval`` measures with (sam_model.evaluation.run.score_retriever, with sam-eval's options for the log), and
writes the mix of the highest validation MRR, its table and choice in the record and the card. Several
``--choose-on`` logs are averaged, each the same weight: the adapted domain's holdout alone mostly rises with
``w`` (the fine-tune was selected on it); a holdout of what the first model did well says what the mix keeps. A
tie goes to the smaller ``w``: the closer to the first model, which is the point of mixing back (what the
validation logs do not hold, the first model is the better guess for), so ``w`` moves off it only for a gain
measured.

    python -m sam_model.interpolate sam-general checkpoints/ft64-s0/export checkpoints/wise-0.5 --weight 0.5
    python -m sam_model.interpolate sam-general checkpoints/adapt/export checkpoints/adapt/mixed --choose-on held.jsonl
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time
from pathlib import Path

import torch

from sam_model.card import weight_table
from sam_model.evaluation.options import add_log_options, add_search_options
from sam_model.io import SAMFileError, check_replaceable, cli_name, run_cli
from sam_model.models.adapt import FREE_FIELDS, extend_net, extended_config


def check_compatible(a, b, names: tuple[str, str]) -> None:
    """Refuse two networks whose weights do not line up: a different config (other than FREE_FIELDS), text
    encoder, or state_dict keys and shapes. ``names``: how to call them in the error."""
    ca, cb = a.cfg.to_dict(), b.cfg.to_dict()
    diff = sorted(k for k in set(ca) | set(cb) if k not in FREE_FIELDS and ca.get(k) != cb.get(k))
    diff += [k for k in ("phases", "kinds") if list(cb[k][:len(ca[k])]) != list(ca[k])]
    if diff:
        raise SAMFileError(f"{names[1]} is not a fine-tune of {names[0]}: config field(s) {', '.join(diff)} differ "
                           "(interpolate a model with one trained from it by model.init_from)")
    if (ca["phases"], ca["kinds"]) != (cb["phases"], cb["kinds"]):
        a = extend_net(a, extended_config(a.cfg, cb["phases"], cb["kinds"]))
    fa, fb = a.state_encoder.text_encoder.fingerprint(), b.state_encoder.text_encoder.fingerprint()
    if fa != fb:
        raise SAMFileError(f"{names[0]} and {names[1]} run different text encoders (fingerprints {fa}, {fb}); "
                           "interpolate models trained on the same frozen encoder")
    sa, sb = a.state_dict(), b.state_dict()
    bad = sorted(k for k in set(sa) | set(sb) if k not in sa or k not in sb or sa[k].shape != sb[k].shape)
    if bad:
        raise SAMFileError(f"{names[0]} and {names[1]} have different weights ({bad[0]} and {len(bad) - 1} more); "
                           "export both again from the same code")


def _names(start: str, model: str | os.PathLike) -> bool:
    """Whether ``start`` (a training record's ``init_from``, as the run gave it) names ``model``: the same packaged
    name or path, or a path that ends with the parts ``start`` gives (it was relative to the folder training ran in)."""
    from sam_model.pretrained import resolve

    if not start:
        return False
    if start == str(model):
        return True
    where = resolve(model).resolve()
    return (Path(start).exists() and Path(start).resolve() == where) or \
        where.parts[-len(Path(start).parts):] == Path(start).parts


def check_lineage(first: str | os.PathLike, a, b, names: tuple[str, str]) -> None:
    """Refuse two models that line up but are not a model and its fine-tune, nor two fine-tunes of one start (a
    soup): the straight line between unrelated weights crosses no shared basin (Wortsman et al. 2022), and the mix
    would be called a WiSE-FT it is not. Read from the training records' ``init_from``."""
    start_a = str((getattr(a, "training_info", None) or {}).get("init_from") or "")
    start_b = str((getattr(b, "training_info", None) or {}).get("init_from") or "")
    if _names(start_b, first) or (start_a and start_a == start_b):
        return
    raise SAMFileError(f"{names[1]} was not trained from {names[0]} (its training record's init_from is "
                       f"{start_b or 'empty'!r}), nor from the same start: interpolate a model with one trained from "
                       "it by model.init_from, or two trained from one start")


def interpolate_nets(a, b, weight: float):
    """A copy of ``a`` whose floating weights are ``(1 - weight) * a + weight * b`` (integer buffers must agree),
    ``a`` first extended to ``b``'s vocabularies where ``b`` was adapted from it. The frozen text encoder is the
    same in both and comes out unchanged."""
    if not (isinstance(weight, (int, float)) and not isinstance(weight, bool) and math.isfinite(weight)
            and 0.0 <= weight <= 1.0):
        raise SAMFileError(f"--weight must be a number from 0 (the first model) to 1 (the second), got {weight!r}")
    out = extended_first(a, b)
    out = copy.deepcopy(a) if out is a else out
    sb = b.state_dict()
    mixed = {}
    for k, va in out.state_dict().items():
        vb = sb[k].to(va.device)
        if va.is_floating_point():
            mixed[k] = mix_tensor(va, vb, weight)
        elif not torch.equal(va, vb):
            raise SAMFileError(f"weight {k} is not a floating tensor and differs between the two models; they cannot "
                               "be interpolated")
        else:
            mixed[k] = va
    out.load_state_dict(mixed)
    return out.eval()


def extended_first(a, b):
    """``a`` itself where it has ``b``'s vocabularies, else ``a`` extended to them (sam_model.models.adapt.extend_net:
    new head weights, the same BERT): what the mix starts from at ``w = 0``."""
    ca, cb = a.cfg, b.cfg
    if (ca.phases, ca.kinds) == (cb.phases, cb.kinds):
        return a
    return extend_net(a, extended_config(ca, list(cb.phases), list(cb.kinds)))


def serves_learned(net, store) -> bool:
    """Whether ``store`` serves ``net``'s learned lexical weight (SAMConfig.lexical_learned, as
    sam_model.export.served_store sets it): then a mix of ``net`` serves the mix's own learned weight, not the first
    model's (its softplus of the mixed raw scalar is what the mixed scores were trained beside); a weight set after
    training (export.lexical) is kept as the first model's other settings are."""
    w = net.lexical_weight
    return w is not None and store.lexical == float(w.detach())


def mixed_store(store, mix, learned: bool):
    """The store settings a mix is served with: the first model's ``store``, its lexical weight the mix's learned
    one where ``learned`` (:func:`serves_learned` of the first model, asked before its weights are mixed)."""
    from sam_model.export import served_store

    return served_store(mix, store) if learned else store


def mix_tensor(va: torch.Tensor, vb: torch.Tensor, weight: float) -> torch.Tensor:
    """``(1 - weight) * va + weight * vb`` in float32, in ``va``'s dtype: the one rule, so the mixes the sweep
    scores are the very weights the written export holds."""
    return torch.lerp(va.float(), vb.float(), float(weight)).to(va.dtype)


def check_output(first: str | os.PathLike, second: str | os.PathLike, out_dir: str | os.PathLike) -> None:
    """Refuse an output that is a packaged name, an input or inside one, or holds one: before any work."""
    from sam_model.pretrained import names as packaged
    from sam_model.pretrained import resolve

    if len(Path(out_dir).parts) == 1 and Path(out_dir).name in packaged():
        raise SAMFileError(f"{out_dir}: the name of a packaged retriever; a folder of that name here would be loaded "
                           "in its place by every from_pretrained, adapt.yaml and adapter default: choose another name")
    target = Path(out_dir).resolve()
    for given in (first, second):  # an adapted export overwritten by its own mix is lost; a rerun then mixes the mix
        src = resolve(given).resolve()
        if target == src or target in src.parents or src in target.parents:
            raise SAMFileError(f"{out_dir}: the output is {given} or inside it, or holds it; write the mix to a new "
                               "folder (the inputs must stay as they are)")


def interpolate(first: str | os.PathLike, second: str | os.PathLike, weight: float, out_dir: str | os.PathLike,
                head_only: bool | None = None, chosen: dict | None = None) -> Path:
    """Write the interpolation of two retrievers (export folders, checkpoints or packaged names) as an export
    folder, atomically. The first model's store settings and read lengths are kept; the training record says what
    was mixed, and keeps both models' training sources (a packaged model must say what it was trained on).
    ``head_only``: leave the packaged MiniLM out (default: when the first model is head-only). ``chosen``: how
    ``weight`` was chosen (:func:`choose_weight`'s record), kept as ``interpolated.chosen``."""
    from sam_model.export import save_exported
    from sam_model.retriever import SAMRetriever

    check_output(first, second, out_dir)
    ra, rb = SAMRetriever.load(first, device="cpu"), SAMRetriever.load(second, device="cpu")
    names = (str(first), str(second))
    check_compatible(ra.net, rb.net, names)
    check_lineage(first, ra.net, rb.net, names)
    net = interpolate_nets(ra.net, rb.net, weight)
    store = mixed_store(ra.store.config, net, serves_learned(ra.net, ra.store.config))
    ta, tb = getattr(ra.net, "training_info", None) or {}, getattr(rb.net, "training_info", None) or {}
    info = copy.deepcopy(tb or ta)
    selected = info.pop("selected", None)  # the fine-tune's epoch and validation score: not the mix's
    seen = {str(s.get("path")) for s in (info.get("data") or {}).get("sources", [])}
    split_a = (ta.get("data") or {}).get("transcript_split") or "all"  # the record's split is the second's: each of
    extra = [{**s, "transcript_split": s.get("transcript_split") or split_a}  # the first's keeps how its fit read it
             for s in (ta.get("data") or {}).get("sources", []) if str(s.get("path")) not in seen]
    if extra:
        info.setdefault("data", {}).setdefault("sources", []).extend(extra)
    info["interpolated"] = {"first": names[0], "second": names[1], "weight": float(weight),
                            "rule": "(1 - weight) * first + weight * second (WiSE-FT)",
                            "settings": "the first model's store settings and read lengths",
                            **({"second_selected": selected} if selected is not None else {}),
                            **({"chosen": chosen} if chosen is not None else {})}
    net.training_info = info
    if head_only is None:
        from sam_model.export import can_leave_encoder_out

        head_only = can_leave_encoder_out(net)
    return save_exported(net, out_dir, store, head_only=head_only)


DEFAULT_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
CHOICE_RULE = "the highest mean validation MRR over the --choose-on logs; a tie: the smaller weight"


def parse_weights(text: str) -> list[float]:
    """``--weights``: comma-separated numbers from 0 to 1, each once, returned in ascending order."""
    parts = [t.strip() for t in str(text).split(",")]
    try:
        weights = [float(t) for t in parts]
    except ValueError:
        weights = []
    if not weights or any(not (math.isfinite(w) and 0.0 <= w <= 1.0) for w in weights):
        raise SAMFileError(f"--weights must be comma-separated numbers from 0 (the first model) to 1 (the second), "
                           f"e.g. 0,0.25,0.5,0.75,1; got {text!r}")
    return sorted(set(weights))


def few_decisions_warning(label: str, decisions: int, conversations: int) -> str | None:
    """One warning line when a --choose-on log holds fewer decision points than fit wants of its validation
    (sam_model.training.split_report.MIN_VAL_DECISIONS): one decision ranked 2nd instead of 1st moves its MRR by
    0.5 / n, about what a weight step changes, so the weight kept is partly chance. A warning, as fit's is."""
    from sam_model.training.split_report import MIN_VAL_DECISIONS

    if decisions >= MIN_VAL_DECISIONS:
        return None
    return (f"warning: --choose-on {label} holds only {decisions} decision points ({conversations} conversations): "
            f"its MRR, which picks the weight, moves by {0.5 / max(decisions, 1):.3f} when one of them ranks 2nd "
            f"instead of 1st, so the weight kept is partly chance; give a larger validation log "
            f"({MIN_VAL_DECISIONS} or more decision points)")


def choose_weight(first: str | os.PathLike, second: str | os.PathLike, weights: list[float], logs: dict,
                  args: argparse.Namespace, say=print) -> tuple[float, dict]:
    """Score ``(1 - w) * first + w * second`` at every weight on every validation log (``logs``: name ->
    EvalData) and return the weight :data:`CHOICE_RULE` picks with its record (the table, the rule, the logs
    and the options they were read and searched with). Each mix is computed as :func:`interpolate` writes it:
    on the CPU, by :func:`mix_tensor`, from both models loaded on the CPU; then copied (exactly) into one network
    on ``--device``, so the weights scored at ``w`` are the export's bit for bit (``lerp`` on a GPU may round
    otherwise). Only the weights the two models differ in are copied and mixed: the frozen BERT and its
    text-vector cache are the first model's, shared by every weight. Each mix is scored by
    sam_model.evaluation.run.score_retriever, what sam-eval reports."""
    from sam_model.evaluation.run import score_retriever, text_caches
    from sam_model.export import _device
    from sam_model.retriever import SAMRetriever

    ra, rb = SAMRetriever.load(first, device="cpu"), SAMRetriever.load(second, device="cpu")  # as interpolate
    names = (str(first), str(second))
    from sam_model.evaluation.seen import CHOOSING, trained_on_warning

    for name, model in zip(names, (ra, rb)):  # a log a model trained on favours that model's end of w
        for path in logs:
            if (seen := trained_on_warning(name, model, path, args.split, CHOOSING)) is not None:
                say(seen)
    check_compatible(ra.net, rb.net, names)
    check_lineage(first, ra.net, rb.net, names)
    learned = serves_learned(ra.net, ra.store.config)  # asked now: work may be ra.net, its weights mixed below
    work = extended_first(ra.net, rb.net)  # shares the first model's BERT: no copy of it
    sb = rb.net.state_dict()
    moving = [k for k, v in work.state_dict().items() if v.is_floating_point() and not torch.equal(v, sb[k])]
    sa = {k: work.state_dict()[k].clone() for k in moving}  # w = 0's heads; work's own are overwritten below
    sb = {k: sb[k] for k in moving}
    del rb  # its BERT is the first's (check_compatible): not kept
    work = work.to(_device(args.device)).eval()
    retriever = SAMRetriever(work, ra.store.config)  # as SAMRetriever.load builds it from the export written
    caches = text_caches([retriever], args.text_cache)
    rows = []
    for w in weights:
        t0 = time.perf_counter()
        with torch.no_grad():
            current = work.state_dict()
            for k in moving:
                current[k].copy_(mix_tensor(sa[k], sb[k], w))  # on the CPU, as the export: then copied
        retriever.store.config = mixed_store(ra.store.config, work, learned)  # the lexical weight the export serves
        scores = {}
        for name, data in logs.items():
            m = score_retriever(retriever, data, scope=args.scope, depth=args.depth, seed=args.seed,
                                batch_size=args.batch_size, chunking=args.chunking)
            scores[name] = {"mrr": m["mrr"], "recall@5": m["recall@5"]}
        mean = sum(v["mrr"] for v in scores.values()) / len(scores)
        rows.append({"weight": w, "mrr": mean, "logs": scores})
        say(f"  w = {w:g}: " + ", ".join(f"mrr {v['mrr']:.3f}, recall@5 {v['recall@5']:.3f}"
                                        + (f" on {n}" if len(scores) > 1 else "") for n, v in scores.items())
            + f" ({time.perf_counter() - t0:.1f} s)")
    for enc, path in caches:
        enc.save_cache(path)
    best = max(rows, key=lambda r: (round(r["mrr"], 9), -r["weight"]))["weight"]  # a float tie is a tie
    record = {"weight": best, "rule": CHOICE_RULE, "table": rows,
              "logs": {name: {"split": args.split, "decision_points": len(d.examples),
                              "conversations": len({e.episode_id for e in d.examples})} for name, d in logs.items()},
              "options": {"scope": args.scope, "life": args.life, "task_start": args.task_start,
                          "max_queries": args.max_queries, "seed": args.seed, "depth": args.depth,
                          "chunking": args.chunking.to_dict() if args.chunking is not None else None}}
    return best, record


def _main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.interpolate"), description=__doc__.split("\n")[0])
    ap.add_argument("first", help="the model fine-tuned from (an export folder, .ckpt or packaged name: sam-general)")
    ap.add_argument("second", help="the fine-tune (trained from FIRST with model.init_from), or another fine-tune of "
                                   "FIRST's own start (a soup); anything else is refused")
    ap.add_argument("out_dir", help="the export folder to write (replaced atomically if it exists)")
    ap.add_argument("--weight", type=float, default=None,
                    help="w in (1 - w) * FIRST + w * SECOND: 0 gives FIRST's weights, 1 SECOND's (the store "
                         "settings and read lengths stay FIRST's); or --choose-on to choose it on validation")
    ap.add_argument("--whole", action="store_true",
                    help="write the frozen MiniLM's weights too (default: head-only when the encoder is the package's)")
    choose = ap.add_argument_group(
        "choosing w on validation logs",
        "each weight mixed in memory and scored as sam-eval scores a retriever (the options below are sam-eval's); "
        "the mix of the highest validation MRR (mean over the logs; a tie: the smaller w) is written, the table "
        "and the choice in its training.json (interpolated.chosen) and card")
    choose.add_argument("--choose-on", action="append", default=[], metavar="LOG",
                        help="VALIDATION data: a log of conversations neither model was trained on and that you will "
                             "not report the mix's score on (the fit's --data.val file, or its holdout written by "
                             "python -m sam_model.training.val_log; never a test set); repeat for several (e.g. your "
                             "holdout and one of what FIRST did well: on the adapted domain alone MRR mostly rises "
                             "with w); any log sam-eval --data reads")
    choose.add_argument("--weights", default=None, metavar="W1,W2,...",
                        help="the weights to try, from 0 to 1 (default " + ",".join(f"{w:g}" for w in DEFAULT_WEIGHTS)
                             + ")")
    add_log_options(choose, split_help="for a transcript file: read only its fixed train split of task groups, or "
                                       "all (default); either is validation data only where neither model trained "
                                       "on it; 'test' is refused (the split sam-eval --split test measures on)")
    add_search_options(choose)
    args = ap.parse_args(argv)
    head_only = False if args.whole else None
    if not args.choose_on:
        if args.weights is not None:
            raise SAMFileError("--weights needs --choose-on LOG: the validation log the weights are scored on")
        if args.weight is None:
            raise SAMFileError("give --weight W (0 to 1), or --choose-on LOG to choose it on validation data")
        out = interpolate(args.first, args.second, args.weight, args.out_dir, head_only=head_only)
        print(f"wrote {out}: (1 - {args.weight}) * {args.first} + {args.weight} * {args.second}")
        return 0
    if args.weight is not None:
        raise SAMFileError("--weight and --choose-on: give one weight, or let --choose-on choose it among --weights")
    if args.split == "test":
        raise SAMFileError("--choose-on with --split test: a weight chosen on the test split makes its test score "
                           "no measure; choose on validation data (a log kept out of training, the fit's --data.val "
                           "file, or its holdout: python -m sam_model.training.val_log)")
    weights = parse_weights(args.weights if args.weights is not None else ",".join(map(str, DEFAULT_WEIGHTS)))
    check_output(args.first, args.second, args.out_dir)  # before the slow part: a wrong output fails in a second
    check_replaceable(Path(args.out_dir), "config.json", ("format_version",))  # sam_model.export's marker
    try:  # --weight runs on the core install; scoring as sam-eval does needs what sam-eval needs
        import sam_model.evaluation.run  # noqa: F401
    except ImportError as exc:
        raise SAMFileError(f"--choose-on scores each mix as sam-eval does, which needs the [eval] extra ({exc.name} "
                           "is not installed): pip install 'sam_model[eval]', or give --weight W") from None
    from sam_model.evaluation.options import read_log

    if len(set(args.choose_on)) < len(args.choose_on):
        raise SAMFileError(f"--choose-on names a log twice ({args.choose_on}): give each validation log once")
    logs = {}
    for path in args.choose_on:  # read before the models load: a typo fails in a second
        logs[path] = read_log(path, args, progress=False)
        ex = logs[path].examples
        if warning := few_decisions_warning(path, len(ex), len({e.episode_id for e in ex})):
            print(warning, file=sys.stderr, flush=True)
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731 - progress apart from the table
    say(f"choosing w among {', '.join(f'{w:g}' for w in weights)} on "
        + "; ".join(f"{p} ({len(d.examples)} decision points)" for p, d in logs.items()))
    best, record = choose_weight(args.first, args.second, weights, logs, args, say)
    print("\n".join(weight_table(record)))
    print(f"chose w = {best:g}: {CHOICE_RULE}")
    out = interpolate(args.first, args.second, best, args.out_dir, head_only=head_only, chosen=record)
    print(f"wrote {out}: (1 - {best:g}) * {args.first} + {best:g} * {args.second}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
