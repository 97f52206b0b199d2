"""Conversions release the GIL: Python code runs while one is in progress, and two threads
converting at once overlap in time."""

from __future__ import annotations

import json
import threading
import time

import pytest

import planrun_migrate as pm
from conftest import EXAMPLE_STORE, cli

RUN = EXAMPLE_STORE / "prun-7f1c3b6e-8a9d-4eaf-8b1c-3d4e5f6a7b82.json"


@pytest.fixture(scope="module")
def big_run() -> str:
    """An R6 run with a 200,000-item step output: a conversion of a few hundred milliseconds."""
    run = json.loads(RUN.read_text())
    items = [{"n": i, "name": f"item {i}", "ok": i % 2 == 0} for i in range(200_000)]
    run["outputs"]["step_outputs"]["$greeting"]["value"] = items
    return json.dumps(run, indent=4, ensure_ascii=False)


def ticks_during(call) -> tuple[list[float], float, float]:
    """Runs `call` while a Python thread records the time of each of its loop turns."""
    ticks: list[float] = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.02)
    start = time.perf_counter()
    call()
    end = time.perf_counter()
    stop.set()
    spinner.join()
    return ticks, start, end


def test_python_runs_while_a_conversion_is_in_progress(big_run):
    ticks, start, end = ticks_during(lambda: pm.convert(big_run, store=EXAMPLE_STORE))
    assert end - start > 0.1, "the conversion is too quick to tell"
    # The interpreter switches threads every 5 ms: a conversion that held the GIL would leave
    # the spinner no turn well inside it.
    inside = [t for t in ticks if start + 0.03 < t < end - 0.03]
    assert len(inside) > 100, f"{len(inside)} turns of the spinner in {end - start:.3f}s"


@pytest.fixture(scope="module")
def long_store(planrun, tmp_path_factory) -> object:
    """A generated store whose migration takes a few hundred milliseconds: the session's
    400-run store migrates in about 60 ms, too quick to tell."""
    store = tmp_path_factory.mktemp("long") / "store"
    result = cli(planrun, "gen", "--runs", "3000", "--seed", "15", "--out", store)
    assert result.returncode == 0, result.stderr.decode()
    return store


def test_python_runs_while_a_migration_is_in_progress(long_store, tmp_path):
    ticks, start, end = ticks_during(lambda: pm.migrate(long_store, tmp_path / "dst", jobs=1))
    assert end - start > 0.1, "the migration is too quick to tell"
    inside = [t for t in ticks if start + 0.03 < t < end - 0.03]
    assert len(inside) > 100, f"{len(inside)} turns of the spinner in {end - start:.3f}s"


def test_two_threads_converting_overlap_in_time(big_run):
    """While one thread converts the big run, another converts small runs: some of those
    conversions start and end well inside the big one, which a conversion holding the GIL
    would not allow."""
    small = RUN.read_bytes()
    spans: list[tuple[float, float]] = []
    stop = threading.Event()

    def convert_small():
        while not stop.is_set():
            start = time.perf_counter()
            pm.convert(small, store=EXAMPLE_STORE)
            spans.append((start, time.perf_counter()))

    other = threading.Thread(target=convert_small)
    other.start()
    time.sleep(0.02)
    start = time.perf_counter()
    pm.convert(big_run, store=EXAMPLE_STORE)
    end = time.perf_counter()
    stop.set()
    other.join()
    assert end - start > 0.1, "the conversion is too quick to tell"
    inside = [span for span in spans if start + 0.03 < span[0] and span[1] < end - 0.03]
    assert len(inside) > 10, f"{len(inside)} small conversions inside a big one of {end - start:.3f}s"
