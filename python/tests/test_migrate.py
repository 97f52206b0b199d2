"""`migrate` is `planrun migrate`: the same output tree, journal and report; a
KeyboardInterrupt stops it between chunks, and a resume finishes the same tree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import planrun_migrate as pm
from conftest import EXAMPLE_STORE, cli, tree

def stable(report: dict) -> dict:
    """The report without what differs between two migrations of one store: timings (the
    slowest runs, each run's micros), the destination's own path and what a resume's catch-up
    found."""
    out = {k: v for k, v in report.items() if k not in ("dst", "slowest", "catch_up")}
    out["largest"] = [{k: v for k, v in run.items() if k != "micros"} for run in report["largest"]]
    return out


def test_migrate_writes_the_tree_and_report_of_the_cli(generated, migrated, tmp_path):
    cli_dst, cli_report = migrated
    dst = tmp_path / "dst"
    report = pm.migrate(generated, dst, jobs=2)
    assert tree(dst) == tree(cli_dst)
    assert stable(report) == stable(cli_report)
    assert report["dst"] == str(dst.resolve())
    assert report["outcomes"]["converted"] + report["outcomes"]["converted_with_loss"] == report["runs"]
    assert json.loads((dst / ".planrun" / "report.json").read_text()) == report
    assert (dst / ".planrun" / "journal.jsonl").is_file()
    # A finished migration resumes to nothing to do.
    again = pm.migrate(generated, dst, resume=True, jobs=1)
    assert stable(again) == stable(report)
    # Nothing to do: runs whose files were written just before the first migration read them
    # are racily clean, compared by content, and up to date too.
    caught = again["catch_up"]
    assert (caught["new"], caught["removed"], caught["conflicts"]) == (0, 0, 0)
    assert (caught["up_to_date"], caught["changed"]) == (report["runs"], 0)
    assert tree(dst) == tree(cli_dst)
    with pytest.raises(pm.PlanrunError, match="resume"):
        pm.migrate(generated, dst)


def test_a_dry_run_writes_nothing_and_counts_what_the_cli_counts(generated, planrun, tmp_path):
    dst = tmp_path / "never"
    result = cli(planrun, "--format", "json", "migrate", generated, "--out", dst, "--dry-run")
    assert result.returncode == 0, result.stderr.decode()
    report = pm.migrate(generated, dst, dry_run=True)
    assert not dst.exists()
    assert report["dry_run"] is True
    assert stable(report) == stable(json.loads(result.stdout))


def test_to_r6_writes_the_head_store_of_the_cli(generated, planrun, tmp_path):
    cli_dst = tmp_path / "cli"
    result = cli(planrun, "--format", "json", "migrate", generated, "--out", cli_dst, "--to", "r6", "--jobs", "2")
    assert result.returncode == 0, result.stderr.decode()
    dst = tmp_path / "dst"
    report = pm.migrate(generated, dst, to="r6", jobs=2)
    assert tree(dst, skip=()) .keys() == tree(cli_dst, skip=()).keys()
    assert tree(dst) == tree(cli_dst)
    assert tree(dst / ".planrun" / "residue", skip=()) == tree(cli_dst / ".planrun" / "residue", skip=())
    assert stable(report) == stable(json.loads(result.stdout))


def test_no_sync_writes_the_same_tree(generated, migrated, tmp_path):
    dst = tmp_path / "unsynced"
    report = pm.migrate(generated, dst, durability="none", jobs=1)
    assert report["runs"] == migrated[1]["runs"]
    assert tree(dst) == tree(migrated[0])


def test_shards_together_write_one_migration(generated, migrated, tmp_path):
    dst = tmp_path / "sharded"
    first = pm.migrate(generated, dst, shard="0/2", jobs=1)
    second = pm.migrate(generated, dst, shard=(1, 2), jobs=1)
    assert first["runs"] + second["runs"] == migrated[1]["runs"]
    assert tree(dst) == tree(migrated[0])
    assert (dst / ".planrun" / "report-1-of-2.json").is_file()


def test_arguments_the_engine_refuses(generated, tmp_path):
    with pytest.raises(ValueError, match="--to"):
        pm.migrate(generated, tmp_path / "a", to="R5")
    with pytest.raises(ValueError):
        pm.migrate(generated, tmp_path / "a", jobs=0)
    with pytest.raises(ValueError, match="resume"):
        pm.migrate(generated, tmp_path / "a", overwrite_changed=True)
    with pytest.raises(ValueError):
        pm.migrate(generated, tmp_path / "a", shard="2/2")
    with pytest.raises(TypeError):
        pm.migrate(generated, tmp_path / "a", shard=1.5)
    with pytest.raises(ValueError, match="durability"):
        pm.migrate(generated, tmp_path / "a", durability="fsync")
    with pytest.raises(pm.PlanrunError, match="must not contain each other"):
        pm.migrate(generated, generated / "inside")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "something").write_text("x")
    with pytest.raises(pm.PlanrunError, match="not empty"):
        pm.migrate(generated, busy)
    with pytest.raises(pm.PlanrunError):
        pm.migrate(tmp_path / "no-such-store", tmp_path / "b")
    assert not (tmp_path / "a").exists()


def test_a_src_with_no_run_file_raises_and_creates_nothing(generated, tmp_path):
    # A store's parent (or an empty directory) is not a store: an error, not "0 runs".
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "nested").mkdir()
    with pytest.raises(pm.PlanrunError, match=r"no run files .* 1 directory and 0 JSON files"):
        pm.migrate(parent, tmp_path / "dst")
    with pytest.raises(pm.PlanrunError, match="no run files"):
        pm.migrate(parent, tmp_path / "dst", dry_run=True)
    assert not (tmp_path / "dst").exists()


INTERRUPTED = r"""
import sys, planrun_migrate as pm
print("started", flush=True)
try:
    pm.migrate(sys.argv[1], sys.argv[2], jobs=1)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def test_a_keyboard_interrupt_stops_the_migration_cleanly_and_resume_finishes_it(planrun, tmp_path):
    store = tmp_path / "store"
    result = cli(planrun, "gen", "--runs", "3000", "--seed", "5", "--out", store)
    assert result.returncode == 0, result.stderr.decode()
    reference = tmp_path / "reference"
    assert cli(planrun, "migrate", store, "--out", reference).returncode == 0

    dst = tmp_path / "dst"
    journal = dst / ".planrun" / "journal.jsonl"
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(store), str(dst)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "started"
    # SIGINT once the first chunk is journaled, so the migration is well under way.
    deadline = time.monotonic() + 60
    while b'"completed"' not in (journal.read_bytes() if journal.exists() else b""):
        assert time.monotonic() < deadline and child.poll() is None, "no chunk was journaled"
        time.sleep(0.005)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    stopped = time.monotonic() - sent
    assert child.returncode == 3, f"not interrupted: {out}"
    assert out.strip() == "interrupted"
    assert stopped < 5, f"took {stopped:.1f}s to stop"

    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    done = {line["run"] for line in lines if line.get("event") == "completed"}
    assert 0 < len(done) < 3000, len(done)
    assert not (dst / ".planrun" / "report.json").exists(), "an interrupted migration has no report"
    assert not [name for name in os.listdir(dst) if name.startswith(".tmp-planrun")]

    report = pm.migrate(store, dst, resume=True)
    assert report["runs"] == 3000 and report["verified"] == 3000
    assert tree(dst) == tree(reference)


def test_errors_name_the_keywords_of_migrate_not_the_cli_flags(tmp_path):
    dst = tmp_path / "dst"
    pm.migrate(EXAMPLE_STORE, dst)
    with pytest.raises(pm.PlanrunError) as refused:
        pm.migrate(EXAMPLE_STORE, dst)
    message = str(refused.value)
    assert "resume=True" in message and "--resume" not in message, message
