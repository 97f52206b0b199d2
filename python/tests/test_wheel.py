"""The wheel installs into a clean venv and works there without a Rust toolchain."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from conftest import EXAMPLE_STORE, missing

CHECK = """
import planrun_migrate as pm, sys
converted = pm.convert_file(sys.argv[1])
print(converted.outcome, converted.id)
"""


def test_the_wheel_imports_in_a_clean_venv_without_rust(tmp_path):
    wheels = sorted(Path(os.environ.get("PLANRUN_WHEEL_DIR", "/nonexistent")).glob("planrun_migrate-*.whl"))
    if not wheels:
        missing("a built wheel ($PLANRUN_WHEEL_DIR)")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The extension alone (no pydantic): nothing but the wheel is installed.
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                              str(wheels[-1])], capture_output=True, check=False)
    assert install.returncode == 0, install.stderr.decode()
    path = f"{env_dir / 'bin'}:/usr/bin:/bin"
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    run = subprocess.run([str(python), "-I", "-c", CHECK, str(EXAMPLE_STORE / "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json")],
                         env=env, cwd=tmp_path, capture_output=True, check=False)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().split() == ["converted", "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82"]
    assert sys.version_info >= (3, 11)
