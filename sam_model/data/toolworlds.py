"""Procedurally generated tool worlds: random agents, tools, argument names and id formats, so that a model
learns *where values come from* (provenance) rather than one domain's habits.

A real domain teaches habits: in tau-bench airline most needed values sit in tool results, in SGD in user
turns, and a model trained on both learns "airline values live in results" and the names of their tools.
Every generated world draws its own entity nouns (some invented words), tool names, argument names (often
not the key the value has in a tool result), id formats (order codes, user handles, hex ids, file paths,
dotted method names, e-mails, dates, phone numbers) and who says each value first: the user (at once, when
asked, or in a long issue text), a tool result (among look-alike distractors), or the agent itself (a value
it proposes before calling). The conversations are plain OpenAI-format chats, labelled by the one
transcript rule (sam_model.data.transcripts): nothing here decides a label.

A training source names a generated set as ``toolworlds:N``, ``toolworlds:N:SEED`` (N conversations,
seed 0 by default), ``toolworlds:N:SEED:USER_FIRST`` (also the share of conversations whose user names the
item before a tool result lists it, 0 by default: the origin mix) or ``toolworlds:N:SEED:0:free[:BRIEF[:TURN]]``
(the conversations of random plots of sam_model.data.toolplots instead of this module's one plot; BRIEF the share
opening with the task statement, TURN the share whose task turns to a new request after its calls); it is written
once into the cache (sam_model.data.sources) and read as a transcript file.
Generated data carries no third-party licence, so a model trained on it may ship.

CLI::

    python -m sam_model.data.toolworlds OUT.jsonl.gz --conversations 600 --seed 0
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sam_model.data import toolplots
from sam_model.data.toolparts import (
    ACTIONS,
    CITIES,
    FIRST,
    LAST,
    NOUNS,
    VERBS,
    Chat,
    Entity,
    id_format,
    invented,
    result,
    tool_name,
)
from sam_model.io import DefaultsHelp, atomic_path, cli_name

PREFIX = "toolworlds:"
CONVERSATIONS_PER_WORLD = 3  # conversations of one world share its tools (a group: one side of every split)

class _World:
    """An agent's domain: an owner entity (the user's account), item entities, tools and a policy text."""

    def __init__(self, rng: random.Random, index: int):
        nouns = rng.sample(NOUNS, 3)
        nouns = [(invented(rng) if rng.random() < 0.3 else n) for n in nouns]
        self.owner, self.item, self.other = (Entity(rng, n) for n in nouns)
        look, act = rng.choice(VERBS), rng.sample(ACTIONS, 2)
        style = rng.choice(["snake", "camel", "dotted"])
        self.get_owner = tool_name(style, look, self.owner.noun)
        self.get_item = tool_name(style, rng.choice(VERBS), self.item.noun + rng.choice(["", "_details", "_info"]))
        self.act = tool_name(style, act[0], self.item.noun)
        self.act2 = tool_name(style, act[1], self.other.noun)
        self.attr = rng.choice(["address", "email", "date", "note", "target", "path", "contact", "start", "value"])
        self.new_attr = id_format(rng)
        self.name = f"world{index:05d}"
        self.policy = (f"You are the {self.item.noun} assistant of a {self.owner.noun} service ({self.name}). "
                       f"Use the tools {self.get_owner}, {self.get_item}, {self.act} and {self.act2}. "
                       "Confirm before any change.")


def conversation(world: _World, rng: random.Random, user_first: float = 0.0) -> list[dict[str, Any]]:
    """One conversation in ``world``: each value's first sayer (user, tool result, agent) is drawn at random.

    ``user_first``: the share of the other conversations in which the user names the item in the opening
    message, before any tool result lists it (0: the item is first said by the owner lookup's result unless
    an issue text names it). Raising it moves the labels' origins from tool results towards the user without
    changing anything else: at 0 the random draws, and so the conversations, are exactly those of before.
    """
    w, chat = world, Chat(world.policy)
    owner = w.owner.new_id(rng)
    items = [w.item.new_id(rng) for _ in range(rng.randint(2, 6))]
    item = rng.choice(items)
    other = [w.other.new_id(rng) for _ in range(rng.randint(1, 4))]
    new_value = w.new_attr(rng)
    issue = rng.random() < 0.25  # a long first message that says several values at once (an issue text)
    named = not issue and user_first > 0 and rng.random() < user_first  # the user says the item up front
    if named:
        chat.say("user", f"Hi, my {w.item.noun} {item} needs a change. My {w.owner.arg.replace('_', ' ')} is "
                         f"{owner}.")
    elif issue:
        decoy = w.item.new_id(rng)
        chat.say("user", f"Problem report: since last week the {w.item.noun} {item} fails when I open it; "
                         f"{decoy} works fine. My {w.owner.noun} is {owner} and it should use {w.attr} "
                         f"{new_value} from now on. Please fix it.")
    elif rng.random() < 0.5:
        chat.say("user", f"Hi, I need help with my {w.item.noun}. My {w.owner.arg.replace('_', ' ')} is {owner}.")
    else:
        chat.say("user", f"Hello, something is wrong with my {w.item.noun}.")
        chat.say("assistant", f"Sure. Could you tell me your {w.owner.arg.replace('_', ' ')}?")
        if rng.random() < 0.2:  # a correction: the first value is a trap
            chat.say("user", f"It is {w.owner.new_id(rng)}... no sorry, {owner}.")
        else:
            chat.say("user", f"Yes, it's {owner}.")
    chat.call(w.get_owner, {w.owner.arg: owner}, result(rng, {w.owner.key: owner, "name": f"{rng.choice(FIRST)} "
                                                                 f"{rng.choice(LAST)}", f"{w.item.noun}s": items,
                                                                 "city": rng.choice(CITIES)}))
    if not issue and not named:
        if rng.random() < 0.5:
            chat.say("assistant", f"I see {len(items)} {w.item.noun}s on your {w.owner.noun}. Which one?")
            chat.say("user", f"The one ending in {item[-3:]}." if rng.random() < 0.3 else f"It's {item}.")
        else:
            chat.say("user", f"It is the {w.item.noun} {item}.")
    detail = {w.item.key: item, "status": rng.choice(["active", "pending", "blocked", "open"]),
              f"{w.other.noun}s": other, "updated": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"}
    chat.call(w.get_item, {w.item.arg: item}, result(rng, detail))
    if not issue:
        who = rng.random()
        if who < 0.45:  # the user says the new value
            chat.say("user", f"Please set the {w.attr} to {new_value}.")
        elif who < 0.8:  # the agent proposes it, the user agrees
            chat.say("assistant", f"I can change the {w.attr} to {new_value}. Shall I go ahead?")
            chat.say("user", rng.choice(["Yes please.", "ok, go ahead", "Sounds good."]))
        else:  # the value comes from a tool
            chat.call(w.get_item, {w.item.arg: items[0] if items[0] != item else items[-1]},
                      result(rng, {w.item.key: items[0], w.attr: new_value}))
            chat.say("user", f"Use the same {w.attr} as that one.")
    chat.call(w.act, {w.item.arg: item, w.attr: new_value, w.owner.arg: owner},
              result(rng, {"result": "ok", w.item.key: item}))
    if rng.random() < 0.6:
        target = rng.choice(other)
        chat.say("user", rng.choice(["Also fix the linked one please.", "And the related record too.",
                                     f"Also the {w.other.noun}, please."]))
        chat.call(w.act2, {w.other.arg: target, w.item.arg: item}, result(rng, {"result": "done"}))
    chat.say("assistant", "Done. Anything else?")
    return chat.messages


def generate(n: int, seed: int = 0, user_first: float = 0.0, plots: str = "fixed",
             brief: float = 0.0, turn: float = 0.0) -> Iterator[dict[str, Any]]:
    """``n`` conversations ``{"id", "group", "messages"}``, ``CONVERSATIONS_PER_WORLD`` per world (their group).
    ``plots``: "fixed" (this module's one plot) or "free" (sam_model.data.toolplots' random plots); ``brief``: with
    free plots, the share of conversations that open with the task statement (toolplots.briefed; 0: as before);
    ``turn``: with free plots, the share whose task turns to a new request after its calls (toolplots' Story.turn;
    0: as before)."""
    check_plots(plots, user_first, brief, turn)
    if plots == "free":
        new_world, talk = toolplots.world, lambda w, r: toolplots.conversation(w, r, brief, turn)
    else:
        new_world, talk = _World, lambda w, r: conversation(w, r, user_first)
    rng = random.Random(seed)
    world = None
    tag = "" if plots == "fixed" else f"-{plots}"
    for i in range(n):
        if i % CONVERSATIONS_PER_WORLD == 0:
            world = new_world(rng, i // CONVERSATIONS_PER_WORLD)
        yield {"id": f"toolworlds{tag}-s{seed}-{i:05d}", "group": world.name, "messages": talk(world, rng)}


PLOT_KINDS = ("fixed", "free")


def check_plots(plots: str, user_first: float, brief: float = 0.0, turn: float = 0.0) -> None:
    if plots not in PLOT_KINDS:
        raise ValueError(f"plots must be one of {', '.join(PLOT_KINDS)}, got {plots!r}")
    if plots == "free" and user_first:
        raise ValueError("the free plots draw who says each value themselves: give user_first 0 with plots free")
    if not 0.0 <= brief <= 1.0 or (brief and plots != "free"):
        raise ValueError(f"brief is a share (0-1) of the free plots' conversations, got {brief} with plots {plots}")
    if not 0.0 <= turn <= 1.0 or (turn and plots != "free"):
        raise ValueError(f"turn is a share (0-1) of the free plots' conversations, got {turn} with plots {plots}")


def write(path: str | Path, n: int, seed: int = 0, user_first: float = 0.0, plots: str = "fixed",
          brief: float = 0.0, turn: float = 0.0) -> Path:
    """Write ``generate(n, seed, user_first, plots, brief, turn)`` as gzipped JSON Lines, atomically."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp, gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for conv in generate(n, seed, user_first, plots, brief, turn):
            fh.write(json.dumps(conv) + "\n")
    return out


