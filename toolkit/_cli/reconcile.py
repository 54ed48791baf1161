"""``toolkit reconcile EXPORT BILLING``: compare entries with a billing extract, entry by entry."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit._cli.common import ACKNOWLEDGED_BY_DEFAULT, FLAGS, client_from, out_path, write_out
from toolkit._egress import Export, Window, read_sync
from toolkit._ingress import read_table
from toolkit._reconciliation import COMPARISONS, read_ledes, reconcile, sniff, spoken_as_cli
from toolkit.errors import ConfigError, MissingColumnError, ToolkitError

#: the options that are :func:`toolkit.reconcile`'s keywords of the same name
_KEYWORDS = ("key", "billing_key", "billing_id", *COMPARISONS, "duration_unit", "tolerance_seconds")
_KEYWORDS += ("dayfirst", "decimal")


def _read_exported(path: str) -> pd.DataFrame:
    """The entries of a sync folder, an exported folder or workbook, or one entries table
    (``attrs["codes"]``: a folder's codes)."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file or folder")
    try:
        if p.is_dir():
            if (p / "entries" / "_delta_log").is_dir():
                return _with_codes(read_sync(p))
            if (p / "entries.csv").is_file():
                return _with_codes(Export.read_csv(p))
            if (p / "entries").is_dir() or (p / "_toolkit_export.json").is_file():
                return _with_codes(Export.read_parquet(p))
            raise ConfigError(
                f"{p}: neither a synced folder (entries/_delta_log, from toolkit sync) nor an "
                "exported folder (entries/ Parquet or entries.csv, from toolkit export)"
            )
        if p.suffix.casefold() in (".xlsx", ".xlsm"):  # toolkit export --format xlsx
            return pd.read_excel(p, sheet_name="entries", engine="openpyxl")
        return read_table(p)
    except ToolkitError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable input is a one-line message
        raise ConfigError(f"{p}: cannot read it as exported entries ({exc})") from None


def _with_codes(export: Export | Any) -> pd.DataFrame:
    """The export's entries, its codes in their ``attrs["codes"]`` (LEDES compares them)."""
    entries: pd.DataFrame = export.entries
    entries.attrs["codes"] = export.codes
    return entries


def _timekeepers(args: argparse.Namespace, exported: pd.DataFrame) -> pd.DataFrame:
    """The timekeepers of :func:`reconcile`'s LEDES keywords: from --timekeepers or the service
    (each user's billing-system identity)."""
    if args.timekeepers is not None:
        return read_table(args.timekeepers)
    print("timekeepers: each user's billing-system identity, asked of the service")
    return client_from(args).users(exported["userId"].dropna().astype(str))


def run(args: argparse.Namespace) -> int:
    """Reconcile; print the summary and the entries that differ (whole details).

    Returns:
        0 every entry matched, 1 some differ.
    """
    out, ack_out = out_path(args), out_path(args, "acknowledge_out")
    exported = _read_exported(args.export)
    ledes = sniff(args.billing)
    billing = read_ledes(args.billing) if ledes else read_table(args.billing)
    keywords = {k: getattr(args, k) for k in _KEYWORDS}
    if ledes:  # the LEDES keywords
        keywords |= {"timekeepers": _timekeepers(args, exported), "matters": args.matters}
        keywords["codes"] = exported.attrs.get("codes")
    window = None
    if args.after is not None or args.on_or_before is not None:
        exported, window = _released_in(exported, args)
    try:
        with spoken_as_cli():  # its warnings and errors name the options as flags
            rec = reconcile(exported, billing, **keywords)
    except MissingColumnError as exc:
        columns = billing.columns if exc.table == "billing" else exported.columns
        raise ConfigError(_missing_column(exc, args, [str(c) for c in columns])) from None
    if window is not None:
        rec = dataclasses.replace(rec, window=window)
    billed_id = f", billing record id {rec.billing_id}" if rec.billing_id else ""
    tolerance = f", durations within {rec.tolerance_seconds:g} s" if rec.tolerance_seconds else ""
    print(
        f"{args.export} against {args.billing}: {len(rec.rows):,} rows, entries' {rec.key} "
        f"joined with billing column {rec.billing_key}{billed_id}{tolerance}"
    )
    print(rec.describe())
    rows = rec.rows
    differ = rows[rows["status"] != "matched"]
    shown = 30
    for key, status, detail in differ[["key", "status", "detail"]].head(shown).to_numpy():
        print(f"{key}  {status}: {detail}")  # whole details: they carry the numbers
    if len(differ) > shown:
        where = f"all of them are in {out}" if out is not None else "write them all with --out FILE"
        print(f"... {len(differ) - shown} more ({where})")
    write_out(rows, out, "reconciliation rows")
    if ack_out is not None:
        acks = rec.to_acknowledge(include=args.include or ACKNOWLEDGED_BY_DEFAULT)
        # one message per entry, the reasons joined: what a text file holds and acknowledge sends
        acks["errors"] = [("; ".join(e) or None) for e in acks["errors"].tolist()]
        write_out(acks, ack_out, "acknowledgements (toolkit acknowledge FILE sends them)")
    return 0 if differ.empty else 1


def _released_in(exported: pd.DataFrame, args: argparse.Namespace) -> tuple[pd.DataFrame, str]:
    """The exported entries the service released in the window, by asking for its export."""
    span = Window.of(args.after, args.on_or_before, FLAGS)
    low, high = span.after, span.on_or_before or pd.Timestamp.now(tz="UTC")
    if low is None:  # an entry is released after it is created
        created = pd.to_datetime(
            exported.get("createdAt", pd.Series(dtype="object")), utc=True, errors="coerce"
        ).min()
        first = created if isinstance(created, pd.Timestamp) else pd.Timestamp(0, tz="UTC")
        low = first - pd.Timedelta(1, "ms")
    print(f"release window: entries {span} (asking the service for that window's export)")
    released = client_from(args).export_entries(low, high, progress=False).entries["_id"]
    ids = set(released.astype("str"))
    kept = exported.loc[exported["_id"].astype("str").isin(ids).to_numpy()]
    absent = len(ids - set(kept["_id"].astype("str")))
    if absent:
        print(
            f"{absent} entries released in the window are not in {args.export}: sync or "
            "export again to compare them"
        )
    return kept, (
        f"entries {Window(low, high)} (the service's export of that window): "
        f"{len(kept)} of {len(exported)}"
    )


def _missing_column(exc: MissingColumnError, args: argparse.Namespace, names: list[str]) -> str:
    """A missing column in the words of the command line: the file, and the option to use."""
    flags = ("--billing-key", "--billing-id", "--duration", "--date", "--matter")
    options = {getattr(args, flag[2:].replace("-", "_")): flag for flag in flags}
    parts = []
    for name, near in exc.suggestions.items():
        closest = f" (closest: {near!r})" if near is not None else ""
        if exc.table == "billing" and name in options:
            how = f"given with {options[name]}"
        elif exc.table == "billing":
            how = "choose the key column with --billing-key"
        else:
            how = "an exported entries table has it"
        parts.append(f"no column {name!r}{closest} ({how})")
    source = args.billing if exc.table == "billing" else args.export
    return f"{exc.table} file {source} has " + "; ".join(parts) + f"; it has {names[:20]!r}"
