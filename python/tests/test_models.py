"""`planrun_migrate.models`: a pydantic model for every V2 schema, generated from schemas/v2
and committed; regenerating them gives the committed modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import planrun_migrate as pm
from conftest import EXAMPLE_STORE, ROOT, cli, missing, run_files
from planrun_migrate import models

COMMITTED = ROOT / "python" / "planrun_migrate" / "models" / "v2"


def test_every_v2_schema_has_its_model():
    schemas = sorted(p.name.removesuffix(".schema.json") for p in (ROOT / "schemas" / "v2").glob("*.schema.json"))
    assert sorted(models.__all__) == schemas
    for name in schemas:
        assert getattr(models, name).__name__ == name


def test_converted_documents_load_out_of_the_box():
    for path in run_files(EXAMPLE_STORE):
        converted = pm.convert_file(path)
        run = models.PlanRunV2.model_validate_json(converted.document)
        assert run.id == converted.id
        models.PlanV2.model_validate(run.plan.model_dump(mode="json", by_alias=True, exclude_unset=True))


def test_the_installed_models_are_the_committed_ones():
    installed = Path(models.__file__).parent / "v2"
    for path in COMMITTED.glob("*.py"):
        assert (installed / path.name).read_bytes() == path.read_bytes(), path.name


def test_the_committed_models_are_what_the_schemas_generate(planrun, tmp_path):
    generator = os.environ.get("PLANRUN_DATAMODEL_CODEGEN") or shutil.which("datamodel-codegen")
    interop = ROOT / "target" / "interop" / "venv" / "bin" / "datamodel-codegen"
    if not generator and interop.is_file():
        generator = str(interop)
    if not generator:
        missing("datamodel-codegen ($PLANRUN_DATAMODEL_CODEGEN; bash interop/setup installs it)")
    env = dict(os.environ, PLANRUN_DATAMODEL_CODEGEN=generator)
    out = tmp_path / "models"
    result = subprocess.run([str(planrun), "schema", "export", "--lang", "python", "--from", str(ROOT / "schemas"),
                             "--out", str(out)], env=env, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr.decode()
    fresh = {p.name: p.read_bytes() for p in (out / "v2").iterdir()}
    committed = {p.name: p.read_bytes() for p in COMMITTED.iterdir() if p.is_file()}
    stale = sorted(name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name))
    assert not stale, f"stale models {stale}: run python/gen-models"


def test_models_is_there_after_a_plain_import():
    """`pm.models` after `import planrun_migrate as pm` alone (PEP 562), in a fresh interpreter
    so that no earlier import made the submodule an attribute already."""
    import sys

    code = "import planrun_migrate as pm; print(pm.models.PlanRunV2.__name__, 'models' in dir(pm))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["PlanRunV2", "True"]
