"""Every input the trainer and ``evaluate.py`` accept, turned into an agent log.

Three kinds of source, told apart by looking at the path:

- an **agent log** (``.jsonl[.gz]`` of events, ``../shared/spec/agent-log.md``): used as it is;
- an **SGD split folder** (``dialogues_*.json[.gz]`` in it): converted by :mod:`sam_model.data.sgd`;
- a **tool-call transcript file** in any log format :mod:`sam_model.data.formats` reads (``.jsonl[.gz]`` of
  conversations or OTLP exports, or a ``.json[.gz]`` document: tau-bench, tau2, OTLP, a list of conversations;
  an agent's headless stdout, Claude Code's stream-json or ``codex exec --json``, also as Harbor's ``.txt``),
  or a **folder of SWE-agent, mini-swe-agent or OpenHands trajectories, of session stores or of OpenHands V1 conversations** (no
  SGD dialogues in it; ``.traj[.gz]`` files under it, mini-swe-agent's ``.traj.json[.gz]`` too, else Strands Agents' ``message_<N>.json`` or OpenHands 0.x's
  ``events/<N>.json`` session files under it, else OpenHands V1 conversations' ``events/event-NNNNN-ID.json``,
  else Codex CLI rollouts (``rollout-*.jsonl``) under it, else Claude Code session files (``.jsonl`` of its
  entries) or Gemini CLI session files (``chats/session-*.jsonl``, ``.json``) under it, else ``.json[.gz]`` files in it, read as
  ``sam-data transcripts`` reads it): converted by
  :mod:`sam_model.data.transcripts`.

Converted logs are written once into the user cache (``~/.cache/sam_model``, never the repository: the
sources' licences and the "no copies of the data" rule), keyed by the source's path, size, modification time
and the conversion options, so training and evaluation read exactly the same events. A trajectory folder is
keyed by every file it reads (path in it, size, modification time): a folder's own time does not change when
a file inside does, so its key went stale.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from sam_model.data.lives import make_lives
from sam_model.io import SAMFileError, atomic_path, not_found

SourceKind = Literal["agent-log", "sgd", "transcripts"]
# Bump when a converter's output changes, so old cached logs are not reused. 5: the OpenTelemetry join (finish_reason,
# compaction and windows, words said twice), a SWE-agent step without a command and a '#' inside a text command's
# word, all of 2026-12-05. 6: a SWE-agent run's split group is the instance its replay_config names (a .jsonl of
# runs grouped each line alone). 7: a tool result its format flags as failed (Anthropic is_error, Converse status,
# LangChain status, tau2 error, OpenHands error observations and failed commands, Gemini error responses, a Responses
# mcp_call error, OTel tool spans) reads as an error in last_action_result. 8: an older OpenHands evaluation's
# [action, observation] pairs whose observation names no cause read as the action's result, not the user's words
# (logs converted under 7 by the reader before it are stale: the cache is per machine, not per release). 9: an
# OpenHands V1 command that exited other than 0 reads as a failed call, as the same command in 0.x. 10: a shell
# tool's command line (Bash, execute_bash, run_shell_command, Codex's argv, ...) is labelled by its words, not whole.
# 11: a Codex exec_command result 'Process exited with code N' (N not 0) reads as a failed call; a Codex subagent's
# rollout, a fork of a fork, and a resumed or forked Claude Code session, are grouped with the first session of their
# line; what a Claude Code user typed mid-turn (a queued_command attachment) is a user turn, and its compaction summary
# restating turns read before it is counted, not read.
# 12: the review of 10's shell rule: a command line over 10,000 characters is read whole, 2>/dev/null and 2>&1
# are no words, the program a wrapper runs (sudo, xargs, timeout 60) is none, git -C /repo's /repo is one,
# a PowerShell line keeps its backslashes, sql_exec's or a run tool's script is read whole, ssh's split.
# 13: a shell tool's settings (Codex's timeout_ms, Claude Code's timeout and description, ...) label nothing.
# 14: a count after a grep, head or tail flag (grep -A 100) is no traced word.
# 15: a codex exec file change whose patch streamed (item.updated events, no item.started) is the call its
# completed item made, not its first partial change set.
# 16: a line of a headless run's stdout (claude -p stream-json, codex exec --json) that is no JSON and opens no
# object is its stderr mixed in, left out: it no longer refuses its session or thread (a conversion with skip_bad of
# a file of several runs kept the others alone).
# 17: a Claude Code session that branched (a rewind, an edited prompt, a retried response) is read along the chain
# ending at its last turn, the branches it left out (they were read in file order, their calls and results spliced
# into the conversation and later values traced to them).
# 18: the descriptor number opening a shell redirection (the 2 of 2>&1, 2>/dev/null) is no word of the command line
# (a line near the 64-word limit is now read by its words).
# 19: a shell command substitution ($(cmd), `cmd`) is a command of its own, the word holding it no word.
# 20: docker/podman/compose/kubectl exec's command is a command (the container a value, its program syntax).
# 21: a grep/rg/ag/ack/git grep pattern that is code or a regex ('def foo', '\bfoo\b') is traced by its names; git
# grep's -n is no count.
# 22: a line range (sed -n '120,160p', awk 'NR>=120 && NR<=160', tail -n +120) is traced by its line numbers.
# 23: a Codex patch (apply_patch's argv, heredoc, JSON input or freeform call) is traced by the paths it names.
# 24: a file tool's output settings (Claude Code's Grep output_mode, head_limit, -A/-B/-C; its Read's limit) label
# nothing, as a shell's timeout does.
# 25: a Codex rollout of 0.3x to 0.77 (a turn_context line before each model request) reads the calls of one response
# as one turn when Codex recorded each with its output (before openai/codex#6691: a later call read as made after an earlier one's
# output, its values traced to it).
# 26: a Gemini CLI session's $rewindTo records are applied as the CLI loads a session: the messages a rewind removed
# are left out (they were read where they were written, spliced into the conversation as Claude Code's were).
# 27: an absolute path under the working directory Claude Code and Codex record (cwd) that no earlier event says
# whole is traced by its part relative to it; a Grep/search tool's pattern that is code or a regex by its names.
# 28: the end of a line range from the first line (sed -n '1,200p', awk 'NR<=200': head -n 200's count) is no traced
# word.
# 29: a search pattern opening with a declaration word is code only in lower case and before a name ('Module not
# found', 'class not found' are phrases, traced whole).
# 30: a phrase between a regex pattern's operators ('Connection refused\|timed out') is traced whole, not
# by its words.
# 31: a tool's output settings are a file tool's only (Read, read_file, Grep), not those of a business tool whose
# name says read (read_customer's context, mark_as_read's n are values again).
# 32: docker/compose exec's -e KEY=value gives its value, as KEY=value before a command does (it was traced whole).
# 33: a search tool's name is read without its MCP server's prefix (mcp__search__fetch's pattern is whole again).
# 34: a Gemini CLI session's project root, recovered from its projectHash (the ancestor of the first absolute path a
# call names whose SHA-256 it is), is its working directory: an absolute path under it is traced by its relative part.
# 35: an OpenHands run's working directory, each command observation's metadata.working_dir (0.x and V1), is told:
# an absolute path under it (str_replace_editor's /workspace/<repo>/...) is traced by its relative part.
# 36: shell rules of review 54: timeout/nice/watch's own arguments (timeout 300, -k 5) are settings, not traced;
#     a count after journalctl -n, gh --limit, docker/podman/compose logs -n/--tail, kubectl logs --tail, and any
#     count flag's --flag=N (grep --max-count=500), is none; gh's and kubectl rollout's sub-command groups (gh pr
#     view) and kubectl's resource types (get pods) are syntax; git blame/log -L 120,160 traces 120 and 160.
# 37: a Gemini CLI call whose own arguments reveal the project root (the session's first absolute path under it) is
# judged in it too: its path under the root is traced by its relative part (it was traced whole).
# 38: a mini-swe-agent run's working directory, its info.config.environment.cwd (/testbed), is told: an absolute path
# under it (cat /testbed/src/x.py) is traced by its relative part.
# 39: a sed script that edits (sed -i 's/old/new/g' FILE, /regex/d) is traced by its old and new parts and regex
# addresses (read as a grep's pattern), not whole.
# 40: docker/podman run [options] IMAGE cmd is a wrapper as docker exec is: options' values and the image are values,
# the command a command (its program syntax, bash -c's script its words).
# 41: ssh [options] HOST COMMAND's command is read as a command line (its program syntax, its words traced), not
# traced whole or by its program word.
# 42: a page's bounds in a line range (sed -n '200,400p', awk 'NR>=200 && NR<=400', git blame -L 200,400: the k-th
# window of n >= 50 lines) are no traced words.
# 43: a Python script in a shell command (python -c SCRIPT, python - <<'EOF') is traced by its string literals and its
# non-standard imports, and a heredoc fed to a shell (bash <<EOF, ssh HOST <<EOF) by its command lines' words.
# 44: a Python script holding a statement of more than 500 operators (pywords.MAX_NESTING), a command line of more than
# 64 heredocs and a line range of a number of more than 12 digits are read whole (they stopped or stalled conversion).
# 45: a Python script's codec or time format a call takes (s.encode('utf-8'), strftime('%Y-%m-%d')), its .format and
# % templates and its literals of no letter or digit ('---', ' | ') are no traced words.
# 46: a file editor's one-word command (str_replace_editor's view, str_replace, insert) is no value, and its
# view_range is read as sed -n's line range (a page's bounds, [201, 400] after [1, 200], are no traced words).
# 47: a SWE-agent text command that is not its own (ls -F, python -m pytest ...) is a bash call of the whole line, its
# own take --NAME values as named arguments (str_replace_editor's view_range), and its working directory is told.
# 48: a SWE-agent own command's words are named by its signature, the run's system prompt's or SWE-agent's (open's
# path and line_number, edit's start_line, end_line and replacement_text), no longer arg1, arg2, ...
# 49: a search tool's search_term (SWE-agent's search_dir/search_file) is read as a grep's pattern, as pattern is.
# 50: a file read's offset that starts a page with its limit (Read(offset=201, limit=200), read_file(offset=200,
# limit=200)) is no traced value; a LangChain (and, since 49's ca302ea, OpenAI) tool message's list of records is its
# JSON text, no blocks of no type.
# 51: a SWE-agent signature naming an argument twice no longer drops a word (the later one is named by position).
# 52: a SWE-agent --NAME option whose NAME a word took (or given again before its last) is named by its position,
# no longer overwriting the word's value.
# 53: the commands a SWE-agent run's instance template (a user item that is no command's output) documents are its own
# and named by their signatures, as the system prompt's are (no longer bash calls of the whole line).
# 54: a line number a reader marks (SWE-agent's goto, edit, open, view_range) is labelled by the latest result that
# showed that line of its file (shown_lines), no longer by the first event that says the number anywhere.
# 55: a node, Ruby or Perl one-line script (node -e SCRIPT, ruby -e, perl -ne) is traced by its plain string literals
# (a Perl sed edit, perl -pi -e 's/old/new/', by its parts as sed's), not whole.
# 56: a sed script's a/i/c text (sed -i '/^import os$/a import sys') is traced as a substitution's new part, and its
# w FILE, r FILE and s///w FILE by the file (they were one word with the script).
# 57: a heredoc cat pipes into an interpreter (cat <<'EOF' | python3, | bash) is read as its script, as python3 <<EOF's
# is (it was one text).
# 58: a search's offset that pages through its results with its head_limit (Grep(offset=100, head_limit=100)) is no
# traced value, as a file read's page offset is (50).
# 59: a line range that is a page by its numbers (sed -n '200,250p', view_range [200, 250], Read's offset 200) but
# opens or closes at a line an earlier result printed as a search hit (FILE:200:) is no page: the hit's number is
# traced to the results that printed it as a hit, the other bound as a window's.
# 60: a Perl or Ruby script after a cluster of switches of no value (perl -wle, -lane; ruby -wne) is read by its
# literals too (55 read -e after -n, -l, -p, -a, -s only).
# 61: a search hit on a Windows path (C:\repo\src\a.py:200:) opens a window as FILE:200: does (59).
# 62: Claude Code, OpenHands, Codex, codex exec, Gemini CLI and mini-swe-agent mark their line numbers too (Read's offset,
# view_range, insert_line, sed -n ranges; Read's and the editors' listings, grep -n, cat -n, nl -ba).
# 63: Claude Code's Grep in content mode shows the lines it prints (PATH:212:code, 212:code for one file), as grep -n
# does (62): a Read offset, view range or sed range it showed is labelled by it.
# 64: a page of a file is a window around a search hit (59) only where the hit is of that file, where the reader
# marked both (62): Read(a.py, offset=200, limit=50) after a Grep that printed b.py:200: is a page again.
# 65: a search hit's FILE is one pattern for the page-bound rule (59) and the readers of shown lines (62, 63)
# (searchhits.HIT_FILE): a path with a space in a folder (C:\Users\Ann Lee\..., /Users/ann/My Project/a.py:200:)
# is a hit, as grep and rg print it (59 stopped at the space), and a line whose FILE holds a colon but a drive's, a
# space in its own name or opens with a number before a dash or colon (12:30:45) shows no lines of a file.
# 66: a line number of a leading zero or of more than 12 digits (a.py:0200:, 0200:, a 13-digit line) shows no line
# and is no search hit, for every reader of lines alike (searchhits.LINE_NUMBER; numbered.py had read 0200: as 200).
# 67: a search pattern's escaped bracket is a literal's (grep '\[database\]' traces database), no class of
# characters (the pattern traced nothing).
# 68: a backslash-newline inside single quotes is the word's own text (sed -i '3a\<newline>one\<newline>two' appends
# two lines, read as one), and a comment ends at its line break though a backslash ends it (the next command was the
# comment's).
# 69: a location a shell command's output names (pytest's tests/test_a.py:212: AssertionError, gcc's src/a.c:212:5:,
# mypy's a.py:212:, a traceback's File "a.py", line 212) shows that line of that file (62): a line number of it is
# labelled by that output, and a page opens a window there only in that file; a traceback's is a hit (59) too.
# 70: OpenHands 0.x's read and edit actions without function calling mark their lines as str_replace_editor's do
# (62), and a shell command of several pipelines (&&, ||, ;) shows the lines whose file is certain and marks its
# ranges (62 read one pipeline only).
# 71: Gemini CLI's read_file shows the lines its header names where it shows part of a file (Showing lines 212-230,
# use start_line: 231), and its start_line and end_line are line numbers of its file_path (62).
# 72: nl -ba -n rz (000212<tab>) and -n ln (212   <tab>) show their lines, as nl -ba does (62): 66 read rz's zeros
# as no line number, and ln's padding before the tab was never read.
# 73: a location after words of prose (Rust's thread 'main' panicked at src/main.rs:212:5:) shows that line of its
# last word's file too, and one make printed after entering DIR is under DIR (make -C build's ../src/a.c;
# several entered: none): 69 read them as other files, and a page there opened no window.
# 74: a quoted heredoc's body (<<'EOF', <<"EOF", <<\EOF) is read as written, no backslash-newline of it joined
# (a comment ending in a backslash took the next command, a last line ending so the delimiter), and <<\EOF's
# delimiter is EOF (the body ran to the end of the command).
# 75: the output of a command run in a container or on another host (docker, podman, kubectl, ssh, vagrant) names
# no file here for certain (/app/src/a.c): read as before 69 (a hit of any file's page), not as /app's lines.
# 76: a location ninja printed after 'Entering directory DIR' (ninja -C build, as meson runs it) is under DIR, as
# make's is (73).
# 77: a JSON number is also said as people write amounts (sayings.number_forms): one of one decimal digit (45.6)
# by its two-digit form (45.60), one from 1,000 on with thousands separators (3,500; 1,234.50): such amounts had
# been untraceable.
# 78: a cd next to || or & (cd sub || cat -n a.py: the cat runs where cd failed; cd /x || cd /y && ...: in /x),
# or of a directory the shell works out (cd -, cd $DIR), puts no pipeline under it: none shows a line (70 read them
# under the cd's directory).
# 79: Gemini CLI's read_file header shows its lines only where its first is the line the read starts at
# (start_line, offset + 1, else 1): a file whose own text opens with one, read whole, showed the lines it named (71).
# 80: OpenHands 0.x's own read and edit (impl_source default) print the file's text: one opening with the
# editor's header (a saved session) shows no line (70 read it as the editor's, of the file the header named).
# 81: an amount's forms with thousands separators (77) are said only as whole numbers (3,500 is not said by
# 3,500,000 or 1,500,3,500: sayings.whole_amount), and its two-decimal form only where it is the value (1234.5678 had
# been said as 1,234.57).
# 82: a quoted or escaped shell token is a word whatever its text (shelltokens.Quoted): grep -n '|' src/a.py is one
# command (its file had been read as a second command's program word, traced by nothing), a quoted 'done' a pattern,
# no reserved word, and numbered.py reads such a grep's hits.
# 83: a backslash-newline is removed, both characters, as bash removes it, inside double quotes too ("a/\<newline>b.py"
# is a/b.py, which had been 'a/ b.py') and in an unquoted heredoc's body (it had been a space); a sed a/i/c after an
# address takes the text right after its letter, as GNU sed does (3aimport sys appends import sys).
# 84: a search's -e or -f with its value in the same word (grep -e'[database]' -F, -rneparse_rows, -fpatterns.txt)
# is read as -e PATTERN is: the word had been taken for flags alone (the pattern traced by nothing, the file read as it).
# 85: Rust's --> FILE:LINE:COL, a Node stack frame's (FILE:LINE:COL) and tsc's FILE(LINE,COL): error are
# locations (69): they show that line of that file and are hits (59), as gcc's FILE:LINE: is (they were none).
# 86: Gemini CLI's search_file_content shows its hits' lines (L212: under File: PATH), and an event that showed a
# line of the file a line argument names says that line though its text says no whole 212 (L212:, nl -n rz's
# 000212): needed where only it showed it (untraceable or another event's before), observation at the decision point.
# 87: a number is not said inside one written with thousands separators (500 by $3,500, 500.00 by 3,500.00):
# the whole-token rule read it there, a comma being no word character, so an invented 500 was traced to a budget.
# 88: an OpenHands IPython cell of agent skills (open_file('/workspace/a.py', 212), search_file, goto_line) is
# traced by its arguments, not whole; its windows (212|code) and search_file's hits show their lines, and
# open_file(PATH, 212)'s 212 is a line of PATH (62).
# 89: a SQL tool's query (run_sql(query=...), an argument named sql) is traced by its string and number literals
# (sqlwords.sql_literals): a query of more than 8 words was free text and traced nothing, a shorter one was traced
# whole, said by no event.
# 90: a SQL tool's command (sql_exec(command=...)) is read by its literals too, as its query is (89).
# 91: a needed value is labelled by the events that say it alone where there are any (sayings.says_alone), not by
# those that say it only inside a longer hyphenated name (ledger in ledger-api); tau-bench airline and the coding-agents
# file convert byte for byte as before, the generated worlds (600 free, seed 0) move one label.
# 92: a word a SQL query compares a status-like column to (state = 'ready', order_status IN ('failed')) is the
# schema's, no traced literal (89 traced ready to a kubectl listing's READY header).
# 93: an agent-skill cell's other line numbers are lines of their file too: goto_line(212)'s of the file the last
# window showed, insert_content_at_line(PATH, 212, ...)'s and those of open_file(PATH, 212) with more skills after it
# of PATH (read by its arguments since 88, their 212 had been labelled by the first event saying 212, the issue's #212).
# 94: a compact JSON list ([204,305,412], JSON.stringify's, jq -c's) says its items: since 87 it read as one number
# with thousands separators, so a room 305 a tool listed was said by no event (JSON writes no number with separators).
# 95: Gemini CLI's grep_search (its search tool's name since the rename; 86 read only search_file_content) shows its
# L212: hits' lines too, and both show their context lines (L211-), as grep -C's are read.
# 96: an agent-skill cell's output is read with Jupyter's CRLF line ends as newlines (a header ending in \r was
# read as none, so a real CodeAct run's windows and search hits showed no line), and an edit's window, "[File: PATH
# (N lines total after edit)]", shows its lines and leaves its file open, as a view does (SWE-agent's output alike).
# 97: an agent-skill cell's search term is read as grep -F's pattern (search_file('def parse_header', ...) traces
# parse_header, as SWE-agent's search_file term does; whole, it was said by no event).
# 98: a Node stack frame whose line ends in CRLF (a terminal's output) is a location too (85 read it only before a
# newline).
# 99: a SQL tool's query is read by its literals (89) only where it opens as a statement with its clause (SELECT
# ... FROM with an operator, list or clause keyword, WITH name AS (, UPDATE t SET, ...): a search tool named query read
# "select the best laptop under 1000" as SQL; a capitalised word or two-letter code a state column is compared to
# (state = 'Texas', state IN ('NY')) is a value, no schema word (92 dropped it); .125 is 0.125, not 125.
# 100: the preference of 91 for the events that say a value alone is a name's (sayings.is_name_part: a string with a
# letter and no capital): a number inside a range (a budget of 800-1200) or a code inside a route (JFK-LAX) keeps
# the spec's first event as its label, not a later event that says it alone by chance (a loyalty balance of 1200);
# the 600 generated worlds (free, seed 0) convert byte for byte as before 91 again.
# 101: a SQL query that does not scan for a backslash-escaped quote (MySQL's 'O\'Brien', PostgreSQL's E'O\'Brien')
# is read with the backslash escaping the next character, by its literals (89), not whole as free text.
# 102: a location a Windows tool's output names (C:\repo\src\app.py:12:, \\server\share\..., MSBuild's or tsc's
# src\app.cs(12,5): error) is the file Windows reads (shellpaths.file_under): absolute as printed, relative under the
# working directory by Windows' rules; it had been glued onto the directory as a relative POSIX path, a line of no
# file the agent read. tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 103: a list of numbers with no space after its commas that a plural noun comes right before (ids 123,456; orders
# 123,456 and 789) says its items, not the thousands number its shape reads as (sayings.listed_numbers): an order 456
# a user listed had been said by no event. An amount (costs 3,500, $3,500, 1,234.50) is one number as before.
# tau-bench airline, the AutoCodeRover file, examples/logs and 600 generated worlds (free, seed 0) convert byte for
# byte.
# 104: a state a SQL query compares a status-like column to (92) is the schema's word also where it is of a few
# lower-case words ('on hold', 'in-progress') and where its column is quoted ("status", `status`), cast (status::text,
# CAST(status AS text)), written after it ('open' = status) or an INSERT's column its VALUES row fills by position:
# each had been traced to the first event saying it. No trained domain has a SQL tool: tau-bench airline, the
# AutoCodeRover file, examples/logs and 600 generated worlds (free, seed 0) convert byte for byte.
# 105: a SQL query's double-quoted token where only a value may stand (after =, <>, LIKE, BETWEEN and its AND, in an
# IN list or a VALUES row; no part of a qualified name) is a string, as MySQL reads WHERE name = "Alice" (it was read
# as a quoted identifier, so the value was no literal); after FROM/JOIN, before an operator or in t."col" it is a name
# as before. No trained domain has a SQL tool: tau-bench airline, the AutoCodeRover file, examples/logs and 600
# generated worlds (free, seed 0) convert byte for byte.
# 106: the list of 103 follows its plural noun after a colon only where the noun is ids, numbers or nos (room ids:
# 204,305): a count follows other nouns so (results: 1,234), which 103 read as a list. The data convert byte for byte.
# 107: the list of 103 is read only where its items look like a list's, each of three digits and none 000
# (sayings._list_shaped): a count after its noun (active users 12,345; steps 10,000; items 1,000,000) had been read as
# a list, its number said by no event. tau-bench airline, the AutoCodeRover file, examples/logs and 600 generated
# worlds (free, seed 0) convert byte for byte.
# 108: every double-quoted token of a SQL query that double-quotes a name where no string may stand (FROM "User",
# "createdAt" >, t."id", "status"::text) is a name, as PostgreSQL reads it (sqlwords._quotes_names): 105 read the
# second of two names compared (WHERE "createdAt" > "updatedAt", ON "authorId" = "id") as a MySQL string, a literal
# traced to a listing of the columns. No trained domain has a SQL tool: tau-bench airline, the AutoCodeRover file,
# examples/logs and 600 generated worlds (free, seed 0) convert byte for byte.
# 109: a POSIX absolute path (/tmp/x.py:212:) a Windows session's POSIX shell prints is itself, as a call naming the
# file writes it (shellpaths.file_under): 102 joined it onto the working directory's drive (C:\tmp\x.py), no line of
# the file a Read of /tmp/x.py read. tau-bench airline, the AutoCodeRover file, examples/logs and 600 generated
# worlds (free, seed 0) convert byte for byte.
# 110: a few lower-case words (104) are the schema's state only where the column says status, phase or stage
# (sqlwords.PROGRESS_COLUMN_WORDS: status = 'on hold'); compared to a state, type, kind, level or mode column they are
# a place or thing the user gave, traced as before 104 (LOWER(state) = 'new york', state ILIKE '%new mexico%', type =
# 'red wine', room_type = 'double room'). No trained domain has a SQL tool: tau-bench airline, the AutoCodeRover
# file, examples/logs and 600 generated worlds (free, seed 0) convert byte for byte.
# 111: Responses API lines chained by previous_response_id (a request a line) are one conversation, not one each
# (formats.response_chains); files without such a chain convert byte for byte as before.
# 112: a Gemini/Vertex AI call whose arguments were streamed (functionCall pieces with partialArgs and willContinue,
# a content a chunk) is assembled into its args by their JSON paths (gemini_stream): its first piece had read as a
# call of no arguments, the next as calls of no name (refused), a call of one piece with partialArgs as one of no
# arguments; a stream the log cuts is refused. Only logs holding partialArgs or willContinue read otherwise:
# tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 113: a Responses chain that forks follows the branch whose last request was written last, not the try written last
# at each fork: a line logged twice or a best-of-n try the app did not go on from cut the conversation there, the
# rest reported as branches left. Files without a fork convert byte for byte as in 111.
# 114: no Responses request is continued through an id two lines of different content hold (an app's own counter
# logged for response.id): those lines are read alone, the repeats refused as duplicate ids, as before 111, where
# the first line of the id was followed and two conversations mixed (read with --skip-bad). Files whose ids are
# unique convert byte for byte as in 112.
# 115: a streamed string argument's pieces are joined by the path's keys ($.a and $['a'] are one) and whatever
# willContinue said before (as google-adk and the Vercel AI SDK join them): a piece after one without willContinue,
# or spelling the path otherwise, replaced the text before it. Only logs of such streams read otherwise.
# 116: a LangChain ai message with a call that parsed (tool_calls) beside one cut short (invalid_tool_calls) reads the
# raw calls the integration kept (additional_kwargs.tool_calls), all of them in the model's order, as a message whose
# only call was cut reads them: the cut call had been dropped, counted. Only logs of such messages read otherwise.
# (Kept calls of no OpenAI shape, {"function": ...}, leave the message read from its tool_calls, as before 116.)
# 117: a Gemini/Vertex streamed call's jsonPath may name a key with a hyphen in shorthand ($.check-in, as google-adk
# reads it; RFC 9535's $['check-in']): such a conversation was refused. Only logs of such streams read otherwise.
# 118: the list of 103 is not read after a noun of counted things (sayings._COUNTED: users, visitors, sessions,
# requests, rows, ...; not lines, whose numbers are listed): active users 123,456 is a count, whose groups look like
# a list's (107 kept only counts of other groups). tau-bench airline, the AutoCodeRover file, examples/logs and 600
# generated worlds (free, seed 0) convert byte for byte.
# 119: a SQL query's double-quoted token compared to a bare column after it ("Alice" = name, "acme" <> c.tenant) is a
# MySQL string (sqlwords._compared_to_column), not a PostgreSQL name whose evidence made every double-quoted token of
# the query a name (105/108): the value was no literal. No trained domain has a SQL tool: tau-bench airline, the
# AutoCodeRover file, examples/logs and 600 generated worlds (free, seed 0) convert byte for byte.
# 120: OpenTelemetry spans: a span without gen_ai.conversation.id takes its ancestor's (the invoke_agent span's),
# else its trace's one id, not its trace as a conversation of its own; an invoke_agent span's messages are read only
# where no model call of the conversation is recorded (they put a turn's answer before its calls); a folder of OTLP
# files is read as one export. OTLP files whose chat spans carry the id and no agent span carries messages (the
# examples/logs file among them) convert byte for byte.
# 121: 119's rule holds only for a double-quoted token no name is shaped as ("alice@example.com" = email, "2024-01-15"
# <= created_at): one shaped as a name before a bare column is a PostgreSQL name again (ON "userId" = u.id, PL/pgSQL's
# WHERE "Email" = email, as public repositories write them; 119 read them as literals, and no MySQL value written
# first was found), so MySQL's "Alice" = name reads as before 119. No trained domain has a SQL tool.
# 122: 118's counted nouns keep only traffic and sizes (visitors, requests, sessions, ...): people count only after a
# word that says a count (active users 123,456; total customers), rows and records are listed as lines are. Every
# 'users 123,456' public repositories hold lists user ids, which a later call takes (ban_user(456)): 118 read them as
# one number, the id said by no event. No trained domain says such a number (byte for byte, as 118).
# 123: OpenTelemetry spans: an invoke_workflow span's messages are read only where no model call of the conversation
# is recorded, as an agent's are (they put the turn's answer before its calls); a span whose ancestry is read whole
# and names no id (a guardrail's chat call beside the agent's span) is its trace's, not given the trace's one id; an
# invoke_agent span without the id inside another agent's starts a conversation of its own (TRACE/SPAN), not a
# segment of the outer one; a malformed span's conversation is told as a good span's (its ancestors' id), so the
# chat spans of a malformed invoke_agent span carrying the id are refused with it, not written as their trace's
# (no release between: one number). OTLP files whose spans' ancestries name their ids (the examples/logs file and
# tests/test_walkthrough_otel.py's among them) convert as under 120.
# 124: people counted after a count's noun and "of" (total number of users 123,456; count of customers 204,305) are
# a count, as after a tally word (122): the number had read as a list of two ids, the count a later call passed said
# by no event. tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 125: a SWE-agent text command's Windows path written bare keeps its backslashes (open C:\repo\src\x.py 212): read as
# bash reads it, it was C:reposrcx.py, a file no output printed, the path and its line numbers traced to nothing.
# tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 126: an OpenHands V1 conversation whose events form a tree (the SDK's parent_id: a head moved back, a fork from an
# earlier event) is read on the branch of its last event; its log order read the branches it left as seen, their
# results labelling the new branch's calls. Logs without parent_id (every release before the tree) convert byte for
# byte: tau-bench airline, the AutoCodeRover file and examples/logs among them.
# 127: OpenTelemetry spans: an invoke_agent (or workflow) span's messages are not read only where a model call of
# the conversation is below it (120, 123 dropped them wherever the conversation recorded a model call): a sibling
# agent's span, its own calls not recorded, beside calls that each sit below an agent, is read, its turn having been
# dropped without a word. Where a call's ancestry names no agent the 120 rule holds. tau-bench airline, the
# AutoCodeRover file and examples/logs (its OTLP file among them) convert byte for byte.
# 128: Pydantic AI message histories (all_messages_json(): a .jsonl of {"id", "messages"}, a .json a conversation,
# a folder of them) are read by their own reader (formats.pydantic_ai); before, they were refused as OpenAI chat (a
# run skipping bad conversations kept none) and a folder's .json histories were read as OpenHands trajectories.
# Every other format converts byte for byte as under 123.
# 129: a SWE-agent text command's Windows path on a share written bare (open \\server\share\x.py 3) keeps its
# backslashes as a drive's does (125 read it as bash does, path \serversharex.py, traced to nothing). tau-bench
# airline, the AutoCodeRover file and examples/logs convert byte for byte.
# Also 129 (no release between): a count's noun and "of" say a count of any noun after them (total number of orders
# 123,456 had read as two order ids: 124 took them before people only), but "a number of" (some of them: a list);
# a Windows path whose separators mix slashes in (C:/repo/src\x.py, ./src\x.py) keeps its backslashes (read as bash
# does: C:/repo/srcx.py); an OpenHands V1 log whose chain holds a parent_id naming the event itself or a later one (a
# cycle, events out of order) is refused, naming the event (126 ended a cycle's chain there, the events before it left
# out as a branch the conversation had left).
# 130: a Pydantic AI tool-return's files (a screenshot's BinaryContent, a URL its content_file_digests records) are
# counted, not read: a file returned alone was its JSON (the base64 its text), files alone '[]'; a file alone is now
# no text, a list left one item by its files that item (model_response_str), and data only shaped like a file is
# data. tau-bench airline, the AutoCodeRover file and examples/logs (pydantic-ai.jsonl among them) convert byte for
# byte.
# 131: a Pydantic AI user prompt's structured-content items (StructuredContent: a TextContent whose content is the
# text models are sent) are read as the user's words, as its text-content items are; they were counted as media, so
# an argument taken from them was untraceable. An item without a kind is refused (it was counted as 'None'). tau-bench
# airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 132: a Pydantic AI realtime session's speech parts are read as the words said (their transcript: the user's in a
# request, the model's in a response), as Pydantic AI sends them to other models; they were counted, not read, so a
# voice session had no user words. tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 133: a Pydantic AI compaction part's summary (a provider's in a response, the application's in a request) and an
# instruction-delta's replacement block (operator authority) are read as the policy, system messages, as the
# OpenTelemetry reader reads a summary given as a system message; they were counted, not read. tau-bench airline,
# the AutoCodeRover file and examples/logs convert byte for byte.
# 134: a Pydantic AI compaction part's summary is read in the voice Pydantic AI sends it in, the application's (in a
# request) as the user's words, a provider's (in a response) as the model's, where 133 read both as the policy: the
# values a summary restates (an employee id, a card the user named) were labelled policy, common knowledge, though the
# turns before it say them. An instruction-delta stays the policy. tau-bench airline, the AutoCodeRover file and
# examples/logs convert byte for byte.
# 135: "a number of" sized by up to two words between (a small number of users 123,456 were banned; an unusually
# large number of orders) lists, as "a number of" does (129): it was read as one count, the ids a later call took
# said by no event; a tally word or a determiner before "number" (a total number of, the large number of) still says
# a count. tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 136: an OpenHands V1 conversation folder is read on the branch ending at its base_state.json's leaf_event_id (the
# SDK's head) where it names an event of the log: a head moved back with no event after it had the branch it left
# read as the model's last turns (126 took the last event written for the head). A folder's base_state.json files
# are keyed with its events. Logs without a state, or whose state names their last event, convert byte for byte:
# tau-bench airline, the AutoCodeRover file and examples/logs among them.
# 137: a Pydantic AI response's compaction part (a provider's summary of the turns before it, which the history
# keeps) is counted, not read, as Pydantic AI's traces leave it out of a response's output messages and as Claude
# Code's compaction summary is counted: 134 read it as the model's words, a second memory of the values it restates
# that the OpenTelemetry reader of the same run did not have. A request's (the application's) stays the user's
# words. tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 138: OpenTelemetry spans: a span naming an agent (gen_ai.agent.id, else gen_ai.agent.name) without
# gen_ai.operation.name or messages is an agent's run, as Pydantic AI wrote one before it set invoke_agent, unless its
# parent names the same agent (baggage): a nested agent's calls below such a span without an id are a conversation of
# their own (TRACE/SPAN), not a segment of the outer agent's (123 knew agents by invoke_agent only). The
# examples/logs OTLP file and spans without such agent runs convert byte for byte.
# 139: Microsoft AutoGen model contexts (an AssistantAgent's save_state() in a .json a conversation, a team's
# TeamState, a folder of them, or {"id", "messages"} lines of LLMMessages) are read by their own reader
# (formats.autogen); before, a folder was refused as "not an OpenHands trajectory", a file as no conversation and
# the lines as OpenAI chat ("message without 'role'"). tau-bench airline, the AutoCodeRover file and examples/logs
# (autogen.json among them) convert byte for byte.
# 140: AutoGen TaskResult messages: a StructuredMessage[...] (an agent's output_content_type answer) is the agent's
# words, its content object as JSON text, as its model context holds the answer; a run holding one was refused whole
# (its type no agentchat type). tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 141: AutoGen TaskResult messages of a team with a UserProxyAgent: its TextMessage (or HandoffMessage), the words
# of the person it asked, is the user's (a source that yielded a UserInputRequestedEvent, as the proxy does before it
# asks), as the assistants' model contexts hold it (a UserMessage); 139 read it as the agent's words (a system
# event). tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 142: AutoGen TaskResult messages: an agent's HandoffMessage (a Swarm's, the message its transfer call's result
# already holds) is counted, not read as its words: the run gave an event its model context did not. A person's
# (source user, or a UserProxyAgent's) stays the user's words. tau-bench airline, the AutoCodeRover file and
# examples/logs convert byte for byte.
# 143: an AutoGen model context's SystemMessage holding what the agent's memory retrieved ("Relevant memory content
# (in chronological order): ...", which AutoGen's Memory adds each run) is counted, not read as the policy: an id
# the user said and a memory restated was common knowledge, unlabelled, and the run's messages (a MemoryQueryEvent,
# counted) gave other events. tau-bench airline, the AutoCodeRover file and examples/logs convert byte for byte.
# 144: AutoGen saved states: the agent's system_message, which save_state() leaves out, is read from the
# declarative config (dump_component()) saved beside the states in their folder, by the agent's name (a team's
# config: each participant's), as each context's policy; before, the config was skipped and a value only the system
# message said was untraceable. A SocietyOfMindAgentState (alone or a team participant's) is read by its inner
# team's assistants' contexts (before: refused), and a team's empty context is no conversation. States without a
# config beside them, and examples/logs, convert byte for byte.
# 145: a SQL query's double-quoted token shaped as a name and compared to a bare column after it ("Alice" = name) is a
# string, as MySQL reads it, where the query writes a string in double quotes where only a value stands (AND city =
# "Paris", which was read as a string wherever no name is quoted): 121 read every double-quoted token of such a query
# as a name, Paris too (sqlwords._quoting). Alone, or beside a quoted name, it stays a name (PL/pgSQL's "Email" =
# email). No trained domain has a SQL tool; examples/logs convert byte for byte.
# 146: 145's evidence of MySQL strings taken in a join's ON too, where PostgreSQL compares quoted camelCase columns:
# ON "postId" = p.id JOIN users u ON u.id = "authorId" read postId and authorId as values (traced to any output
# saying them). In an ON a name-shaped token compared to a column is a name, and a token after the operator no
# evidence of strings (sqlwords._quoting), as before 145. No trained domain has a SQL tool.
# 147: Hugging Face smolagents memories (agent.memory's steps dumped by get_full_steps() / get_succinct_steps(), a
# .json a conversation or {"id", "system_prompt", "steps"} lines; write_memory_to_messages()'s ChatMessages) are read
# by their own reader (formats.smolagents; a CodeAgent's tool calls read from its code with ast); before, a .json of
# steps was "expected ... a conversation" and a .jsonl of them "message without 'role'". tau-bench airline, the
# AutoCodeRover file and examples/logs (smolagents.json among them) convert byte for byte.
# 148: a smolagents step's one output (a ToolCallingAgent's parallel calls' outputs joined, a CodeAgent's block
# printed together) answers all the step's calls, its result named by them all ("get_leave_balance, list_holidays:
# ..."): it answered the last alone, named by it, and each other call was reported as "a conversation cut off after
# its last call". Labels are unchanged; tau-bench airline, the AutoCodeRover file and examples/logs convert byte for
# byte.
# 149: a smolagents CodeAgent's argument naming a variable is read as the literal an earlier line bound only where
# that binding surely holds when the call runs: a loop variable (for rid in [...]: cancel(rid)), a value bound in one
# branch or loop pass, a function's parameter, a comprehension's variable, a name bound again by a tuple, +=, with ...
# as, := or an annotated assignment, or changed by a method (ids.append) was read as the value an earlier line or
# step bound, labelling the call with a value it was not made with; such an argument is left out and counted. The
# walkthrough's memories, tau-bench airline and examples/logs convert byte for byte.
# 150: in smolagents' write_memory_to_messages() a plan's message keeps its fenced plan ("Here are the facts I know
# and the plan of action ...:\n```\n...\n```"), which the reader dropped as a CodeAgent's code block, so a plan said
# nothing of itself there where the steps' plan did; a value a plan says is now traced to it in both. The steps'
# files, tau-bench airline and examples/logs convert byte for byte.
# 151: a smolagents step's final answer is said only where the step did not fail: code that raised before its
# final_answer(...), a ToolCallingAgent's final_answer beside another call (smolagents refuses it and runs on) or a
# failed final_answer_check gave an answer the user never got, read as said; and write_memory_to_messages()'s reader
# said a step's answer before the step's result, where the steps' reader says it after. The walkthrough's memories,
# tau-bench airline and examples/logs convert byte for byte.
# 152: a smolagents ToolCallingAgent's call of smolagents' PythonInterpreterTool (add_base_tools=True; arguments
# {"code": ...}) is read as a tool call like any other: a memory holding one was refused ("'code_action' is an object,
# expected the code the agent ran"), its call taken for a CodeAgent's code, so --skip-bad left the conversation out.
# The walkthrough's memories, tau-bench airline and examples/logs convert byte for byte.
# 153: a smolagents CodeAgent's final_answer("...") the code may not have reached is no answer: in a step that did
# not end the run (is_final_answer false: an if not taken) its literal was said to the user, and in
# write_memory_to_messages() (no is_final_answer) one called in a branch, loop or function is unknown. The
# walkthrough's memories, tau-bench airline and examples/logs convert byte for byte.
# 154: in smolagents' write_memory_to_messages() a step that printed, then raised (a CodeAgent's code) is written as
# an Observation tool-response and an Error one; they are one failed result, its logs and error, as the step's
# (observations, error) are: the Observation was read as an ok result (last_action_result "ok"), the code's final
# answer said after it and the error counted as "result without a call". The steps' files, tau-bench airline and
# examples/logs convert byte for byte.
# 155: in smolagents' write_memory_to_messages() the images a step observed (observations_images, a browser agent's
# screenshot its step callback adds) are a user message between the step's tool-call and tool-response: read as the
# user's (empty) turn, it cut the step's calls from their result ("result without a call", last_action_result
# none). It is counted as images, the result answering the calls. The steps' files, tau-bench airline and
# examples/logs convert byte for byte.
# 156: smolagents' write_memory_to_messages() reads as the steps of the same run do (a real 1.26 run dumped both
# ways, tests/fixtures/smolagents_scripted.json): a CodeAgent's final_answer(reply), reply no literal, in a step that
# ended the run is its last output (the steps' action_output; it said no answer), and a ToolCallingAgent's fenced
# words are kept (they were cut as a CodeAgent's code). A final step's images no longer say its answer twice. The
# steps' files, the walkthrough's memories and examples/logs convert byte for byte.
# 157: a tool call inside a function a smolagents CodeAgent's code defines is read where the function is called,
# once per call, its parameters bound to the literals the call gives (read once where the def was, called or not, a
# parameter never traced); one passed as a value or calling itself is counted ("tool call in a function not
# traced"). The walkthrough's memories and examples/logs convert byte for byte.
# 158: a name a smolagents CodeAgent's comprehension, lambda or class body changes outside it (ids.append(x) in a
# comprehension) is no longer traced after it: the scope's end restored the literal bound before it (a function's
# body already forgot it; one helper, smolagents_code._escaping, now says it for both). The walkthrough's memories
# and examples/logs convert byte for byte.
# 159: a SQL query's camelCase double-quoted token after an operator (id = "userId") is no evidence of MySQL strings:
# PL/pgSQL's WHERE "Email" = email AND id = "userId" read both names as values, traced to a listing of the columns;
# an IN list's double-quoted items are such evidence (IN ("Paris", "Lyon")), and a query that shows PostgreSQL outside
# its strings (::, $1, ILIKE, RETURNING, $$, E'') reads every double-quoted token as a name. examples/logs convert
# byte for byte.
# 160: an AutoGen saved state's system_message is its own team's config's (every participant the state saved found in
# it by name, the config named as the state first; a lone agent's from an agent's config), not any config's agent of
# the name: one team's assistant took another team's system message where its own config gave none (two giving
# one: neither, silently). A context read without one is counted in the import report. examples/logs and the
# walkthrough's states convert byte for byte.
# 161: in smolagents' write_memory_to_messages() a CodeAgent's final answer read from its step's last output (a dict,
# list, number or bool printed as Python writes it) is said as JSON, as the steps' action_output is: a dict the code
# built was said as Python's str() of it ({'user': 'ann_lee_123'}). A real 1.26 run dumped both ways is in
# tests/fixtures/smolagents_scripted.json. The walkthrough's memories and examples/logs convert byte for byte.
# 162: smolagents memories dumped by 1.8 to 1.18 (an action's number as "step", no code_action nor is_final_answer;
# before 1.12 a plan's model_output_message_plan) are read, the run's last step whose code called final_answer giving
# its action_output (they were no smolagents memory); a ToolCallingAgent's "Called Tool: ..." model_output lines
# (1.15 to 1.19) are no words, and a CodeAgent's "Code:" label and "<end_code>" mark are cut with its fenced code;
# agent.logs before 1.8 is refused saying what to do. The same scripted runs dumped by 1.17 and 1.26 give the same
# events. The walkthrough's memories, the 1.26 fixture and examples/logs convert byte for byte.
# 163: a smolagents CodeAgent's for loop over a literal list or tuple (or a name bound to one) is read pass by pass,
# a tool called in it once per item with that item (read once, its variable unknown); a body that may stop or skip a
# pass, a list it changes, an else or more than 100 items: read once, as before. The walkthrough's memories and
# examples/logs convert byte for byte.
# 164: two narrowings of this stop's rules: in smolagents' messages only a dict, list, tuple or bool printed as a
# final step's last output is read back as the value (161 read numbers and None too: "3.10" said as 3.1, "None" as
# no answer, where the steps say the text); a SQL query's $1 or $$ is a sign of PostgreSQL only standing apart
# (159 took price$1, a MySQL name with a $ in it, for one). The walkthrough's memories, the smolagents fixtures and
# examples/logs convert byte for byte.
# 165: a lone AutoGen AssistantAgent's saved state takes the config of the agent its AssistantMessages name as their
# source (160 took any agent config beside it: another agent's where it was the only one, none where two were).
# examples/logs and the walkthrough's states convert byte for byte.
# 166: a SQL query's RETURNING is no sign of PostgreSQL (159 took it for one): SQLite and MariaDB write it too, and
# read a value's double quotes as a string, so INSERT ... VALUES ("Alice") RETURNING id reads Alice again (159 to
# 165 read it as a name). examples/logs convert byte for byte.
# 167: LlamaIndex chat histories (ChatMessage.model_dump(): a role beside additional_kwargs) are the llamaindex
# reader's: a conversation of them in a .jsonl of {"id", "messages"} lines, which 165's openai reader converted (a
# version before 0.12's content with its calls in additional_kwargs: the results alone, cut from their calls), now
# gives its calls. OpenAI messages with an additional_kwargs beside tool_calls or tool_call_id stay openai.
# examples/logs and tests/fixtures convert byte for byte.
# 168: a LlamaIndex ReActAgent's reasoning message (Thought / Action / Action Input / Observation lines, then Answer)
# is read as its calls and their results, the answer its words (166 read it as words: no call). Histories without
# such a message, examples/logs and tests/fixtures convert byte for byte.
# 169: Google ADK sessions (session.model_dump_json(): events of an author and an invocation_id, no role) are the adk
# reader's: a .json of one, a .jsonl of them or a folder, each session one conversation (168 refused a session as
# "expected a conversation", and read its events put in {"id", "messages"} as OpenAI messages without a role). Their
# Gemini contents are read by the gemini reader; a "system" beside the events is the policy. Files of every other
# format, examples/logs and tests/fixtures convert byte for byte.
# 170: a smolagents CodeAgent's for loop over range() of integer literals, or enumerate() or zip() of literal lists
# (or of range()), is read pass by pass as 163 reads a literal list's, its target a name or nested tuples of names
# (163 read a nested target's loop once, its variables unknown); a loop of over 100 passes (or past 1000 in a step)
# is still read once, now counted ("loop read once, over 100 passes or 1000 in a step"). examples/logs, the
# walkthrough's memories and tests/fixtures convert byte for byte.
# 171: a SQL query that shows MySQL outside its strings (a backtick, LIMIT 0, 10, <=>, REGEXP, ON DUPLICATE KEY,
# INSERT IGNORE, IFNULL(, GROUP_CONCAT(, ...) and writes a value before its column reads its double-quoted tokens as
# strings though its only other such value is camelCase ("Apple" = brand AND name = "iPhone": 159 to 169 read both as
# names); a PostgreSQL sign still reads them as names. examples/logs and tests/fixtures convert byte for byte.
# 172: a LlamaIndex tool message's additional_kwargs.is_error (a program's copy of the ToolCallResult's
# tool_output.is_error) flags its call as failed, as does LlamaIndex's own "Tool NAME not found. Please select a tool
# that is available." answering a call of NAME, in a memory's tool message or a ReActAgent's observation (read as ok
# before). examples/logs and tests/fixtures convert byte for byte.
# 173: a smolagents 1.15 to 1.19 ToolCallingAgent step whose model_output is smolagents' "Called Tool: ..." lines
# says the model's words its model_output_message.content kept (162 read no words there): the 1.17 fixture's steps
# now give the events 1.26's give. examples/logs, the walkthrough's memories and the 1.26 fixture convert byte for
# byte.
# 174: a smolagents CodeAgent's argument that is an item of a literal the code bound (ids[i], order["id"], its index
# known too; no slice) or its len() reads as its value (it was left out, computed at run time), so a loop over
# range(len(ids)) is read pass by pass with ids[i] each item. examples/logs, the walkthrough's memories and
# tests/fixtures convert byte for byte.
# 175: 173's rule narrowed: a ToolCallingAgent step's words come from model_output_message.content only where its
# model_output holds smolagents' "Called Tool: ..." lines (a blank model_output had taken them too). examples/logs,
# the walkthrough's memories and tests/fixtures convert byte for byte.
# 176: a smolagents CodeAgent's function or lambda whose parameter is named range or len (def look(range): ...) reads
# that name as what the call gives, not the builtin (170 and 174 read its loop pass by pass, its len as a number: calls
# labelled with values the code never made). examples/logs, the walkthrough's memories and tests/fixtures convert
# byte for byte.
# 177: a smolagents CodeAgent's literal changed in place through another name or an item holding it (alias = ids then
# alias.append(x), order["ids"][0] = x, order["ids"].append(x), a loop's item, a function's parameter) is no longer
# known under any name (174 read len(ids), ids[0] and ids itself as first written; 149 forgot only the name changed).
# examples/logs, the walkthrough's memories and tests/fixtures convert byte for byte.
# 178: 171's signs of MySQL narrowed: REGEXP, RLIKE or a MySQL function's name (IFNULL, ...) after a dot is a column or
# a schema's function PostgreSQL may name so (SELECT p.regexp ...), no sign (171 read the query's double-quoted
# values as strings there). examples/logs and tests/fixtures convert byte for byte.
# 179: a smolagents CodeAgent's literal given by name or item to a function the code imported (random.shuffle(ids),
# heapq.heappush(order["ids"], x), from random import shuffle) may be changed in place by it: unknown from then on
# (174 read ids[0] after random.shuffle(ids) as the first item written). examples/logs, the walkthrough's memories
# and tests/fixtures convert byte for byte.
# 180: an ADK session's conversation is named by its user, app and id (ann_lee_123_airline_conv-1), ADK's key of a
# session; 169 named it by its id alone, and two users' (or apps') sessions of one id ("default") were refused as one
# conversation logged twice. The events of every session convert byte for byte, their episode_id aside; files of every
# other format, examples/logs but adk.json and tests/fixtures convert byte for byte.
# 181: a Google ADK session database (the SQLite file of DatabaseSessionService or SqliteSessionService: a table
# events of event_data) is read as its sessions, each one conversation as its session.model_dump_json() is (169 read
# it as an agent log: "not UTF-8 ... re-save the file as UTF-8"). Files of every other format, examples/logs and
# tests/fixtures convert byte for byte.
# 182: a folder's ADK session databases (adk web and adk run keep each agent's sessions in its .adk/session.db; any
# .db, .sqlite or .sqlite3 holding ADK's events table) are read beside its other runs (181 walked past them: a folder
# of agents was "a folder without ..."). Folders without one, files, examples/logs and tests/fixtures convert byte for
# byte.
# 183: an ADK session database's sessions under one id of several users or apps (ADK's ids are unique per app and
# user) are named by user, app and id as 180 names every ADK session (181's database reader, written beside 180,
# named them by their id alone, so such a database was refused whole, "duplicate conversation id"). Every other
# file, examples/logs and tests/fixtures convert byte for byte.
# 184: a folder's saved ADK sessions under one id of several apps or users (adk run --save_session:
# AGENT/ID.session.json) are told apart by 180's naming; a test pins it (the number kept from the branch that fixed
# it alone). Every file converts as at 183.
# 185: an ADK session database's sessions whose first events share a time are written in the order of their app,
# user and id (184 wrote them in a set's order, another each run); the database is read one session at a time.
# Each session's events convert byte for byte; every other file, examples/logs and tests/fixtures convert byte
# for byte.
# 186: an OpenAI Agents SDK session database (SQLiteSession's agent_messages table, a Responses input item a row) is
# read, each session a conversation of its items (it was refused, "no Google ADK session database"). Every other
# file, examples/logs and tests/fixtures convert byte for byte.
# 187: a Responses function_call_output that is the OpenAI Agents SDK's answer for a tool that raised ("An error
# occurred while running the tool.") reads as a failed call ("name: error ...", it read "name: ok"). Every file without
# that text, examples/logs and tests/fixtures convert byte for byte.
# 188: a folder's Agents SDK session databases (any .db, .sqlite or .sqlite3 holding agent_messages) are read beside
# its other runs, as 182 reads ADK's (a folder of them was "a folder without ..."). Folders without one, files,
# examples/logs and tests/fixtures convert byte for byte.
# 189: an Agents SDK session database is told by its schema: a messages table of any name (the app's messages_table)
# whose session_id references a sessions table's is read; another app's agent_messages table without it is not (its
# rows were refused as no items, or read as conversations). The SDK's databases of the default names convert byte for
# byte; so do every other file, examples/logs and tests/fixtures.
# 190: an Agents SDK session database of two messages tables (two apps' SQLiteSession(..., messages_table=...)) names
# each table's sessions by the table and the id (claims_messages_conv-1), two apps' sessions of one id never read as
# one. A database of one messages table, other files, examples/logs and tests/fixtures convert byte for byte.
# 191: an Agents SDK AdvancedSQLiteSession database (its message_structure table) reads a conversation a branch, in
# its sequence order (all its rows were one conversation, a branch's rewritten turn after the original's). Databases
# without message_structure, other files, examples/logs and tests/fixtures convert byte for byte.
# 192: an AdvancedSQLiteSession's branches of one session are one group (one split), as they share their first turns
# (191 could put a branch in test and its session in train). Everything else converts byte for byte.
# 193: a smolagents CodeAgent's tool call in a branch of a loop read pass by pass (an if, an except, y if c else z,
# c and tool(x), a lambda) does not know the values a pass binds (it was read on every pass with that pass's item,
# as if its condition always held); a list the code bound, let out into a value not traced (box["r"] = ids,
# out.append(ids), return ids) and changed through that value, is unknown (it kept the value first written). Code
# without these, other files, examples/logs and tests/fixtures convert byte for byte.
# 194: a LlamaIndex tool message or ReAct observation of LlamaIndex's call_tool words for a tool that raised
# ("Encountered error: ...") flags its call as failed (it read as ok), and additional_kwargs.is_error written as the
# words "true" / "false" (any case) is read as the flag (the file was refused). Everything else converts byte for byte.
# 195: an OpenAI Agents SDK call's output of the SDK's own words for an approval rejected ("Tool execution was not
# approved."), a tool the agent lacks or one past its timeout ("Tool 'NAME' not found." / "... timed out after N
# seconds.", naming the tool called), or a hosted program's {"error": ...} of these, flags the call as failed (it read
# as ok). Everything else converts byte for byte.
# 196: a SQL query of no dialect's sign that compares a column to a double-quoted token in a join's ON (ON u.id =
# "authorId") reads its double quotes as names, as PostgreSQL does (the token was a string, traced to any listing of
# the columns). Everything else converts byte for byte.
# 197: a smolagents memory dump's recall in a step that called recall_memory (SAMRecallTool's output: its head "[N
# memories recalled by SAM]" and its N numbered memories, a ToolCallingAgent's result or a CodeAgent's print) reads as
# the marker "[N memories recalled: stored already]", not as the memories again. Dumps without such a head, other
# files, examples/logs and tests/fixtures convert byte for byte.
# 198: Microsoft Agent Framework sessions (session.to_dict(), a FileSessionStore's files) are read by the
# agent-framework reader, a session a conversation named by its id, a result with an exception failed (they were
# refused: no conversation); its messages are told before Responses items. Every other file, examples/logs and
# tests/fixtures convert byte for byte.
# 199: an Agent Framework FileHistoryProvider's <session_id>.jsonl (one message a line) is one conversation named by
# the file (it was refused at its first line: "conversation without 'id'"). Everything else converts byte for byte.
# 200: a folder of FileHistoryProvider files is read, each file a conversation (it was "a folder without ...").
# Everything else converts byte for byte.
# 201: a smolagents CodeAgent's list let out into a value not traced (", ".join(ids), {"ids": ids}, str(ids)) stays
# known where the code only reads a value not traced (user.get("name"), text.lower()) or changes a list of its own by
# that list's methods (results = [] then results.append(x)): 193 made each such line lose every list let out, the
# calls after it their labels. Code without a list let out, other files, examples/logs and tests/fixtures convert
# byte for byte.
# 202: a SQL query of no dialect's sign whose join's ON compares a column to a double-quoted token of no key column's
# shape (ON b.cabin = "economy", ON c.code = "ABC123": not camelCase ...Id nor ..._id) reads it by its place, a string,
# as 195 did (196 read every double-quoted token of such a query as a name, the value traced to nothing). ON u.id =
# "authorId" / "author_id" reads as in 196; everything else converts byte for byte.
# 203: a smolagents CodeAgent's list, set or dict comprehension in a loop read pass by pass, over a literal list or
# range not empty and unfiltered, knows the pass's values (193 read it as a part of the pass that may not run, its
# item unknown there). Code without one, other files, examples/logs and tests/fixtures convert byte for byte.
# 204: a smolagents CodeAgent's change through a method's value (d.get("k").append(x), d.setdefault("k", []).append(x))
# changes what d holds: the list d holds, or one let out into it, is unknown after it (201 to 203, taking d.get for a
# read, read it as first written; 196 and before made it unknown by the d.get itself). Code without one, other files,
# examples/logs and tests/fixtures convert byte for byte.
# 205: a smolagents CodeAgent's name bound to a tool's output and changed by its own methods or items (info = get_user(x)
# then info["seen"] = True) changes no list let out (", ".join(ids)): each such list stays known (193 to 204 read
# it as unknown). Code without a list let out, other files, examples/logs and tests/fixtures convert byte for byte.
# 206: a SQL query of no dialect's sign whose join's ON compares a column to a double-quoted key's name in PascalCase
# or with its Id in capitals (ON u.id = "AuthorId", "authorID", "AUTHOR_ID") reads its double quotes as names, as 196
# did (202 read it by its place, a string). Everything else converts byte for byte.
# 207: a smolagents CodeAgent's function called in a loop read pass by pass does not know, in a branch of its own
# (an if, an except, y if c else z), the names it binds (its parameters: the pass's values), as a branch written in
# the loop does not since 193 (the call was read on every pass with the pass's item, a call never made labelled).
# Code without one, other files, examples/logs and tests/fixtures convert byte for byte.
# 208: a recall a smolagents CodeAgent's code printed (the 197 marker) whose last memory's indented lines are
# followed by more of the step's output reads as printed (the code's own lines that open with spaces, a DataFrame's
# header, read as that memory's went into the marker, lost); one followed by a line of no indent, or the code's last
# output, is the marker still. Everything else converts byte for byte.
# 209: a FileHistoryProvider's file of an encoded session id (~session-<base32>.jsonl: capitals, a colon) is named
# by the session's id, as its session's .json is (it was named by the file: "_session-..."). Every other file,
# examples/logs and tests/fixtures convert byte for byte.
# 210: a folder holding an app's FileSessionStore snapshots and its FileHistoryProvider's files reads each session
# once, from its history file (the snapshots hold no messages: the folder was refused at the first); a snapshot alone
# is refused naming the FileHistoryProvider's files. Every converted file, examples/logs and tests/fixtures convert
# byte for byte.
# 211: a smolagents CodeAgent's call in a branch of a loop's pass read pass by pass knows a name the pass bound before
# the branch, outside any branch, to a literal holding no list, dict or set, bound nowhere else in the loop (uid =
# "ann" then if rid: cancel(rid, uid)), unknown there since 193; a comprehension's first filter over a literal not
# empty knows the pass's values (it runs on each pass). Code without one, other files, examples/logs and
# tests/fixtures convert byte for byte.
# 212: a SQL query of no dialect's sign whose join's ON compares a column to a short double-quoted code ending in Id
# ("AID", "OID", "K_ID": no name part of two letters before the Id) reads it as a string, a literal the user gave (it
# was read as a key column's name, which made the query's double quotes names). Other queries, examples/logs and
# tests/fixtures convert byte for byte.
# 213: a folder's file named as a database (.db, .sqlite, .sqlite3) that does not open with SQLite's header (empty,
# another program's such as Windows' Thumbs.db, one that cannot be opened) is passed over with a warning naming it
# (one that could not be opened refused the whole folder). Every converted file and folder, examples/logs and
# tests/fixtures convert byte for byte.
# 214: Agent Framework's MessagePack stores (serialization_format="msgpack": a FileSessionStore's <session_id>.msgpack
# snapshot, a FileHistoryProvider's <session_id>.msgpack records) are read, alone or in a folder, as their JSON is
# (no reader took them). Every other file, examples/logs and tests/fixtures convert byte for byte.
# 215: a MessagePack timestamp's nanoseconds round to the nearest microsecond, half up, as msgspec reads them (they
# were cut), and one of 10**9 or more nanoseconds is refused naming its byte (it was read as a later second). Every
# file without such a timestamp, examples/logs and tests/fixtures convert byte for byte.
# 216: an Agent Framework .msgpack store's NaN or Infinity float is refused in one line naming the file and record,
# as its JSON's bare NaN is (it was read, and the converted log held bare NaN). Every other file, examples/logs and
# tests/fixtures convert byte for byte.
# 217: a folder's file named as a database that cannot be opened refuses the folder naming it, as before 213, unless
# it is a Windows thumbnail cache (Thumbs.db, ehthumbs.db, ehthumbs_vista.db), still passed over with a warning (213
# passed any such file over, and the folder converted without the sessions it may hold). Every readable file and
# folder, examples/logs and tests/fixtures convert byte for byte.
# 218: a MessagePack map's key given twice (or keys one as JSON's strings, 1 and "1") whose dropped value is an array
# or a map is refused naming the key, as a log's JSON is (the last value won, a whole list lost). Every file without
# such a map, examples/logs and tests/fixtures convert byte for byte.
# 219: an Agent Framework user message that is SAM's recall framed as data (SAMContextProvider's context message, kept
# by a history provider made with store_context_messages=True) is left out, counted, not read as the user's words.
# Every other message, examples/logs and tests/fixtures convert byte for byte.
# 220: an AutoGen UserMessage that is SAM's recall framed as data (SAMAutoGenMemory's, in an agent's saved context) is
# counted as a memory, not read as the user's words. Every other message, examples/logs and tests/fixtures convert
# byte for byte.
# 221: an Agent Framework user message or an AutoGen UserMessage is left out as SAM's recall only where it is exactly
# the frame scopes.framed writes (its note line, the tag, the recall's head and count, its numbered memories, no raw
# tag inside); one that only opened with any line before the tag (a user's pasted <sam_memories> block) was dropped,
# and is now read as the user's words. Every other message, examples/logs and tests/fixtures convert byte for byte.
# 222: a frame (221) is SAM's recall only where no memory in it holds the tag with a JSON "\/", a comment's "!--", a
# zero-width space or a full-width "<" before its name, as scopes.framed now escapes those too. Every frame framed
# wrote before, every other message, examples/logs and tests/fixtures convert byte for byte.
# 223: a frame is SAM's recall only in the adapter's own message: an Agent Framework context message (the
# framework's _attribution in its additional_properties), an AutoGen UserMessage of source sam_memory; the same text a
# user sent (a whole frame pasted from a trace) is read as the user's words. Every frame the adapters stored, every
# other message, examples/logs and tests/fixtures convert byte for byte.
# 224: an ADK load_memory result that is SAM's recall (SAMMemoryService's MemoryEntry items in ADK's {"result":
# {"memories": [...]}}) reads as the recall marker, its call kept (its memories were read as a tool's result: stored
# again, and labels of SAM's own recall). Every other session, examples/logs and tests/fixtures convert byte for byte.
# 225: an ADK load_memory entry is SAM's only with a score and, where it names a session, an id of that session's
# episode (an app's own entries of a step, or of another session's id, were read as the marker, their words lost).
# Every SAM recall, every other session, examples/logs and tests/fixtures convert byte for byte.
# 226: an ADK load_memory result is SAM's recall only where each entry's id names a scope of the session's user and
# app (user/app/...#STEP, as SAM's search of them returns): an app's entries of SAM's shape of another user's, no
# user's or another app's id, and a session's events read without it, read as the app's result, their words kept.
# Every SAM recall of the session's own user and app, every other session, examples/logs and tests/fixtures convert
# byte for byte.
# 227: an AutoGen model context's UserMessage whose first content parts are each exactly a frame, the user's parts
# after them, is SAMAutoGenMemory's recall in the user's message (since 2026-12-07): the frames counted as memory, the
# rest read as the user's words (they were read as the user's words too). A frame a message of its own, a string
# that pastes one, and every other log convert byte for byte.
# 228: Langfuse traces are read (format langfuse: the API's traces, a page of traces or of v2 observations, the UI's
# download, a folder of them read together; a session's traces one conversation), which no reader took (a folder of
# them was refused as OpenHands trajectories); the otel reader's join moved to
# formats.history unchanged. Every other file, examples/logs and tests/fixtures convert byte for byte.
# 229: an OTLP file's OpenInference spans (Arize Phoenix's, every OpenInference instrumentation's) are read, each as
# its GenAI twin (formats/openinference.py): a file of them alone was refused, a file mixing them with GenAI spans was
# read without their conversations. Every GenAI span, examples/logs and tests/fixtures convert byte for byte.
# 230: a Langfuse tool observation answers, of the calls of its tool no tool message answers yet, the one whose
# arguments its input holds (parallel calls started in another order, or an earlier call answered in a later input,
# took its result and its error flag); one that could be either of calls with other arguments is not paired, said in
# a warning. A trace without parallel calls of one tool, examples/logs and tests/fixtures convert byte for byte.
# 231: a Langfuse message's tool calls given only in LangChain's additional_kwargs are read (they were dropped, their
# results answering no call); a Langfuse input or output that is JSON text stopping mid-way (cut short) is counted
# and named, not read as the user's or the model's words. Every other trace, examples/logs and tests/fixtures
# convert byte for byte.
# 232: a Langfuse trace is in the session any of its observations names (a v2 observation without the sessionId was
# read apart from its session's, its tool results lost). Traces whose observations all name the session or none,
# examples/logs and tests/fixtures convert byte for byte.
# 233: an OpenInference AGENT span inside another agent's run, both of one session.id (using_session stamps every
# span in its context), is a conversation of its own, as without the session: its model calls were read into the
# session's conversation, the delegate's turns amid the outer agent's. GenAI spans, spans without nested agents,
# examples/logs and tests/fixtures convert byte for byte.
# 234: an OpenInference span written with the GenAI attributes too (enable_genai_semconv) whose OpenInference text is
# __REDACTED__ refuses its conversation, as a span of OpenInference attributes alone does: its GenAI messages, read
# instead, carried the word as the user's text. Every other span converts byte for byte.
# 235: likewise where only the agents' spans carry the session.id and the delegate's model calls none (they took
# the session from their agent's span by ancestry). Every other span converts byte for byte.
# 236: a Langfuse generation's Anthropic messages are read as the anthropic reader reads them: tool_use and
# tool_result blocks as calls and results (counted as parts not read, every call lost), a request's system beside its
# messages as the policy (dropped). Every other trace, examples/logs and tests/fixtures convert byte for byte.
# 237: a folder holding an Agent Framework session both as a snapshot with messages (a FileSessionStore's, a
# session.to_dict() dump) and as a FileHistoryProvider's file reads it once, the longer record where one's messages
# begin the other's (it was refused, "duplicate conversation id"); differing records are refused naming both. Every
# other folder, examples/logs and tests/fixtures convert byte for byte.
# 238: a Langfuse trace whose observations name a session other than the trace's own sessionId is read in the
# trace's own (it was read in the first one its observations named); several named are said in a warning. Every
# other trace, examples/logs and tests/fixtures convert byte for byte.
# 239: an OpenInference TOOL span that names no call (LangChain's) and ended in an error flags the result of the one
# call of its tool, made before it and answered after it, that it ran (by its input.value where several wait; it was
# flagged never); a tool run whose input is its one argument's value (LangChain's) pairs with that call in the
# langfuse reader too (it was not paired). Every other span and trace, examples/logs and tests/fixtures convert byte
# for byte.
# 240: as 237, where the two records differ by the messages one store leaves out, a provider's context messages
# (store_context_messages=True on one store alone) or the user's words (an audit trail of store_inputs=False): the
# folder was refused, "kept twice, differently". Every other folder, examples/logs and tests/fixtures convert byte
# for byte.
# 241: as 237 and 240, where a CompactionProvider compacted one record (its messages annotated, "_group", "_excluded", given
# message ids, its summaries added): every message differed and the folder was refused. Every other folder,
# examples/logs and tests/fixtures convert byte for byte.
# 242: as 239, for a GenAI execute_tool span that names no call (gen_ai.tool.call.id is Recommended, not Required):
# one that ended in an error flags the result of the one call of its gen_ai.tool.name (else its span's name) it ran,
# by its gen_ai.tool.call.arguments where several wait (it was flagged never). Every other span, examples/logs and
# tests/fixtures convert byte for byte.
# 243: a Langfuse generation's or tool observation's text that is a mask's stand-in ("<fully masked due to failed mask
# function>", the SDK's when the app's mask raised; the masking docs' "REDACTED"; OpenInference's __REDACTED__) refuses
# its conversation: it was read as the user's prompt, the model's answer or the tool's result. Every other trace,
# examples/logs and tests/fixtures convert byte for byte.
# 244: a Langfuse generation's input or output string that is JSON text the strict loader refuses (a bare NaN or
# Infinity, a list given twice under one key) refuses its conversation, as every other reader refuses such JSON: it
# was read as the user's (or the model's) words, the JSON verbatim, and a cut one after a NaN was taken as cut by
# Python's json. Every other trace, examples/logs and tests/fixtures convert byte for byte.
# 245: an OpenInference LLM span without llm.input_messages.* (llm.output_messages.*), hidden by
# OPENINFERENCE_HIDE_INPUT_MESSAGES (_OUTPUT_MESSAGES), is read from its input.value (output.value) where the mime type
# is application/json and it is a chat request (a completion of one choice): it was read without the user's words and
# the tools' results, its calls unanswered; with the GenAI attributes too, read whole from its OpenInference ones. An
# input.value of __REDACTED__ (OPENINFERENCE_HIDE_INPUTS) with no messages refuses its conversation. Every span with
# its messages, examples/logs and tests/fixtures convert byte for byte.
# 246: an AutoGen UserMessage whose list content opens with exact frames reads them as SAMAutoGenMemory's recall only
# where each frame's tag names the ref of the parts after them (the adapter writes it since): a frame a user pasted as
# a multimodal message's first part (or after the recall) was counted as the recall, the user's words lost; a frame
# without a ref in a list is the user's. Every other log, examples/logs and tests/fixtures convert byte for byte.
# 247: an Agent Framework message attributed to a context provider (its additional_properties' "_attribution", kept by a
# history of store_context_messages=True) is passed over and counted "context messages", as SAMContextProvider's frame
# was ("SAM recalls"): another provider's note was read as the user's words and, in an audit trail alone, the agent's
# in-memory history it stores again from the third run on as the conversation a second time (each call labelled
# twice). tests/fixtures/agent_framework_both/apart's ctx-audit and ctx-memory sessions lose their "Fact:" user turns;
# every other log, examples/logs and tests/fixtures convert byte for byte.
# 248: a Langfuse generation's input message that repeats the previous input's at its place but for a number of
# another type (1 there, 1.0 or true here: equal to Python's ==) is read as given, as each input read whole reads it
# (taken from the previous input's reading since a speed-up made at 244, which bumped no version). Every other trace,
# examples/logs and tests/fixtures convert byte for byte.
# 249: a Langfuse generation's input or output, or a tool observation's output, that is a mask's stand-in whole (the
# SDK's "<fully masked due to failed mask function>" where the app's mask raised) is read as a value not recorded,
# what later inputs repeat of it read there, counted in a warning: it refused its conversation (243). A message's
# text that is a stand-in is refused still. Every other trace, examples/logs and tests/fixtures convert byte for
# byte.
# 250: a Langfuse message whose text is "REDACTED" alone is read as said (it refused its conversation, 243): the
# masking docs' mask writes it as a whole value only, read as one not recorded (249). Every other trace,
# examples/logs and tests/fixtures convert byte for byte.
# 251: an OpenInference LLM span of another provider than OpenAI (llm.system anthropic, ...), its messages hidden,
# gives none from its input.value (245 read an Anthropic request as OpenAI's, its calls and results lost as parts of
# no known type). Said here too: 245 refused an LLM span whose output.value is __REDACTED__ with no output messages
# (OPENINFERENCE_HIDE_OUTPUTS), read before without the answer. Every other span, examples/logs and tests/fixtures
# convert byte for byte.
# 252: an Agent Framework record opening with a history's replay (context messages attributed to a ...HistoryProvider,
# no origin_session_ids) before any turn of its own reads that replay as the conversation: an audit trail added after
# the in-memory history held runs stores them there only, and they were passed over as "context messages" (247), those runs
# lost with no word said; later replays, notes and frames are still passed over. Every other log, examples/logs and
# tests/fixtures convert byte for byte (tests/fixtures/agent_framework_both/alone/late-trail.jsonl is new).
# 253: an OpenInference LLM span whose output was hidden whole (OPENINFERENCE_HIDE_OUTPUTS: output.value __REDACTED__,
# no llm.output_messages.*) is read as a value not recorded, as the langfuse reader reads a value masked whole (249):
# its answer read where the next call's input repeats it, a conversation's last answer missing, one warning a file
# (245 refused its conversation). Every other span, examples/logs and tests/fixtures convert byte for byte
# (tests/fixtures/openinference_outputs_hidden_spans.jsonl and openinference_genai_outputs_hidden_spans.jsonl are new).
# 254: the tool calls of an OpenInference LLM span whose output was hidden whole (253), read from the next call's
# input, are dated by the span that made them, not by that next call: a failed tool span naming no call (LangChain's
# TOOL spans) that ran between the two paired with no call, its call's result not flagged as failed. Every other span,
# examples/logs and tests/fixtures convert byte for byte.
# 255: the answer of an OpenInference LLM span whose output was hidden whole (253) is looked for in the later inputs
# of its own history (the join's: the call whose input is anchored where the span's input ends), not in the next
# call's in time, which may be another agent's under the same session.id: its answer was counted missing though its
# agent's next call repeats it, and the calls it made were dated by the other agent's call (254), a failed tool span
# naming no call flagging nothing. Every other span, examples/logs and tests/fixtures convert byte for byte.
# 256: such a hidden answer (255) is put right after the input it answers, where the recorded output would have been,
# not where the next input of its history puts it: after every message read since (a summary that input puts before
# it, another agent's turn under the same session.id), as if said after them. Every other span, examples/logs and
# tests/fixtures convert byte for byte.
# 257: another agent's call at a system prompt both agents' histories start with, sending an earlier turn of its own
# (an answer after its user's words), no longer takes a hidden answer (255) for a window that kept it but not the
# words it answered: that answer was put after the other agent's turn and its calls dated by a later call. A window
# is told by the answer right after the anchor. Every other span, examples/logs and tests/fixtures convert byte for
# byte.
# 258: a Langfuse generation's output masked whole (249), read where a later input of its history repeats it, is put
# right after the input it answers by the OpenInference reader's rule (256, history.Unrecorded), not after every
# message read since (a summary that input puts before it, another agent's turn under the same session). Every other
# observation, examples/logs and tests/fixtures convert byte for byte.
# 259: the tool calls of such a masked answer (258), read from a later input, are paired with the TOOL / SPAN
# observations of their tools that started after its generation and were read before that input (no call held then):
# a failed run (level ERROR) flagged nothing, its result read as a success, or missing where only the observation
# gave it. Every other observation, examples/logs and tests/fixtures convert byte for byte.
# 260: 257's rule replaced: a hidden answer (255) a window's input read (the other agent's turn of 257 reads alike,
# whatever its first message) still waits for an input of its history anchored where it waits, which puts it after
# the input it answers, as 256 does; it is no longer counted missing. A window that puts a summary before the answer
# it kept (its first new message no answer) dates that answer's calls by their span again, as 255 did. Every other
# span and observation, examples/logs and tests/fixtures convert byte for byte.
# 261: an input that goes on from a hidden or masked answer (255, 258) in the words of the latest message read
# (another agent's, under the same conversation id) is anchored where the answer waits, not at that message (the
# join's window rule): the answer was lost though the input repeats it, and counted missing. Every other span and
# observation, examples/logs and tests/fixtures convert byte for byte.
# 262: a hidden answer (255) is not taken by a call of another trace that goes on from the hidden call's input (another
# agent's greeting after a system prompt both share, the hidden call's input that prompt alone) while a call of its own
# trace may: its own next input reads it, put right after the prompt. Every other span, every Langfuse observation,
# examples/logs and tests/fixtures convert byte for byte.
# 263: a hidden answer (255) a window of the hidden call's own trace kept without the words it answered (260) is put
# right after the input it answers, not after a summary the window puts before it or another agent's turn read since.
# Every other span, every Langfuse observation, examples/logs and tests/fixtures convert byte for byte.
# 264: a window's input that repeats the latest message of its own history (a call's last, none gone on from it) but not
# the words before it is anchored there where another history's calls (another agent's, under the same conversation
# id) came after it: only the conversation's latest was, and the kept answer was added twice (recorded), or put
# after the other agent's turn (hidden). Such spans and observations change; every other span and observation,
# examples/logs and tests/fixtures convert byte for byte.
# 265: a JSON Lines conversation whose 'group' or 'task_id' is null or "" takes the next key (the task_id, else its
# id) as its group, as if the key were absent: it was the group "None" (meta.group "None", one task for the split).
# Every other line, examples/logs and tests/fixtures convert byte for byte.
# 266: a shell tool's settings (is_shell_setting: a timeout, a limit, a login, a description) are settings only in a
# call that runs a command line; a call without one (a card or SIM terminal's update_terminal(login_code, max_refund,
# description), a tool whose name says terminal) has its arguments traced as the spec says, where they were trivial.
# Every call with a command line, examples/logs, tests/fixtures and tau-bench convert byte for byte.
# 267: a hidden call (255) of another trace that sent the same input as one whose answer waits (two agents under one
# session, each opening with the system prompt both share alone) is no retry of it: its answer waits for an input of
# its own trace, which dates that answer's calls by it (they were dated by the input's span, or by the other agent's
# hidden call where that input read as a window of its history), and is counted missing only where none reads it.
# Such spans change; every other span, every Langfuse observation, examples/logs and tests/fixtures convert byte for
# byte.
# 268: a window's input (260, 263) anchored at a message where another trace's hidden answer waits (the system prompt
# two agents share, the other agent's greeting hidden) is read as a window of its own trace's history: the answer of
# its own it kept was counted missing, left after the summary, its calls dated by the input's span; and a window takes
# the waiting answer of its own trace before another's. Such spans change; every other span, every Langfuse
# observation, examples/logs and tests/fixtures convert byte for byte.
CONVERSION_VERSION = 268


@dataclass(frozen=True)
class SourceOptions:
    """How SGD folders and transcript files are converted (an agent log ignores them all).

    Args:
        label: which earlier event labels a needed value: origin (the first that says it) | latest | all.
        masked: hide needed values in the decision point's state and flag their slots / argument paths.
        max_items: convert only the first N dialogues / conversations (None = all).
        every: SGD only: keep one dialogue in ``every`` (SGD files are grouped by service).
        split: transcripts only: all | train | test, the fixed split by task group
            (sam_model.data.transcripts.held_out_groups).
        life: concatenate every ``life`` consecutive episodes into one agent life (sam_model.data.lives);
            1 = episodes as they are. Applies to agent logs too.
        result_limit: transcripts only: cut tool results at this many characters (None: keep them whole).
    """

    label: str = "origin"
    masked: bool = True
    max_items: int | None = None
    every: int = 1
    split: str = "all"
    life: int = 1
    result_limit: int | None = None


def source_kind(path: str | os.PathLike) -> SourceKind:
    """What ``path`` is; raises SAMFileError naming it when it is none of the three."""
    from sam_model.data.formats.files import eventless, headless_only, layouts, trajectory_files
    from sam_model.data.formats.sessions import multi_agent_only
    from sam_model.data.sgd import is_sgd_split_dir
    from sam_model.data.toolworlds import is_spec
    from sam_model.data.transcripts import is_transcript_file

    if is_spec(path):  # generated tool worlds are written as a transcript file
        return "transcripts"
    p = Path(path)
    if not p.exists():
        raise SAMFileError(f"data {not_found(p)}: {p} (give an agent log .jsonl/.jsonl.gz, a tool-call transcript file "
                           ".jsonl/.json[.gz], a folder of SWE-agent or OpenHands trajectories, a session folder, or "
                           "an SGD split folder such as ../shared/data/sgd/train)")
    if p.is_dir():
        if is_sgd_split_dir(p):  # agent runs beside its dialogues would be skipped, unread and unsaid: refused
            if runs := layouts(p, claimed=[*p.glob("dialogues_*.json*"), p / "schema.json"]):
                first = next(iter(runs.values()))[0]
                raise SAMFileError(f"{p} holds both an SGD split (dialogues_*.json files) and agent runs "
                                   f"({', '.join(runs)}, such as {first.relative_to(p)}); a folder is read as one "
                                   "of them, so the other would be skipped: give each its own folder")
            return "sgd"
        if trajectory_files(p):
            return "transcripts"
        raise SAMFileError(multi_agent_only(p) or eventless(p) or headless_only(p) or (
            f"{p} is a folder with neither SGD dialogues_*.json[.gz] files in it nor SWE-agent .traj[.gz] files under "
            "it nor session stores (Strands Agents' message_<N>.json, OpenHands' events/<N>.json) nor OpenHands V1 "
            "conversations (events/event-NNNNN-ID.json) nor Codex rollouts (rollout-*.jsonl) nor Claude Code session "
            "files (.jsonl) nor OTLP JSON files (OpenTelemetry spans) nor Pydantic AI histories, smolagents "
            "memories, LlamaIndex chat histories or ADK sessions (.json) nor ADK session databases (.adk/session.db) nor OpenAI Agents SDK session databases (SQLiteSession) under "
            "it nor OpenHands .json trajectories or AutoGen saved states in it; "
            "give an agent log, a transcript file, an "
            "SGD split folder, the folder SWE-agent or OpenHands wrote its trajectories to, a session or conversation "
            "folder, or a Claude Code project folder"))
    return "transcripts" if is_transcript_file(p) else "agent-log"


def iter_source_events(path: str | os.PathLike, options: SourceOptions = SourceOptions(),
                       skip_bad: bool = False, progress: bool = False) -> Iterator[dict[str, Any]]:
    """Agent-log event dicts of an SGD folder or a transcript file (not of an agent log: read that directly).
    ``progress``: show the dialogues or conversations converted, on stderr, once it takes a moment (a file: lines)."""
    kind = source_kind(path)
    if kind == "sgd":
        from sam_model.data.sgd import iter_sgd_events

        events = iter_sgd_events(path, label=options.label, masked=options.masked,  # type: ignore[arg-type]
                                 max_dialogues=options.max_items, every=options.every)
        yield from _dialogues_shown(events, f"converting {Path(path).name}", progress, options.max_items)
    elif kind == "transcripts":
        from sam_model.data.transcripts import ImportReport, iter_transcript_events

        report = ImportReport()
        yield from iter_transcript_events(path, options.label, options.masked, options.split,  # type: ignore[arg-type]
                                          skip_bad=skip_bad, report=report, max_conversations=options.max_items,
                                          result_limit=options.result_limit, progress=progress)
        if report.results_cut:
            print(f"{path}: {report.results_cut} tool results cut at {options.result_limit} characters")
        if report.passed:
            print(f"{path}: {report.passed_note()}")
        if report.cut_lines:
            print(f"{path}: {report.cut_note()}")
        if report.stderr_lines:
            print(f"{path}: {report.stderr_note()}")
        if report.abandoned:
            print(f"{path}: {report.abandoned_note()}")
        if report.unanswered:
            print(f"{path}: {report.unanswered_note()}")
        if report.lacking:
            print(f"{path}: {report.lacking_note()}")
        if report.continuing:
            print(f"{path}: {report.continuing_note()}")
        if report.looping:
            print(f"{path}: {report.looping_note()}")
        if report.misplaced:
            print(f"{path}: {report.misplaced_note()}")
        if report.other_roles:
            print(f"{path}: {report.roles_note()}")
        if report.repeats():
            print(f"{path}: {report.repeats_note()}")
        if report.skipped:
            print(f"{path}: skipped {len(report.skipped)} bad conversations:\n" +
                  "\n".join(f"  {e}" for e in report.skipped[:20]))
    else:
        raise ValueError(f"{path} is an agent log already; read it with sam_model.data.read_episodes")


def _dialogues_shown(events: Iterator[dict[str, Any]], desc: str, enabled: bool,
                     total: int | None) -> Iterator[dict[str, Any]]:
    """``events``, counting their episodes (SGD dialogues) on a progress bar (sam_model.progress), as the
    transcript importer counts its conversations."""
    from sam_model.data.transcripts import PROGRESS_AFTER_S
    from sam_model.progress import progress_bar

    with progress_bar(total=total, desc=desc, unit=" dialogues", disable=not enabled, delay=PROGRESS_AFTER_S) as bar:
        episode = None
        for event in events:
            if event.get("episode_id") != episode:
                episode = event.get("episode_id")
                bar.update()
            yield event


def default_cache_dir() -> Path:
    return Path(os.environ.get("SAM_CACHE_DIR", Path.home() / ".cache" / "sam_model"))


def read_files(p: Path, kind: SourceKind) -> list[Path]:
    """Every file a folder's conversion reads: an SGD split's ``dialogues_*.json[.gz]``, or every run file of every
    layout in a folder of agent runs (files.layouts: ``.traj`` and ``.traj.json`` files, session stores' message or
    event files, OpenHands V1 conversations' event files, OpenHands ``.json`` trajectories; a layout added beside
    another is read, so it is listed too), not a schema, README or other file beside them. The cache key
    (:func:`_stamp`) and a fit's record of its sources' bytes (sam_model.data.fingerprint) go by them."""
    from sam_model.data.formats.files import trajectory_files, v1_states

    files = trajectory_files(p) if kind == "transcripts" else sorted(p.glob("dialogues_*.json*"))
    if kind == "transcripts":  # an OpenHands V1 state names the head its events are read to (a head moved back):
        # the events folder given has its state outside it, read by its path from the folder given
        files += sorted({*(q for q in p.rglob("base_state.json") if q.is_file()), *v1_states(p)})
    return files


def _stamp(p: Path, kind: SourceKind) -> list[Any]:
    """What the cache key holds of the source's files: size and modification time of a file, or of every file a
    folder's conversion reads (:func:`read_files`), with its path in it. One changed, added or removed re-converts;
    the folder's own time misses a file edited inside (an SGD split was keyed by it until 2026-12-05: a dialogues
    file edited in place kept its stale log)."""
    if p.is_dir():
        return [[[os.path.relpath(q, p).replace(os.sep, "/"), q.stat().st_size, q.stat().st_mtime_ns]
                 for q in read_files(p, kind)]]
    st = p.stat()
    return [st.st_size, st.st_mtime_ns]


def materialise(path: str | os.PathLike, options: SourceOptions = SourceOptions(),
                cache_dir: str | os.PathLike | None = None, skip_bad: bool = False, progress: bool = True) -> Path:
    """An agent-log file for ``path``: the file itself, or its conversion written once into the cache
    (``toolworlds:N[:SEED]``, sam_model.data.toolworlds, is generated into the cache first). ``progress``: count
    what a conversion converts on stderr (train.py and evaluate.py wait minutes for a big one); False for a caller
    asked to be quiet (``evaluate(quiet=True)``)."""
    from sam_model.data import toolworlds

    if toolworlds.is_spec(path):
        path = toolworlds.resolve(str(path), Path(cache_dir or default_cache_dir()))
    p = Path(path)
    kind = source_kind(p)
    if options.life < 1:
        raise ValueError(f"life must be >= 1 (episodes per agent life), got {options.life}")
    if kind == "agent-log" and options.life == 1:
        return p
    key = json.dumps([CONVERSION_VERSION, kind, str(p.resolve()), *_stamp(p, kind), asdict(options), skip_bad])
    name = p.name if p.is_dir() else p.name.split(".")[0]
    name += f"-life{options.life}" if options.life > 1 else ""
    out = Path(cache_dir or default_cache_dir()) / f"{kind}-{name}-{hashlib.sha1(key.encode()).hexdigest()[:12]}.jsonl"
    if not out.exists():
        if kind == "agent-log":
            from sam_model.data.reader import iter_episodes

            events = (e.to_json() for ep in iter_episodes(p, "skip" if skip_bad else "raise") for e in ep.events)
        else:
            events = iter_source_events(p, options, skip_bad, progress=progress)  # train.py, evaluate.py: minutes
        with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            for event in make_lives(events, options.life):
                fh.write(json.dumps(event, ensure_ascii=False) + "\n")
    return out
