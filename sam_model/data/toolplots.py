"""Generated conversations with random plots: the tool worlds (sam_model.data.toolworlds) made less alike.

The first generator's conversations all follow one plot (look the owner up, look the item up, change it), so
a model trained on many of them learns that plot and its id formats, not provenance: three times as many
made the leave-one-domain-out scores fall. Real agents differ in what this module varies:

- **plots**: 1-3 tasks per conversation, each one of: change an item the owner has (picked by id, by an
  attribute, by position or by its last digits), search and book (the user's criteria in free text, the agent
  turning a city into a code itself, options listed by a result, one picked by a condition), an issue report
  (a long text naming a file path and a method among others, found again in long search results and file
  views) and a transfer between two of the owner's items. Later tasks reuse values said many steps before.
- **values said in free text**: the user states several values in one sentence (a city, a date, a time, a
  name, a tier word), as in SGD, not only ids on their own.
- **results that do not echo the call**: lists of look-alike options, keys other than the argument names,
  long texts with the value deep inside, errors followed by a retry.
- **restatements**: the agent repeats values in summaries and confirmations after they were first said, so
  the origin (the first event that said a value, the label) competes with later events that say it too.

Nothing here decides a label: the conversations are plain OpenAI-format chats, labelled by the one transcript
rule (sam_model.data.transcripts). A training source names them ``toolworlds:N:SEED:USER_FIRST:free``.
"""

from __future__ import annotations

import json
import random
from typing import Any

from sam_model.data.toolparts import (
    ACTIONS,
    CITIES,
    FIRST,
    LAST,
    NOUNS,
    VERBS,
    WORDS,
    Chat,
    Entity,
    id_format,
    invented,
    result,
    tool_name,
)

_MORE_CITIES = ("Madrid", "Chicago", "Seoul", "Lagos", "Cairo", "Toronto", "Dublin", "Lima", "Hanoi", "Berlin",
                "Phoenix", "Nagoya", "Porto", "Accra", "Calgary", "Atlanta", "Kyoto", "Tunis", "Bogota", "Riga")
_TIERS = (("economy", "business", "first"), ("basic", "plus", "premium"), ("small", "medium", "large"),
          ("standard", "express", "overnight"), ("monthly", "yearly", "weekly"), ("red", "green", "blue", "black"))
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_FILLER_USER = ("Thanks.", "Okay.", "Hmm, let me check something.", "Sorry, one second.", "Great, thank you!",
                "That makes sense.", "I was on the phone, sorry.")
_ACK = ("Sure, one moment.", "Of course.", "Let me take care of that.", "Okay, on it.")  # a call's decision is the event
# before it, whose own values are not its candidates: the turn's values are memories once the agent has answered
_CONFIRM = ("Yes please.", "ok, go ahead", "Sounds good.", "Yes, do it.", "Correct, proceed.", "yep")


def _city(rng: random.Random) -> str:
    return rng.choice(CITIES + _MORE_CITIES)


def _code(city: str) -> str:
    """The agent's own code for a city (three letters): a value the agent says first, in its call."""
    return (city[0] + city[2] + city[-1]).upper() if len(city) > 3 else city.upper() + "X"


def _date(rng: random.Random) -> tuple[str, str]:
    """A date as the call takes it (ISO) and as the user may say it (words), the same day."""
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    return f"2024-{month:02d}-{day:02d}", f"{_MONTHS[month - 1]} {day}"


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}"


def _amount(rng: random.Random) -> str:
    return f"{rng.randint(100, 1999)}.{rng.choice(['00', '50', '99', '25'])}"


def _time(rng: random.Random) -> str:
    return f"{rng.randint(6, 22):02d}:{rng.choice(['00', '15', '30', '45'])}"


def _path(rng: random.Random) -> str:
    parts = rng.sample(WORDS, 3)
    return f"{parts[0]}/{parts[1]}/{parts[2]}_{rng.choice(WORDS)}{rng.choice(['.py', '.js', '.go', '.ts'])}"


def _method(rng: random.Random) -> str:
    return f"{rng.choice(ACTIONS)}_{rng.choice(WORDS)}"


