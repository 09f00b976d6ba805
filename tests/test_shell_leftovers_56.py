"""Leftovers of the shell rules (shellwords) after stop 55: scripts of other languages a command carries, sed's
text commands, a heredoc piped into an interpreter, a window opening at a grep hit, and a search's paging."""

from __future__ import annotations

import json

import pytest
from shell_calls import decide, needed

from sam_model.data.chatmessages import ToolCall
from sam_model.data.lineranges import PageBound
from sam_model.data.scriptwords import script_words
from sam_model.data.searchhits import grep_hit
from sam_model.data.sedwords import sed_words
from sam_model.data.shellwords import command_words
from sam_model.data.toolstate import TranscriptState


@pytest.mark.parametrize("command, expected", [
    # node -e / -p, ruby -e / -ne, perl -e / -ne / -pi -e: the script's plain string literals, its code none
    ("""node -e "console.log(require('./package.json').version)\"""", ["package.json"]),
    ("""node -pe "require('fs').readFileSync('config/app.json', 'utf8')\"""", ["config/app.json"]),  # core, codec
    ("""node --eval="console.log(process.env.API_URL, 'order_42')\"""", ["order_42"]),
    ("""node -e 'console.log(`id-${y}`, "order_42") // the order'""", ["order_42"]),  # a template, a comment
    ("""ruby -e 'require "json"; puts JSON.parse(File.read("config/app.json"))["db_host"]'""",
     ["config/app.json", "db_host"]),
    ("""ruby -ne 'puts $_ if $_.include?("ERROR_42")' log/app.log""", ["ERROR_42", "log/app.log"]),
    ("""perl -e 'print "Total: $x\\n"; print "done_ok\\n"'""", ["done_ok"]),  # "$x" interpolates: composed
    ("perl -pi -e 's/old_name/new_name/g' src/a.pl", ["old_name", "new_name", "src/a.pl"]),  # sed's edit
    ("perl -i.bak -pe 's|/usr/lib|/opt/lib|' conf/app.ini", ["/usr/lib", "/opt/lib", "conf/app.ini"]),
    ("""perl -e 'print "unclosed'""", ['print "unclosed']),  # a quote that does not close: whole, as before
    ("node app.js -e staging", ["app.js", "staging"]),  # -e after the script file: the script's own flag
])
def test_a_script_of_another_language_is_traced_by_its_literals(command, expected):
    assert command_words(command) == expected


def test_script_words_reads_no_code():
    """Names, calls and regex literals are the agent's own writing; a /* comment that does not close is no script."""
    assert script_words("ruby", "x = items.map { |i| i.name }; p x.size", 10_000) == []
    assert script_words("node", "/* open", 10_000) is None
    assert script_words("perl", "print 'a' x 3" * 10, 20) is None  # past the limit: whole


def test_a_key_read_by_a_node_one_liner_is_traced_to_the_output_that_printed_it():
    """node -e "...require('./config/default.json').db_host..." was one word, said by no event, while the listing
    had printed the file and the user had named the key."""
    got = needed("""node -e "console.log(require('./config/default.json')['db_host'])\"""",
                 "Which db_host does staging use?", "config/default.json\nconfig/test.json")
    assert got == ({"command": ["config/default.json", "db_host"]}, [0, 1])


@pytest.mark.parametrize("command, expected", [
    # sed's a/i/c text, read as a substitution's new part (code its names, other text whole), and w/r FILE a path
    ("sed -i '/^import os$/a import sys' a.py", ["os", "sys", "a.py"]),  # was the script whole
    ("sed -i '3a\\\nTIMEOUT_SECONDS = 300' conf/app.py", ["TIMEOUT_SECONDS = 300", "3", "conf/app.py"]),
    ("sed -i '/^\\[server\\]$/i host = db-7.internal' conf/app.ini",  # an escaped bracket: a literal's (67)
     ["server", "host = db-7.internal", "conf/app.ini"]),
    ("sed -i '120c\\    return parse_iso_date(value)' src/util.py", ["parse_iso_date", "value", "120", "src/util.py"]),
    ("sed -i '1i #!/usr/bin/env python3' run.py", ["/usr/bin/env python3", "1", "run.py"]),
    ("sed -n '/ERROR/w errors_2024.log' app.log", ["ERROR", "errors_2024.log", "app.log"]),
    ("sed -i 's/old_name/new_name/gw changed.txt' src/a.py", ["old_name", "new_name", "changed.txt", "src/a.py"]),
    ("sed '/<body>/r header.html' page.html", ["<body>", "header.html", "page.html"]),
    ("sed -i 's/a/b/' app.py", ["a", "b", "app.py"]),  # app.py: a file, no 'a' command
])
def test_sed_text_and_file_commands_are_traced_by_their_parts(command, expected):
    assert command_words(command) == expected


