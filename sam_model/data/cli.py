"""``sam-data``: the data tools behind one command.

    sam-data validate LOG.jsonl[.gz] ...                      check agent logs and describe them
    sam-data transcripts LOG.jsonl[.gz]|LOG.json[.gz]|RUN.traj|FOLDER OUT    an agent's tool-call logs -> agent log
    sam-data formats                                          the log formats `transcripts` reads
    sam-data sgd SPLIT_DIR OUT                                 SGD dialogues -> agent log
    sam-data synthetic OUT --episodes N --seed S               the demo data

Each subcommand is the module's own CLI (``python -m sam_model.data.<name>``), with its ``--help``.
"""

from __future__ import annotations

import difflib
import importlib
import sys

COMMANDS = {"validate": "check agent logs and print their statistics (FILE:LINE: reason on bad input)",
            "transcripts": "convert an agent's tool-call logs (OpenAI chat, tau-bench v1, tau2-bench, Anthropic, "
                           "OpenAI Responses, OpenTelemetry GenAI, LangChain, SWE-agent .traj files or their folder, "
                           "mini-swe-agent .traj.json files or their folder, "
                           "Amazon Bedrock Converse and Strands Agents session folders, Gemini contents, OpenHands "
                           "trajectories, their folder or session store, OpenHands V1 events or their conversation "
                           "folders, Codex CLI rollouts or ~/.codex/sessions, Claude Code session files or their "
                           "project folder, the headless stdout of claude -p --output-format stream-json or codex "
                           "exec --json, Gemini CLI session files or their chats folder, Pydantic AI message "
                           "histories, AutoGen saved states or run messages, Hugging Face smolagents memory steps or messages, LlamaIndex chat "
                           "histories, Google ADK sessions, Microsoft Agent Framework sessions, Langfuse traces) "
                           "into an agent log",
            "formats": "list the log formats `transcripts` reads, with what a file of each holds",
            "sgd": "convert an SGD split folder into an agent log",
            "synthetic": "write the synthetic demo episodes"}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        width = max(map(len, COMMANDS))
        print("usage: sam-data COMMAND [options]   (sam-data COMMAND --help for its options)\n\ncommands:\n" +
              "\n".join(f"  {name:<{width}}  {text}" for name, text in COMMANDS.items()))
        if argv and argv[0] not in ("-h", "--help"):  # say what was wrong, not only what is right
            close = difflib.get_close_matches(argv[0], COMMANDS, n=1)
            print(f"error: unknown command {argv[0]!r}" + (f"; did you mean {close[0]!r}?" if close else
                                                            "; give one of the commands above"), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(f"sam_model.data.{argv[0]}")
    sys.argv[0] = f"sam-data {argv[0]}"
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
