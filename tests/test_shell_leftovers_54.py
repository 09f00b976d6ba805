"""Leftovers of review 54's shell rules (shellwords): values inside a command that a later command needs, left
untraced, or numbers traced to events that merely print them: sed's substitutions, a command a container or a
remote host runs, paging windows, and the scripts a command line carries."""

from __future__ import annotations

import pytest
from shell_calls import needed

from sam_model.data.sedwords import sed_words
from sam_model.data.shellwords import command_words


@pytest.mark.parametrize("command, expected", [
    ("sed -i 's/old_name/new_name/g' src/a.py", ["old_name", "new_name", "src/a.py"]),
    ("sed -i.bak 's|/usr/lib|/opt/lib|' conf/app.ini", ["/usr/lib", "/opt/lib", "conf/app.ini"]),
    ("sed -i 's/def parse_date(/def parse_iso_date(/' src/util.py", ["parse_date", "parse_iso_date", "src/util.py"]),
    (r"sed -i 's/^\(timeout\) = .*/\1 = 300/' conf.ini", ["timeout", "300", "conf.ini"]),  # \1: the matched text
    (r"sed -i 's/a\/b/c\/d/;s/x_y/z_w/' f.txt", ["a/b", "c/d", "x_y", "z_w", "f.txt"]),  # escaped delimiters, two
    ("sed -i 's/v1.2.3/v1.2.4/' setup.cfg", ["v1.2.3", "v1.2.4", "setup.cfg"]),
    ("sed -i 's/debug_mode//' app.cfg", ["debug_mode", "app.cfg"]),  # deleted: no new part
    ("sed -i '/DEBUG = True/d' settings.py", ["DEBUG = True", "settings.py"]),
    ("sed -i '120,130d' a.py", ["120", "130", "a.py"]),  # a deletion's lines, as a print's
    ("sed -n '/def foo/,/def bar/p' a.py", ["foo", "bar", "a.py"]),
    ("sed -n '120,160p' a.py", ["120", "160", "a.py"]),  # line prints: as before
    ("sed 's/x/y' f.txt", ["s/x/y", "f.txt"]),  # does not close: whole, as before
])
def test_a_sed_substitution_is_traced_by_its_parts(command, expected):
    assert command_words(command) == expected


def test_sed_words_reads_only_scripts():
    """A file name is no script: src/util.py, sub/dir/x.txt and s.txt parse as none."""
    assert [sed_words(w) for w in ("src/util.py", "sub/dir/x.txt", "s.txt", "10,20p")] == [None] * 4


def test_a_renamed_function_is_traced_to_the_issue_that_named_it():
    """sed -i 's/def parse_date(/def parse_iso_date(/' FILE was traced by the script whole, which no event said."""
    assert needed("sed -i 's/def parse_date(/def parse_iso_date(/' src/util.py",
                   "Rename parse_date to parse_iso_date.", "src/util.py:12:def parse_date(s):") == (
        {"command": ["parse_date", "parse_iso_date", "src/util.py"]}, [0, 1])


@pytest.mark.parametrize("command, expected", [
    # docker run [options] IMAGE cmd: options' values and the image are values, cmd a command (its program syntax)
    ("docker run --rm -it -v /repo:/app -w /app python:3.11 pytest tests/test_a.py",
     ["/repo:/app", "/app", "python:3.11", "tests/test_a.py"]),
    ("docker run -d --name web -p 8080:80 nginx:1.25", ["web", "8080:80", "nginx:1.25"]),
    ('docker run --rm -e DB_HOST=db-7 --network backend acme/api:2.3 bash -c "cat /etc/app/config.yaml"',
     ["db-7", "backend", "acme/api:2.3", "/etc/app/config.yaml"]),
    ("podman run --rm -u 1000 img python -m pytest -k test_login", ["1000", "img", "test_login"]),
    ("docker run -it --rm --entrypoint /bin/sh alpine:3.19", ["/bin/sh", "alpine:3.19"]),
    ("docker exec -it web_7 pytest", ["web_7"]),  # as before
])
def test_docker_run_is_a_wrapper_as_docker_exec_is(command, expected):
    assert command_words(command) == expected


