"""What the commands share: the client, printed frames, ``--out`` files, interrupts, errors."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import textwrap
from itertools import zip_longest
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from toolkit import Client, Settings
from toolkit._client import ENDPOINTS, ENV_KEYS, Journal
from toolkit._ingress import check_out_path, with_lines, write_table
from toolkit.errors import ApiError, AuthError, Interrupted, ToolkitError, TransportError

#: the path of the token request
TOKEN_PATH = ENDPOINTS["token"][2]

#: the names of a release window's bounds on the command line
FLAGS = ("--after", "--on-or-before")
#: the reconciliation rows acknowledged when ``--include`` names none: what billing proves
ACKNOWLEDGED_BY_DEFAULT = ["matched"]


def env_file_of(args: argparse.Namespace) -> str:
    """The ``.env`` to read: ``--env-file`` (absolute), else ``.env`` found from here upwards.

    >>> env_file_of(argparse.Namespace(env_file=None))
    '.env'
    """
    given = getattr(args, "env_file", None)
    return ".env" if given is None else str(Path(given).absolute())


def client_from(args: argparse.Namespace) -> Client:
    """A client from the settings, its token fetched first: bad credentials fail fast.

    >>> with client_from(argparse.Namespace(env_file=env_file)) as c:
    ...     c.connection.settings.customer_id == sb.customer_id
    True
    """
    client = Client.from_env(env_file_of(args), workers=getattr(args, "workers", None) or 8)
    args.settings = client.connection.settings
    # an unreachable identity service ends the command at once; a 429 or 5xx is retried
    client.connection.auth.secret_token(retry=False)
    return client


def check_journal(args: argparse.Namespace) -> None:
    """Open and close ``--journal`` before any request: an unusable or held journal fails first;
    one this check created is removed (the run creates it again when it sends).

    >>> check_journal(argparse.Namespace(journal=None))  # no journal: nothing to check
    """
    if getattr(args, "journal", None) and not getattr(args, "dry_run", False):
        new = not Path(args.journal).exists()
        Journal(args.journal).close()
        if new:
            Path(args.journal).unlink()


def cut(value: object, width: int = 80) -> object:
    """A text longer than ``width`` cut to it, ending in ``...``; any other value as it is.

    >>> cut("x" * 100, width=10)
    'xxxxxxx...'
    """
    return value[: width - 3] + "..." if isinstance(value, str) and len(value) > width else value


#: a library message's ``with columns={'a': "b"}``: its two quoted names
_RENAME = r"with columns=\{('[^']*'|\"[^\"]*\"): ('[^']*'|\"[^\"]*\")\}"
#: the library's Python phrasings (a ``columns=`` rename, a keyword) and the command line's words
_CLI_WORDS = (
    (re.compile("rename it " + _RENAME), r"rename the header \1 to \2"),
    (re.compile("say which " + _RENAME), r"say which by renaming the header \1 (to \2, say)"),
    (re.compile(r"pass overwrite=True \(--overwrite\)"), "give --overwrite"),
    (re.compile(r"\bthe frame (has|needs)\b"), r"the file \1"),
    (re.compile(r"^(window|lag)\b"), r"--\1"),  # an option's value named by its flag
)
#: the columns of a printed or written frame that carry the library's messages
_MESSAGES = ("message", "error")


def in_cli_words(text: str) -> str:
    """A library message in the command line's words: a header to rename, a flag to give.

    >>> in_cli_words("the frame has 'Id': rename it with columns={'Id': 'externalId'}")
    "the file has 'Id': rename the header 'Id' to 'externalId'"
    >>> in_cli_words("out already exists; pass overwrite=True (--overwrite) to replace it")
    'out already exists; give --overwrite to replace it'
    """
    for pattern, words in _CLI_WORDS:
        text = pattern.sub(words, text)
    return text


def _worded(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its message columns in the command line's words."""
    cols = [c for c in _MESSAGES if c in frame]
    worded = {c: [in_cli_words(v) if isinstance(v, str) else v for v in frame[c]] for c in cols}
    return frame.assign(**worded) if cols else frame


