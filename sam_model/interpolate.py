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
both from one start (a soup); two unrelated models that happen to line up are refused. Which ``w`` to ship is
chosen on validation data, never a test set.

    python -m sam_model.interpolate sam-general checkpoints/ft64-s0/export checkpoints/wise-0.5 --weight 0.5
"""

from __future__ import annotations

import argparse
import copy
import math
import os
from pathlib import Path

import torch

from sam_model.io import SAMFileError, cli_name, run_cli
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
    ca, cb = a.cfg, b.cfg
    out = copy.deepcopy(a) if (ca.phases, ca.kinds) == (cb.phases, cb.kinds) else \
        extend_net(a, extended_config(ca, list(cb.phases), list(cb.kinds)))
    sb = b.state_dict()
    mixed = {}
    for k, va in out.state_dict().items():
        vb = sb[k].to(va.device)
        if va.is_floating_point():
            mixed[k] = torch.lerp(va.float(), vb.float(), float(weight)).to(va.dtype)
        elif not torch.equal(va, vb):
            raise SAMFileError(f"weight {k} is not a floating tensor and differs between the two models; they cannot "
                               "be interpolated")
        else:
            mixed[k] = va
    out.load_state_dict(mixed)
    return out.eval()


def interpolate(first: str | os.PathLike, second: str | os.PathLike, weight: float, out_dir: str | os.PathLike,
                head_only: bool | None = None) -> Path:
    """Write the interpolation of two retrievers (export folders, checkpoints or packaged names) as an export
    folder, atomically. The first model's store settings and read lengths are kept; the training record says what
    was mixed, and keeps both models' training sources (a packaged model must say what it was trained on).
    ``head_only``: leave the packaged MiniLM out (default: when the first model is head-only)."""
    from sam_model.export import save_exported
    from sam_model.pretrained import names as packaged
    from sam_model.pretrained import resolve
    from sam_model.retriever import SAMRetriever

    if len(Path(out_dir).parts) == 1 and Path(out_dir).name in packaged():
        raise SAMFileError(f"{out_dir}: the name of a packaged retriever; a folder of that name here would be loaded "
                           "in its place by every from_pretrained, adapt.yaml and adapter default: choose another name")
    target = Path(out_dir).resolve()
    for given in (first, second):  # an adapted export overwritten by its own mix is lost; a rerun then mixes the mix
        src = resolve(given).resolve()
        if target == src or target in src.parents or src in target.parents:
            raise SAMFileError(f"{out_dir}: the output is {given} or inside it, or holds it; write the mix to a new "
                               "folder (the inputs must stay as they are)")
    ra, rb = SAMRetriever.load(first, device="cpu"), SAMRetriever.load(second, device="cpu")
    names = (str(first), str(second))
    check_compatible(ra.net, rb.net, names)
    check_lineage(first, ra.net, rb.net, names)
    net = interpolate_nets(ra.net, rb.net, weight)
    ta, tb = getattr(ra.net, "training_info", None) or {}, getattr(rb.net, "training_info", None) or {}
    info = copy.deepcopy(tb or ta)
    selected = info.pop("selected", None)  # the fine-tune's epoch and validation score: not the mix's
    seen = {str(s.get("path")) for s in (info.get("data") or {}).get("sources", [])}
    extra = [s for s in (ta.get("data") or {}).get("sources", []) if str(s.get("path")) not in seen]
    if extra:
        info.setdefault("data", {}).setdefault("sources", []).extend(extra)
    info["interpolated"] = {"first": names[0], "second": names[1], "weight": float(weight),
                            "rule": "(1 - weight) * first + weight * second (WiSE-FT)",
                            "settings": "the first model's store settings and read lengths",
                            **({"second_selected": selected} if selected is not None else {})}
    net.training_info = info
    if head_only is None:
        from sam_model.export import text_encoder_reference

        try:
            text_encoder_reference(net)
            head_only = True
        except SAMFileError:
            head_only = False
    return save_exported(net, out_dir, ra.store.config, head_only=head_only)


def _main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.interpolate"), description=__doc__.split("\n")[0])
    ap.add_argument("first", help="the model fine-tuned from (an export folder, .ckpt or packaged name: sam-general)")
    ap.add_argument("second", help="the fine-tune (trained from FIRST with model.init_from), or another fine-tune of "
                                   "FIRST's own start (a soup); anything else is refused")
    ap.add_argument("out_dir", help="the export folder to write (replaced atomically if it exists)")
    ap.add_argument("--weight", type=float, required=True,
                    help="w in (1 - w) * FIRST + w * SECOND: 0 gives FIRST's weights, 1 SECOND's (the store "
                         "settings and read lengths stay FIRST's); choose it on validation")
    ap.add_argument("--whole", action="store_true",
                    help="write the frozen MiniLM's weights too (default: head-only when the encoder is the package's)")
    args = ap.parse_args(argv)
    out = interpolate(args.first, args.second, args.weight, args.out_dir, head_only=False if args.whole else None)
    print(f"wrote {out}: (1 - {args.weight}) * {args.first} + {args.weight} * {args.second}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
