"""``toolkit acknowledge FILE``: acknowledge released entries listed in a file."""

from __future__ import annotations

import argparse

import pandas as pd

from toolkit import Client
from toolkit._cli.common import (
    ACKNOWLEDGED_BY_DEFAULT,
    check_journal,
    client_from,
    invalid,
    out_path,
    print_frame,
    with_row,
    write_out,
)
from toolkit._ingress import read_table
from toolkit._reconciliation import acknowledgements_from_rows, is_reconciliation
from toolkit.errors import ConfigError, ToolkitError, ValidationError


def _acknowledgements(
    source: pd.DataFrame, name: str, include: list[str] | None = None
) -> pd.DataFrame:
    """The file's acknowledgements, or those of a reconciliation's rows ``include`` names."""
    if is_reconciliation(source):
        frame = acknowledgements_from_rows(source, include=include or ACKNOWLEDGED_BY_DEFAULT)
        failed = int((frame["outcome"] == "failed").sum())
        status = source["status"].astype("str").str.strip()
        left = status[~source.index.isin(frame.index) & (status != "only_in_billing")]
        counts = ", ".join(f"{n} {s}" for s, n in left.value_counts().items())
        tip = f"; left pending: {counts} (name them with --include to acknowledge them as failed)"
        print(
            f"{name}: a reconciliation (toolkit reconcile --out): {len(frame) - failed} "
            f"matched entries to acknowledge as succeeded, {failed} as failed (their detail "
            f"as the error); {int((status == 'only_in_billing').sum())} billing-only rows "
            "have no entry" + (tip if counts else "")
        )
        return frame
    if include is not None:
        raise ConfigError(
            f"{name}: --include chooses among the rows of toolkit reconcile "
            "--out; this file holds acknowledgements, sent as they are"
        )
    missing = [c for c in ("userId", "outcome") if c not in source.columns]
    if "entryId" not in source.columns and "_id" not in source.columns:
        missing.insert(1, "entryId")
    if missing:
        raise ConfigError(
            f"{name}: missing column(s) {', '.join(missing)}: acknowledge reads userId, entryId "
            "(or _id), outcome, externalId, errors; or the rows of toolkit reconcile --out "
            "(or the file of toolkit reconcile --acknowledge-out)"
        )
    return source


def _count_acknowledged_earlier(client: Client, frame: pd.DataFrame) -> None:
    """Print how many of the file's entries release-pending no longer lists (one request)."""
    ids = frame["entryId" if "entryId" in frame.columns else "_id"].astype("str")
    try:
        pending = client.release_pending().entries["_id"]
    except ToolkitError:  # the count is a courtesy: the acknowledgements say what happened
        return
    earlier = int((~ids.isin(pending)).sum())
    if earlier:
        print(
            f"{earlier} of {len(ids)} entries are no longer pending (acknowledged earlier, or"
            " not released by their user): the same outcome again is done, another is refused"
            " as a conflict (the service keeps the earlier acknowledgement)"
        )


def run(args: argparse.Namespace) -> int:
    """Acknowledge the file's rows; print the counts and the rows that failed.

    Returns:
        0 every row acknowledged, 1 some invalid or failed, 130 interrupted.
    """
    out = out_path(args)
    source = read_table(args.file)
    frame = _acknowledgements(source, args.file, args.include)
    check_journal(args)
    client = client_from(args)
    _count_acknowledged_earlier(client, frame)
    try:
        res = client.acknowledge(frame, journal=args.journal, progress=not args.quiet)
    except ValidationError as exc:
        return invalid(str(exc), exc.failure_cases, source, out)
    # the rows of a reconciliation that were acknowledged: their own rows and lines
    res = with_row(res, source, None if frame is source else frame.index)
    print(res.groupby(["outcome", "status"], observed=True).size().to_string())
    if not res["ok"].all():
        cols = ["row", "line", "userId", "entryId", "outcome", "httpStatus", "error"]
        print_frame(res[~res["ok"]][cols])
    write_out(res, out, "results")
    return 0 if res["ok"].all() else 1
