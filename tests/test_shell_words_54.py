"""Review 54's shell rules (shellwords): a wrapper's settings, counts of lines to show, sub-command groups and
resource types, and git's line ranges, read as what they are rather than as values an earlier event said."""

from __future__ import annotations

import pytest
from shell_calls import needed

from sam_model.data.lineranges import git_lines
from sam_model.data.shellwords import command_words


@pytest.mark.parametrize("command, expected", [
    # timeout DURATION CMD: the duration, -k and -s are how the command runs (as a shell tool's timeout setting)
    ("timeout 300 pytest tests/test_api.py", ["tests/test_api.py"]),
    ("timeout -k 5 -s KILL 300 pytest", []),
    ("timeout --signal=KILL --kill-after=10 600s make build", ["build"]),  # make's target a value
    ("sudo -u deploy timeout 120 ./run.sh", ["deploy"]),  # sudo's user stays a value
    ("nice -n 10 make", []),
    ("docker exec web_7 pytest", ["web_7"]),  # an exec's container stays a value
    # a count of lines or items to show
    ("docker logs --tail 200 web", ["web"]),
    ("docker logs --tail=200 web", ["web"]),
    ("docker logs -n 500 web", ["web"]),
    ("docker compose logs --tail 300 api", ["api"]),
    ("kubectl logs web-7 --tail=200", ["web-7"]),
    ("journalctl -n 200 -u nginx", ["nginx"]),
    ("journalctl --lines=500", []),
    ("git log --max-count=200 src/app.py", ["src/app.py"]),
    ("gh pr list --limit 100 --label bug", ["bug"]),
    ("docker logs --tail all web", ["all", "web"]),  # no number: a word as before
    ("grep --max-count=500 TODO src", ["TODO", "src"]),
    # a sub-command group's sub-command, a resource type
    ("gh pr view 1234", ["1234"]),
    ("gh issue list --label bug", ["bug"]),
    ("gh run view 99123 --log", ["99123"]),
    ("gh api repos/acme/app", ["repos/acme/app"]),  # no group: api is gh's sub-command, as before
    ("kubectl get pods", []),
    ("kubectl describe pod web-7", ["web-7"]),
    ("kubectl -n prod get pods web-7", ["prod", "web-7"]),
    ("kubectl get -o yaml deployment web", ["yaml", "web"]),
    ("kubectl get -l app=web pods", ["web"]),  # a label selector's value, as before
    ("kubectl get deployment/web", ["deployment/web"]),  # TYPE/NAME names the resource
    ("kubectl rollout status deployment web", ["web"]),
    ("kubectl logs web-7", ["web-7"]),  # logs takes a pod, no type
    # git's line ranges
    ("git blame -L 120,160 src/app.py", ["120", "160", "src/app.py"]),
    ("git blame -L120,160 src/app.py", ["120", "160", "src/app.py"]),
    ("git blame -L 120,+40 src/app.py", ["120", "src/app.py"]),  # +40: a count
    ("git blame -L 1,200 src/app.py", ["1", "src/app.py"]),  # the first 200 lines: a count, as sed's
    ("git log -L 120,160:src/app.py", ["120", "160", "src/app.py"]),
    ("git log -L :parse_header:src/app.py", ["parse_header", "src/app.py"]),
    ("git -C /repo blame -L 10,200 a.py", ["/repo", "10", "200", "a.py"]),
    ("git blame -L '/def foo/,+5' a.py", ["/def foo/,+5", "a.py"]),  # a regex bound: one word, as before
])
def test_settings_counts_groups_and_line_ranges(command, expected):
    assert command_words(command) == expected


def test_git_lines_reads_a_range_as_seds():
    assert git_lines("120,160") == ["120", "160"] and git_lines("120") == ["120"] and git_lines("120,-5") == ["120"]




def test_a_timeouts_duration_labels_nothing():
    """timeout 300 pytest traced 300 to the first earlier output that printed it (a log's HTTP status, a count)."""
    assert needed("timeout 300 pytest tests/test_api.py", "the server answered 300 redirects",
                   "tests/test_api.py fails") == ({"command": ["tests/test_api.py"]}, [1])


def test_a_gh_sub_command_is_no_value():
    """gh pr view 1234 traced view to the agent's own "let me view the PR" as well as 1234 to the user."""
    assert needed("gh pr view 1234", "please review PR 1234", "I will view it now") == ({"command": ["1234"]}, [0])


def test_a_blamed_line_range_is_traced_by_its_line_numbers():
    """git blame -L 120,160 FILE: 120,160 whole was said by no event; the grep hit said line 120."""
    assert needed("git blame -L 120,160 src/app.py", "src/app.py:120:    total = round(x)") == (
        {"command": ["120", "src/app.py"]}, [0])