def test_a_file_name_is_no_sed_text_command():
    """A file a sed edits that opens with a command letter (app.py, a.txt, w.log, i18n.json) is no script."""
    assert [sed_words(w) for w in ("app.py", "a.txt", "c.cfg", "w.log", "r.md", "i18n.json")] == [None] * 6


def test_a_line_inserted_by_sed_is_traced_to_the_issue_that_gave_it():
    """sed -i '3a\\ TEXT' FILE was one word with the script, said by no event, while the issue gave the line."""
    got = needed("sed -i '/^DEBUG/a TIMEOUT_SECONDS = 300' conf/settings.py",
                 "Add TIMEOUT_SECONDS = 300 after DEBUG in conf/settings.py.")
    assert got == ({"command": ["debug", "timeout_seconds = 300", "conf/settings.py"]}, [0])


@pytest.mark.parametrize("command, expected", [
    # a heredoc cat pipes into an interpreter is its script, as python - <<EOF's is; into anything else, data
    ("cat <<'EOF' | python3\nimport pandas as pd\ndf = pd.read_csv('data/sales_2023.csv')\nEOF",
     ["pandas", "data/sales_2023.csv"]),
    ("cat <<EOF | sudo python3 -\nprint(open('config/app.json').read())\nEOF", ["-", "config/app.json"]),
    ("cat << 'EOF' | bash\ncd /srv && make deploy\nEOF", ["/srv", "deploy"]),
    ("cat <<EOF | sh -s\ngrep -rn 'def handle_upload' src/\nEOF", ["handle_upload", "src"]),
    ("cat <<A | python3; cat <<B | bash\nprint('order_42')\nA\nls /srv/app\nB", ["order_42", "/srv/app"]),
    ("cat <<EOF | grep foo\nhello world\nEOF", ["foo", "hello world"]),  # data: one text, as before
    ("cat <<EOF | python3 run.py\nhello world\nEOF", ["run.py", "hello world"]),  # data for a script file
    ("cat <<EOF || python3\nhello world\nEOF", ["hello world"]),  # no pipe
    ("cat <<EOF > job.py\nprint('order_42')\nEOF", ["job.py", "print('order_42')"]),  # a file written: one text
])
def test_a_heredoc_piped_into_an_interpreter_is_its_script(command, expected):
    assert command_words(command) == expected


def test_a_script_piped_into_python_is_traced_by_the_file_it_reads():
    """cat <<'EOF' | python3 ... EOF: the body was one text, free text by the spec, the CSV the user named untraced."""
    got = needed("cat <<'EOF' | python3\nimport pandas as pd\ndf = pd.read_csv('data/sales_2023.csv')\n"
                 "print(df.groupby('region').revenue.sum())\nEOF", "Sum revenue by region in data/sales_2023.csv.")
    assert got == ({"command": ["data/sales_2023.csv", "region"]}, [0])


@pytest.mark.parametrize("arguments, page", [
    ({"pattern": "TODO", "offset": 100, "head_limit": 100}, True),  # the second page of 100 results
    ({"pattern": "TODO", "offset": 120, "head_limit": 20}, True),  # the seventh of 20: no file's page, results'
    ({"pattern": "TODO", "offset": "300", "head_limit": "100"}, True),
    ({"pattern": "TODO", "offset": 150, "head_limit": 100}, False),  # skips no whole page: a value
    ({"pattern": "TODO", "offset": 100, "head_limit": 0}, False),
    ({"pattern": "TODO", "offset": 100}, False),  # no head_limit: no page to judge
])
def test_a_search_offset_that_pages_its_results_is_no_value(arguments, page):
    from sam_model.data.toolarguments import is_page_offset

    assert is_page_offset("Grep", "offset", arguments) is page
    assert is_page_offset("mcp__search__grep", "offset", arguments) is page
    assert not is_page_offset("search_customers", "offset", arguments)  # a business tool's offset is a value


def test_the_next_page_of_grep_results_is_not_labelled_with_an_output_that_printed_its_offset():
    """Grep(offset=100, head_limit=100) traced 100 to the earlier output that printed 100 (a limit in a config)."""
    got = decide("Grep", {"pattern": "TODO", "path": "src", "offset": 100, "head_limit": 100},
                 "List the TODO comments under src.", "config.py:3:MAX_ITEMS = 100")
    assert got.needed == {"path": ["src"], "pattern": ["todo"]} and got.labels == [0]


def _after_grep(call: ToolCall, output: str = "src/shop/cart.py:200:def set_total(self):"):
    """The decision on ``call`` after a user turn saying 'HTTP 200' and a grep whose result is ``output``."""
    st = TranscriptState()
    st.add({"role": "user", "content": "Checkout answers HTTP 200 with an empty body; find where the total is set."})
    st.add({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "Bash", "arguments": json.dumps({"command": "grep -rn 'def set_total' src/"})}}]})
    st.add({"role": "tool", "tool_call_id": "c1", "content": output})
    st.add({"role": "assistant", "content": "Reading it."})
    return st.decide([call])