class _FreeWorld:
    """An agent's domain: an owner, two item types, a search, a payment entity and tools named in one style."""

    def __init__(self, rng: random.Random, index: int):
        nouns = [(invented(rng) if rng.random() < 0.3 else n) for n in rng.sample(NOUNS, 4)]
        self.owner, self.item, self.other, self.pay = (Entity(rng, n) for n in nouns)
        self.style = rng.choice(["snake", "camel", "dotted"])
        verbs = rng.sample(VERBS, 4)
        acts = rng.sample(ACTIONS, 4)
        self.get_owner = self.tool(verbs[0], self.owner.noun + rng.choice(["", "_details", "_profile"]))
        self.get_item = self.tool(verbs[1], self.item.noun + rng.choice(["", "_details", "_info"]))
        self.search = self.tool(rng.choice(["search", "find", "list"]), self.item.noun + "s")
        self.change = self.tool(acts[0], self.item.noun)
        self.book = self.tool(acts[1], self.item.noun)
        self.move = self.tool(acts[2], self.other.noun)
        self.compute = rng.choice(["calculate", "compute", "calc"])
        self.find_code = self.tool(rng.choice(["search", "grep", "find"]), rng.choice(["code", "method", "symbol"]))
        self.view = self.tool(rng.choice(["view", "open", "read"]), rng.choice(["file", "source", "path"]))
        self.edit = self.tool(rng.choice(["edit", "patch", "replace"]), rng.choice(["file", "code", "method"]))
        self.tier = rng.choice(_TIERS)
        self.tier_arg = rng.choice(["cabin", "tier", "level", "plan", "class", "size", "option"])
        self.attr = rng.choice(["address", "email", "note", "target", "contact", "label", "start", "value"])
        self.new_attr = id_format(rng)
        self.city_arg = rng.choice(["city", "origin", "location", "destination", "site"])
        self.code_arg = rng.choice(["code", "city_code", "station", "hub"])
        self.name = f"plots{index:05d}"
        self.policy = (f"You are the assistant of a {self.owner.noun} service ({self.name}). You can look up, "
                       f"search, change and book {self.item.noun}s. Always confirm before a change.")

    def tool(self, verb: str, noun: str) -> str:
        return tool_name(self.style, verb, noun)


