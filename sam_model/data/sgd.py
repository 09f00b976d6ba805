"""Schema-Guided Dialogue (SGD) → agent-log events: the "SGD-origin" benchmark.

The rules live in ``../shared/spec/sgd-tasks.md``; this module follows them to the
letter so that its output reproduces ``sgd-dev-first20.golden.jsonl``. In short: every
turn becomes an event (system turns with a service call also yield an ``action`` and a
``result`` event), and a user turn right before a service call is a decision point whose
labels are the earlier events that first mentioned each call value the user did not
repeat. With masking (default) the state names the needed slots but hides their values,
so the memory has to find *where* they were given.

Use the generators directly (the trainer does), or the CLI::

    python -m sam_model.data.sgd ../shared/data/sgd/dev dev.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from sam_model.data.advice import Advice, AdvisedError
from sam_model.data.formats.base import strict_loads
from sam_model.data.lives import make_lives
from sam_model.data.reader import check_output
from sam_model.data.text import norm
from sam_model.io import SAMFileError, atomic_path, check_compression, cli_name, json_type, run_cli

Label = Literal["origin", "latest", "all"]
LABELS: tuple[str, ...] = ("origin", "latest", "all")


def _values(turn: dict) -> set[str]:
    """The mention set of a turn: every value and canonical value of every action of every frame."""
    return {
        norm(v)
        for frame in turn["frames"]
        for action in frame.get("actions", [])
        for v in [*action.get("values", []), *action.get("canonical_values", [])]
    }


def _user_frame(turn: dict) -> dict:
    """The only frame, or the first one with the most actions (max keeps the first of ties)."""
    return max(turn["frames"], key=lambda f: len(f.get("actions", [])))


def _service_call(turn: dict | None) -> dict | None:
    """The last service call of a system turn, or None."""
    if turn is None or turn.get("speaker") != "SYSTEM":
        return None
    calls = [f["service_call"] for f in turn["frames"] if f.get("service_call")]
    return calls[-1] if calls else None


def convert_dialogue(dialogue: dict, label: Label = "origin", masked: bool = True) -> list[dict]:
    """One SGD dialogue → the event dicts of one episode (``episode_id = "sgd-" + dialogue_id``)."""
    if label not in LABELS:
        raise ValueError(f"label must be one of {LABELS}, got {label!r}")
    episode_id = "sgd-" + dialogue["dialogue_id"]
    turns = dialogue["turns"]
    events: list[dict] = []
    seen: dict[str, list[int]] = {}  # norm(value) -> steps whose mention set holds it, in order
    intents: list[str] = []
    last_result = "none"
    state: dict[str, Any] = {
        "phase": "start", "subgoal_stack": [], "constraints": {}, "uncertainty_flags": [],
        "last_action_result": "",
    }

    def emit(kind: str, text: str, st: dict, mentions: set[str] | frozenset[str] = frozenset()) -> dict:
        event = {"episode_id": episode_id, "step": len(events), "kind": kind, "text": text, "state": st}
        for v in mentions:
            seen.setdefault(v, []).append(event["step"])
        events.append(event)
        return event

    for i, turn in enumerate(turns):
        mentions = _values(turn)
        if turn["speaker"] == "USER":
            fstate = _user_frame(turn).get("state", {})
            phase = fstate.get("active_intent", "NONE")
            if phase != "NONE" and (not intents or intents[-1] != phase):
                intents.append(phase)
            requested = list(fstate.get("requested_slots", []))
            state = {
                "phase": phase,
                "subgoal_stack": list(intents),
                "constraints": {k: v[0] for k, v in fstate.get("slot_values", {}).items() if v},
                "uncertainty_flags": requested,
                "last_action_result": last_result,
            }
            labels, needed = _labels(_service_call(turns[i + 1] if i + 1 < len(turns) else None),
                                     mentions, seen, label)
            if not labels:
                emit("user", turn["utterance"], state, mentions)
                continue
            dp_state = {**state, "phase": _service_call(turns[i + 1])["method"]}
            if masked:
                dp_state["constraints"] = {k: v for k, v in state["constraints"].items() if k not in needed}
                dp_state["uncertainty_flags"] = sorted(set(requested) | needed)
            emit("user", turn["utterance"], dp_state, mentions)["useful_memory_steps"] = labels
        else:
            for frame in turn["frames"]:
                call = frame.get("service_call")
                if not call:
                    continue
                params = ", ".join(f"{k}={v}" for k, v in call["parameters"].items())
                emit("action", f"CALL {call['method']}({params})", state)
                results = frame.get("service_results", [])
                last_result = f"{call['method']}: {len(results)} results"
                shown = " | ".join("; ".join(f"{k}={v}" for k, v in r.items()) for r in results[:3])
                emit("result", f"{last_result}. {shown}", state)
            emit("system", turn["utterance"], state, mentions)
    return events


def _labels(call: dict | None, mentions: set[str], seen: dict[str, list[int]], label: Label
            ) -> tuple[list[int], set[str]]:
    """Labels (sorted steps) and needed slots of a user event followed by ``call``."""
    steps: set[int] = set()
    needed: set[str] = set()
    for slot, value in (call or {}).get("parameters", {}).items():
        v = norm(value)
        hits = seen.get(v)
        if v in mentions or not hits:
            continue
        needed.add(slot)
        steps.update({"origin": hits[:1], "latest": hits[-1:], "all": hits}[label])
    return sorted(steps), needed


def _dialogue_files(split_dir: str | os.PathLike) -> list[Path]:
    """The split's dialogue files; one file as both ``.json`` and ``.json.gz`` is refused (each dialogue twice)."""
    files = sorted(p for p in Path(split_dir).glob("dialogues_*.json*")
                   if p.is_file() and p.name.endswith((".json", ".json.gz")))
    names = {p.name for p in files}
    if twice := [p.name for p in files if p.name.endswith(".json") and p.name + ".gz" in names]:
        raise SAMFileError(f"{split_dir}: {twice[0]} is there both plain and as {twice[0]}.gz (every dialogue of it "
                           "would be read twice): keep one of them")
    return files


