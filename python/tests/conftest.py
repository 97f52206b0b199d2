"""Shared fixtures of the planrun_migrate tests.

The tests compare the extension with the `planrun` CLI, which they run as a program:
$PLANRUN names it (python/ci sets it), else the debug or release build under
$CARGO_TARGET_DIR or the workspace's target/. The SDK corpus is $PLANRUN_CORPUS, else
../shared/corpus beside the workspace. With PLANRUN_REQUIRE_ALL=1 (CI), a missing tool fails
the tests that need it instead of skipping them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_STORE = ROOT / "examples" / "store"
RUN_PREFIXES = ("wkfl-", "pr-", "prun-")


def missing(what: str) -> None:
    """Skips the test, or fails it in CI."""
    if os.environ.get("PLANRUN_REQUIRE_ALL") == "1":
        pytest.fail(f"{what} is required (PLANRUN_REQUIRE_ALL=1)")
    pytest.skip(f"{what} not found")


def find_planrun() -> Path | None:
    if os.environ.get("PLANRUN"):
        return Path(os.environ["PLANRUN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("debug", "release"):
        if (target / profile / "planrun").is_file():
            return target / profile / "planrun"
    return None


@pytest.fixture(scope="session")
def planrun() -> Path:
    """The planrun binary."""
    found = find_planrun()
    if found is None or not found.is_file():
        missing("the planrun binary ($PLANRUN)")
    return found


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The SDK corpus: one directory per wire version."""
    path = Path(os.environ.get("PLANRUN_CORPUS", ROOT.parent / "shared" / "corpus"))
    if not path.is_dir():
        missing(f"the SDK corpus ({path})")
    return path


def cli(planrun: Path, *args: str | os.PathLike, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Runs planrun with the arguments; output as bytes."""
    return subprocess.run([str(planrun), *map(str, args)], input=stdin, capture_output=True, check=False)


def run_files(store: Path) -> list[Path]:
    """The run files of a DiskFileStorage directory, sorted by name."""
    return sorted(p for p in store.iterdir()
                  if p.is_file() and p.suffix == ".json" and p.name.startswith(RUN_PREFIXES))


def tree(root: Path, skip: tuple[str, ...] = (".planrun",)) -> dict[str, bytes]:
    """Every file under root (but the `skip` directories) by relative path, with its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            path = Path(dirpath, name)
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def jsonl(store: Path, path: Path) -> Path:
    """Writes the store's runs as JSON Lines, one run a line, the bytes of each file but its
    line breaks (JSON strings hold none), so every number keeps its text."""
    with open(path, "wb") as out:
        for run in run_files(store):
            out.write(run.read_bytes().replace(b"\n", b"") + b"\n")
    return path


@pytest.fixture(scope="session")
def generated(planrun: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated store of every version mix (`planrun gen`), with large runs."""
    store = tmp_path_factory.mktemp("generated") / "store"
    result = cli(planrun, "gen", "--runs", "400", "--seed", "14", "--out", store)
    assert result.returncode == 0, result.stderr.decode()
    return store


@pytest.fixture(scope="session")
def migrated(planrun: Path, generated: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """`planrun migrate` of the generated store: its DST and its JSON report."""
    dst = tmp_path_factory.mktemp("migrated") / "dst"
    result = cli(planrun, "--format", "json", "migrate", generated, "--out", dst, "--jobs", "2")
    assert result.returncode == 0, result.stderr.decode()
    return dst, json.loads(result.stdout)
