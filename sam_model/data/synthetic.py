"""Built-in demo data: long-horizon agent episodes with labelled decision points.

Why synthetic data at all: ``make demo`` and the tests need a log whose right answers are
known by construction and that runs without downloads. Why *this* task: it is built so that
the state, not the observation, says what to recall.

- Constraints (destination, dates, budget, ...) are given early; some are **corrected**
  later. The correction is the useful memory; the old value is a trap that names the same slot.
- Decision points are short follow-ups ("ok, go ahead"): the observation carries almost no
  content. Their state says WHAT is needed (phase, sub-goal, needed slots in
  ``uncertainty_flags``) but the needed slots are masked from ``constraints`` (as in the masked
  SGD benchmark), so the values themselves are nowhere in the query.
- Distractors: chit-chat naming other cities, dates and people; rejected suggestions; search
  results listing many values; agent thoughts that name slots without values.

The label of a decision point is the step that last set each needed slot (a user message, or
the booking result that produced a fact such as the flight's arrival time), 1-3 steps.
Recency and observation-only retrieval do badly; a retriever that maps "needs X" to "the
event that set X" does well.

Two scenario families: trip planning (flight, hotel, car, restaurants) and event planning
(venue, catering, entertainment, invitations); each episode takes 2-4 phases in random order.
Episode ``i`` is drawn from its own ``random.Random`` seeded by ``(seed, i)``, so any prefix of
a larger run is identical to a smaller run and the output is byte-identical per seed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sam_model.data.reader import check_output
from sam_model.io import atomic_path, cli_name, run_cli

MIN_EVENTS, MAX_EVENTS = 30, 80
FAMILIES = ("trip", "event")

CITIES = (
    "Lisbon", "Porto", "Madrid", "Barcelona", "Seville", "Valencia", "Paris", "Lyon", "Nice", "Rome",
    "Milan", "Florence", "Vienna", "Prague", "Berlin", "Munich", "Amsterdam", "Copenhagen", "Stockholm",
    "Oslo", "Dublin", "Edinburgh", "London", "Athens", "Istanbul", "Budapest", "Krakow", "Zurich",
    "Tokyo", "Kyoto", "Seoul", "Boston", "Chicago", "Denver", "Seattle", "Toronto", "Montreal", "Austin",
)
PEOPLE = (
    "Anna", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Luca",
    "Maya", "Nils", "Olga", "Pedro", "Rosa", "Sam", "Tara", "Yusuf",
)
BRANDS = (
    "Aurora", "Casa Azul", "Riverside", "Grand Plaza", "Lumen", "Old Mill", "Harbour View", "Sunset",
    "Linden", "Golden Gate", "Maple", "Blue Door", "Atlas", "Nova", "Cedar", "Mirador",
)
FOLLOW_UPS = (
    "ok, go ahead", "yes do it", "sounds good, book it", "yes please", "perfect, go for it", "sure",
    "that works", "do it", "go ahead", "yes", "fine by me", "ok", "great, thanks", "yep, let's do that",
)
SEARCH_FOLLOW_UPS = ("ok, go ahead", "yes please", "sure, search", "go for it", "yes", "ok", "please do")
CUISINES = ("seafood", "Italian", "vegan", "tapas", "sushi", "street food", "steak")
AGENT_GO = ("Proceeding with the next step.", "Enough to act on now.", "Moving on to the call.",
            "Time to act.", "Going ahead.")


# --- slots: what each constraint is called, how a value is drawn and said ---------------------------

def _date(rng: random.Random, c: dict, old: Any, after: str | None = None, gap=(2, 14)) -> str:
    if old is not None:  # a correction shifts the date by a few days, keeping order with `after`
        base = dt.date.fromisoformat(old)
        for _ in range(20):
            new = base + dt.timedelta(days=rng.choice((-4, -3, -2, -1, 1, 2, 3, 4)))
            if after is None or after not in c or new > dt.date.fromisoformat(c[after]):
                return new.isoformat()
        return (base + dt.timedelta(days=1)).isoformat()
    if after and after in c:
        return (dt.date.fromisoformat(c[after]) + dt.timedelta(days=rng.randint(*gap))).isoformat()
    return (dt.date(2025, 3, 1) + dt.timedelta(days=rng.randint(0, 210))).isoformat()


def _city(rng: random.Random, c: dict, old: Any) -> str:
    taken = {c.get("origin"), c.get("destination"), c.get("event_city"), old}
    return rng.choice([x for x in CITIES if x not in taken])


def _pick(options: tuple) -> Callable[[random.Random, dict, Any], Any]:
    return lambda rng, c, old: rng.choice([o for o in options if o != old])


def _count(lo: int, hi: int) -> Callable[[random.Random, dict, Any], int]:
    def make(rng: random.Random, c: dict, old: Any) -> int:
        return rng.choice([n for n in range(lo, hi + 1) if n != old])
    return make


def _money(lo: int, hi: int, step: int) -> Callable[[random.Random, dict, Any], int]:
    def make(rng: random.Random, c: dict, old: Any) -> int:
        return rng.choice([n for n in range(lo, hi + 1, step) if n != old])
    return make


@dataclass(frozen=True)
class Slot:
    name: str
    words: str  # how people call it, e.g. "departure date"
    make: Callable[[random.Random, dict, Any], Any]  # (rng, constraints so far, old value) -> new value
    say: tuple[str, ...]  # how a user gives it; {v} is the value as text
    param: str  # its name in tool calls (differs from the slot name, as in real APIs)


def _s(name, words, make, say, param) -> Slot:
    return Slot(name, words, make, tuple(say), param)


SLOTS: dict[str, Slot] = {s.name: s for s in (
    # trip planning
    _s("origin", "departure city", _city,
       ("I'll be flying from {v}.", "We're based in {v}.", "Departing from {v}.", "We start from {v}."), "from"),
    _s("destination", "destination", _city,
       ("I want to go to {v}.", "Thinking about {v} this time.", "The destination is {v}.",
        "We'd love to visit {v}."), "to"),
    _s("depart_date", "departure date", lambda r, c, o: _date(r, c, o),
       ("Leaving on {v}.", "We'd like to depart {v}.", "Outbound on {v}, please.", "We fly out {v}."), "depart"),
    _s("return_date", "return date", lambda r, c, o: _date(r, c, o, after="depart_date"),
       ("Coming back {v}.", "Return on {v}.", "We need to be home by {v}.", "Back on {v}."), "return"),
    _s("travellers", "number of travellers", _count(1, 6),
       ("It's {v} of us.", "{v} travellers in total.", "For {v} people.", "We are a group of {v}."), "pax"),
    _s("budget", "budget", _money(800, 6000, 100),
       ("Budget is around {v}.", "Let's keep it under {v} total.", "We can spend up to {v}."), "max_price"),
    _s("seat_pref", "seat preference", _pick(("aisle", "window", "extra legroom", "exit row")),
       ("I prefer {v} seats.", "{v} seats if possible.", "Please get us {v} seats."), "seat"),
    _s("hotel_area", "hotel area", _pick(("the old town", "near the beach", "the city centre",
                                           "near the station", "a quiet neighbourhood")),
       ("Somewhere in {v} would be ideal.", "We'd like to stay in {v}.", "Hotel location: {v}."), "area"),
    _s("hotel_stars", "hotel category", _count(2, 5),
       ("At least {v} stars for the hotel.", "A {v}-star hotel is fine.", "Hotel: {v} stars minimum."), "stars"),
    _s("car_type", "car type", _pick(("compact", "SUV", "convertible", "minivan", "electric")),
       ("For the car, a {v} please.", "We'll need a {v}.", "A {v} would suit us."), "class"),
    _s("cuisine", "cuisine", _pick(CUISINES),
       ("We love {v}.", "For dinners, {v} please.", "Mostly {v} restaurants."), "food"),
    _s("dietary", "dietary needs", _pick(("vegetarian", "gluten-free", "nut allergy", "halal", "lactose-free")),
       ("Dietary note: {v}.", "One of us needs {v} food.", "Please keep it {v}."), "diet"),
    # event planning
    _s("event_type", "occasion", _pick(("birthday party", "retirement dinner", "company offsite",
                                         "anniversary party", "graduation party", "baby shower")),
       ("I'm organising a {v}.", "It's a {v}.", "We're planning a {v}."), "occasion"),
    _s("event_city", "city", _city,
       ("It will be in {v}.", "The event is in {v}.", "Location: {v}."), "city"),
    _s("event_date", "event date", lambda r, c, o: _date(r, c, o),
       ("The date is {v}.", "We're aiming for {v}.", "It's on {v}."), "date"),
    _s("guest_count", "number of guests", _count(8, 120),
       ("About {v} guests.", "We expect {v} people.", "Guest list: {v}."), "guests"),
    _s("venue_style", "venue style", _pick(("rooftop", "garden", "banquet hall", "loft", "beach club")),
       ("A {v} venue would be great.", "We'd like a {v}.", "Venue: {v} style."), "style"),
    _s("music", "music", _pick(("jazz band", "DJ", "string quartet", "acoustic duo", "cover band")),
       ("For music, a {v}.", "We want a {v}.", "Entertainment: {v}."), "genre"),
    _s("theme", "theme", _pick(("1920s", "tropical", "black and white", "garden party", "retro disco")),
       ("The theme is {v}.", "Let's go with a {v} theme.", "Theme: {v}."), "theme"),
)}
SLOTS["event_budget"] = Slot("event_budget", "budget", _money(1000, 20000, 500),
                             ("Budget is {v}.", "We can spend up to {v}.", "Keep it under {v}."), "budget")
SLOTS["event_cuisine"] = Slot("event_cuisine", "menu", SLOTS["cuisine"].make,
                              ("For the food, {v}.", "Menu: {v}.", "We'd like {v} catering."), "menu")
SLOTS["event_dietary"] = Slot("event_dietary", "dietary needs", SLOTS["dietary"].make,
                              ("Some guests need {v} options.", "Dietary: {v}."), "diet")
# facts produced by booking results (label = the result step)
FACTS = {"flight_number": "flight", "arrival_time": "arrival time", "hotel_name": "hotel", "car_booking": "car",
         "venue_name": "venue", "caterer": "caterer"}


def show(slot: str, value: Any) -> str:
    """A value as a person writes it: dates as 'May 3', money as '$2,400'."""
    if slot.endswith("_date"):
        d = dt.date.fromisoformat(value)
        return f"{d:%B} {d.day}"
    if "budget" in slot:
        return f"${value:,}"
    return str(value)


# --- phases: which calls a phase makes and which slots each call needs ----------------------------

@dataclass(frozen=True)
class Phase:
    name: str
    title: str  # "the hotel"
    search: str
    book: str
    search_needs: tuple[str, ...]
    book_needs: tuple[str, ...]
    prefs: tuple[str, ...]  # asked at the start of the phase when not given yet
    facts: tuple[str, ...]  # set by the booking result


TRIP = {p.name: p for p in (
    Phase("book_flight", "the flights", "SearchFlights", "BookFlight",
          ("origin", "destination", "depart_date", "return_date"), ("travellers", "seat_pref", "budget"),
          ("seat_pref",), ("flight_number", "arrival_time")),
    Phase("book_hotel", "the hotel", "SearchHotels", "BookHotel",
          ("destination", "depart_date", "return_date", "hotel_area"), ("travellers", "hotel_stars", "budget"),
          ("hotel_area", "hotel_stars"), ("hotel_name",)),
    Phase("rent_car", "the rental car", "SearchCars", "RentCar",
          ("destination", "depart_date", "arrival_time"), ("car_type", "return_date", "travellers"),
          ("car_type",), ("car_booking",)),
    Phase("restaurants", "restaurant bookings", "FindRestaurants", "ReserveTable",
          ("destination", "cuisine", "hotel_name"), ("travellers", "dietary", "depart_date"),
          ("cuisine", "dietary"), ()),
)}
EVENT = {p.name: p for p in (
    Phase("book_venue", "the venue", "SearchVenues", "BookVenue",
          ("event_city", "event_date", "guest_count", "venue_style"), ("event_budget", "event_type"),
          ("venue_style",), ("venue_name",)),
    Phase("catering", "the catering", "FindCaterers", "BookCaterer",
          ("event_city", "event_cuisine", "event_dietary"), ("guest_count", "event_date", "event_budget"),
          ("event_cuisine", "event_dietary"), ("caterer",)),
    Phase("entertainment", "the entertainment", "FindPerformers", "BookPerformer",
          ("music", "event_city", "event_date"), ("event_type", "event_budget", "venue_name"),
          ("music",), ()),
    Phase("invitations", "the invitations", "DraftInvitation", "SendInvitations",
          ("event_type", "event_date", "venue_name", "theme"), ("guest_count", "event_city"),
          ("theme",), ()),
)}
CORE = {"trip": ("origin", "destination", "depart_date", "return_date", "travellers", "budget"),
        "event": ("event_type", "event_city", "event_date", "guest_count", "event_budget")}
ROOT = {"trip": "plan_trip", "event": "plan_event"}


# --- one episode -----------------------------------------------------------------------------------

class _Episode:
    """Builds one episode event by event, tracking the state and where each slot was last set."""

    def __init__(self, episode_id: str, family: str, rng: random.Random):
        self.id, self.family, self.rng = episode_id, family, rng
        self.events: list[dict] = []
        self.constraints: dict[str, Any] = {}
        self.source: dict[str, int] = {}  # slot -> step that last set it
        self.corrected: set[str] = set()
        self.locked: set[str] = set()  # slots already used by a call: never corrected afterwards
        self.phase, self.stack, self.flags, self.last = "clarify", [ROOT[family]], [], "none"

    # state and events
    def add(self, kind: str, text: str, *, sets: dict[str, Any] | None = None, needs: list[str] | None = None,
            meta: dict | None = None) -> int:
        step = len(self.events)
        for k, v in (sets or {}).items():
            self.constraints[k] = v
            self.source[k] = step
        constraints = dict(sorted(self.constraints.items()))
        flags = list(self.flags)
        if needs:  # decision point: the state names the needed slots but hides their values
            constraints = {k: v for k, v in constraints.items() if k not in needs}
            flags = sorted(needs)
        event: dict[str, Any] = {
            "episode_id": self.id, "step": step, "kind": kind, "text": text,
            "state": {"phase": self.phase, "subgoal_stack": list(self.stack), "constraints": constraints,
                      "uncertainty_flags": flags, "last_action_result": self.last},
        }
        if needs:
            event["useful_memory_steps"] = sorted({self.source[s] for s in needs})
        if meta:
            event["meta"] = meta
        self.events.append(event)
        return step

    def say_values(self, values: dict[str, Any]) -> str:
        parts = ["Just me, travelling solo." if (k, v) == ("travellers", 1) else
                 self.rng.choice(SLOTS[k].say).format(v=show(k, v)) for k, v in values.items()]
        return " ".join(p[0].upper() + p[1:] for p in parts)

    def missing(self, slots) -> list[str]:
        return [s for s in slots if s not in self.constraints]

    # building blocks
    def chit_chat(self) -> None:
        r = self.rng
        city, name, other = r.choice(CITIES), r.choice(PEOPLE), r.choice(CITIES)
        date = show("x_date", _date(r, {}, None))
        line = r.choice((
            f"My friend {name} is going to {city} on {date}, funny coincidence.",
            f"Last time we went to {city} it rained every day.",
            f"{name} recommended {city} too, but maybe next year.",
            f"Remind me that {name}'s birthday is on {date}.",
            f"By the way, {name} flew to {city} via {other} and paid {show('budget', r.randrange(300, 3000, 50))}.",
            f"Is {city} nice in {date.split()[0]}? {name} keeps asking.",
            f"{name} and {r.choice(PEOPLE)} might join us in {other} some other time.",
        ))
        self.add("user", line)
        self.add("system", r.choice(("Noted!", "Sounds lovely.", "I'll keep that in mind.", "Good to know.",
                                     f"{city} is lovely; I'll stay focused on your plan though.")))

    def rejected_suggestion(self) -> None:
        r = self.rng
        date = show("x_date", _date(r, {}, None))
        line = r.choice((
            f"Prices drop by {show('budget', r.randrange(50, 400, 10))} if we move things to {date}. Want to switch?",
            f"{r.choice(CITIES)} has better availability that week. Should I look there instead?",
            f"There is a package deal for {r.randint(2, 8)} people on {date}. Interested?",
        ))
        self.add("system", line)
        self.add("user", r.choice(("No thanks, keep the plan.", "No, let's stick to what we said.",
                                   "Not interested, thanks.", "No, keep everything as is.")))

    def give(self, slots: list[str], opening: bool = False) -> None:
        values = {s: SLOTS[s].make(self.rng, self.constraints, None) for s in slots}
        for s, v in values.items():  # make later slots see earlier ones (return after depart)
            self.constraints[s] = v
            if s == "depart_date" and "return_date" in values:
                values["return_date"] = SLOTS["return_date"].make(self.rng, self.constraints, None)
        self.flags = [f for f in self.flags if f not in values]
        text = self.say_values(values)
        if opening:
            text = self.rng.choice(("Hi! ", "Hello, I need some help. ", "Hey there. ", "")) + text
        if self.rng.random() < 0.15:  # a passing mention of other places and people in the same message
            text += f" ({self.rng.choice(PEOPLE)} says {self.rng.choice(CITIES)} is overrated.)"
        self.add("user", text, sets=values)

    def correct(self, slot: str) -> None:
        r, old = self.rng, self.constraints[slot]
        new = SLOTS[slot].make(r, self.constraints, old)
        w, v, o = SLOTS[slot].words, show(slot, new), show(slot, old)
        text = r.choice((f"Actually, change the {w} to {v}.", f"Sorry, small change: the {w} should be {v}, not {o}.",
                         f"Wait, I made a mistake. Make the {w} {v}.", f"Update: {w} is now {v} instead of {o}.",
                         f"Can we switch the {w} to {v} instead?"))
        previous = self.source[slot]
        self.corrected.add(slot)
        self.add("user", text, sets={slot: new}, meta={"corrects": slot, "previous_step": previous})
        self.add("thought", f"The {w} changed; the earlier value is no longer valid.")
        if r.random() < 0.6:
            self.add("system", f"Noted, the {w} is now {v}.")

    def decision(self, call: str, needs_from: tuple[str, ...], follow_ups: tuple[str, ...]) -> list[str]:
        """A decision point before ``call``: pick 1-3 source steps worth of needed slots."""
        r = self.rng
        cands = [s for s in needs_from if s in self.constraints]
        r.shuffle(cands)
        cands.sort(key=lambda s: s not in self.corrected)  # corrected slots first: they are the point
        want = r.choices((1, 2, 3), weights=(0.25, 0.4, 0.35))[0]
        needs: list[str] = []
        for s in cands:
            steps = {self.source[x] for x in needs + [s]}
            if len(steps) <= want:
                needs.append(s)
        if r.random() < 0.2:
            self.add("thought", r.choice(AGENT_GO), needs=needs, meta={"decision": call})
        else:
            self.add("user", r.choice(follow_ups), needs=needs, meta={"decision": call})
        return needs

    def call(self, tool: str, slots: tuple[str, ...]) -> None:
        args = ", ".join(f"{SLOTS[s].param if s in SLOTS else s}={self.constraints[s]}"
                         for s in slots if s in self.constraints)
        self.locked.update(slots)
        self.add("action", f"CALL {tool}({args})")

    def run_phase(self, p: Phase) -> None:
        r = self.rng
        self.phase, self.stack, self.flags = p.name, [ROOT[self.family], p.name], []
        if r.random() < 0.5:
            self.add("system", f"Next up: {p.title}. Ready?")
            self.add("user", r.choice(("Yes.", "Sure, let's do it.", "Go on.")))
        else:
            self.add("user", r.choice((f"Now let's sort out {p.title}.", f"Can you handle {p.title} next?",
                                       f"Next, {p.title} please.")))
        self.add("thought", f"Working on {p.title}; checking what I know and what I still need.")
        needs = p.search_needs + p.book_needs
        fixable = [s for s in needs if s in self.constraints and s in SLOTS
                   and s not in self.locked and s not in self.corrected]
        if fixable and r.random() < 0.45:
            self.correct(r.choice(fixable))
        for s in self.missing(p.prefs):
            self.flags = [s]
            self.add("system", r.choice((f"What {SLOTS[s].words} would you like?",
                                         f"Any {SLOTS[s].words} in mind?", f"Could you tell me the {SLOTS[s].words}?")))
            self.give([s])
            self.flags = []
        if r.random() < 0.3:
            self.chit_chat()
        self.stack.append("search")
        if r.random() < 0.6:
            self.flags = ["awaiting_confirmation"]
            self.add("system", f"Shall I search for {p.title} now?")
        self.decision(p.search, p.search_needs, SEARCH_FOLLOW_UPS)
        self.flags = []
        self.call(p.search, p.search_needs)
        self.add("result", self.search_result(p))
        self.last = f"{p.search}: {self.n_results} results"
        self.events[-1]["state"]["last_action_result"] = self.last
        self.stack[-1] = "book"
        self.flags = ["awaiting_confirmation"]
        self.add("system", f"The best match is {self.best}. Shall I book it?")
        if r.random() < 0.35:
            self.rejected_suggestion()
        elif r.random() < 0.25:
            self.chit_chat()
        self.decision(p.book, p.book_needs, FOLLOW_UPS)
        self.flags = []
        self.call(p.book, p.book_needs)
        facts = self.facts(p)
        text = f"{p.book}: confirmed {self.best}." + "".join(f" {FACTS[k]}={v}." for k, v in facts.items())
        self.last = f"{p.book}: confirmed"
        self.add("result", text, sets=facts)
        self.stack = [ROOT[self.family]]
        self.add("system", r.choice((f"Done: {p.title} booked.", f"All set with {p.title}.",
                                     f"{p.title[0].upper()}{p.title[1:]}: booked.")))

    def search_result(self, p: Phase) -> str:
        r = self.rng
        self.n_results = r.randint(3, 6)
        city = self.constraints.get("destination") or self.constraints.get("event_city") or r.choice(CITIES)
        items, names = [], []
        for _ in range(min(self.n_results, 4)):
            brand = r.choice(BRANDS)
            if p.name == "book_flight":
                brand = f"{r.choice(('TP', 'IB', 'AF', 'LH', 'BA', 'KL'))}{r.randint(100, 999)}"
                arrival = f"{r.randint(7, 23):02d}:{r.choice(('10', '35', '55'))}"
                items.append(f"{brand} dep {r.randint(6, 21):02d}:{r.choice(('05', '20', '40'))} "
                             f"arr {arrival} ${r.randrange(150, 1500, 5)}")
                names.append((brand, arrival))
                continue
            if p.name == "restaurants":
                items.append(f"{brand} ({r.choice(CUISINES)}, {city}) {r.randint(3, 4)}.{r.randint(0, 9)} stars")
            else:
                items.append(f"{brand} {city} ${r.randrange(40, 4000, 10)} rating {r.randint(3, 5)}.{r.randint(0, 9)}")
            names.append((brand, ""))
        self.best, self.arrival = names[0]
        extra = f" Also available on {show('x_date', _date(r, {}, None))}." if r.random() < 0.4 else ""
        return f"{p.search}: {self.n_results} results. " + " | ".join(items) + extra

    def facts(self, p: Phase) -> dict[str, Any]:
        r, out = self.rng, {}
        for f in p.facts:
            if f == "flight_number":
                out[f] = self.best
            elif f == "arrival_time":
                out[f] = self.arrival
            elif f == "car_booking":
                out[f] = f"CR-{r.randint(10000, 99999)}"
            else:
                out[f] = self.best
        return out

    def clarify(self, phases: list[Phase]) -> None:
        r, core = self.rng, list(CORE[self.family])
        self.flags = list(core)
        opening = r.sample(core, r.randint(1, 3))
        self.give([s for s in core if s in opening], opening=True)
        while self.missing(core):
            self.flags = self.missing(core)
            words = ", ".join(SLOTS[s].words for s in self.flags)
            self.add("thought", r.choice((f"Still missing: {words}.", f"I need to ask about: {words}.")))
            ask = self.flags[: r.randint(1, 2)]
            self.add("system", "Could you tell me the " + " and the ".join(SLOTS[s].words for s in ask) + "?")
            self.give(ask)
            self.flags = self.missing(core)
            if r.random() < 0.3:
                self.chit_chat()
            if r.random() < 0.2:
                self.correct(r.choice([s for s in core if s in self.constraints and s not in self.corrected]
                                      or core[:1]))
        prefs = [s for p in phases for s in p.prefs if r.random() < 0.45]
        if prefs:
            self.give(list(dict.fromkeys(prefs))[:3])
        self.flags = []
        titles = ", ".join(p.title for p in phases)
        self.add("thought", f"Core details collected. Plan: {titles}.")
        self.add("system", f"Great. I'll take care of {titles}.")


def _episode(index: int, seed: int, families: tuple[str, ...] = FAMILIES) -> list[dict]:
    rng = random.Random(f"sam-synthetic:{seed}:{index}")
    family = rng.choice(families)
    while True:  # rejection sampling keeps every episode within [MIN_EVENTS, MAX_EVENTS]
        pool = list((TRIP if family == "trip" else EVENT).values())
        k = rng.choices((2, 3, 4), weights=(0.3, 0.45, 0.25))[0]
        phases = rng.sample(pool, k)
        ep = _Episode(f"syn{seed}-{family}-{index:05d}", family, rng)
        ep.clarify(phases)
        for p in phases:
            ep.run_phase(p)
        ep.phase, ep.stack = "wrap_up", [ROOT[family]]
        ep.add("user", rng.choice(("Thanks, that's everything.", "Perfect, thank you!", "Great, all done.")))
        ep.add("system", "You're welcome. Have a great time!")
        if MIN_EVENTS <= len(ep.events) <= MAX_EVENTS:
            ep.events[0]["meta"] = {**ep.events[0].get("meta", {}), "family": family,
                                    "phases": [p.name for p in phases]}
            return ep.events


def generate_episodes(n_episodes: int, seed: int = 0, families: tuple[str, ...] = FAMILIES) -> list[list[dict]]:
    """``n_episodes`` episodes, each a list of agent-log event dicts in step order."""
    _check_families(families)
    return [_episode(i, seed, families) for i in range(n_episodes)]


def iter_synthetic_events(n_episodes: int, seed: int = 0, families: tuple[str, ...] = FAMILIES) -> Iterator[dict]:
    """The events of :func:`generate_episodes`, streamed one episode at a time."""
    _check_families(families)
    for i in range(n_episodes):
        yield from _episode(i, seed, families)


def _check_families(families: tuple[str, ...]) -> None:
    bad = [f for f in families if f not in FAMILIES]
    if bad or not families:
        raise ValueError(f"unknown scenario families {bad}; choose from {', '.join(FAMILIES)}")


def write_synthetic(path: str | Path, n_episodes: int, seed: int = 0, families: tuple[str, ...] = FAMILIES,
                    progress: bool = False) -> dict[str, int]:
    """Write the log atomically (gzip when ``path`` ends in .gz, with a fixed header so bytes are
    reproducible) and return counts of episodes, events and decision points."""
    _check_families(families)
    counts = {"episodes": 0, "events": 0, "decision_points": 0, "labels": 0}
    episodes = range(n_episodes)
    if progress:
        from sam_model.progress import progress_bar

        episodes = progress_bar(episodes, unit=" episodes", desc="synthetic")
    with atomic_path(path) as tmp:
        raw = open(tmp, "wb")
        stream = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if str(path).endswith(".gz") else raw
        try:
            for i in episodes:
                events = _episode(i, seed, families)
                counts["episodes"] += 1
                counts["events"] += len(events)
                for e in events:
                    if e.get("useful_memory_steps"):
                        counts["decision_points"] += 1
                        counts["labels"] += len(e["useful_memory_steps"])
                    stream.write((json.dumps(e, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            if stream is not raw:
                stream.close()
            raw.close()
    return counts


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad input ends in one ``error: ...`` line (``--traceback`` for the full trace)."""
    return run_cli(_main, argv)


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog=cli_name("python -m sam_model.data.synthetic"),
        description="Write the built-in demo agent log: synthetic trip- and event-planning episodes "
                    f"({MIN_EVENTS}-{MAX_EVENTS} events each) with corrections, distractors and labelled "
                    "decision points. Same seed, same bytes.")
    parser.add_argument("out", help="output agent log (.jsonl, or .jsonl.gz to gzip it); written atomically")
    parser.add_argument("--episodes", type=int, default=300, metavar="N",
                        help="number of episodes to generate (default: 300)")
    parser.add_argument("--seed", type=int, default=0,
                        help="random seed; episode i of a run depends only on (seed, i) (default: 0)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated scenario families to draw from (default: {','.join(FAMILIES)})")
    parser.add_argument("--force", action="store_true",
                        help="replace OUT even when it exists and is not an agent log (default: refused)")
    args = parser.parse_args(argv)
    check_output(args.out, (), args.force, new_folder=True)  # a SAMFileError: one line (run_cli)
    if args.episodes < 0:
        parser.error("--episodes must be >= 0")
    families = tuple(f.strip() for f in args.families.split(",") if f.strip())
    try:
        _check_families(families)
    except ValueError as exc:
        parser.error(str(exc))
    start = time.perf_counter()
    counts = write_synthetic(args.out, args.episodes, args.seed, families, progress=True)
    print(f"wrote {args.out}: {counts['episodes']} episodes, {counts['events']} events, "
          f"{counts['decision_points']} decision points ({counts['labels']} labels) "
          f"in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