def _wrapped(shown: pd.DataFrame, width: int) -> pd.DataFrame:
    """Each text longer than ``width`` wrapped onto lines of its own under its row, left-aligned;
    the frame as it is when none is."""
    longer = [c for c in shown if any(isinstance(v, str) and len(v) > width for v in shown[c])]
    if not longer:
        return shown
    rows: list[tuple[object, ...]] = []
    for values in shown.itertuples(index=False):
        cells = [
            textwrap.wrap(v, width) if c in longer and isinstance(v, str) and v else [v]
            for c, v in zip(shown.columns, values, strict=True)
        ]
        rows += zip_longest(*cells, fillvalue="")
    out = pd.DataFrame(rows, columns=shown.columns)
    for col in longer:
        size = max(len(v) for v in out[col] if isinstance(v, str))
        out[col] = [v.ljust(size) if isinstance(v, str) else v for v in out[col]]
    return out


def print_frame(df: pd.DataFrame, max_rows: int = 30, width: int = 80) -> None:
    """Print the first rows of a frame, texts longer than ``width`` wrapped, messages in the
    command line's words, and how many more rows there are.

    >>> print_frame(pd.DataFrame({"row": [0, 1], "error": ["bad", "worse"]}), max_rows=1)
     row error
       0   bad
    ... 1 more (write them all with --out FILE)
    >>> frame = pd.DataFrame({"row": [0], "error": ["not sent: the service is down"]})
    >>> print_frame(frame, width=16)  # doctest: +NORMALIZE_WHITESPACE
    row           error
      0 not sent: the
        service is down
    """
    shown = _worded(df.head(max_rows))
    for col in shown.columns[shown.isna().any().to_numpy()]:  # missing: blank
        shown[col] = shown[col].astype(object).where(shown[col].notna(), "")
    with pd.option_context("display.width", 200):
        print(_wrapped(shown, width).to_string(index=False, na_rep=""))
    if len(df) > max_rows:
        print(f"... {len(df) - max_rows} more (write them all with --out FILE)")


def out_path(args: argparse.Namespace, name: str = "out") -> Path | None:
    """The ``--out`` file (or the option ``name``), checked before any work is done.

    >>> out_path(argparse.Namespace(out=None)) is None
    True
    """
    given = getattr(args, name, None)
    return check_out_path(given) if given else None


def write_out(frame: pd.DataFrame, out: Path | None, what: str) -> None:
    """Write a frame to the ``--out`` file, if there is one, and say so.

    >>> write_out(pd.DataFrame({"row": [0]}), None, "results")  # no --out: nothing
    """
    if out is not None:
        write_table(_worded(frame), out)
        print(f"wrote {len(frame)} {what} to {out}")


def invalid(
    message: str,
    failures: pd.DataFrame,
    source: pd.DataFrame | dict[str, pd.DataFrame] | None,
    out: Path | None,
) -> int:
    """Print (and write to ``out``) the validation failures, nothing sent; return 1.

    ``source`` gives the failures' lines (``None``: their ``line`` column as given).

    >>> invalid("bad", pd.DataFrame({"row": [0]}), {}, None)  # doctest: +NORMALIZE_WHITESPACE
    row line
    0
    1
    """
    said = message.removesuffix("; nothing was sent")  # said once, first
    print(f"validation failed, nothing sent: {said}", file=sys.stderr)
    failures = failures if source is None else with_lines(failures, source)
    print_frame(failures, 200)
    write_out(failures, out, "failures")
    return 1


def with_row(
    frame: pd.DataFrame, source: pd.DataFrame, rows: pd.Index | None = None
) -> pd.DataFrame:
    """A result frame aligned to a file's rows, with ``row`` (0-based) and ``line`` first.

    ``rows`` are the file's rows of the frame's, in order (default: all of them, one each).

    >>> src = pd.DataFrame({"a": ["x"]})
    >>> src.attrs["line_shifts"] = ()
    >>> with_row(pd.DataFrame({"ok": [True]}), src).columns.tolist()
    ['row', 'line', 'ok']
    """
    out = frame.reset_index(drop=True)
    numbers = range(len(out)) if rows is None else rows
    out.insert(0, "row", pd.Series(numbers, index=out.index, dtype="Int64"))
    return with_lines(out, source)


#: the outcomes of a row not done that :func:`interrupted` counts, in its order
_NOT_OK = ("failed", "unknown", "not_sent")


