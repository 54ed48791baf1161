"""Validate a whole firm's import tables at once: every model's rules and the references between
tables (checked when the parent table is given or listed in ``known``).
"""

from __future__ import annotations

import html
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar, cast

import numpy as np
import pandas as pd

from toolkit._core.dtypes import nullable
from toolkit._core.failures import empty_failures
from toolkit._core.frames import FrameLike, as_pandas
from toolkit._core.memory import returning_pool
from toolkit._ingress.cells import as_kinds
from toolkit._ingress.checks import CheckResult, check_chunks, format_failures
from toolkit._ingress.chunking import with_lines
from toolkit._ingress.models import TABLES
from toolkit._ingress.names import IGNORED, TABLE_SUFFIXES, one_each, table_for
from toolkit._ingress.ranges import CodeRangePost
from toolkit._ingress.readers import TableFile, joined, read_table
from toolkit._ingress.sheet_reader import table_sheets
from toolkit._ingress.text import plural
from toolkit._ingress.writer import html_rows, write_workbook
from toolkit.errors import ConfigError, InputWarning, ValidationError

_EXPECTED = (
    "clients, initiatives (or matters, projects), code_types (or code-types, codetypes), "
    "codes, code_ranges (or code-ranges, ranges)"
)


_T = TypeVar("_T")


class Tables(TypedDict, Generic[_T], total=False):
    """The import tables of a folder by name, as :func:`load_folder` (frames) and
    :func:`folder_sources` (files) give them: ``validate(**tables)`` type-checks.

    >>> tables: Tables[str] = {"codes": "codes.csv"}
    >>> tables["codes"]
    'codes.csv'
    """

    clients: _T
    initiatives: _T
    code_types: _T
    codes: _T
    code_ranges: _T


#: What onboarding and planning read: a folder, or the tables by name (pandas, Polars or PyArrow
#: frames, or files read a chunk at a time, as :func:`folder_sources` gives them).
ImportSource = str | os.PathLike[str] | Mapping[str, FrameLike | TableFile] | Tables[Any]


