"""Agent logs: typed events, a streaming reader, retrieval examples and text views."""

from sam_model.data.examples import MemoryRecord, RetrievalExample, episode_memories, iter_examples
from sam_model.data.reader import Episode, ReadReport, iter_episodes, iter_events, read_episodes
from sam_model.data.schema import Event, LogFormatError, State, parse_event
from sam_model.data.text import memory_to_text, state_to_text

__all__ = [
    "Episode",
    "Event",
    "LogFormatError",
    "MemoryRecord",
    "ReadReport",
    "RetrievalExample",
    "State",
    "episode_memories",
    "iter_episodes",
    "iter_events",
    "iter_examples",
    "memory_to_text",
    "parse_event",
    "read_episodes",
    "state_to_text",
]