def is_sgd_split_dir(path: str | os.PathLike) -> bool:
    """True when ``path`` is a folder holding SGD ``dialogues_*.json[.gz]`` files (an SGD split)."""
    return Path(path).is_dir() and bool(_dialogue_files(path))


def _load_file(path: Path) -> list[dict]:
    """Read one dialogues file strictly (as every reader of the project reads JSON), with an error that names it and
    the fix: a NaN or a key given twice was written on into a log the validator refuses, or read as the last value."""
    check_compression(path)  # a gzip file named .json was "corrupt ... can't decode byte 0x8b": the fix is its name
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            raw = fh.read()
    except (OSError, EOFError) as exc:
        raise SAMFileError(f"corrupt SGD dialogues file {path}: {exc} (re-download or remove it)") from None
    data = _parse(path, _decode(path, raw))
    if not isinstance(data, list) or not all(isinstance(d, dict) and "turns" in d and "dialogue_id" in d
                                             for d in data):
        raise SAMFileError(f"{path} is not an SGD dialogues file: expected a JSON list of dialogues "
                           "with 'dialogue_id' and 'turns'")
    for n, dialogue in enumerate(data):
        _check_dialogue(path, n, dialogue)
    return data


def _check_dialogue(path: Path, n: int, dialogue: dict) -> None:
    """Refuse what the conversion would write into a log the validator rejects (a null text) or read as something
    it is not (another speaker taken for the system), naming the dialogue and turn."""
    did = dialogue["dialogue_id"]
    if not isinstance(did, str) or not did:
        raise SAMFileError(f"{path}: dialogue {n} of the list has dialogue_id {did!r}: give it its id as a "
                           "non-empty string")
    turns = dialogue["turns"]
    if not isinstance(turns, list):
        raise SAMFileError(f"{path}: dialogue {did!r}: 'turns' is {json_type(turns)}, not a list of turns: "
                           "re-download the file, or fix the dialogue there")
    for t, turn in enumerate(turns):
        where = f"{path}: dialogue {did!r}, turn {t}"
        if not isinstance(turn, dict):
            raise SAMFileError(f"{where} is {json_type(turn)}, not a turn object: fix the turn, or remove the "
                               "dialogue")
        if turn.get("speaker") not in ("USER", "SYSTEM"):
            said = f"speaker {_shown(turn['speaker'])} is neither USER nor SYSTEM" if "speaker" in turn else "no speaker"
            raise SAMFileError(f"{where}: {said}: give the turn's speaker as USER or SYSTEM")
        if not isinstance(turn.get("utterance"), str):
            said = f"utterance {_shown(turn['utterance'])} is not a string" if "utterance" in turn else "no utterance"
            raise SAMFileError(f"{where}: {said} (every turn becomes an event with its text): give the turn's text, "
                               "or remove the dialogue")
        if (bad := _bad_user_state(turn) if turn["speaker"] == "USER" else _bad_method(turn)):
            raise SAMFileError(f"{where}: {bad} (it becomes the event's state, which the log format types): fix the "
                               "turn, or remove the dialogue")


