"""Starting a network from a trained one on new logs: its vocabularies extended, every trained weight kept.

A user's logs bring phases (tool names) and memory kinds the pretrained model never saw. They are appended to
its vocabularies, so every known one keeps its id and its trained embedding row. A new one's row starts as a
copy of the unknown row (id 0), which is what the pretrained model used for it; so before any training the
extended network ranks the new logs exactly as the pretrained one does, and training moves on from there.
"""

from __future__ import annotations

import copy
from dataclasses import fields

import torch

from sam_model.models.sam import SAMConfig, SAMNet

# SAMConfig fields that do not change the weights' shapes: a run may set them apart from the pretrained model's
# (the vocabularies are extended; dropout and BERT fine-tuning are training choices; how many tokens of the state
# text and the observation are read is a choice of input, e.g. a head fine-tuned to read fewer of them).
FREE_FIELDS = ("phases", "kinds", "dropout", "trainable_layers", "cache_text", "state_max_length",
               "observation_max_length")
EXTENDED = ("phase_emb.weight", "kind_emb.weight")  # the embedding tables that grow with the vocabularies


def extended_config(base: SAMConfig, phases: list[str], kinds: list[str], net: SAMConfig | None = None,
                    given: list[str] | None = None) -> SAMConfig:
    """The pretrained model's config with ``phases`` and ``kinds`` appended where new (known ones keep their
    place). ``net``: a config the run gives; ``given``: the fields of it the run set (sam-train reads them off its
    config files and command line: a command line that sets one field, ``--model.net.trainable_layers -1``, fills
    every other with its default). Fields not given are the pretrained model's (without ``given``: those equal to
    SAMConfig's defaults); a given field must be the pretrained one's (ValueError naming those that differ),
    unless it is one of FREE_FIELDS, which the run may change."""
    cfg = copy.deepcopy(base)
    if net is not None:
        default = SAMConfig()
        given = [f.name for f in fields(base) if (f.name in given if given is not None
                                                  else getattr(net, f.name) != getattr(default, f.name))]
        differ = [f"{name}: {getattr(net, name)!r} (pretrained: {getattr(base, name)!r})" for name in given
                  if name not in FREE_FIELDS and getattr(net, name) != getattr(base, name)]
        if differ:
            raise ValueError("model.net differs from the model.init_from network in " + "; ".join(differ)
                             + ": leave model.net out to adapt the pretrained architecture, or set model.init_from "
                               "to '' to train from scratch")
        for name in FREE_FIELDS:
            if name in given:
                setattr(cfg, name, copy.deepcopy(getattr(net, name)))
        phases, kinds = list(net.phases) + list(phases), list(net.kinds) + list(kinds)
    cfg.phases = list(dict.fromkeys([*base.phases, *phases]))
    cfg.kinds = list(dict.fromkeys([*base.kinds, *kinds]))
    return cfg


def extend_net(base: SAMNet, cfg: SAMConfig) -> SAMNet:
    """A SAMNet of ``cfg`` (from :func:`extended_config`) holding ``base``'s weights: same-shaped tensors copied,
    the phase and kind tables copied row by row, each new row a copy of the unknown row 0. Shares base's text
    encoder (BERT and tokenizer)."""
    net = SAMNet(cfg, base.state_encoder.text_encoder.bert, base.tokenizer)
    old = base.state_dict()
    new = net.state_dict()
    with torch.no_grad():
        for name, tensor in new.items():
            src = old[name]
            if src.shape == tensor.shape:
                tensor.copy_(src)
            elif name.endswith(EXTENDED) and src.shape[1:] == tensor.shape[1:] and len(src) <= len(tensor):
                tensor[: len(src)] = src
                tensor[len(src):] = src[0]
            else:
                raise ValueError(f"{name}: shape {tuple(tensor.shape)} cannot take the pretrained {tuple(src.shape)}")
    net.load_state_dict(new)
    return net
