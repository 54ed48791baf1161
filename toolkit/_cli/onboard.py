"""``toolkit onboard DIR``: validate and import a folder of tables, parents first."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit import Client, codesets
from toolkit._cli.common import (
    check_journal,
    client_from,
    env_file_of,
    in_cli_words,
    interrupted,
    invalid,
    out_path,
    print_frame,
    write_out,
)
from toolkit._client import ENDPOINTS, ENV_KEYS
from toolkit._ingress import (
    ACTIONS,
    IMPORTS,
    Plan,
    folder_sources,
    read_table,
    validate,
    with_lines,
)
from toolkit.errors import ConfigError, Interrupted, ValidationError

#: the options that are :meth:`toolkit.Client.onboard`'s keywords of the same name
_SAME: tuple[str, ...] = ("journal", "workers", "dry_run", "on_invalid", "mirror", "max_deactivate")
_SAME += ("code_range_post",)


def _offline_client(args: argparse.Namespace) -> Client:
    """A client that sends nothing: the settings' customer and addresses, else placeholders."""
    env = dict(os.environ)
    for unused in (ENV_KEYS["client_secret"], ENV_KEYS["audience"]):  # no token is asked for
        env[unused] = env.get(unused) or "<unused>"
    try:
        return Client.from_env(env_file_of(args), environ=env)
    except ConfigError:
        unset = "http://not-configured.invalid"
        null_semantic_type = env.get(ENV_KEYS["null_semantic_type"]) or None  # as configured
        placeholders = ("<customerId>", "<clientId>", "<unused>", unset, unset)
        return Client(*placeholders, audience="<unused>", null_semantic_type=null_semantic_type)


def _print_warnings(warnings: pd.DataFrame, warned: pd.DataFrame, shown: int = 10) -> None:
    """The validation warnings of the rows sent as given (``warned``): counted, a few in full."""
    sent = set(zip(warned["table"], warned["row"], strict=True))
    rows = warnings[[k in sent for k in zip(warnings["table"], warnings["row"], strict=True)]]
    if rows.empty:
        return
    print(
        f"{len(rows)} warning(s) on {len(warned)} row(s) sent as given "
        "(--strict sends nothing while one stands):"
    )
    for rec in rows.head(shown).to_dict("records"):
        line = rec.get("line")
        where = f"line {line}" if line is not None and line is not pd.NA else f"row {rec['row']}"
        print(
            f"  {rec['table']} {where} [{rec['externalId']}] {rec['column']}: "
            f"{in_cli_words(rec['message'])}"
        )
    if len(rows) > shown:
        print(f"  ... and {len(rows) - shown} more (each row's warnings: --out FILE)")


def _print_plan(plan: Plan, valid: bool, out: Path | None) -> int:
    """A dry run's plan: its counts and changes printed, written to ``out``; the exit code."""
    print(f"dry run: nothing sent; validation {'ok' if valid else 'NOT ok'}")
    print(f"plan: {plan.requests} request(s)")
    counts = plan.counts.reset_index()  # per table and action, and where requests go
    counts = counts.loc[:, (counts != 0).any(axis=0) | counts.columns.isin(["requests"])]
    counts["would send"] = [" ".join(ENDPOINTS[IMPORTS[str(t)][0]][::2]) for t in counts["table"]]
    print_frame(counts, 50)
    changes = plan.select([a for a in ACTIONS if a not in ("unchanged", "send")])
    if len(changes):
        print_frame(changes.drop(columns=["lastAccepted"]), 200)
    if plan.refused:
        print(f"a run would be refused: {plan.refused}", file=sys.stderr)
    if out is not None:
        plan.write(out)
        print(f"wrote the plan's {len(plan)} rows to {out}")
    return 0 if valid and not plan.refused else 1


def _sources(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The folder's files (read a chunk at a time: never held whole), or the code sets'
    tables and their code ranges; the initiatives those ranges name, as known."""
    if not args.codeset:
        if args.codeset_matters:
            raise ConfigError("--codeset-matters goes with --codeset")
        return dict(folder_sources(args.dir)), {}
    tables: dict[str, Any] = codesets.load(*args.codeset)
    if not args.codeset_matters:
        return tables, {}
    matters = read_table(args.codeset_matters)
    ranges = [codesets.code_ranges(name, matters) for name in args.codeset]
    tables["code_ranges"] = pd.concat(ranges, ignore_index=True).drop_duplicates()
    return tables, {"initiatives": tables["code_ranges"]["initiativeExternalId"].unique().tolist()}


def run(args: argparse.Namespace) -> int:
    """Onboard the folder (``--dry-run``: show the plan; ``--failures``: what still fails).

    Returns:
        0 every row sent (or would be), 1 some invalid or failed, 130 interrupted.

    >>> import contextlib, io
    >>> from toolkit._cli import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["-q", "--env-file", env_file, "onboard", "sample_data", "--dry-run"])
    >>> code, out.getvalue().splitlines()[0]
    (0, 'dry run: nothing sent; validation ok')
    """
    if args.failures and not args.journal:
        raise ConfigError("--failures needs --journal FILE")
    if not args.failures and not args.dir and not args.codeset:
        raise ConfigError("give the folder of import tables: toolkit onboard DIR")
    if args.dir and args.codeset:
        raise ConfigError("give a folder of import tables or --codeset, not both")
    out = out_path(args)
    if args.failures:  # the journal's records still failing
        failing = _offline_client(args).failures(args.journal)
        if failing.empty:
            print("nothing is failing")
        else:
            print(f"{len(failing)} record(s) still failing, oldest first:")
            print_frame(failing, 200)
        write_out(failing, out, "failing records")
        return 0 if failing.empty else 1
    sources, known = _sources(args)
    check_journal(args)
    if args.strict or (not args.dry_run and args.on_invalid == "raise"):
        # the data's errors (and, with --strict, warnings) before any token or request
        checked = validate(**sources, known=known, code_range_post=args.code_range_post)
        if not checked.ok and args.on_invalid == "raise":
            message = f"{len(checked.failures)} validation failure(s)"
            return invalid(message, checked.failures, None, out)
        if args.strict and len(checked.warnings):
            message = f"{len(checked.warnings)} warning(s) and --strict"
            return invalid(message, checked.warnings, None, out)
    client = _offline_client(args) if args.dry_run else client_from(args)
    try:
        report = client.onboard(
            sources,
            **{name: getattr(args, name) for name in _SAME},
            progress=not args.quiet,
            on_warning="raise" if args.strict else "send",
            known=known,
        )
    except ValidationError as exc:
        return invalid(str(exc), exc.failure_cases, None, out)  # their lines given
    except Interrupted as exc:
        if exc.report is not None:  # onboarding's report so far
            print(exc.report.counts.to_string())
        return interrupted(exc, args)
    if args.dry_run and report.plan is not None:
        return _print_plan(report.plan, report.validation is None or report.validation.ok, out)
    print(report)
    lines = report.validation.lines if report.validation is not None else {}
    if not report.ok:
        cols = ["table", "row", "line", "externalId", "status", "error"]
        print_frame(with_lines(report.failures, lines)[cols])
    if report.validation is not None:
        _print_warnings(report.validation.warnings, report.warned)
    if out is not None:  # the whole frame, with each row's line: only for the file
        write_out(with_lines(report.results, lines), out, "results")
    return 0 if report.ok else 1