def _bad_method(turn: dict) -> str:
    """A service call whose method is no string: it became the phase of the decision point before it."""
    frames = turn.get("frames")
    for f, frame in enumerate(frames if isinstance(frames, list) else []):
        call = frame.get("service_call") if isinstance(frame, dict) else None
        if call and (not isinstance(call, dict) or not isinstance(call.get("method"), str) or not call["method"]):
            return f"frame {f}: service_call {_shown(call)} has no method name (a string)"
    return ""


def _bad_user_state(turn: dict) -> str:
    """What in the user frame's state the conversion would write into a state the validator refuses (an intent
    that is a number became the phase) or cut up silently (requested_slots "date" became ["d", "a", "t", "e"], a
    slot value "Paris" the constraint "P"); "" when it is good, or when the frames are too malformed to pick one
    (the conversion names those)."""
    try:
        state = _user_frame(turn).get("state", {})
    except (KeyError, TypeError, AttributeError, ValueError):
        return ""
    if not isinstance(state, dict):
        return f"the user frame's state is {_shown(state)}, not an object"
    intent, requested, slots = state.get("active_intent", "NONE"), state.get("requested_slots", []), \
        state.get("slot_values", {})
    if not isinstance(intent, str):
        return f"state.active_intent {_shown(intent)} is not a string"
    if not isinstance(requested, list) or not all(isinstance(x, str) for x in requested):
        return f"state.requested_slots {_shown(requested)} is not a list of slot names"
    if not isinstance(slots, dict):
        return f"state.slot_values {_shown(slots)} is not an object"
    for slot, values in slots.items():
        if not isinstance(values, list) or not all(isinstance(x, str) for x in values):
            return f"state.slot_values.{slot} {_shown(values)} is not a list of strings"
    return ""


def _shown(value: Any) -> str:
    """A JSON value as the file wrote it, cut to fit a one-line error."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _decode(path: Path, raw: bytes) -> str:
    """The file's text; a UTF-8 byte-order mark is accepted (as the log reader does), other encodings are refused
    with "re-save it as UTF-8" (a re-download would not change them)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4]:
        raise SAMFileError(f"{path} is UTF-16 or UTF-32, not UTF-8: re-save it as UTF-8")
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        newline = b"\n"
        line, line_start = raw.count(newline, 0, exc.start) + 1, raw.rfind(newline, 0, exc.start) + 1
        raise SAMFileError(f"{path}: not UTF-8 (line {line}, byte {exc.start - line_start + 1} of the line is "
                           f"0x{raw[exc.start]:02x}): re-save it as UTF-8") from None


def _parse(path: Path, text: str) -> Any:
    """Strict JSON (sam_model.data.formats.base.strict_loads): no bare NaN/Infinity, no key twice in one object."""
    try:
        return strict_loads(text)
    except RecursionError:
        raise SAMFileError(f"{path}: nested too deeply (hundreds of levels of lists and objects, where an SGD "
                           "dialogue has about 8): re-download it, or remove it from the split") from None
    except json.JSONDecodeError as exc:
        raise SAMFileError(f"corrupt SGD dialogues file {path}: {exc} (re-download or remove it)") from None
    except ValueError as exc:  # valid to Python's json, refused by strict JSON: say where, it is one value to fix
        where = _locate(text)
        raise SAMFileError(f"{path}: {where + ': ' if where else ''}{exc}") from None


