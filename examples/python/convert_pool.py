"""Converts a JSON Lines file of legacy Portia runs to PlanRunV2 in parallel, in a process pool.

    python convert_pool.py RUNS.jsonl --store STORE [--out DIR] [--workers N]

Each line of RUNS.jsonl is one run document of any legacy version (blank lines are skipped); its
plan, end user and agent memory are read from STORE, a DiskFileStorage directory. With --out,
each converted run is written as DIR/<id>.json, the very bytes `planrun migrate` writes, with
its agent-memory files copied next to it; without it, the runs are converted and counted only.
Prints a JSON summary (counts per outcome, every failure with its line) and exits 1 when a run
was rejected or blocked. For a whole store, crash-safe and resumable, use planrun_migrate.migrate.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import planrun_migrate as pm


def convert_chunk(runs: str, start: int, end: int, first: int, store: str, out: str | None) -> list[dict]:
    """Converts the lines in bytes start..end of the file `runs` (numbered from `first`)."""
    with open(runs, "rb") as file:
        file.seek(start)
        lines = file.read(end - start).split(b"\n")
    results = []
    for number, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            converted = pm.convert(line, store=store)
        except (pm.RejectedError, pm.BlockedError) as failure:
            outcome = "blocked" if isinstance(failure, pm.BlockedError) else "rejected"
            results.append({"line": number, "outcome": outcome, "kind": failure.kind,
                            "path": failure.path, "message": failure.message})
            continue
        if out is not None:
            Path(out, f"{converted.id}.json").write_text(converted.document, encoding="utf-8")
            for relative in converted.agent_memory:
                os.makedirs(Path(out, relative).parent, exist_ok=True)
                shutil.copyfile(Path(store, relative), Path(out, relative))
        results.append({"line": number, "outcome": converted.outcome, "id": converted.id})
    return results


def chunks(data: bytes, count: int) -> list[tuple[int, int, int]]:
    """`count` byte ranges of whole lines, with the number of each range's first line."""
    ranges, start, line = [], 0, 1
    size = max(1, len(data) // count)
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        ranges.append((start, end, line))
        line += data.count(b"\n", start, end)
        start = end
    return ranges


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="JSON Lines file, one run document a line")
    parser.add_argument("--store", required=True, help="DiskFileStorage directory of the references")
    parser.add_argument("--out", help="directory to write <id>.json files to")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()

    if args.out:
        os.makedirs(args.out, exist_ok=True)
    # Each task reads its own lines from the file: only byte offsets cross the process boundary.
    # A few tasks per worker balance the load.
    ranges = chunks(args.runs.read_bytes(), args.workers * 4)
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.workers) as pool:
        tasks = [pool.submit(convert_chunk, str(args.runs), start, end, first, args.store, args.out)
                 for start, end, first in ranges]
        results = [result for task in tasks for result in task.result()]

    counts = Counter(result["outcome"] for result in results)
    failures = [r for r in results if r["outcome"] in ("rejected", "blocked")]
    json.dump({"runs": len(results), "outcomes": dict(sorted(counts.items())), "failures": failures},
              sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
