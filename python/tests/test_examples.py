"""The examples under examples/python convert a JSON Lines file of a generated store's runs to
exactly the tree `planrun migrate` writes (outputs and agent memory, not its journal)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from conftest import ROOT, jsonl, missing, tree

EXAMPLES = ROOT / "examples" / "python"


def run_example(script: str, generated, tmp_path, *extra: str) -> tuple[dict, dict]:
    runs = jsonl(generated, tmp_path / "runs.jsonl")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, str(EXAMPLES / script), str(runs), "--store", str(generated),
                             "--out", str(out), "--workers", "2", *extra],
                            capture_output=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    return json.loads(result.stdout), tree(out)


def test_the_process_pool_example_writes_what_migrate_writes(generated, migrated, tmp_path):
    dst, report = migrated
    summary, written = run_example("convert_pool.py", generated, tmp_path)
    assert summary["runs"] == report["runs"] and summary["failures"] == []
    assert written == tree(dst)


def test_the_dask_example_writes_what_migrate_writes(generated, migrated, tmp_path):
    if importlib.util.find_spec("distributed") is None:
        missing("dask.distributed")
    dst, report = migrated
    summary, written = run_example("convert_dask.py", generated, tmp_path, "--partitions", "7")
    assert summary["runs"] == report["runs"] and summary["failures"] == []
    assert written == tree(dst)


def test_failures_are_reported_with_their_line(generated, tmp_path):
    runs = tmp_path / "runs.jsonl"
    good = jsonl(generated, tmp_path / "all.jsonl").read_bytes().split(b"\n")[0]
    runs.write_bytes(good + b"\n\n{\"id\": 1\n" + good.replace(b'"plan_id": "', b'"plan_id": "plan-0') + b"\n")
    result = subprocess.run([sys.executable, str(EXAMPLES / "convert_pool.py"), str(runs), "--store", str(generated),
                             "--workers", "2"], capture_output=True, check=False, timeout=120)
    assert result.returncode == 1, result.stderr.decode()
    summary = json.loads(result.stdout)
    assert summary["runs"] == 3
    failures = [(f["line"], f["outcome"], f["kind"]) for f in summary["failures"]]
    assert failures[0] == (3, "rejected", "syntax"), failures
    assert [line for line, _, _ in failures] == [3, 4], failures
