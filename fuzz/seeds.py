#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into fuzz/corpus/<target>/, from the SDK's own
corpus (../shared/corpus), the shipped example store, and stores that `planrun gen` writes (one
per wire version, and a migration of each to V2 and to a HEAD store for the V2, journal and
HEAD-store targets).

    python3 fuzz/seeds.py --planrun target/debug/planrun [--shared ../shared/corpus] [--out DIR]

The seeds are regenerated on every run (each target's directory is emptied first), never edited
by hand, and never committed: fuzz/corpus/ is ignored by git. What a campaign adds to it stays
until the next regeneration clears it, so do not regenerate it under a running campaign.
"""

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
SEP = b"\x00"

# The first byte of a legacy_schema input picks the model: the order of MODELS in
# fuzz_targets/legacy_schema.rs.
LEGACY_MODELS = [
    "run.W1", "run.R0", "run.R1", "run.R2", "run.R3", "run.R4", "run.R5", "run.R6", "plan",
    "end_user", "output", "tool_call", "config", "step_output_value", "step_output_values",
    "run_context",
]
# The first byte of a v2_read input picks the type: the order of TYPES in fuzz_targets/v2_read.rs.
V2_TYPES = [
    "PlanRunV2", "PlanV2", "RunContext", "Clarification", "Config", "EndUser", "Output",
    "StepOutputValue", "StepV2",
]
GEN_VERSIONS = ["W1", "R0", "R1", "R2", "R3", "R4", "R5", "R6"]


class Seeds:
    """The seeds of one target, named by their content (so the same seed is written once)."""

    def __init__(self, target, out):
        self.dir = out / target
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        self.count = 0

    def add(self, data):
        name = hashlib.sha1(data).hexdigest()
        path = self.dir / name
        if not path.exists():
            path.write_bytes(data)
            self.count += 1


def documents(root):
    """Every JSON document under root, sorted, except manifests and the SDK's JSON Schemas."""
    for path in sorted(root.rglob("*.json")):
        if path.name == "manifest.json" or "schemas" in path.relative_to(root).parts:
            continue
        yield path


def load(path):
    try:
        return json.loads(path.read_bytes())
    except ValueError:
        return None


def legacy_model(path, doc):
    """The legacy model a corpus or store document is read as, by where it lies and its shape."""
    parts = path.parts
    if isinstance(doc, list):
        return "step_output_values"
    if not isinstance(doc, dict):
        return None
    if "plan_run" in doc or "execution_context" in doc and "plan" in doc:
        return "run_context"
    if "workflow_id" in doc:
        return "run.W1"
    if "plan_id" in doc and "outputs" in doc:
        return "run.R6" if "plan_run_inputs" in doc else "run.R4"
    if "plan_context" in doc or "steps" in doc:
        return "plan"
    if "external_id" in doc:
        return "end_user"
    if "tool_name" in doc and "status" in doc:
        return "tool_call"
    if "step_name" in doc:
        return "step_output_value"
    if "value" in doc or "summary" in doc:
        return "output"
    if "config" in parts or "llm_provider" in doc or "models" in doc:
        return "config"
    return None


def stores(shared, gen_root):
    """The DiskFileStorage stores to draw runs from: the corpus's, the example and generated ones."""
    found = sorted(p for p in shared.glob("*/disk_storage") if p.is_dir())
    found.append(ROOT / "examples" / "store")
    found.extend(sorted(p for p in gen_root.iterdir() if p.is_dir()))
    return found


def run_bundles(store):
    """Each run of a store with its plan, end user and first agent-memory file, NUL-separated."""
    for run_path in sorted(store.glob("*.json")):
        if not run_path.name.startswith(("prun-", "pr-", "wkfl-")):
            continue
        run = load(run_path)
        if not isinstance(run, dict):
            continue
        parts = [run_path.read_bytes()]
        plan_id = run.get("plan_id") or run.get("workflow_id") or ""
        plan = store / f"{plan_id}.json"
        parts.append(plan.read_bytes() if plan.is_file() else b"")
        user = store / f"{run.get('end_user_id', 'local')}.json"
        parts.append(user.read_bytes() if user.is_file() else b"")
        memory = sorted((store / run_path.stem).glob("*.json")) if (store / run_path.stem).is_dir() else []
        if memory:
            parts.append(memory[0].read_bytes())
        yield SEP.join(parts)


def v2_parts(run):
    """Sub-documents of a V2 run, each with the index of its type in V2_TYPES."""
    yield 0, run
    plan = run.get("plan")
    if isinstance(plan, dict):
        yield 1, plan
        for step in plan.get("steps", [])[:3]:
            yield 8, step
    for clarification in run.get("clarifications", [])[:3]:
        yield 3, clarification
    if isinstance(run.get("config"), dict):
        yield 4, run["config"]
    if isinstance(run.get("end_user"), dict):
        yield 5, run["end_user"]
    for value in run.get("step_output_values", [])[:3]:
        yield 7, value
    outputs = run.get("outputs")
    if isinstance(outputs, dict):
        for value in list(outputs.values())[:3]:
            yield 6, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--planrun", required=True, type=Path, help="the planrun binary")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--runs", type=int, default=40, help="runs per generated store")
    parser.add_argument("--out", type=Path, default=FUZZ / "corpus",
                        help="where to write corpus/<target>/ (default: fuzz/corpus)")
    args = parser.parse_args()
    planrun = args.planrun.resolve()
    shared = args.shared.resolve()
    if not shared.is_dir():
        sys.exit(f"seeds.py: {shared} is missing; the seeds start from the SDK corpus")

    seeds = {t: Seeds(t, args.out.resolve()) for t in [
        "legacy_read", "legacy_schema", "v2_read", "upgrade", "downgrade", "plan",
        "schema_compat", "journal", "check", "head_store",
    ]}
    with tempfile.TemporaryDirectory(prefix="planrun-seeds-") as tmp:
        tmp = Path(tmp)
        gen_root = tmp / "gen"
        gen_root.mkdir()
        for i, version in enumerate(GEN_VERSIONS):
            subprocess.run(
                [planrun, "gen", "--runs", str(args.runs), "--seed", str(i), "--versions", version,
                 "--large-every", "0", "--out", gen_root / version, "-q"],
                check=True,
            )
        all_stores = stores(shared, gen_root)

        legacy_roots = [shared, ROOT / "examples" / "store", gen_root]
        for root in legacy_roots:
            for path in documents(root):
                data = path.read_bytes()
                seeds["legacy_read"].add(data)
                doc = load(path)
                model = legacy_model(path.relative_to(root), doc)
                if model is not None:
                    seeds["legacy_schema"].add(bytes([LEGACY_MODELS.index(model)]) + data)
                in_run_dir = path.parent.name.startswith(("prun-", "pr-", "wkfl-"))
                seeds["check"].add(bytes([1 if in_run_dir else 0]) + data)
                if model == "plan":
                    seeds["plan"].add(b"\x00" + data)

        for store in all_stores:
            for bundle in run_bundles(store):
                seeds["upgrade"].add(bundle)
                seeds["head_store"].add(bundle)

        for i, store in enumerate(all_stores):
            for target in ["v2", "r6"]:
                out = tmp / f"out-{i}-{target}"
                subprocess.run(
                    [planrun, "migrate", store, "--out", out, "--to", target, "-q"],
                    check=False, stdout=subprocess.DEVNULL,
                )
                for journal in sorted((out / ".planrun").glob("journal*.jsonl")):
                    seeds["journal"].add(journal.read_bytes())
                if target != "v2":
                    continue
                for path in sorted(out.glob("*.json")):
                    run = load(path)
                    if not isinstance(run, dict):
                        continue
                    seeds["downgrade"].add(path.read_bytes())
                    seeds["head_store"].add(path.read_bytes())
                    for index, part in v2_parts(run):
                        text = json.dumps(part, indent=2).encode()
                        seeds["v2_read"].add(bytes([index]) + text)
                        if index == 1:
                            seeds["plan"].add(b"\x01" + text)

        schema_files = sorted((ROOT / "schemas").glob("*/*.schema.json"))
        releases = sorted((ROOT / "schemas" / "releases").rglob("*.schema.json"))
        for path in schema_files:
            seeds["schema_compat"].add(path.read_bytes() + SEP + path.read_bytes())
            for old in releases:
                if old.name == path.name:
                    seeds["schema_compat"].add(old.read_bytes() + SEP + path.read_bytes())
        for a, b in zip(schema_files, schema_files[1:]):
            seeds["schema_compat"].add(a.read_bytes() + SEP + b.read_bytes())
        # Small schemas too, so the fuzzer is fast: each definition on its own, beside its
        # version in the release baseline when it has one.
        baseline = {p.name: load(p) for p in releases}
        for path in schema_files:
            defs = (load(path) or {}).get("$defs", {})
            old_defs = (baseline.get(path.name) or {}).get("$defs", {})
            for name, schema in defs.items():
                text = json.dumps(schema).encode()
                old = json.dumps(old_defs.get(name, schema)).encode()
                seeds["schema_compat"].add(old + SEP + text)

    for target, s in seeds.items():
        print(f"{target}: {s.count} seeds")
        if s.count == 0:
            sys.exit(f"seeds.py: no seeds for {target}")


if __name__ == "__main__":
    main()