@pytest.mark.parametrize("call, needed", [
    # a window that is a page by its numbers but opens (or closes) at a grep hit: its numbers are values, the hit's
    # traced to the grep (event 2), not to the user's 'HTTP 200'
    (ToolCall("Bash", {"command": "sed -n '200,250p' src/shop/cart.py"}), ["200", "src/shop/cart.py"]),
    (ToolCall("Bash", {"command": "sed -n '150,200p' src/shop/cart.py"}), ["200", "src/shop/cart.py"]),
    (ToolCall("Bash", {"command": "awk 'NR>=200 && NR<=300' src/shop/cart.py"}), ["200", "src/shop/cart.py"]),
    (ToolCall("Bash", {"command": "git blame -L 200,250 src/shop/cart.py"}), ["200", "src/shop/cart.py"]),
    (ToolCall("str_replace_editor", {"command": "view", "path": "src/shop/cart.py", "view_range": [200, 250]}),
     {"path": ["src/shop/cart.py"], "view_range": ["200"]}),
    (ToolCall("Read", {"file_path": "src/shop/cart.py", "offset": 200, "limit": 50}),
     {"file_path": ["src/shop/cart.py"], "offset": ["200"]}),
])
def test_a_window_opening_at_a_grep_hit_is_no_page(call, needed):
    d = _after_grep(call)
    assert d.needed == (needed if isinstance(needed, dict) else {"command": needed}) and d.labels == [2]


@pytest.mark.parametrize("output", [
    "src/shop/cart.py-200-    total = 0",  # a context line, no hit
    "   200\t    def set_total(self):",  # a numbered view
    "HTTP/1.1 200 OK",
    "src/shop/cart.py:1200:def set_total(self):",
])
def test_a_page_whose_start_no_grep_printed_as_a_hit_is_still_a_page(output):
    """The paging rule holds where no earlier result printed the bound as a hit: 200 and 250 are no words."""
    d = _after_grep(ToolCall("Bash", {"command": "sed -n '200,250p' src/shop/cart.py"}), output)
    assert not {"200", "250"} & set(d.needed.get("command", [])) and d.outcomes["trivial"] == 0


@pytest.mark.parametrize("text, line, hit", [
    ("src/a.py:200:def f():", 200, True),
    ("Bash: src/a.py:200:def f():", 200, True),  # a result as the importer writes it
    ("x\nsrc/a.py:200:12:def f():", 200, True),  # rg --column
    ("200:def f():", 200, True),  # one file's hits
    ("Line 200:def f():", 200, True),  # SWE-agent's search_file
    ("C:\\repo\\src\\a.py:200:def f():", 200, True),  # a Windows path, as Claude Code's Grep prints it
    ("C:\\repo\\src\\a.py:1200:def f():", 200, False),
    ("src/a.py:1200:def f():", 200, False),
    ("src/a.py:2000:def f():", 200, False),
    ("src/a.py-200-def f():", 200, False),
    ("status 200: ok", 200, False),
])
def test_grep_hit(text, line, hit):
    assert grep_hit(text, line) is hit


def test_command_words_keeps_page_bounds_only_when_asked():
    """The readers that see no earlier outputs (the SWE-agent reader, forget) read a page's bounds as before."""
    assert command_words("sed -n '200,400p' a.py") == ["a.py"]
    got = command_words("sed -n '200,400p' a.py", pages=True)
    assert got == ["200", "400", "a.py"] and [type(w) for w in got[:2]] == [PageBound, PageBound]
    assert got[0].window == (200, 400)


@pytest.mark.parametrize("command, expected", [
    # switches of no value clustered before -e (-wle, -lane, -wne) still open a script; -0777 and -i stand alone
    ("""perl -wle 'print "order_42"'""", ["order_42"]),
    ("""perl -lane 'print $F[0] if $F[1] eq "order_42"' data.txt""", ["order_42", "data.txt"]),
    ("""ruby -wne 'puts $_ if $_.include?("ERROR_42")' log/app.log""", ["ERROR_42", "log/app.log"]),
    ("perl -0777 -pe 's/old_name/new_name/g' f.pl", ["old_name", "new_name", "f.pl"]),
    ("perl -i -wpe 's/old_name/new_name/' f.pl", ["old_name", "new_name", "f.pl"]),
])
def test_a_cluster_of_switches_before_e_opens_a_script(command, expected):
    assert command_words(command) == expected


def test_grep_hit_scans_only_a_text_that_holds_the_line(monkeypatch):
    """grep_hit ran its line-anchored pattern over every earlier result for each page bound (3 ms a 100 KB result):
    a result that does not hold 'LINE:' is now passed over by a substring test, the pattern read only on the rest."""
    from sam_model.data import searchhits

    read: list[int] = []
    pattern = searchhits._hit_line
    monkeypatch.setattr(searchhits, "_hit_line", lambda line: read.append(line) or pattern(line))
    assert not grep_hit("x" * 100_000, 200) and read == []
    assert grep_hit("src/a.py:200:def f():", 200) and read == [200]