class _Story:
    """One conversation under way: the chat and what has been established so far."""

    def __init__(self, world: _FreeWorld, rng: random.Random):
        self.w, self.rng, self.chat = world, rng, Chat(world.policy)
        self.owner = world.owner.new_id(rng)
        self.items = [world.item.new_id(rng) for _ in range(rng.randint(2, 5))]
        self.pays = [world.pay.new_id(rng) for _ in range(rng.randint(1, 3))]
        self.item_city = {i: _city(rng) for i in self.items}
        self.known_owner = False
        self.turned_at: int | None = None  # the index of the turn's first message (:meth:`turn`), if it turned

    def user(self, text: str) -> None:
        self.chat.say("user", text)

    def agent(self, text: str) -> None:
        self.chat.say("assistant", text)

    def call(self, name: str, args: dict[str, Any], fields: Any) -> None:
        content = fields if isinstance(fields, str) else (
            json.dumps(fields) if isinstance(fields, list) else result(self.rng, fields))
        self.chat.call(name, args, content)

    def filler(self) -> None:
        if self.rng.random() < 0.3:
            self.user(self.rng.choice(_FILLER_USER))
            self.agent(self.rng.choice(["No problem.", "Take your time.", "Of course.", "Sure."]))

    def identify(self) -> None:
        """The owner's id, said by the user (at once, when asked, with a correction), then looked up."""
        w, rng = self.w, self.rng
        if self.known_owner:
            return
        arg = w.owner.arg.replace("_", " ")
        if rng.random() < 0.4:
            self.user(f"Hi, my {arg} is {self.owner}.")
        else:
            self.agent(f"Could you give me your {arg} first?")
            wrong = w.owner.new_id(rng)
            self.user(f"It's {wrong}, wait, no: {self.owner}." if rng.random() < 0.2 else f"Sure, {self.owner}.")
        fields = {w.owner.key: self.owner, "name": _person(rng), f"{w.item.noun}s":
                  [{"id": i, "city": self.item_city[i]} for i in self.items] if rng.random() < 0.5 else self.items,
                  f"{w.pay.noun}s": self.pays}
        self.call(w.get_owner, {w.owner.arg: self.owner}, fields)
        self.known_owner = True

    def pick_item(self) -> str:
        """The user points at one of the owner's items: by id, by city, by position or by its last digits."""
        w, rng = self.w, self.rng
        item = rng.choice(self.items)
        if rng.random() < 0.5:
            self.agent(f"I see {len(self.items)} {w.item.noun}s: " + ", ".join(self.items) + ". Which one?")
        how = rng.random()
        if how < 0.4:
            self.user(f"The {w.item.noun} {item}.")
        elif how < 0.6:
            self.user(f"The one in {self.item_city[item]}.")
        elif how < 0.8:
            self.user(f"The {['first', 'second', 'third', 'fourth', 'fifth'][self.items.index(item)]} one.")
        else:
            self.user(f"It ends in {item[-3:]}.")
        return item

    def change(self) -> None:
        """Change one attribute of an item: the new value from the user (free text), the agent, or another item."""
        w, rng = self.w, self.rng
        self.identify()
        item = self.pick_item()
        detail = {w.item.key: item, "status": rng.choice(["active", "pending", "on hold"]),
                  w.attr: w.new_attr(rng), f"{w.other.noun}s": [w.other.new_id(rng) for _ in range(2)],
                  "updated": _date(rng)[0]}
        self.call(w.get_item, {w.item.arg: item}, detail)
        new, tier = w.new_attr(rng), rng.choice(w.tier)
        who = rng.random()
        if who < 0.5:
            self.user(f"I'd like the {w.attr} changed to {new}, and switch it to {tier} while you're at it.")
        else:
            self.agent(f"The {w.attr} is {detail[w.attr]} now. I could set it to {new} on the {tier} option.")
            self.user(rng.choice(_CONFIRM))
        self.filler()
        if rng.random() < 0.6:
            self.agent(f"To confirm: {w.item.noun} {item}, {w.attr} {new}, {tier}. Proceed?")
            self.user(rng.choice(_CONFIRM))
        args = {w.item.arg: item, w.attr: new, w.tier_arg: tier}
        if rng.random() < 0.2:  # an error, then the same call again
            self.call(w.change, args, f"Error: {w.item.noun} is locked, try again")
            self.agent("It failed once, retrying.")
        self.call(w.change, args, {"result": "ok", w.item.key: item})

    def book(self) -> None:
        """Search by criteria said in free text, list options, book the one picked by a condition."""
        w, rng = self.w, self.rng
        city, (date, said_date), tier = _city(rng), _date(rng), rng.choice(w.tier)
        self.user(f"I need a {w.item.noun} in {city} on {rng.choice([said_date, date])}, {tier} if possible.")
        self.identify()
        code = _code(city)
        options = [{"id": w.item.new_id(rng), w.code_arg: code, "date": date, "time": _time(rng),
                    "price": _amount(rng)} for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.3:  # the agent converts the user's city into its code itself
            self.call(w.search, {w.code_arg: code, "date": date}, options)
        else:
            self.call(w.search, {w.city_arg: city, "date": date}, options)
        pick = rng.choice(options)
        self.agent("Options: " + "; ".join(f"{o['id']} at {o['time']} for {o['price']}" for o in options))
        how = rng.random()
        if how < 0.4:
            self.user(f"{pick['id']} please.")
        elif how < 0.7:
            self.user(f"The one at {pick['time']}.")
        else:
            pick = min(options, key=lambda o: float(o["price"]))
            self.user("The cheapest one.")
        self.filler()
        fee = _amount(rng)
        total = f"{float(pick['price']) + float(fee):.2f}"
        if rng.random() < 0.5:
            self.call(w.compute, {"expression": f"{pick['price']} + {fee}"}, total)
            self.agent(f"With the fee of {fee} that is {total}. Which {w.pay.noun}?")
        else:
            self.agent(f"That is {pick['price']} plus a fee. Which {w.pay.noun} should I use?")
        pay = rng.choice(self.pays)
        self.user(f"Use {pay}." if rng.random() < 0.5 else f"The {['first', 'second', 'third'][self.pays.index(pay)]} "
                                                           "one on file.")
        self.call(w.book, {w.owner.arg: self.owner, w.item.arg: pick["id"], "date": date, w.tier_arg: tier,
                           w.pay.arg: pay}, {"result": "booked", "reference": w.other.new_id(rng)})
        self.agent(f"Booked {pick['id']} on {date}, paid with {pay}.")

    def issue(self) -> None:
        """An issue text naming a file and a method among others; long search results and file views."""
        w, rng = self.w, self.rng
        path, method, others = _path(rng), _method(rng), [_method(rng) for _ in range(3)]
        cls = rng.choice(WORDS).title() + rng.choice(WORDS).title()
        self.user(f"Bug report: calling {cls}.{method} raises KeyError since the last release. Traceback mentions "
                  f"{others[0]} and {others[1]}; we think the problem is in {path} but not sure. Steps: create a "
                  f"{w.item.noun}, call {method} twice, see the error. Expected: no error.")
        self.agent("Let me look at the code.")
        hits = [_path(rng) for _ in range(rng.randint(2, 5))] + [path]
        rng.shuffle(hits)
        listing = "\n".join(f"{p}:{rng.randint(10, 999)}: def {rng.choice(others + [method])}(self, *args):"
                            for p in hits)
        self.call(w.find_code, {rng.choice(["name", "symbol", "query"]): method},
                  f"Found {len(hits)} matches:\n{listing}")
        self.filler()
        line = str(rng.randint(100, 999))
        body = "\n".join(f"{int(line) + k}    {rng.choice(['x = ', 'return ', 'if ', 'self.'])}{rng.choice(WORDS)}"
                         for k in range(rng.randint(8, 20)))
        self.call(w.view, {"path": path, "line": line} if rng.random() < 0.5 else {"path": path},
                  f"[{path}, lines {line}-]\n{body}\n(Open file: {path})")
        self.agent(f"The bug is in {method} in {path}.")
        self.call(w.edit, {"path": path, "method": method, "line": line},
                  {"result": "applied", "lines_changed": rng.randint(1, 9)})

    def move(self) -> None:
        """A transfer between two of the owner's items, of an amount the user says."""
        w, rng = self.w, self.rng
        self.identify()
        if len(self.items) < 2:
            return
        a, b = rng.sample(self.items, 2)
        amount = _amount(rng)
        self.user(f"Please move {amount} from {a} to {b}." if rng.random() < 0.5 else
                  f"Move {amount} from the {w.item.noun} in {self.item_city[a]} to the one in {self.item_city[b]}.")
        self.filler()
        self.agent(f"Moving {amount} from {a} to {b}, correct?")
        self.user(rng.choice(_CONFIRM))
        self.call(w.move, {"source": a, "target": b, "amount": amount, w.owner.arg: self.owner},
                  {"result": "done", "balance": _amount(rng)})


    # A briefed conversation (:func:`briefed`): each ``brief_*`` draws a task's values and returns the sentence of
    # the opening message that states them and the work that uses them later.

    def brief_fix(self) -> tuple[str, Any]:
        """A bug to fix: a class, a method and (mostly) its file, said in the brief; found again by searches."""
        w, rng = self.w, self.rng
        path, method, others = _path(rng), _method(rng), [_method(rng) for _ in range(3)]
        cls = rng.choice(WORDS).title() + rng.choice(WORDS).title()
        err = rng.choice(["KeyError", "TypeError", "a wrong result", "an AttributeError", "a crash"])
        where = f" in {path}" if rng.random() < 0.7 else ""  # else the file is first said by the search
        text = (f"{cls}.{method}{where} gives {err} when called on an empty {w.item.noun}; {others[0]} works, "
                f"and {others[1]} may be related.")
        if rng.random() < 0.5:
            text += f"\n```\n>>> {cls}().{method}({rng.choice(WORDS)}=None)\n{err}\n```"

        def work() -> None:
            hits = [_path(rng) for _ in range(rng.randint(2, 5))] + [path]
            rng.shuffle(hits)
            self.call(w.find_code, {rng.choice(["name", "symbol", "query"]): method}, f"Found {len(hits)} matches:\n"
                      + "\n".join(f"{h}:{rng.randint(10, 999)}: def {rng.choice(others + [method])}(self):"
                                   for h in hits))
            if rng.random() < 0.5:
                self.call(w.find_code, {"query": cls}, f"class {cls} in {path}; subclasses in "
                          + ", ".join(h for h in hits if h != path))
            line = str(rng.randint(100, 999))
            for view in ([rng.choice(hits)] if rng.random() < 0.4 else []) + [path]:
                body = "\n".join(f"{int(line) + k}    {rng.choice(['x = ', 'return ', 'if '])}{rng.choice(WORDS)}"
                                 for k in range(rng.randint(8, 20)))
                self.call(w.view, {"path": view}, f"[{view}, lines {line}-]\n{body}\n(Open file: {view})")
            if rng.random() < 0.6:
                self.agent(f"{method} in {path} does not handle the empty case; {others[0]} does.")
            self.call(w.edit, {"path": path, "method": method, "line": line},
                      {"result": "applied", "lines_changed": rng.randint(1, 9)})
        return text, work

    def brief_change(self) -> tuple[str, Any]:
        """Change an item of the owner: the item, the new value and the option said in the brief."""
        w, rng = self.w, self.rng
        item, new, tier = rng.choice(self.items), w.new_attr(rng), rng.choice(w.tier)
        text = rng.choice([f"Please set the {w.attr} of {w.item.noun} {item} to {new} and put it on {tier}.",
                           f"{w.item.noun.title()} {item} needs its {w.attr} changed to {new} ({tier} from now on)."])

        def work() -> None:
            self.lookup_owner()
            self.call(w.get_item, {w.item.arg: item}, {w.item.key: item, w.attr: w.new_attr(rng),
                                                        "status": rng.choice(["active", "pending"]),
                                                        f"{w.other.noun}s": [w.other.new_id(rng) for _ in range(2)]})
            if rng.random() < 0.5:
                self.agent(f"Changing {w.item.noun} {item}: {w.attr} to {new}, {tier}.")
            self.call(w.change, {w.item.arg: item, w.attr: new, w.tier_arg: tier}, {"result": "ok", w.item.key: item})
        return text, work

    def brief_book(self) -> tuple[str, Any]:
        """Book for someone: the city, the date, the time, the name, the option and the payment in the brief; the
        booked option's id comes from the search result, a city code or an ISO date from the agent."""
        w, rng = self.w, self.rng
        city, (date, said), tier, when = _city(rng), _date(rng), rng.choice(w.tier), _time(rng)
        person, pay = _person(rng), rng.choice(self.pays)
        text = (f"Book a {w.item.noun} in {city} on {rng.choice([said, date])} around {when} for {person}, {tier}, "
                f"paid with {pay}.")

        def work() -> None:
            options = [{"id": w.item.new_id(rng), w.code_arg: _code(city), "date": date, "time": t,
                        "price": _amount(rng)} for t in [when] + [_time(rng) for _ in range(rng.randint(1, 4))]]
            rng.shuffle(options)
            where = {w.code_arg: _code(city)} if rng.random() < 0.3 else {w.city_arg: city}
            self.lookup_owner()
            if rng.random() < 0.4:  # a failed search, then the same again
                self.call(w.search, {**where, "date": date}, "Error: upstream timeout, retry later")
            self.call(w.search, {**where, "date": date}, options)
            pick = next(o for o in options if o["time"] == when)
            if rng.random() < 0.5:
                self.agent(f"{pick['id']} at {when} fits; booking it for {person}.")
            self.call(w.book, {w.item.arg: pick["id"], "date": date, w.tier_arg: tier, "name": person, w.pay.arg: pay},
                      {"result": "booked", "reference": w.other.new_id(rng)})
        return text, work

    def brief_move(self) -> tuple[str, Any]:
        """A transfer between two of the owner's items, both and the amount said in the brief."""
        w, rng = self.w, self.rng
        a, b = rng.sample(self.items, 2) if len(self.items) > 1 else (self.items[0], w.item.new_id(rng))
        amount = _amount(rng)
        text = f"Move {amount} from {a} to {b}."

        def work() -> None:
            self.lookup_owner()
            self.call(w.get_item, {w.item.arg: a}, {w.item.key: a, "balance": _amount(rng), "city": self.item_city[a]})
            self.call(w.move, {"source": a, "target": b, "amount": amount, w.owner.arg: self.owner},
                      {"result": "done", "balance": _amount(rng)})
        return text, work

    def turn(self) -> None:
        """The task turns, after its calls, to a new request whose values nothing before said: fresh item ids, a new
        attribute value or amount, said by the user, proposed by the agent or read from a new tool result. The
        decisions after it have labels no earlier call used (the turn's events), while the memories earlier calls
        used are still there: what a real task looks like when a user moves on (a new time for the same booking, the
        next ticket's request), which the briefed and plotted conversations rarely show."""
        w, rng = self.w, self.rng
        self.turned_at = len(self.chat.messages)
        a, b, new = w.item.new_id(rng), w.item.new_id(rng), w.new_attr(rng)
        head, kind = rng.choice(TURNS), rng.random()
        status = {"status": rng.choice(["active", "pending", "on hold"])}
        if kind < 0.35:  # the user says the new values
            self.user(f"{head}{w.item.noun} {a} needs its {w.attr} set to {new}.")
            self.agent(rng.choice(_ACK))
            if rng.random() < 0.5:  # a look-up whose result restates the item and shows an old value (a distractor)
                self.call(w.get_item, {w.item.arg: a}, {w.item.key: a, w.attr: w.new_attr(rng), **status})
            self.call(w.change, {w.item.arg: a, w.attr: new}, {"result": "ok", w.item.key: a})
        elif kind < 0.55:  # the user names the item, the agent proposes the value
            self.user(f"{head}could you update {w.item.noun} {a} as well?")
            self.agent(f"I can set its {w.attr} to {new}. Shall I?")
            self.user(rng.choice(_CONFIRM))
            self.call(w.change, {w.item.arg: a, w.attr: new}, {"result": "ok", w.item.key: a})
        elif kind < 0.8:  # the value comes from a new tool result
            self.user(f"{head}give {w.item.noun} {b} the same {w.attr} as {a}.")
            self.agent(rng.choice(_ACK))
            self.call(w.get_item, {w.item.arg: a}, {w.item.key: a, w.attr: new, **status})
            if rng.random() < 0.5:  # the other item's record, its old value a look-alike of the new one
                self.call(w.get_item, {w.item.arg: b}, {w.item.key: b, w.attr: w.new_attr(rng), **status})
            else:  # (a decision's own event is not its candidate: a result read by the next call is said again)
                self.agent(f"{a} has {w.attr} {new}; copying it to {b}.")
            self.call(w.change, {w.item.arg: b, w.attr: new}, {"result": "ok", w.item.key: b})
        else:  # a transfer between two items first named now
            amount = _amount(rng)
            self.user(f"{head}move {amount} from {a} to {b}.")
            if rng.random() < 0.5:
                self.agent(f"Moving {amount} from {a} to {b}, correct?")
                self.user(rng.choice(_CONFIRM))
            else:
                self.agent(rng.choice(_ACK))
            self.call(w.move, {"source": a, "target": b, "amount": amount}, {"result": "done", "balance": _amount(rng)})
        if rng.random() < 0.5:
            self.agent("Done with that too.")

    def lookup_owner(self) -> None:
        """The owner's record, once: the owner id from the brief, the items listed again (restatements)."""
        if not self.known_owner:
            w = self.w
            self.call(w.get_owner, {w.owner.arg: self.owner}, {w.owner.key: self.owner, "name": _person(self.rng),
                                                               f"{w.item.noun}s": self.items})
            self.known_owner = True


PLOTS = ("change", "book", "issue", "move")
TURNS = ("Actually, one more thing: ", "Now a different request: ", "Also, separately: ", "Something else: ",
         "New request: ", "Oh and ")  # how a turn (:meth:`_Story.turn`) opens
BRIEFS = ("fix", "change", "book", "move")


def briefed(world: _FreeWorld, rng: random.Random, turn: float = 0.0) -> list[dict[str, Any]]:
    """A conversation that opens with the task statement: a ticket, an issue or a delegated request whose one
    message says most values the calls will need (ids, names, file paths, methods, dates, amounts), then the
    agent's searches, look-ups and restatements, many steps before the calls that use them. That is how an agent
    is given work when it is not chatting: the statement is the origin of values needed long after it. ``turn``:
    the chance that the task then turns to a new request (:meth:`_Story.turn`; 0 draws nothing more)."""
    return _briefed(world, rng, turn).chat.messages


def _briefed(world: _FreeWorld, rng: random.Random, turn: float) -> _Story:
    story = _Story(world, rng)
    w = world
    jobs = [getattr(story, f"brief_{j}")() for j in rng.sample(BRIEFS, rng.choice((1, 2, 2, 3)))]
    head = rng.choice(["", "Hi, ", "Task: ", f"Ticket {rng.randint(100, 9999)}: ", "Request from support: "])
    who = f"My {w.owner.arg.replace('_', ' ')} is {story.owner}. " if rng.random() < 0.8 else ""
    notify = f"{rng.choice(FIRST)}.{rng.choice(LAST)}@{rng.choice(WORDS)}.com" if rng.random() < 0.4 else ""
    story.user(head + who + " ".join(text for text, _ in jobs) + (f" Send a note to {notify} when done." if notify
                                                                    else ""))
    if not who:  # the owner's id is asked for: the one value a later user message says
        story.agent(f"Which {w.owner.noun} is this for? I need the {w.owner.arg.replace('_', ' ')}.")
        story.user(f"{story.owner}.")
    story.agent(rng.choice(["On it.", "Let me gather some context first.", "I'll start with a few look-ups."]))
    for _, work in jobs:
        work()
        if rng.random() < 0.3:
            story.user(rng.choice(["Any progress?", "Please continue.", "ok"]))
    if notify:
        story.call(tool_name(w.style, rng.choice(["send", "notify"]), rng.choice(["email", "message", "note"])),
                   {"to": notify, "body": "Done."}, {"result": "sent"})
    if turn and rng.random() < turn:
        story.turn()
    story.agent("All done.")
    return story


def conversation(world: _FreeWorld, rng: random.Random, brief: float = 0.0, turn: float = 0.0) -> list[dict[str, Any]]:
    """One conversation: 1-3 tasks of random plots, sharing the owner (said once, reused many steps later); with
    probability ``brief``, a :func:`briefed` one instead (0 draws nothing more: the conversations of before). With
    probability ``turn``, either then turns to a new request after its calls (:meth:`_Story.turn`; 0 draws nothing
    more either)."""
    return tell(world, rng, brief, turn).chat.messages


def tell(world: _FreeWorld, rng: random.Random, brief: float = 0.0, turn: float = 0.0) -> _Story:
    """:func:`conversation`'s story: its messages and, where it turned, ``turned_at`` (the turn's first message)."""
    if brief and rng.random() < brief:
        return _briefed(world, rng, turn)
    story = _Story(world, rng)
    if rng.random() < 0.5:
        story.user(rng.choice(["Hello.", "Hi there, I need some help.", "Good morning."]))
        story.agent("Hello! How can I help?")
    for plot in rng.choices(PLOTS, weights=(3, 3, 2, 1), k=rng.choice((1, 2, 2, 3))):
        getattr(story, plot)()
    if turn and rng.random() < turn:
        story.turn()
    story.agent("Anything else?")
    story.user("No, that's all.")
    return story


def world(rng: random.Random, index: int) -> _FreeWorld:
    return _FreeWorld(rng, index)