def test_a_command_run_in_a_new_container_is_traced_by_its_words():
    """docker run IMAGE bash -c "cat FILE" traced bash to the user's "a bash script" and the script whole, which no
    event said, while the listing had printed FILE."""
    assert needed('docker run --rm acme/api:2.3 bash -c "cat /etc/app/config.yaml"',
                   "The acme/api:2.3 image fails at start; a bash script reads its config.",
                   "/etc/app/config.yaml\n/etc/app/logging.yaml") == (
        {"command": ["acme/api:2.3", "/etc/app/config.yaml"]}, [0, 1])


@pytest.mark.parametrize("command, expected", [
    # ssh [options] HOST COMMAND: the options' values and the host, then the command read as a command line
    ("ssh -p 2222 deploy@10.0.0.7 'cd /srv/app && tail -n 50 logs/error.log'",
     ["2222", "deploy@10.0.0.7", "/srv/app", "logs/error.log"]),
    ("ssh prod-db-1 systemctl status postgresql", ["prod-db-1", "postgresql"]),
    ("ssh -i ~/.ssh/id_ed25519 -o User=ci build-3", ["~/.ssh/id_ed25519", "ci", "build-3"]),
    ("""ssh build-3 -t "grep -rn 'def handle_upload' /srv/app\"""", ["build-3", "handle_upload", "/srv/app"]),
    ("ssh -- web-2 ls /tmp", ["web-2", "/tmp"]),
    ("ssh web-2 -- ls -la /tmp", ["web-2", "/tmp"]),
    ("sudo ssh -J bastion.acme.io web-2 uptime", ["bastion.acme.io", "web-2"]),
    (["ssh", "web-2", "cat /etc/nginx/sites-enabled/api.conf"], ["web-2", "/etc/nginx/sites-enabled/api.conf"]),
    ("""ssh web-2 'echo "unclosed'""", ["web-2", 'echo "unclosed']),  # a quote that does not close: whole
])
def test_ssh_runs_a_command_line_on_its_host(command, expected):
    assert command_words(command) == expected


def test_a_command_run_over_ssh_is_traced_by_its_words():
    """ssh HOST 'tail -n 100 FILE' traced the remote line whole, said by no event, while the log had named FILE."""
    assert needed("ssh web-2 'tail -n 100 /var/log/app/error.log'", "The upload API on web-2 answers 502.",
                   "nginx: upstream error, see /var/log/app/error.log") == (
        {"command": ["web-2", "/var/log/app/error.log"]}, [0, 1])


@pytest.mark.parametrize("command, expected", [
    # a page of a file read page by page: its bounds are how far the agent has read, none traced
    ("sed -n '200,400p' src/app.py", ["src/app.py"]),
    ("sed -n '201,400p' src/app.py", ["src/app.py"]),
    ("sed -n '250,500p' src/app.py", ["src/app.py"]),
    ("sed -n '300,350p' src/app.py", ["src/app.py"]),
    ("awk 'NR>=200 && NR<=400' src/app.py", ["src/app.py"]),
    ("awk 'NR>200 && NR<=400' src/app.py", ["src/app.py"]),
    ("git blame -L 200,400 src/app.py", ["src/app.py"]),
    # a window around a grep hit, a line, a tail: as before
    ("sed -n '120,160p' src/app.py", ["120", "160", "src/app.py"]),
    ("sed -n '150,250p' src/app.py", ["150", "250", "src/app.py"]),  # no page of 100 starts at 150
    ("sed -n '230,250p' src/app.py", ["230", "250", "src/app.py"]),  # 20 lines: no page
    ("sed -n '400p' src/app.py", ["400", "src/app.py"]),
    ("sed -n '400,$p' src/app.py", ["400", "src/app.py"]),
    ("sed -i '200,300d' src/app.py", ["200", "300", "src/app.py"]),  # a deletion's lines: no page
])
def test_a_pages_bounds_are_no_values(command, expected):
    assert command_words(command) == expected


