"""`convert`, `convert_file`, `downgrade`, `Config` and the exceptions, against the CLI."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

import planrun_migrate as pm
from conftest import EXAMPLE_STORE, cli, run_files, tree


def references(store: Path, out: pm.Converted) -> dict:
    """The plan, end user and agent memory of a converted run, read from its store."""
    v2 = json.loads(out.document)
    found: dict = {"plan": (store / f"{v2['plan']['id']}.json").read_bytes()}
    user = store / f"{v2['end_user']['external_id']}.json"
    if user.is_file():
        found["end_user"] = user.read_bytes()
    if out.agent_memory:
        found["agent_memory"] = {Path(rel).stem: (store / rel).read_bytes() for rel in out.agent_memory}
    return found


def stores(corpus: Path) -> list[Path]:
    return [EXAMPLE_STORE, *sorted(p for p in corpus.glob("*/disk_storage"))]


def test_runs_in_memory_convert_as_their_files_do(corpus):
    count = 0
    for store in stores(corpus):
        for path in run_files(store):
            expected = pm.convert_file(path)
            data = path.read_bytes()
            for out in (pm.convert(data, **references(store, expected)),
                        pm.convert(data, store=store),
                        pm.convert(data.decode(), store=str(store)),
                        pm.convert(bytearray(data), store=store, plan=references(store, expected)["plan"])):
                assert out.document == expected.document, path
                assert out.report == expected.report, path
                assert (out.outcome, out.id, out.source_version) == (
                    expected.outcome, expected.id, expected.source_version)
                assert out.agent_memory == expected.agent_memory
            count += 1
    assert count >= 15


def test_a_run_with_agent_memory_is_blocked_without_it(corpus):
    store = corpus / "R3" / "disk_storage"
    for path in run_files(store):
        expected = pm.convert_file(path)
        if expected.agent_memory:
            refs = references(store, expected)
            del refs["agent_memory"]
            with pytest.raises(pm.BlockedError) as blocked:
                pm.convert(path.read_bytes(), **refs)
            assert blocked.value.kind == "missing_agent_memory"
            assert blocked.value.path == expected.agent_memory[0]
            return
    pytest.fail("no R3 run with agent memory")


def test_without_a_store_a_legacy_run_is_blocked_on_its_plan_as_on_the_cli_stdin(planrun):
    path = run_files(EXAMPLE_STORE)[0]
    result = cli(planrun, "--format", "json", "convert", "-", stdin=path.read_bytes().replace(b"\n", b""))
    told = json.loads(result.stderr.decode().splitlines()[-1])
    with pytest.raises(pm.BlockedError) as blocked:
        pm.convert(path.read_bytes())
    error = blocked.value
    assert (error.path, error.kind, error.message) == (
        told["error"]["file"], told["error"]["kind"], told["error"]["message"])
    assert error.kind == "missing_plan" and error.path.endswith(".json")
    assert "give --store" in error.message
    assert error.run == "<run>"


def test_a_current_run_is_kept_byte_for_byte():
    converted = pm.convert_file(run_files(EXAMPLE_STORE)[-1])
    again = pm.convert(converted.document)
    assert again.outcome == "already_current"
    assert again.document == converted.document
    assert again.report == {"entries": []}
    assert pm.convert_file(run_files(EXAMPLE_STORE)[-1], config=pm.Config()).document == converted.document


BAD_RUNS = {
    # cut short: a syntax error at the end
    "cut": lambda text: text[: len(text) // 2],
    # a value of the wrong type deep in the run
    "type": lambda text: text.replace('"current_step_index": 1', '"current_step_index": "one"', 1),
    # a key twice
    "duplicate": lambda text: text.replace('"state": "COMPLETE",', '"state": "COMPLETE",\n    "state": "FAILED",', 1),
    # not a run at all
    "plan": None,
    # the run's id is not its file name
    "renamed": "rename",
}


@pytest.mark.parametrize("case", sorted(BAD_RUNS))
def test_rejections_carry_the_place_the_cli_reports(case, planrun, tmp_path):
    source = EXAMPLE_STORE / "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json"
    store = tmp_path / "store"
    shutil.copytree(EXAMPLE_STORE, store)
    edit = BAD_RUNS[case]
    if edit is None:
        path = store / "plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json"
    elif edit == "rename":
        path = store / "prun-00000000-0000-4000-8000-000000000000.json"
        path.write_bytes(source.read_bytes())
    else:
        path = store / source.name
        text = source.read_text()
        assert edit(text) != text
        path.write_text(edit(text))
    result = cli(planrun, "--format", "json", "convert", path)
    told = json.loads(result.stderr.decode().splitlines()[-1])
    assert result.returncode == 1
    with pytest.raises(pm.RejectedError) as rejected:
        pm.convert_file(path)
    error = rejected.value
    assert {"file": error.path, "pointer": error.pointer, "line": error.line, "column": error.column,
            "kind": error.kind, "message": error.message} == told["error"]
    assert isinstance(error, pm.PlanrunError) and not isinstance(error, pm.BlockedError)
    if case in ("cut", "type", "duplicate"):
        assert error.line > 0 and error.column > 0 and error.pointer is not None, error
    assert str(error).startswith(str(path))


def test_a_bad_plan_is_named_with_its_position(tmp_path):
    store = tmp_path / "store"
    shutil.copytree(EXAMPLE_STORE, store)
    plan = store / "plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json"
    plan.write_text(plan.read_text().replace('"steps": [', '"steps": 7, "x": [', 1))
    run = store / "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json"
    with pytest.raises(pm.RejectedError) as rejected:
        pm.convert_file(run)
    assert rejected.value.path == str(plan)
    assert rejected.value.run == str(run)
    assert rejected.value.line > 0 and rejected.value.pointer
    # In memory, the same plan is named by its place in the store layout.
    with pytest.raises(pm.RejectedError) as in_memory:
        pm.convert(run.read_bytes(), plan=plan.read_bytes())
    assert in_memory.value.path == plan.name
    assert (in_memory.value.line, in_memory.value.pointer) == (rejected.value.line, rejected.value.pointer)


def test_a_plan_or_end_user_of_another_run_is_rejected():
    run = (EXAMPLE_STORE / "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json").read_bytes()
    other_plan = (EXAMPLE_STORE / "plan-0a6f3c1e-2b4d-4e8f-9a0b-1c2d3e4f5a60.json").read_bytes()
    with pytest.raises(pm.RejectedError) as rejected:
        pm.convert(run, plan=other_plan)
    assert rejected.value.kind == "mismatch"
    plan = (EXAMPLE_STORE / "plan-4e0d7052-6f81-4c23-9e4f-5a6b7c8d9ea4.json").read_bytes()
    other_user = (EXAMPLE_STORE / "user-123.json").read_bytes()
    with pytest.raises(pm.RejectedError) as rejected:
        pm.convert(run, plan=plan, end_user=other_user)
    assert rejected.value.kind == "mismatch"
    with pytest.raises(pm.RejectedError) as rejected:
        pm.convert(run, plan=run)
    assert "not a plan" in rejected.value.message


def test_arguments_of_the_wrong_type_and_missing_files():
    with pytest.raises(TypeError):
        pm.convert(42)
    with pytest.raises(TypeError):
        pm.convert(b"{}", config=3.5)
    with pytest.raises(FileNotFoundError) as missing:
        pm.convert_file(EXAMPLE_STORE / "prun-nope.json")
    assert missing.value.filename.endswith("prun-nope.json")


def test_results_and_errors_survive_pickling():
    converted = pm.convert_file(run_files(EXAMPLE_STORE)[0])
    copy = pickle.loads(pickle.dumps(converted))
    assert (copy.document, copy.report, copy.outcome, copy.id, copy.source_version, copy.path,
            copy.agent_memory) == (converted.document, converted.report, converted.outcome,
                                   converted.id, converted.source_version, converted.path,
                                   converted.agent_memory)
    try:
        pm.convert(b'{"id": [')
    except pm.RejectedError as error:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is pm.RejectedError
        assert (again.path, again.pointer, again.line, again.column, again.kind, str(again)) == (
            error.path, error.pointer, error.line, error.column, error.kind, str(error))
    else:
        pytest.fail("not rejected")
    config = pickle.loads(pickle.dumps(pm.Config()))
    assert config.fingerprint == pm.Config().fingerprint


def test_configs_give_what_the_cli_gives_with_config(corpus, planrun, tmp_path):
    run = EXAMPLE_STORE / "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json"
    configs = sorted((corpus / "R6" / "config").glob("*.json"))
    assert configs
    for path in configs:
        result = cli(planrun, "--format", "json", "convert", run, "--config", path)
        told = json.loads(result.stderr.decode().splitlines()[-1])
        config = pm.Config.from_file(path)
        for given in (path, str(path), config, pm.Config.from_document(path.read_bytes()),
                      pickle.loads(pickle.dumps(config))):
            out = pm.convert_file(run, config=given)
            assert out.document.encode() == result.stdout, path
            assert out.report == told["report"]
        assert config.fingerprint == pm.Config.from_document(path.read_text()).fingerprint
        assert config.report["entries"] == told["report"]["entries"][: len(config.report["entries"])]
        assert json.loads(out.document)["config"] == config.config
    with pytest.raises(pm.RejectedError) as rejected:
        pm.Config.from_file(run)
    assert rejected.value.kind == "not_a_config"
    with pytest.raises(OSError):
        pm.Config.from_file(tmp_path / "none.json")


def test_downgrade_writes_the_files_of_planrun_downgrade(corpus, planrun, tmp_path):
    count = memory = 0
    for store in stores(corpus):
        for path in run_files(store):
            converted = pm.convert_file(path)
            document = converted.document
            # A V2 store as migrate writes it: the document with its agent-memory files.
            v2_store = tmp_path / f"v2-{count}"
            v2_store.mkdir()
            source = v2_store / f"{converted.id}.json"
            source.write_text(document)
            for relative in converted.agent_memory:
                (v2_store / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(store / relative, v2_store / relative)
            for allow_loss in (False, True):
                out = tmp_path / f"{count}-{allow_loss}"
                args = ["downgrade", source, "--out-dir", out] + (["--allow-loss"] if allow_loss else [])
                result = cli(planrun, *args)
                try:
                    files = pm.downgrade(document, store=v2_store, allow_loss=allow_loss)
                except pm.RejectedError as error:
                    assert result.returncode == 1, f"{path}: {error}"
                    assert error.kind == "would_drop" and not allow_loss
                    assert error.message in result.stderr.decode()
                    continue
                assert result.returncode == 0, result.stderr.decode()
                assert files == tree(out), path
                assert list(files)[0] == f"{converted.id}.json"
                if converted.agent_memory:
                    memory += 1
                    given = {Path(rel).stem: (store / rel).read_bytes() for rel in converted.agent_memory}
                    assert pm.downgrade(document, agent_memory=given, allow_loss=allow_loss) == files
                    with pytest.raises(pm.BlockedError) as blocked:
                        pm.downgrade(document, allow_loss=allow_loss)
                    assert blocked.value.kind == "missing_agent_memory"
                    assert blocked.value.path == converted.agent_memory[0]
            count += 1
    assert count >= 15 and memory > 0


def test_downgrade_refuses_what_is_not_a_plan_run_v2_with_its_position():
    with pytest.raises(pm.RejectedError) as rejected:
        pm.downgrade(b'{\n  "id": 5\n}')
    assert rejected.value.line == 2 and rejected.value.pointer == "/id"
    with pytest.raises(pm.RejectedError) as rejected:
        pm.downgrade("[")
    assert rejected.value.kind == "syntax"


def test_check_reports_what_planrun_check_reports(corpus, planrun, tmp_path):
    for path in [EXAMPLE_STORE, *sorted(corpus.glob("*/disk_storage")), corpus / "R6" / "plan_runs"]:
        result = cli(planrun, "--format", "json", "check", path)
        assert result.returncode in (0, 1), result.stderr.decode()
        expected = [json.loads(line) for line in result.stdout.decode().splitlines()]
        assert pm.check(path) == expected, path
        assert pm.check(str(path), sdk="head") == expected
    assert any(not line["loads"] for line in pm.check(corpus / "W1" / "disk_storage"))
    result = cli(planrun, "--format", "json", "check", "--sdk", "R3", EXAMPLE_STORE)
    older = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert pm.check(EXAMPLE_STORE, sdk="v0.2.0") == older
    assert any(line["loads"] is None and "end-user" in line["unread"] for line in older)
    with pytest.raises(ValueError, match="HEAD"):
        pm.check(EXAMPLE_STORE, sdk="0.4.0")
    with pytest.raises(FileNotFoundError):
        pm.check(tmp_path / "none")
