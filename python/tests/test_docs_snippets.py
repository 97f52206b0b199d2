"""The README's and the guides' snippets run as written, twice in a row.

Every fenced block of README.md and docs/*.md whose info string starts with `sh` or `python` is
run, unless the info string also says `no-run` (a block that needs a cluster, installs something,
runs the whole test suite or names placeholder paths: ```` ```sh no-run ````). Each runs from the
repository's root, as the guides say, twice in a row in one temporary directory ($TMPDIR, which
`mktemp` and `tempfile` use), and must exit 0 both times without changing the repository's files:

* a shell block runs under `bash -e -o pipefail`, with the planrun binary under test (see
  conftest.py) first on PATH as `planrun`, and `cargo run [--release] -p planrun --` read as that
  binary (no release build is made);
* a Python block runs in this interpreter, which has the planrun_migrate package under test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
CARGO_RUN = re.compile(r"\bcargo run (?:--release )?-p planrun --(?=\s|$)")
# The README's two set-up commands, exactly: one runs the main job, one the tests.
SET_UP = [
    'cargo run --release -p planrun -- migrate examples/store --out "$(mktemp -d)/store-v2"\n',
    "cargo test --workspace --locked\n",
]


def fenced_blocks(path: Path) -> list[tuple[int, list[str], str]]:
    """(line of the opening fence, info string words, body) of every fenced block of a file."""
    blocks = []
    open_fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if open_fence is None:
            # A backtick fence's info string holds no backtick (CommonMark): "```` ```sh ````" is
            # inline code, not a fence.
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                open_fence = (match.group(1), number, match.group(2).split(), [])
        elif match and match.group(1)[0] == open_fence[0][0] and len(match.group(1)) >= len(open_fence[0]) \
                and not match.group(2).strip():
            blocks.append((open_fence[1], open_fence[2], "".join(open_fence[3])))
            open_fence = None
        else:
            open_fence[3].append(line + "\n")
    assert open_fence is None, f"{path}:{open_fence[1]}: a fenced block is never closed"
    return blocks


def runnable() -> list:
    params = []
    for doc in DOCS:
        for line, info, body in fenced_blocks(doc):
            if info and info[0] in ("sh", "python") and "no-run" not in info[1:]:
                where = f"{doc.relative_to(ROOT)}:{line}"
                params.append(pytest.param(info[0], body, id=where))
    return params


def worktree_state() -> str | None:
    """What `git status` says of the repository's files, or None without git."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    result = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    return result.stdout if result.returncode == 0 else None


@pytest.mark.parametrize(("language", "body"), runnable())
def test_the_snippet_runs_twice_as_written(planrun: Path, tmp_path: Path, language: str, body: str):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "planrun").symlink_to(planrun.resolve())
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", TMPDIR=str(tmp))
    if language == "sh":
        command = ["bash", "-e", "-o", "pipefail", "-c", CARGO_RUN.sub("planrun", body)]
    else:
        command = [sys.executable, "-c", body]
    before = worktree_state()
    for attempt in ("first", "second"):
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                                check=False)
        assert result.returncode == 0, (
            f"the {attempt} run exited {result.returncode}\n--- snippet\n{body}--- stdout\n"
            f"{result.stdout[-3000:]}--- stderr\n{result.stderr[-3000:]}")
    assert worktree_state() == before, "the snippet changed the repository's files"


def test_the_snippets_are_found():
    # A parser that lost the fences would pass every test above by running nothing.
    assert len(runnable()) >= 10


def test_the_readme_holds_exactly_the_two_set_up_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Set up") + 1
    end = next(n for n in range(start, len(lines)) if lines[n].startswith("## ")) + 1
    bodies = [body for line, info, body in fenced_blocks(ROOT / "README.md") if start < line < end]
    assert bodies == SET_UP, "README.md's Set up section must hold exactly the two set-up commands"