def parse_spec(spec: str) -> tuple[int, int, float, str, float, float]:
    """(conversations, seed, user_first, plots, brief, turn) of
    ``toolworlds:N[:SEED[:USER_FIRST[:PLOTS[:BRIEF[:TURN]]]]]``; ValueError naming the spec otherwise."""
    parts = spec[len(PREFIX):].split(":")
    try:
        n, seed = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
        user_first = float(parts[2]) if len(parts) > 2 else 0.0
        plots = parts[3] if len(parts) > 3 else "fixed"
        brief = float(parts[4]) if len(parts) > 4 else 0.0
        turn = float(parts[5]) if len(parts) > 5 else 0.0
        if len(parts) > 6 or n < 1 or not 0.0 <= user_first <= 1.0:
            raise ValueError
        check_plots(plots, user_first, brief, turn)
    except ValueError:
        raise ValueError(f"{spec}: a generated source is toolworlds:N, toolworlds:N:SEED, "
                         "toolworlds:N:SEED:USER_FIRST or toolworlds:N:SEED:0:free[:BRIEF[:TURN]] (N >= 1 "
                         "conversations, an integer seed, the share of conversations whose user names the item "
                         "first, 0-1; free: random plots, sam_model.data.toolplots; BRIEF: the share of those "
                         "opening with the task statement, 0-1; TURN: the share whose task turns to a new request "
                         "after its calls, 0-1)") from None
    return n, seed, user_first, plots, brief, turn


