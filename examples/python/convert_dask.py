"""Converts a JSON Lines file of legacy Portia runs to PlanRunV2 on a dask.distributed cluster.

    python convert_dask.py RUNS.jsonl --store STORE [--out DIR] [--workers N] [--partitions K]

The lines are split into K partitions, one task each, run on a LocalCluster of N worker
processes (one thread each: planrun_migrate releases the GIL, but a process per core is what a
real cluster has). A partition's runs read their plans, end users and agent memory from STORE;
with --out, each converted run is written as DIR/<id>.json (the bytes `planrun migrate` writes)
with its agent-memory files. Prints a JSON summary and exits 1 when a run was rejected or
blocked. On a real cluster, point Client at its scheduler and STORE and DIR at shared storage.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

from dask.distributed import Client, LocalCluster


def convert_partition(store: str, out: str | None, first: int, lines: list[bytes]) -> list[dict]:
    """Converts one partition of lines (numbered from `first`) on a worker."""
    import planrun_migrate as pm

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="JSON Lines file, one run document a line")
    parser.add_argument("--store", required=True, help="DiskFileStorage directory of the references")
    parser.add_argument("--out", help="directory to write <id>.json files to")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--partitions", type=int, default=None, help="default: 4 per worker")
    args = parser.parse_args()

    lines = args.runs.read_bytes().split(b"\n")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    count = args.partitions or args.workers * 4
    size = max(1, -(-len(lines) // count))
    starts = range(0, len(lines), size)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        tasks = client.map(convert_partition, [args.store] * len(starts), [args.out] * len(starts),
                           [start + 1 for start in starts], [lines[s:s + size] for s in starts],
                           pure=False)
        results = [result for part in client.gather(tasks) for result in part]

    counts = Counter(result["outcome"] for result in results)
    failures = [r for r in results if r["outcome"] in ("rejected", "blocked")]
    json.dump({"runs": len(results), "outcomes": dict(sorted(counts.items())), "failures": failures},
              sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
