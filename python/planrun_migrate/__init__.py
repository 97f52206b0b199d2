"""Detect, convert, downgrade and migrate stored Portia SDK runs, in-process.

Every legacy wire version of the Portia Python SDK (the ``Workflow`` of 0.0.1-alpha.50 to the
``PlanRun`` of v0.9) converts to the consolidated ``PlanRunV2`` format, with the very functions
the ``planrun`` CLI calls, so the documents are the CLI's bytes::

    import planrun_migrate as pm

    converted = pm.convert_file("store/prun-1742945e-….json")
    converted.document   # the PlanRunV2 JSON text `planrun convert` prints
    converted.report     # the loss report, as a dict
    converted.outcome    # "converted", "converted_with_loss" or "already_current"

    report = pm.migrate("store", "store-v2")   # `planrun migrate store --out store-v2`
    pm.check("store", sdk="R3")                # what the SDK of v0.2.0 would do with each file

``planrun_migrate.models`` holds pydantic v2 models of every V2 schema
(``pm.models.PlanRunV2.model_validate_json(converted.document)``); it is imported on first use
(PEP 562), as it imports pydantic.

Calls that read files or convert release the GIL, so threads and process pools scale. Errors
are ``PlanrunError``; a run that cannot be converted raises ``RejectedError`` (invalid input,
with ``.path``, ``.pointer``, ``.line``, ``.column`` and ``.kind``) or ``BlockedError`` (a
referenced file is missing: ``.path``).
"""

from ._native import (
    HEAD,
    BlockedError,
    Config,
    Converted,
    PlanrunError,
    RejectedError,
    __version__,
    check,
    convert,
    convert_file,
    detect,
    downgrade,
    migrate,
)

__all__ = [
    "HEAD",
    "BlockedError",
    "Config",
    "Converted",
    "PlanrunError",
    "RejectedError",
    "__version__",
    "check",
    "convert",
    "convert_file",
    "detect",
    "downgrade",
    "migrate",
]


def __getattr__(name: str):
    """Imports the ``models`` submodule on first use, so ``pm.models`` works after a plain
    ``import planrun_migrate as pm`` without importing pydantic for those who never use it."""
    if name == "models":
        import importlib

        return importlib.import_module(f"{__name__}.models")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "models"])