@dataclass(repr=False)
class ValidationReport:
    """The outcome of :func:`validate`.

    Attributes:
        failures: Every failure, errors and warnings, with ``line`` (the row's line in its file).
        rows: Number of input rows per table.
        unchecked: References not checked (no parent frame nor ``known`` ids).
        results: The per-table :class:`toolkit.schemas.CheckResult`.
        sources: The tables as given (frames, or files read again a chunk at a time).

    >>> import pandas as pd
    >>> report = validate(code_ranges=pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"],
    ...                                             "codeExternalId": ["L1", "L2"]}),
    ...                   known={"initiatives": ["M-1"], "codes": ["L1"]})
    >>> report.ok, report.failures[["row", "column", "check"]].values.tolist()
    (False, [[1, 'codeExternalId', 'reference']])
    """

    failures: pd.DataFrame
    rows: dict[str, int]
    unchecked: tuple[str, ...] = ()
    results: dict[str, CheckResult] = field(default_factory=dict)
    sources: dict[str, pd.DataFrame | TableFile] = field(default_factory=dict)

    @cached_property
    def frames(self) -> dict[str, pd.DataFrame]:
        """Per table, the rows safe to import, coerced (read again and held whole when asked
        for; :meth:`valid_chunks` gives them a chunk at a time).

        Each frame holds the spec's columns in field-table order and final dtypes, ready for
        payloads, with the input's index labels; the renames given in ``columns=`` applied.

        >>> import pandas as pd
        >>> df = pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"], "call_sign": ["1"],
        ...                    "description": ["Widgets"]})
        >>> report = validate(clients=df, columns={"call_sign": "callSign"})
        >>> report.frames["clients"]["callSign"].tolist(), report.frames["clients"].index.tolist()
        (['1'], [0])
        """
        return {table: joined(self.valid_chunks(table)) for table in self.results}

    @property
    def inputs(self) -> dict[str, pd.DataFrame]:
        """The tables as given, whole (files read again): what :meth:`to_excel` writes back."""
        return {
            table: src.read() if isinstance(src, TableFile) else src
            for table, src in self.sources.items()
        }

    @property
    def lines(self) -> dict[str, pd.DataFrame]:
        """Per table, a frame of every row's label with the file's line map in its ``attrs``:
        what :func:`~toolkit._ingress.chunking.with_lines` needs, not the rows."""
        return {table: result.frame for table, result in self.results.items()}

    def valid(self, table: str) -> np.ndarray:
        """By position, True for each row of ``table`` safe to import: no error, and, for a
        code range, no error in another row of its range.

        >>> import pandas as pd
        >>> validate(code_ranges=pd.DataFrame({"initiativeExternalId": ["M-1", "M-1", "M-2"],
        ...          "codeExternalId": ["L1", "", "L1"]})).valid("code_ranges").tolist()
        [False, False, True]
        """
        result = self.results[table]
        if not result.columns_ok:
            return np.zeros(len(result.frame), dtype=bool)
        keep: np.ndarray = ~result.bad
        if table == "code_ranges" and result.bad.any():
            ranges = result.frame["initiativeExternalId"]
            keep &= ~ranges.isin(ranges[result.bad].dropna().unique()).to_numpy()
        return keep

    def valid_chunks(self, table: str, keep: np.ndarray | None = None) -> Iterator[pd.DataFrame]:
        """The rows of ``table`` safe to import (or those of ``keep``, a mask by position),
        coerced, a chunk at a time: a file is read again, never held whole.

        >>> import pandas as pd
        >>> report = validate(codes=pd.DataFrame({"externalId": ["L1"], "name": ["L1"],
        ...     "description": ["x"], "codeTypeExternalId": ["task"]}))
        >>> [len(chunk) for chunk in report.valid_chunks("codes")]
        [1]
        """
        return self.results[table].valid_chunks(self.valid(table) if keep is None else keep)

    @property
    def ok(self) -> bool:
        """True when no table has an error; warnings do not count.

        >>> import pandas as pd
        >>> report = validate(clients=pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"],
        ...                                         "callSign": [""], "description": [""]}))
        >>> report.ok, len(report.warnings), len(report.errors)
        (True, 2, 0)
        """
        return self.errors.empty

    @property
    def errors(self) -> pd.DataFrame:
        """The failures of severity ``error``: what the service would refuse."""
        return self.failures[self.failures["severity"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The failures of severity ``warning``: sent as given, but worth a look."""
        return self.failures[self.failures["severity"] == "warning"]

    def raise_if_failed(self) -> None:
        """Raise :class:`toolkit.errors.ValidationError` when there is any error.

        The message counts the failures (errors and warnings) per table and lists the first
        ten, each by table, row, id and column; the error's ``failure_cases`` holds every one,
        with the row's file line. A report with warnings only does not raise.

        Raises:
            ValidationError: When any table has an error.

        >>> import pandas as pd
        >>> validate(clients=pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"],
        ...          "callSign": [""], "description": [""]})).raise_if_failed()  # warnings only
        >>> validate(codes=pd.DataFrame({"externalId": ["L110"]})).raise_if_failed()
        Traceback (most recent call last):
        ...
        toolkit.errors.ValidationError: 3 problems: codes 3 (3 column-level)
        ...
        """
        if not self.ok:
            raise ValidationError(format_failures(self.failures), self.failures)

    def bad_rows(self, table: str) -> set[Any]:
        """Input index labels of the rows of ``table`` with an error.

        >>> import pandas as pd
        >>> clients = pd.DataFrame({"externalId": ["C-1", "C-1", "C-2"], "name": ["A", "B", ""],
        ...                         "callSign": ["1", "2", "3"], "description": ["", "x", "y"]})
        >>> sorted(validate(clients=clients).bad_rows("clients"))
        [0, 1]
        """
        result = self.results.get(table)
        return set() if result is None else result.bad_rows()

    def bad_ids(self, table: str) -> set[str]:
        """Key values of the bad rows of ``table``: their children should not be imported.

        >>> import pandas as pd
        >>> clients = pd.DataFrame({"externalId": ["C-1", "C-2"], "name": ["A", 2.5],
        ...                         "callSign": ["1", "2"], "description": ["a", "b"]})
        >>> validate(clients=clients).bad_ids("clients")
        {'C-2'}
        """
        result, col = self.results.get(table), TABLES[table].id_column
        if result is None or col not in result.frame.columns:
            return set()
        frame = result.frame if not result.columns_ok else result.frame.loc[result.bad]
        return set(frame[col].dropna().astype(str).tolist())

    def summary(self) -> pd.DataFrame:
        """One row per given table: ``rows``, ``valid``, ``bad``, ``errors``, ``warnings``.

        >>> import pandas as pd
        >>> validate(code_ranges=pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"],
        ...          "codeExternalId": ["L1", "L1"]})).summary().loc["code_ranges"].tolist()
        [2, 2, 0, 0, 2]
        """
        errors = self.errors["table"].value_counts()
        warnings = self.warnings["table"].value_counts()
        data = [
            {
                "rows": n,
                "valid": int(self.valid(table).sum()),
                "bad": len(self.bad_rows(table)),
                "errors": int(errors.get(table, 0)),
                "warnings": int(warnings.get(table, 0)),
            }
            for table, n in self.rows.items()
        ]
        return pd.DataFrame(data, index=pd.Index(list(self.rows), name="table"))

    def to_excel(self, path: str | os.PathLike[str]) -> Path:
        """Write the tables, failing cells marked, to fix and read back with :func:`load_folder`.

        Args:
            path: the ``.xlsx`` file.

        Returns:
            The path written.

        >>> import pandas as pd, tempfile, pathlib
        >>> report = validate(code_ranges=pd.DataFrame({"initiativeExternalId": ["M-1", ""],
        ...                                             "codeExternalId": ["L1", "L1"]}))
        >>> out = report.to_excel(pathlib.Path(tempfile.mkdtemp()) / "failures.xlsx")
        >>> validate(**load_folder(out)).failures[["row", "column", "check"]].values.tolist()
        [[1, 'initiativeExternalId', 'required']]
        """
        headers = {table: result.headers for table, result in self.results.items()}
        return write_workbook(path, self.inputs, self.failures, headers)  # with their lines

    def _headline(self) -> str:
        if not self.rows:
            return "ValidationReport: nothing to validate"
        if self.ok:
            total = sum(self.rows.values())
            head = f"ValidationReport: ok, {total} rows in {len(self.rows)} table(s)"
            n = len(self.warnings)
            return head + (f", {plural(n, 'warning')}" if n else "")
        return f"ValidationReport: NOT ok, {format_failures(self.failures).splitlines()[0]}"

    def __repr__(self) -> str:
        lines = [self._headline()]
        if self.rows:
            lines.append(self.summary().to_string())
        if self.unchecked:
            lines.append("unchecked references: " + "; ".join(self.unchecked))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{html.escape(self._headline())}</b></p>"]
        if self.rows:
            parts.append(self.summary().to_html())
        if self.unchecked:
            parts.append(f"<p>unchecked references: {html.escape('; '.join(self.unchecked))}</p>")
        return "\n".join(parts + html_rows(self.failures, 50, "failures"))


def _ids(values: Iterable[Any]) -> pd.Index:
    if isinstance(values, str):
        raise ConfigError("known ids must be a collection of ids, not one string")
    if isinstance(values, pd.DataFrame) or (
        hasattr(values, "__arrow_c_stream__") and hasattr(values, "columns")
    ):  # a pandas, Polars or PyArrow table: its columns are not ids
        raise ConfigError(f"known ids must be a collection of ids, not a {type(values).__name__}")
    return pd.Index([str(v) for v in values if v is not None and not pd.isna(v)], dtype=object)


def columns_for(table: str, columns: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    """The renames of one table: ``columns`` itself, or its entry for ``table`` when it holds
    one mapping per table.

    >>> columns_for("clients", {"clients": {"Name": "name"}}), columns_for("codes", {"A": "b"})
    ({'Name': 'name'}, {'A': 'b'})
    """
    if not columns:
        return None
    if all(isinstance(v, Mapping) for v in columns.values()):
        unknown = set(columns) - set(TABLES)
        if unknown:
            raise ConfigError(f"columns= names unknown table(s) {sorted(unknown)}")
        return columns.get(table)
    return columns


@returning_pool()
def validate(
    *,
    clients: FrameLike | TableFile | None = None,
    initiatives: FrameLike | TableFile | None = None,
    code_types: FrameLike | TableFile | None = None,
    codes: FrameLike | TableFile | None = None,
    code_ranges: FrameLike | TableFile | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
    columns: Mapping[str, str] | Mapping[str, Mapping[str, str]] | None = None,
    code_range_post: CodeRangePost = "replace",
) -> ValidationReport:
    """Check every given import table and the references between them, reporting all at once.

    Args:
        clients: Client rows (a pandas, Polars or PyArrow frame, as every table).
        initiatives: Initiative rows.
        code_types: Code type rows.
        codes: Code rows.
        code_ranges: Code range rows in long form.
        known: Ids already in the service, per table (``{"clients": ["C-1001"]}``).
        columns: Renames applied first: one mapping for every table, or one per table.
        code_range_post: ``"replace"`` or ``"add"`` (see :mod:`toolkit._ingress.ranges`).

    Returns:
        A :class:`ValidationReport`; it never raises on bad data.

    >>> import pandas as pd
    >>> initiatives = pd.DataFrame({
    ...     "billingType": ["billable"], "externalId": ["M-1"], "name": ["A v B"],
    ...     "description": ["Suit"], "callSign": ["1-1"], "clientExternalId": ["C-9"],
    ...     "unitIncrements": ["360"], "status": ["active"]})
    >>> report = validate(initiatives=initiatives, known={"clients": ["C-1"]})
    >>> report.failures[["row", "column", "check"]].values.tolist()
    [[0, 'clientExternalId', 'reference']]
    """
    tables = (clients, initiatives, code_types, codes, code_ranges)  # in the order of TABLES
    given = {
        table: frame if isinstance(frame, TableFile) else as_pandas(frame, table)
        for table, frame in zip(TABLES, tables, strict=True)
        if frame is not None
    }
    unknown = set(known or {}) - set(TABLES)
    if unknown:
        raise ConfigError(
            f"known= names unknown table(s) {sorted(unknown)}; tables: {', '.join(TABLES)}"
        )
    known_ids = {t: _ids(v) for t, v in (known or {}).items() if v is not None}

    results: dict[str, CheckResult] = {}
    unchecked: list[str] = []
    for table, src in given.items():
        references: dict[str, pd.Index] = {}
        for col, parent in TABLES[table].references:
            ids = results[parent].frame if parent in results else pd.DataFrame()  # held columns
            key = TABLES[parent].id_column
            parts = [pd.Index(ids[key].dropna())] if key in ids.columns else []
            parts += [known_ids[parent]] if parent in known_ids else []
            if parts:
                references[col] = parts[0].append(parts[1:]) if len(parts) > 1 else parts[0]
            else:
                unchecked.append(f"{table}.{col} -> {parent}")
        results[table] = check_chunks(
            table,
            src.chunks() if isinstance(src, TableFile) else [src],
            columns=columns_for(table, columns),
            references=references,
            code_range_post=code_range_post,
            read_again=src.chunks if isinstance(src, TableFile) else None,
        )

    failure_parts = [r.failures for r in results.values() if not r.failures.empty]
    failures = pd.concat(failure_parts, ignore_index=True) if failure_parts else empty_failures()
    # the file's line of each row (NA for a frame), from each row's label and the line map
    failures = with_lines(failures, {t: r.frame for t, r in results.items()})
    rows = {t: len(r.frame) for t, r in results.items()}
    return ValidationReport(failures, rows, tuple(unchecked), results, given)


@returning_pool()
def load_folder(
    path: str | os.PathLike[str], *, encoding: str | None = None
) -> Tables[pd.DataFrame]:
    """Read the import tables of a folder (files named after tables), of a workbook of sheets,
    or of one table's file.

    Args:
        path: The folder, a workbook of table sheets, or one table's file (named as in a
            folder).
        encoding: The text encoding of its CSV files (default: UTF-8, guessed otherwise).

    Returns:
        ``{table: frame}`` in import order, each column in the one dtype of its kind whether
        the table is CSV, Excel or Parquet (:func:`toolkit._ingress.cells.as_kinds`): text as
        ``string``, whole numbers as ``Int64``, booleans as ``boolean``.

    >>> frames = load_folder("sample_data")
    >>> list(frames)
    ['clients', 'initiatives', 'code_types', 'codes', 'code_ranges']

    A workbook's sheets are named after import tables
    (:func:`~toolkit._ingress.sheet_reader.table_sheets`), and ids stay text:

    >>> import tempfile, pathlib
    >>> book = pathlib.Path(tempfile.mkdtemp()) / "firm.xlsx"
    >>> pd.DataFrame({"externalId": ["007"]}).to_excel(book, sheet_name="Clients", index=False)
    >>> load_folder(book)["clients"].to_dict("records")
    [{'externalId': '007'}]
    """
    frames = {}
    for table, src in cast("dict[str, TableFile]", folder_sources(path, encoding=encoding)).items():
        # each file read once, whole: no snapshot to keep (nor a file left open)
        read = read_table(src.path, encoding=src.encoding, sheet=src.sheet)
        frames[table] = nullable(as_kinds(read, TABLES[table].kinds))
    return cast("Tables[pd.DataFrame]", frames)


def folder_sources(
    path: str | os.PathLike[str], *, encoding: str | None = None
) -> Tables[TableFile]:
    """The import tables of a folder as files (or of a workbook as its sheets, or one table's
    file), read a chunk at a time when asked: what :func:`validate` and onboarding read without
    holding them.

    Args:
        path: The folder, a workbook of table sheets, or one table's file (its table from its
            name, as in a folder: ``Matters.csv`` holds the initiatives).
        encoding: The text encoding of its CSV files (default: UTF-8, guessed otherwise).

    Returns:
        ``{table: file}`` in import order.

    >>> folder_sources("sample_data")["codes"].path.name
    'codes.csv'
    >>> list(folder_sources("sample_data/clients.csv"))  # one table's file
    ['clients']
    """
    folder = Path(path)
    if not folder.exists():
        raise ConfigError(f"{folder}: no such file or folder")
    named = table_for(folder.name)  # one table's file, named as in a folder
    if named is not None and (folder.is_file() or folder.suffix.casefold() == ".parquet"):
        return cast("Tables[TableFile]", {named: TableFile(folder, encoding)})
    if folder.is_file() and folder.suffix.casefold() in (".xlsx", ".xlsm"):
        sheets = table_sheets(folder)
        return cast("Tables[TableFile]", {t: TableFile(folder, sheet=s) for t, s in sheets.items()})
    if not folder.is_dir():
        raise ConfigError(
            f"{folder} is not a folder, a workbook of table sheets, nor a file named after "
            f"an import table ({_EXPECTED})"
        )
    files: dict[str, list[Path]] = {}
    unknown: list[str] = []
    for file in sorted(folder.iterdir()):
        if file.name.startswith((".", "~$")):
            continue
        table = table_for(file.name)
        if table is not None and (file.is_file() or file.suffix.casefold() == ".parquet"):
            files.setdefault(table, []).append(file)
        elif file.is_file() and file.suffix.casefold() in TABLE_SUFFIXES:
            if file.stem.casefold() not in IGNORED:
                unknown.append(file.name)
    if unknown:
        warnings.warn(
            f"{folder}: passed over {', '.join(unknown)}: no import table has that name "
            f"(expected {_EXPECTED}; rename the file)",
            InputWarning,
            stacklevel=2,
        )
    if not files:
        raise ConfigError(
            f"{folder}: no import table found; expected files named {_EXPECTED}, "
            f"as .csv, .xlsx or .parquet"
        )
    found = one_each(
        files, lambda t, names: f"{t} has more than one file in {folder}: {names}; keep one"
    )
    return cast("Tables[TableFile]", {t: TableFile(file, encoding) for t, file in found.items()})
