"""Type stubs of the extension module planrun_migrate._native (see planrun_migrate)."""

import os
from collections.abc import Mapping
from typing import Any, Literal, final

__version__: str
#: The newest legacy wire version, the one `downgrade` writes (e.g. "R6").
HEAD: str

Document = bytes | bytearray | memoryview | str
StrPath = str | os.PathLike[str]

class PlanrunError(Exception):
    """The base class of every error planrun_migrate raises."""

class RejectedError(PlanrunError):
    """Invalid input: the run (or its plan, end user or agent-memory file) cannot be converted."""

    #: The file at fault (`<run>` or `<document>` for a document passed in memory).
    path: str
    #: JSON pointer into `path`, or None when the problem has no place in it.
    pointer: str | None
    #: 1-based line in `path`; 0 when unknown.
    line: int
    #: 1-based byte column in `path`; 0 when unknown.
    column: int
    #: A short stable name: `syntax`, `data`, `duplicate_key`, `unrecognised`, `mismatch`,
    #: `id_mismatch`, `unsafe_name`, `not_a_run`, `schema`, `io`, `would_drop`, ...
    kind: str
    #: What is wrong, in words.
    message: str
    #: The run being converted (its file, or `<run>`).
    run: str

class BlockedError(PlanrunError):
    """A file the run refers to is missing: `.path` names it."""

    #: The missing file: the plan, or an agent-memory file.
    path: str
    pointer: str | None
    line: int
    column: int
    #: `missing_plan` or `missing_agent_memory`.
    kind: str
    message: str
    run: str

@final
class Config:
    """A resolved configuration: a legacy Config over the SDK's defaults, secrets redacted.

    `Config()` is the SDK's defaults. Pass one as `config=` to `convert`, `convert_file` or
    `migrate` (a path there is read as `Config.from_file(path)`). Picklable.
    """

    def __init__(self) -> None: ...
    @staticmethod
    def from_file(path: StrPath) -> Config:
        """A legacy Config file over the SDK's defaults (`--config FILE`)."""
    @staticmethod
    def from_document(data: Document) -> Config:
        """A legacy Config document over the SDK's defaults."""
    @property
    def config(self) -> dict[str, Any]:
        """The V2 config written into every run (secrets redacted)."""
    @property
    def report(self) -> dict[str, Any]:
        """The loss-report entries of resolving it."""
    @property
    def fingerprint(self) -> str:
        """The fingerprint a migration's journal records; a resume needs the same."""

@final
class Converted:
    """The result of converting one run. Picklable."""

    @property
    def document(self) -> str:
        """The PlanRunV2 document: exactly the bytes `planrun convert` prints."""
    @property
    def report(self) -> dict[str, Any]:
        """The loss report, `{"entries": [{"kind", "from", "to", "note", "value"}, ...]}`."""
    @property
    def outcome(self) -> Literal["converted", "converted_with_loss", "already_current"]:
        """The outcome class."""
    @property
    def id(self) -> str:
        """The V2 run id; a migration names the document `<id>.json`."""
    @property
    def source_version(self) -> str | None:
        """The versions that could have written the input (`R4`, `R1–R2`, `V2`)."""
    @property
    def path(self) -> str:
        """The run file, or `<run>` for a document passed in memory."""
    @property
    def agent_memory(self) -> list[str]:
        """The agent-memory files the run refers to (`<prun-id>/<output_name>.json`)."""

def detect(data: Document) -> dict[str, Any]:
    """What a document is and which versions could have written it (`planrun detect`).

    Returns `{"kind", "versions", "version", "candidates", "evidence"}`; raises RejectedError
    when the bytes are not a legacy Portia document.
    """

def convert_file(
    path: StrPath,
    store: StrPath | None = None,
    config: Config | StrPath | None = None,
) -> Converted:
    """Converts a run file as `planrun convert PATH [--store DIR] [--config FILE]` does.

    Raises RejectedError, BlockedError, or OSError when `path` does not exist.
    """

def convert(
    run: Document,
    *,
    store: StrPath | None = None,
    plan: Document | None = None,
    end_user: Document | None = None,
    agent_memory: Mapping[str, Document] | None = None,
    config: Config | StrPath | None = None,
) -> Converted:
    """Converts a run document held in memory.

    Its plan, end user and agent memory (by output name, or `<run id>/<output name>`) come
    from the arguments, the rest from the store directory `store`. Raises RejectedError or
    BlockedError.
    """

def downgrade(
    document: Document,
    *,
    store: StrPath | None = None,
    agent_memory: Mapping[str, Document] | None = None,
    allow_loss: bool = False,
) -> dict[str, bytes]:
    """A PlanRunV2 document back to the files of the SDK's HEAD store (`planrun downgrade FILE`).

    Keys are `<prun-id>.json`, `<plan-id>.json`, `<external_id>.json` and the agent-memory
    files `<prun-id>/<output_name>.json`, read from `store` (the V2 document's directory) or
    taken from `agent_memory`. Raises BlockedError when one is missing, RejectedError (kind
    `would_drop`) for data HEAD cannot hold unless `allow_loss`.
    """

def migrate(
    src: StrPath,
    out: StrPath,
    *,
    jobs: int | None = None,
    resume: bool = False,
    dry_run: bool = False,
    to: Literal["v2", "r6"] = "v2",
    shard: str | tuple[int, int] | None = None,
    config: Config | StrPath | None = None,
    durability: Literal["chunks", "files", "none"] = "chunks",
    overwrite_changed: bool = False,
) -> dict[str, Any]:
    """Migrates a store as `planrun migrate SRC --out OUT [--to v2|r6]` does; returns the JSON
    report (its `outcomes` count the runs per outcome class).

    `to="r6"` writes a DiskFileStorage store the SDK at HEAD loads completely. A
    KeyboardInterrupt stops it once the chunks in flight are journaled (resumable with `resume=True`).
    `durability="files"` fsyncs every file and `"none"` syncs nothing (`--durable`, `--no-sync`);
    by default (`"chunks"`) one syncfs per group of chunks makes outputs durable before they are
    journaled.
    `resume=True` brings `out` up to date with `src` as it is now; an output someone else changed
    in `out` is kept and counted under the report's `catch_up.conflicts` unless
    `overwrite_changed=True`. With `dry_run=True` a resume only says what it would do.
    Raises ValueError for bad arguments, and PlanrunError when the migration cannot run or its
    verify pass fails; rejected and blocked runs are in the report.
    """

def check(path: StrPath, sdk: str = "HEAD") -> list[dict[str, Any]]:
    """What the SDK `sdk` would do with each file under `path` (`planrun check PATH --sdk SDK`).

    `sdk` is "HEAD", a wire version ("W1", "R0" ... "R6") or the release it is judged as
    ("v0.2.0"). One dict per JSON file: `{"path", "loads", "fails", "changes_on_save"}`, with
    `"loads": None` and the reason under `"unread"` for a file that SDK never reads. Raises
    ValueError for an SDK planrun does not know, OSError when `path` cannot be read.
    """