def is_spec(path: object) -> bool:
    return isinstance(path, str) and path.startswith(PREFIX)


def _share(x: float) -> str:
    """A share as a file name says it: ``{:g}`` (the names of before) where that is exact, else every digit, so two
    shares that differ past six significant digits never share a cached file."""
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


def resolve(spec: str, cache_dir: str | Path) -> Path:
    """The transcript file of ``toolworlds:N[:SEED[:USER_FIRST[:PLOTS[:BRIEF[:TURN]]]]]`` in ``cache_dir``, generated
    on first use; every option that changes the conversations is in the file's name (a cache never mixes them)."""
    n, seed, user_first, plots, brief, turn = parse_spec(spec)
    mix = f"-u{_share(user_first)}" if user_first else ""  # 0 keeps the first generator's file name (and content)
    mix += ("" if plots == "fixed" else f"-{plots}") + (f"-b{_share(brief)}" if brief else "")
    mix += f"-t{_share(turn)}" if turn else ""
    path = Path(cache_dir) / f"toolworlds-n{n}-s{seed}{mix}.jsonl.gz"
    return path if path.exists() else write(path, n, seed, user_first, plots, brief, turn)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=cli_name("python -m sam_model.data.toolworlds"),
                                 description="Write procedurally generated tool-call conversations (random tools, "
                                             "argument names, id formats and value origins) as a transcript file.",
                                 formatter_class=DefaultsHelp)
    ap.add_argument("out", help="output .jsonl.gz (OpenAI-format chats {id, group, messages})")
    ap.add_argument("--conversations", type=int, default=600, help="how many conversations (default 600)")
    ap.add_argument("--seed", type=int, default=0, help="random seed: the same seed writes the same file")
    ap.add_argument("--user-first", type=float, default=0.0,
                    help="share (0-1) of the conversations whose user names the item in the opening message, "
                         "before a tool result lists it (default 0: the first generator's conversations)")
    ap.add_argument("--plots", choices=PLOT_KINDS, default="fixed",
                    help="fixed: every conversation follows one plot (look up, look up, change; the default, the "
                         "first generator's files byte for byte); free: 1-3 tasks of random plots per conversation "
                         "(change, search and book, issue report, transfer; sam_model.data.toolplots)")
    ap.add_argument("--brief", type=float, default=0.0,
                    help="with --plots free: the share (0-1) of conversations that open with the task statement "
                         "(a ticket, issue or request holding the values later calls use; default 0: as before)")
    ap.add_argument("--turn", type=float, default=0.0,
                    help="with --plots free: the share (0-1) of conversations whose task turns, after its calls, to "
                         "a new request with values nothing before said (default 0: as before)")
    args = ap.parse_args(argv)
    if not 0.0 <= args.brief <= 1.0 or (args.brief and args.plots != "free"):
        ap.error(f"--brief is a share (0-1) of the free plots' conversations; got {args.brief} with --plots "
                 f"{args.plots}")
    if not 0.0 <= args.turn <= 1.0 or (args.turn and args.plots != "free"):
        ap.error(f"--turn is a share (0-1) of the free plots' conversations; got {args.turn} with --plots {args.plots}")
    if args.plots == "free" and args.user_first:
        ap.error("--user-first applies to the fixed plot only; give 0 with --plots free")
    if args.conversations < 1:
        ap.error("--conversations must be >= 1")
    if not 0.0 <= args.user_first <= 1.0:
        ap.error(f"--user-first must be between 0 and 1, got {args.user_first}")
    print(f"wrote {write(args.out, args.conversations, args.seed, args.user_first, args.plots, args.brief, args.turn)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
