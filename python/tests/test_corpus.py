"""Every run of the SDK corpus through the extension gives what the CLI gives: `convert_file`
returns the very bytes `planrun convert` prints and the loss report it reports, or raises the
error it reports (same file, pointer, line, column, kind and message); `detect` agrees with
`planrun detect` on every corpus file. Each converted document loads with the generated
pydantic model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import planrun_migrate as pm
from conftest import ROOT, cli

CORPUS = Path(os.environ.get("PLANRUN_CORPUS", ROOT.parent / "shared" / "corpus"))
VERSIONS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else ["(none)"]


def json_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.json") if p.is_file())


def error_attributes(error: pm.PlanrunError) -> dict:
    return {"file": error.path, "pointer": error.pointer, "line": error.line,
            "column": error.column, "kind": error.kind, "message": error.message}


@pytest.mark.parametrize("version", VERSIONS)
def test_every_corpus_run_converts_to_the_bytes_the_cli_prints(version, corpus, planrun):
    from planrun_migrate import models

    runs = [p for p in json_files(corpus / version) if is_run(p)]
    assert len(runs) >= 5, f"{version}: only {len(runs)} runs found"
    converted = 0
    for path in runs:
        result = cli(planrun, "--format", "json", "convert", path)
        told = json.loads(result.stderr.decode().splitlines()[-1])
        try:
            out = pm.convert_file(path)
        except pm.PlanrunError as error:
            assert result.returncode == 1, f"{path}: the CLI converted what Python refused: {error}"
            assert result.stdout == b""
            expected = "blocked" if isinstance(error, pm.BlockedError) else "rejected"
            assert told["class"] == expected, path
            assert error_attributes(error) == told["error"], path
            assert error.run == told["path"]
            continue
        assert result.returncode == 0, f"{path}: Python converted what the CLI refused: {told}"
        assert out.document.encode() == result.stdout, f"{path}: the documents differ"
        assert out.report == told["report"], path
        assert (out.outcome, out.id, out.source_version, out.path) == (
            told["class"], told["id"], told["source_version"], told["path"]), path
        models.PlanRunV2.model_validate_json(out.document)
        converted += 1
    # Every run of the SDK's own DiskFileStorage has its plan beside it, so it converts.
    stored = [p for p in runs if p.parent.name == "disk_storage"]
    assert stored and converted >= len(stored), f"{version}: {converted} converted"


def is_run(path: Path) -> bool:
    try:
        return pm.detect(path.read_bytes())["kind"] == "run"
    except pm.RejectedError:
        return False


@pytest.mark.parametrize("version", VERSIONS)
def test_detect_agrees_with_the_cli_on_every_corpus_file(version, corpus, planrun):
    result = cli(planrun, "--format", "json", "detect", corpus / version)
    told = {line["path"]: line for line in map(json.loads, result.stdout.decode().splitlines())}
    files = json_files(corpus / version)
    assert sorted(told) == sorted(map(str, files))
    detected = 0
    for path in files:
        line = told[str(path)]
        try:
            found = pm.detect(path.read_bytes())
        except pm.RejectedError as error:
            assert not line["ok"], f"{path}: the CLI detected {line}"
            expected = dict(line["error"])
            # The CLI names the file it read; in memory the document is `<document>`.
            assert error.path == "<document>"
            assert {k: v for k, v in error_attributes(error).items() if k != "file"} == expected
            continue
        assert line["ok"], f"{path}: Python detected what the CLI refused: {found}"
        version_read = found.pop("version")
        candidates = found.pop("candidates")
        assert found == line["detection"], path
        assert version_read == candidates[-1] and candidates, path
        detected += 1
    assert detected > 0


@pytest.mark.parametrize("version", VERSIONS)
def test_corpus_runs_with_their_plans_in_memory_convert_as_the_cli_converts_them_in_a_store(
        version, corpus, planrun, tmp_path):
    """The corpus's loose runs (plan_runs/, workflows/) name plans kept elsewhere in the corpus:
    with the plan passed in memory, `convert` gives what the CLI gives for the run in a store
    holding that plan."""
    plans = {}
    for path in json_files(corpus):
        try:
            if pm.detect(path.read_bytes())["kind"] == "plan":
                plans.setdefault(json.loads(path.read_bytes()).get("id"), path)
        except pm.RejectedError:
            pass
    loose = [p for p in json_files(corpus / version) if p.parent.name != "disk_storage" and is_run(p)]
    converted = 0
    for number, path in enumerate(loose):
        try:
            pm.convert(path.read_bytes())
            continue  # a run that needs no plan (already current)
        except pm.BlockedError as blocked:
            assert blocked.kind == "missing_plan", path
            plan_file = Path(blocked.path).name
            plan = plans.get(Path(blocked.path).stem)
        if plan is None:
            continue
        store = tmp_path / str(number)
        store.mkdir()
        (store / path.name).write_bytes(path.read_bytes())
        (store / plan_file).write_bytes(plan.read_bytes())
        result = cli(planrun, "--format", "json", "convert", store / path.name)
        told = json.loads(result.stderr.decode().splitlines()[-1])
        try:
            out = pm.convert(path.read_bytes(), plan=plan.read_bytes())
        except pm.PlanrunError as error:
            assert result.returncode == 1, f"{path}: {error}"
            assert (error.kind, "blocked" if isinstance(error, pm.BlockedError) else "rejected") == (
                told["error"]["kind"], told["class"]), path
            continue
        assert result.returncode == 0, f"{path}: {told}"
        assert out.document.encode() == result.stdout, path
        assert out.report == told["report"], path
        assert out.path == "<run>"
        converted += 1
    assert converted >= 10, f"{version}: only {converted} loose runs converted"