def test_the_next_page_of_a_file_is_not_labelled_with_an_output_that_printed_its_end():
    """sed -n '200,400p' FILE after '1,200p' traced 400 to the page before, which printed the constant 400 (and
    would have to any output printing it: an HTTP status), though the agent only read on."""
    got = needed("sed -n '200,400p' src/app.py", "src/app.py drops large uploads.",
                  "    MAX_UPLOAD_MB = 400\n    def upload(self, body):")
    assert got == ({"command": ["src/app.py"]}, [0])


@pytest.mark.parametrize("command, expected", [
    # python -c SCRIPT: its string literals and the modules and names it imports from outside the standard library
    ("""python -c 'import json; print(json.load(open("config/settings.json"))["db_host"])'""",
     ["config/settings.json", "db_host"]),
    ('python3 -c "from app.billing.tax import compute_vat; print(compute_vat(100))"', ["app.billing.tax", "compute_vat"]),
    ("""python -c 'x = open("a.py", "rb").read(); print(f"{x!r} done")'""", ["a.py"]),  # a mode, an f-string: none
    ('python -c "import sys; print(sys.argv)" data/in.csv', ["data/in.csv"]),  # its arguments: words as before
    ('python -c "print(1"', ["print(1"]),  # no Python: one word
    ("""uv run python -c "import pandas as pd; df = pd.read_csv('data/sales.csv', sep=';'); print(df['region'])\"""",
     ["pandas", "data/sales.csv", "region"]),
    # a heredoc fed to Python or a shell: read as Python or as command lines; any other body one text, as before
    ("python3 - <<'EOF'\nimport pandas as pd\ndf = pd.read_csv('data/sales_2023.csv')\nprint(df.head())\nEOF",
     ["-", "pandas", "data/sales_2023.csv"]),
    ("cd /repo && sudo -u app python3 - <<'PY'\nfrom app.billing.tax import compute_vat\nPY",
     ["/repo", "app", "-", "app.billing.tax", "compute_vat"]),
    ("bash <<EOF\ncd /srv && make deploy\nEOF", ["/srv", "deploy"]),
    ("ssh web-2 <<'EOF'\ntail -n 100 /var/log/app/error.log\nEOF", ["web-2", "/var/log/app/error.log"]),
    ('docker exec -i web bash <<EOF\ngrep -rn "def handle_upload" /srv/app\nEOF', ["web", "handle_upload", "/srv/app"]),
    ("cat <<EOF > notes.txt\nhello world\nEOF", ["notes.txt", "hello world"]),
    ("bash run.sh <<EOF\nyes\nEOF", ["run.sh", "yes"]),  # data for a script file
    ('python -m json.tool <<EOF\n{"a": 1}\nEOF', ['{"a": 1}']),  # data for a module
    ("git commit -F - <<EOF\nFix the upload limit\nEOF", ["-", "Fix the upload limit"]),
])
def test_a_script_a_command_carries_is_traced_by_its_values(command, expected):
    assert command_words(command) == expected


def test_a_key_read_by_a_python_one_liner_is_traced_to_the_output_that_printed_it():
    """python -c '...open("config/settings.json")...["db_host"]' was one word, said by no event (or free text), while
    the listing had printed the file and the user had named the key."""
    got = needed("""python -c 'import json; print(json.load(open("config/settings.json"))["db_host"])'""",
                  "Which db_host does staging use?", "config/settings.json\nconfig/logging.json")
    assert got == ({"command": ["config/settings.json", "db_host"]}, [0, 1])


def test_a_heredoc_script_is_traced_by_the_file_it_reads():
    """python3 - <<'EOF' ... EOF: the body was one text, free text by the spec, the CSV the user named untraced."""
    got = needed("python3 - <<'EOF'\nimport pandas as pd\ndf = pd.read_csv('data/sales_2023.csv')\n"
                  "print(df.groupby('region').revenue.sum())\nEOF", "Sum revenue by region in data/sales_2023.csv.")
    assert got == ({"command": ["data/sales_2023.csv", "region"]}, [0])