class _Refused:
    """A value strict JSON refuses (NaN, Infinity), kept in its place by the lenient read of :func:`_locate`."""


def _locate(text: str) -> str:
    """Where the first thing strict JSON refused is ("dialogue 'ID', turn T"; "" when not found), read again the
    lenient way with what it refused marked in place (only on that error, so a good file is parsed once)."""
    marks: list[object] = []

    def mark(_: str) -> _Refused:
        refused = _Refused()
        marks.append(refused)
        return refused

    def number(s: str) -> float | _Refused:
        value = float(s)
        return mark(s) if value in (float("inf"), float("-inf")) else value

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(items)
        if len(d) < len(items):
            marks.append(d)
        return d

    try:
        data = json.loads(text, parse_constant=mark, parse_float=number, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return ""
    if not marks or not isinstance(data, list):
        return ""
    for i, dialogue in enumerate(data):
        if not _holds(dialogue, marks[0]):
            continue
        did = dialogue.get("dialogue_id") if isinstance(dialogue, dict) else None
        name = f"dialogue {did!r}" if isinstance(did, str) else f"dialogue {i} of the list"
        turns = dialogue.get("turns") if isinstance(dialogue, dict) else None
        for t, turn in enumerate(turns if isinstance(turns, list) else []):
            if _holds(turn, marks[0]):
                return f"{name}, turn {t}"
        return name
    return ""


def _holds(value: Any, target: object) -> bool:
    """Whether ``target`` (by identity) is ``value`` or inside it, walked without recursion."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v is target:
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _iter_sourced(split_dir: str | os.PathLike, max_dialogues: int | None, every: int = 1,
                  allow_empty: bool = False) -> Iterator[tuple[Path, dict]]:
    """Dialogues in file order; ``every`` > 1 keeps one dialogue in ``every`` (SGD files are grouped by
    service, so a strided sample covers every service where the first N dialogues cover a few). Files that hold
    no dialogue at all raise at the end unless ``allow_empty`` (as the transcript importer: an empty log written
    with exit 0 was refused by every tool after it)."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    split = Path(split_dir)
    if not split.is_dir():
        raise SAMFileError(f"SGD split folder not found: {split} (give e.g. ../shared/data/sgd/dev)")
    files = _dialogue_files(split)
    if not files:
        raise SAMFileError(f"no dialogues_*.json[.gz] files in {split}; is it an SGD split folder (train/dev)?")
    count = seen = 0
    first_of: dict[str, Path] = {}  # dialogue_id -> the file it was first read from
    for path in files:
        for dialogue in _load_file(path):
            did = dialogue["dialogue_id"]
            if did in first_of:  # its events would repeat the steps of episode sgd-ID, a log the validator refuses
                raise SAMFileError(f"{path}: dialogue {did!r} is there a second time (first in {first_of[did].name}), "
                                   "and both would be episode 'sgd-" + did + "': remove the copy, or give one "
                                   "its own dialogue_id")
            first_of[did] = path
            seen += 1
            if (seen - 1) % every:
                continue
            if max_dialogues is not None and count >= max_dialogues:
                return
            count += 1
            yield path, dialogue
    if not count and not allow_empty and max_dialogues != 0:
        held = files[0].name if len(files) == 1 else f"any of its {len(files)} dialogues files"
        raise AdvisedError(str(split), f"no dialogue in {held} (an empty list): an incomplete download? ",
                           Advice("allow_empty"))


def iter_sgd_dialogues(split_dir: str | os.PathLike, max_dialogues: int | None = None,
                       every: int = 1, allow_empty: bool = False) -> Iterator[dict]:
    """Yield the raw dialogues of an SGD split: files sorted by name, dialogues in file order."""
    for _, dialogue in _iter_sourced(split_dir, max_dialogues, every, allow_empty):
        yield dialogue


def iter_sgd_events(split_dir: str | os.PathLike, label: Label = "origin", masked: bool = True,
                    max_dialogues: int | None = None, every: int = 1, allow_empty: bool = False) -> Iterator[dict]:
    """Yield the agent-log event dicts of a whole SGD split, episode after episode."""
    for path, dialogue in _iter_sourced(split_dir, max_dialogues, every, allow_empty):
        yield from _convert_checked(path, dialogue, label, masked)


def _convert_checked(path: Path, dialogue: dict, label: Label, masked: bool) -> list[dict]:
    """convert_dialogue, with a malformed dialogue reported by file and dialogue id, not a traceback."""
    try:
        return convert_dialogue(dialogue, label, masked)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:  # ValueError: a turn without frames
        raise SAMFileError(f"{path}: dialogue {dialogue.get('dialogue_id')!r} is malformed "
                           f"({type(exc).__name__}: {exc})") from None


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog=cli_name("python -m sam_model.data.sgd"),
        description="Convert an SGD split (folder of dialogues_*.json[.gz]) into an agent-log JSONL file "
                    "(rules: shared/spec/sgd-tasks.md).")
    parser.add_argument("split_dir", help="SGD split folder, e.g. ../shared/data/sgd/dev")
    parser.add_argument("out", help="output agent log (.jsonl, or .jsonl.gz to gzip it); written atomically")
    parser.add_argument("--label", choices=LABELS, default="origin",
                        help="which earlier mention labels a needed value: the first (origin, default), "
                             "the last (latest) or every one (all)")
    parser.add_argument("--unmasked", action="store_true",
                        help="keep needed values in the decision point's constraints (default: mask them "
                             "and list the slots in uncertainty_flags)")
    parser.add_argument("--force", action="store_true",
                        help="replace OUT even when it exists and is not an agent log (default: refused)")
    parser.add_argument("--allow-empty", action="store_true",
                        help="write the log even when the split's files hold no dialogue (default: an error)")
    parser.add_argument("--max-dialogues", type=int, default=None, metavar="N",
                        help="convert only the first N dialogues (default: all)")
    parser.add_argument("--life", type=int, default=1, metavar="N",
                        help="concatenate every N consecutive dialogues into one agent life (episode ids lifeN-00000, "
                             "steps and labels shifted, the dialogue kept in meta.source_episode; default 1)")
    parser.add_argument("--every", type=int, default=1, metavar="K",
                        help="keep one dialogue in K, spread over all files (files are grouped by service, so "
                             "this samples every service); --max-dialogues then counts the kept ones (default 1)")
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error("--every must be >= 1")
    if args.life < 1:
        parser.error("--life must be >= 1")
    if args.max_dialogues is not None and args.max_dialogues < 0:
        parser.error("--max-dialogues must be >= 0")
    out = Path(args.out).absolute().resolve()
    if out.parent == Path(args.split_dir).absolute().resolve() and out.match("dialogues_*.json*"):
        parser.error(f"{args.out} is one of the split's own dialogues files, which the conversion reads: write the "
                     "agent log elsewhere")
    try:
        check_output(args.out, (), args.force, new_folder=True)
    except SAMFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    from sam_model.progress import progress_bar

    start = time.perf_counter()
    n_dialogues = n_events = n_points = n_labels = n_candidates = 0
    try:
        with atomic_path(args.out) as tmp:
            opener = gzip.open if str(args.out).endswith(".gz") else open
            with opener(tmp, "wt", encoding="utf-8") as out, \
                    progress_bar(total=args.max_dialogues, unit=" dialogues", desc="SGD") as bar:
                def converted():
                    nonlocal n_dialogues
                    for path, dialogue in _iter_sourced(args.split_dir, args.max_dialogues, args.every,
                                                        args.allow_empty):
                        yield from _convert_checked(path, dialogue, args.label, not args.unmasked)
                        n_dialogues += 1
                        bar.update()

                for event in make_lives(converted(), args.life):
                    out.write(json.dumps(event, ensure_ascii=False) + "\n")
                    n_events += 1
                    if "useful_memory_steps" in event:
                        n_points += 1
                        n_labels += len(event["useful_memory_steps"])
                        n_candidates += event["step"]
    except SAMFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    mean_cands = n_candidates / n_points if n_points else 0.0
    print(f"wrote {args.out}: {n_dialogues} dialogues, {n_events} events, {n_points} decision points, "
          f"{n_labels} labels ({args.label}, {'unmasked' if args.unmasked else 'masked'}), "
          f"{mean_cands:.1f} candidates per decision point, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
