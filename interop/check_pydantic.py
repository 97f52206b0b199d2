"""Reads the interop documents with the pydantic v2 models datamodel-codegen generated from
schemas/ (`planrun schema export --lang python`).

Checks, each counted as one test:
* every valid PlanRunV2 document loads with `PlanRunV2.model_validate_json`, dumps back
  (`model_dump(mode="json", by_alias=True, exclude_unset=True)`) equal to the input by value
  (types included: 1 and 1.0 and True differ), and re-loads from its own JSON dump to an equal model;
* each of its parts (the plan, every step, the end user, the config, every step output value and
  clarification, the final output) does the same with its own schema's model (PlanV2, StepV2, ...);
* every generated RunContext descriptor does the same with RunContext;
* every rejected document (the Rust side rejects it) raises ValidationError; a case marked
  `pydantic_strict_only` is checked with `strict=True` (pydantic's lax mode coerces "3" to 3).

Usage: check_pydantic.py MODELS_DIR DOCS_DIR   (MODELS_DIR holds the package `planrun_schemas`)
A round trip whose only difference is a number beyond the range of a double (see round_trip) is
skipped, with a line saying so. Prints one line per failure and ends with
`pydantic: N passed, M failed, K skipped`; exits 1 on a failure.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError


def same(a: Any, b: Any) -> bool:
    """Equality by value that also compares JSON types (bool, int and float differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def without_non_finite(value: Any) -> Any:
    """The value with every infinite or NaN float replaced by None, as pydantic dumps them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: without_non_finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_non_finite(v) for v in value]
    return value


def first_difference(a: Any, b: Any, path: str = "") -> str:
    if type(a) is not type(b):
        return f"{path or '/'}: {type(a).__name__} {a!r:.80} vs {type(b).__name__} {b!r:.80}"
    if isinstance(a, dict):
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                return f"{path}/{key}: present on one side only"
            if not same(a[key], b[key]):
                return first_difference(a[key], b[key], f"{path}/{key}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path or '/'}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            if not same(x, y):
                return first_difference(x, y, f"{path}/{i}")
    return f"{path or '/'}: {a!r:.80} vs {b!r:.80}"


def parts(doc: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The sub-documents of a PlanRunV2 that have a schema of their own: (model, where, value)."""
    out: list[tuple[str, str, Any]] = [
        ("PlanV2", "/plan", doc["plan"]),
        ("EndUser", "/end_user", doc["end_user"]),
        ("Config", "/config", doc["config"]),
    ]
    out += [("StepV2", f"/plan/steps/{i}", s) for i, s in enumerate(doc["plan"]["steps"])]
    out += [
        ("StepOutputValue", f"/step_output_values/{i}", v)
        for i, v in enumerate(doc["step_output_values"])
    ]
    out += [("Clarification", f"/clarifications/{i}", c) for i, c in enumerate(doc["clarifications"])]
    if doc["final_output"] is not None:
        out.append(("Output", "/final_output", doc["final_output"]))
    return out


class BeyondDouble(Exception):
    """The document holds a number beyond the range of a double."""


class Checker:
    def __init__(self, models_dir: Path) -> None:
        sys.path.insert(0, str(models_dir))
        self.models: dict[str, Any] = {}
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def model(self, name: str) -> Any:
        if name not in self.models:
            module = importlib.import_module(f"planrun_schemas.v2.{name}")
            self.models[name] = getattr(module, name)
        return self.models[name]

    def skip(self, what: str, why: str) -> None:
        self.skipped += 1
        print(f"skip {what}: a number beyond the range of a double reads as inf ({why:.160})")

    def result(self, ok: bool, what: str, why: str = "") -> None:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}: {why}")

    def round_trip(self, model_name: str, text: str) -> str | None:
        """None when the text loads and dumps back by value, else why not. A number beyond the
        range of a double (1e400, which Rust keeps as written) reads as inf in Python, and
        pydantic dumps inf as null: such a document is counted as skipped, not passed, when that
        is its only difference."""
        model = self.model(model_name)
        try:
            loaded = model.model_validate_json(text)
        except ValidationError as e:
            return f"rejected: {str(e)[:600]}"
        dumped = loaded.model_dump(mode="json", by_alias=True, exclude_unset=True)
        expected = json.loads(text)
        if not same(dumped, expected):
            if same(dumped, without_non_finite(expected)):
                raise BeyondDouble(first_difference(dumped, expected))
            return f"dump differs from the input at {first_difference(dumped, expected)}"
        again = model.model_validate_json(loaded.model_dump_json(by_alias=True, exclude_unset=True))
        if again != loaded:
            return "the model does not re-load from its own JSON dump"
        return None

    def check(self, what: str, model_name: str, text: str) -> str | None:
        """Counts one round trip; returns why it failed (None when it passed or was skipped)."""
        try:
            why = self.round_trip(model_name, text)
        except BeyondDouble as e:
            self.skip(what, str(e))
            return None
        self.result(why is None, what, why or "")
        return why

    def valid(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        self.check(f"PlanRunV2 {path.name}", "PlanRunV2", text)
        for model_name, where, value in parts(json.loads(text)):
            self.check(
                f"{model_name} {path.name}#{where}",
                model_name,
                json.dumps(value, ensure_ascii=False),
            )

    def run_context(self, path: Path) -> None:
        self.check(f"RunContext {path.name}", "RunContext", path.read_text(encoding="utf-8"))

    def rejected(self, path: Path, case: dict[str, Any]) -> None:
        strict = bool(case.get("pydantic_strict_only"))
        text = path.read_text(encoding="utf-8")
        try:
            # strict=None keeps the models' own strictness (StrictStr, StrictBool); strict=False
            # would override it.
            self.model("PlanRunV2").model_validate_json(text, strict=True if strict else None)
        except ValidationError:
            self.result(True, path.name)
        else:
            mode = "strict" if strict else "lax"
            self.result(False, f"rejected/{path.name} ({case['category']})", f"pydantic ({mode}) accepts it")
        if strict:
            try:
                self.model("PlanRunV2").model_validate_json(text)
                print(f"note: {path.name} is accepted by pydantic's lax mode (checked strict)")
            except ValidationError:
                pass


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    # Generated documents hold any Unicode, lone surrogates included: never fail on printing.
    sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
    models_dir, docs = Path(sys.argv[1]), Path(sys.argv[2])
    checker = Checker(models_dir)
    valid = sorted((docs / "valid").glob("*.json"))
    contexts = sorted((docs / "run_context").glob("*.json"))
    cases = json.loads((docs / "rejected" / "cases.json").read_text(encoding="utf-8"))
    if not valid or not contexts or not cases:
        print(f"FAIL no documents under {docs}")
        checker.failed += 1
    for path in valid:
        checker.valid(path)
    for path in contexts:
        checker.run_context(path)
    for case in cases:
        checker.rejected(docs / "rejected" / f"{case['name']}.json", case)
    print(
        f"read {len(valid)} PlanRunV2 documents, {len(contexts)} RunContext descriptors, "
        f"{len(cases)} rejected documents"
    )
    print(f"pydantic: {checker.passed} passed, {checker.failed} failed, {checker.skipped} skipped")
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())