def interrupted(exc: Interrupted, args: argparse.Namespace, key: str = "externalId") -> int:
    """Print what an interrupted run did and the command that resumes it; return 130.

    >>> interrupted(Interrupted("stopped"), argparse.Namespace(argv=["onboard", "firm"]))
    130
    """
    res = exc.result
    print("\ninterrupted: no request was sent after the interrupt", file=sys.stderr)
    if res is not None and len(res):
        status = res["status"].astype(str)
        counts = [f"ok: {int(res['ok'].sum())}"]
        counts += [f"{s.replace('_', ' ')}: {(status == s).sum()}" for s in _NOT_OK]
        print(", ".join(counts), file=sys.stderr)
        cols = [c for c in ("table", "row", "line", key, "status", "error") if c in res]
        todo = res[status.isin(["not_sent", "unknown"])]
        if len(todo):
            base = getattr(args, "journal", None) or getattr(args, "out", None)
            where = Path(f"{base or getattr(args, 'command', None) or 'toolkit'}.unsent.csv")
            if base and Path(base).is_dir():  # an output folder: the file goes inside it
                where = Path(base) / "unsent.csv"
            todo[cols].to_csv(where, index=False)
            print(f"{len(todo)} row(s) not sent (or unknown) written to {where}", file=sys.stderr)
    command = "toolkit " + shlex.join(args.argv)
    said = f"resume with: {command}"
    if not hasattr(args, "journal"):  # a command that starts afresh (the demo)
        said = f"run it again with: {command}"
    elif not args.journal:
        said += " --journal journal.jsonl (without a journal the rows already sent are sent "
        said += "again: harmless, but slower)"
    print(said, file=sys.stderr)
    return 130


def _setting_of(url: str, settings: Settings | None) -> str:
    """The TOOLKIT_* variable whose address the URL starts with."""
    for name in ("auth_url", "ingestion_url", "time_url"):
        base = getattr(settings, name, None)
        if base and url.startswith(base.rstrip("/")):
            return ENV_KEYS[name]
    return "TOOLKIT_AUTH_URL / TOOLKIT_TIME_URL"


def explain(exc: ToolkitError | OSError, args: argparse.Namespace | None) -> str:
    """One line (without ``error:``) saying what went wrong and which setting to check.

    >>> explain(toolkit.ConfigError("firm/: no such folder"), None)
    'firm/: no such folder'
    """
    settings = getattr(args, "settings", None)
    if settings is not None and settings.source not in ("environment", "arguments"):
        env_file = settings.source  # the .env file read, wherever it was found
    else:
        env_file = getattr(args, "env_file", None) or ".env"
    where = f"in {env_file} or the environment"
    if not isinstance(exc, ApiError | TransportError):
        return in_cli_words(str(exc))
    host = urlsplit(exc.url).netloc or exc.url
    if isinstance(exc, TransportError):
        reason = str(exc).rpartition("no answer (")[2].rstrip(")") or str(exc)
        return (
            f"could not reach {host} ({reason}); check {_setting_of(exc.url, settings)} {where} "
            "and that the service is running and reachable"
        )
    code = (exc.problem or {}).get("error")
    token = urlsplit(exc.url).path.endswith(TOKEN_PATH)
    # the identity base also serves the user records, whose 401/403 is no verdict on the
    # credentials unless the service says invalid_client
    if not token:
        if not isinstance(exc, AuthError):
            return str(exc)
        code = code or ("invalid_client" if exc.status == 401 else None)
        if code != "invalid_client":
            return f"{exc} (check the permissions of TOOLKIT_CLIENT_ID)"
    if not token or (isinstance(exc, AuthError) and exc.refuses_credentials):
        return (
            "the identity service refused the application's credentials "
            f"({code or exc.status}: {exc.detail}); "
            f"check TOOLKIT_CLIENT_ID and TOOLKIT_CLIENT_SECRET {where}"
        )
    what = f"{code}: {exc.detail}" if isinstance(code, str) and code else f"{exc.detail}"
    if isinstance(exc, AuthError):
        return (
            f"the identity service at {host} refused the token request ({exc.status} {what}); "
            f"check TOOLKIT_AUDIENCE and TOOLKIT_AUTH_URL {where}"
        )
    busy = "is limiting requests" if exc.status == 429 else "is failing or unavailable"
    return (
        f"the identity service at {host} answered the token request {exc.status} ({what}) "
        f"on every attempt: it {busy}; try again later (the credentials were not checked)"
    )
