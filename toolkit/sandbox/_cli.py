"""``toolkit sandbox``: run the sandbox in the foreground.

    toolkit sandbox [--host 127.0.0.1] [--port 8765] [--db PATH] [--seed DIR | --demo]
                    [--token-ttl SECONDS] [--audience URL] [--profile FILE|PRESET]
                    [--allow-remote] [--env-file .env]

It prints the demo customer's credentials and URLs, writes them to the env file and serves
until Ctrl+C. ``--profile`` sets the default profile (every customer's switches unless set for
it; see :mod:`toolkit.sandbox._profiles`): a JSON file holding one object of switches, or the
name of a preset of :data:`toolkit.sandbox._profiles.PROFILES`. The administration routes have no
authentication, so a host other than a loopback address is refused unless ``--allow-remote``
is given.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import textwrap
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from . import env_for, write_env_file
from ._app import TOKEN_PATH, create_app
from ._profiles import PROFILES, describe_switches, validate_profile
from ._server import bind, serve_forever
from ._store import DEFAULT_AUDIENCE, DEFAULT_TOKEN_TTL, Store

__all__ = ["READY_MARKER", "is_loopback", "main", "read_profile"]

READY_MARKER = "Sandbox ready at"
"""Start of the line printed (and flushed) once the server accepts requests."""

SAMPLE_FIRM = Path(__file__).resolve().parent.parent / "sample_data"
"""The sample firm the package carries (``--demo``): in a clone, ``toolkit/sample_data``
links to the repository's ``sample_data/``."""

#: where the profile switches are described, in the wheel as in a clone
_PROFILE_DOC = "python -m pydoc toolkit.sandbox._profiles"


def is_loopback(host: str) -> bool:
    """Return True when ``host`` is a loopback address or ``localhost``.

    Args:
        host: Host name or address.

    Returns:
        Whether only this machine can reach it.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_profile(source: str) -> dict[str, Any]:
    """Read ``--profile``: a preset's name, or a JSON file holding one object of switches.

    The switches are not checked here (:func:`~toolkit.sandbox._profiles.validate_profile`
    does).

    Args:
        source: A name in :data:`~toolkit.sandbox._profiles.PROFILES`, or a path.

    Returns:
        The switches.

    Raises:
        ValueError: The file cannot be read, is not JSON, or holds no object.

    >>> read_profile("strict")["reimport"]
    'conflict'
    """
    if source in PROFILES and not Path(source).exists():
        return dict(PROFILES[source])
    try:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    except OSError as exc:
        presets = ", ".join(sorted(PROFILES))
        raise ValueError(
            f"cannot read {source!r} ({exc.strerror or exc}); a profile is a JSON "
            f"file or one of the presets {presets}"
        ) from None
    except ValueError as exc:
        raise ValueError(f"{source!r} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{source!r} must hold one JSON object of switches")
    return data


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolkit sandbox",
        description="Run the time-billing interface sandbox (identity, time and ingestion "
        "services, each under its own base on one server) in the foreground.",
        epilog="profile switches (name = default (published: value): meaning):\n"
        + "\n".join(
            textwrap.fill(line, 100, initial_indent="  ", subsequent_indent="      ")
            for line in describe_switches().splitlines()
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port; 0 = any free port")
    parser.add_argument("--db", type=Path, help="SQLite file (default: a new temporary file)")
    parser.add_argument("--seed", type=Path, help="folder of sample CSV files to load")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="load the sample firm the package carries (its clients, matters, "
        "codes and timekeepers, and released entries): no folder needed",
    )
    parser.add_argument(
        "--token-ttl",
        type=int,
        default=DEFAULT_TOKEN_TTL,
        help=f"access token lifetime in seconds (default {DEFAULT_TOKEN_TTL})",
    )
    parser.add_argument("--audience", default=DEFAULT_AUDIENCE, help="token audience")
    parser.add_argument(
        "--profile",
        metavar="FILE|PRESET",
        help="default profile: a JSON file of switches, or a preset ("
        + ", ".join(sorted(PROFILES))
        + f"); the switches: {_PROFILE_DOC}",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback host (admin routes are unauthenticated!)",
    )
    parser.add_argument(
        "--env-file",
        type=Path,
        default=Path(".env"),
        help="where to write the TOOLKIT_* variables (default .env)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    return parser


def _curl_examples(store: Store, url: str, creds: dict[str, str]) -> list[str]:
    token_body = json.dumps(
        {
            "audience": creds["audience"],
            "grant_type": "client_credentials",
            "client_id": creds["clientId"],
            "client_secret": creds["clientSecret"],
        }
    )
    lines = [
        "Get a token:",
        f"  curl -s -X POST {url}/identity{TOKEN_PATH} -H 'Content-Type: application/json' "
        f"-d {shlex.quote(token_body)}",
    ]
    users = store.records(creds["customerId"], "users")
    initiatives = [
        i
        for i in store.records(creds["customerId"], "initiatives")
        if i["source"] == "pms" and i["status"] == "active"
    ]
    if users and initiatives:
        star_body = json.dumps(
            {
                "timekeeperExternalId": users[0]["timekeeperExternalId"],
                "initiativeExternalIds": [initiatives[0]["externalId"]],
            }
        )
        lines += [
            "Star an initiative (207):",
            f"  curl -s -X POST {url}/time/api/v1/public/customers/{creds['customerId']}"
            '/initiative-props/star -H "Authorization: Bearer $TOKEN" '
            f"-H 'Content-Type: application/json' -d {shlex.quote(star_body)}",
        ]
    return lines


def _pending_line(store: Store, customer_id: str) -> str:
    """How many entries are pending (what release-pending and the acknowledgements act on),
    and how to get more when none is."""
    entries = store.records(customer_id, "entries")
    pending = sum(1 for entry in entries if entry.get("state") == "pending")
    if pending:
        return (
            f"{pending} of its {len(entries)} entries are pending: release-pending and "
            "the acknowledgements act on them"
        )
    return (
        "Nothing is pending: every entry is acknowledged, so release-pending is empty and "
        "an acknowledgement has nothing to act on. Release more with `make demo` (a fresh "
        "database ending with a pending batch), start afresh with `rm out/sandbox.db` "
        "(a new database is seeded with pending entries), or release one through POST "
        "/sandbox/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release "
        "(every route: the API docs at /docs)"
    )


def _say(text: str) -> None:
    """Print a line to stdout; once stdout is a closed pipe (``toolkit sandbox | head``), the
    rest goes nowhere instead of ending the sandbox with a ``BrokenPipeError``."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # also for the flush at interpreter exit
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop_on_sigterm() -> Any:
    """SIGTERM stops the sandbox as Ctrl+C does (uvicorn shuts down, then re-raises it here);
    returns the handler to restore, or ``None`` off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``toolkit sandbox`` with ``argv`` (default ``sys.argv[1:]``).

    Args:
        argv: Command-line arguments after ``sandbox``.

    Returns:
        The exit status: 0 after a clean stop (Ctrl+C or SIGTERM; a temporary database is
        removed), 2 for a refused host, 1 when the port cannot be bound, the seed folder does
        not exist or the profile is unreadable or invalid.

    >>> main(["--host", "0.0.0.0"])
    2
    """
    args = _parser().parse_args(argv)
    if args.demo:
        if args.seed is not None:
            print("toolkit sandbox: give --seed DIR or --demo, not both", file=sys.stderr)
            return 2
        args.seed = SAMPLE_FIRM
    if args.seed is not None and not args.seed.is_dir():
        print(f"toolkit sandbox: no sample data folder {str(args.seed)!r}", file=sys.stderr)
        return 1
    profile: dict[str, Any] = {}
    if args.profile is not None:
        try:
            profile = validate_profile(read_profile(args.profile))
        except ValueError as exc:  # ProfileError too
            print(f"toolkit sandbox: --profile: {exc}", file=sys.stderr)
            return 1
    if not is_loopback(args.host) and not args.allow_remote:
        print(
            f"toolkit sandbox: refusing to listen on non-loopback host {args.host!r}: the "
            "administration routes have no authentication. Pass --allow-remote to do it "
            "anyway.",
            file=sys.stderr,
        )
        return 2
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        print(f"toolkit sandbox: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    db = args.db or Path(tempfile.mkdtemp(prefix="toolkit-sandbox-")) / "sandbox.db"
    previous = _stop_on_sigterm()
    store = Store(db, token_ttl=args.token_ttl, audience=args.audience, profile=profile)
    try:
        creds = store.demo_customer()
        if args.seed is not None:
            store.seed_sample(args.seed, creds["customerId"])
        held = {
            kind: len(store.records(creds["customerId"], kind))
            for kind in ("clients", "initiatives", "codes", "users", "entries")
        }
        _say(
            "Serving the demo customer with "
            + ", ".join(f"{n} {kind}" for kind, n in held.items())
            + (f" (seeded from {args.seed})" if args.seed is not None else "")
            + (
                ""
                if any(held.values())
                else ": an empty database; load the sample firm with --demo (or a folder of CSV "
                "files with --seed DIR; `make sandbox` does), or import into it with "
                "`toolkit onboard DIR`"
            )
        )
        bound_host, port = sock.getsockname()[:2]
        url = f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{port}"
        if held["entries"]:
            _say(_pending_line(store, creds["customerId"]))
        env = env_for(
            url, creds["customerId"], creds["clientId"], creds["clientSecret"], creds["audience"]
        )
        if store.profile(creds["customerId"])["codeTypeBody"] == "published":
            env["TOOLKIT_NULL_SEMANTIC_TYPE"] = "omit"  # the toolkit sends the published body
        write_env_file(args.env_file, env)
        _say(f"Time-billing sandbox, database {db}")
        _say(f"Base addresses: {url}/identity, {url}/time, {url}/ingestion ({url} serves them all)")
        for key, value in env.items():
            _say(f"  {key}={value}")
        _say(f"Written to {args.env_file}")
        for line in _curl_examples(store, url, creds):
            _say(line)
        _say(
            f"API docs (every route, the administration ones too): {url}/docs   "
            f"Administration: {url}/sandbox/v1; profiles: {_PROFILE_DOC}"
        )
        try:
            serve_forever(
                create_app(store),
                sock,
                log_level=args.log_level,
                on_started=lambda: _say(f"{READY_MARKER} {url} (Ctrl+C to stop)"),
            )
        except KeyboardInterrupt:  # uvicorn re-raises Ctrl+C or SIGTERM after its shutdown
            pass
        _say(
            "Sandbox stopped."
            if args.db
            else f"Sandbox stopped; its temporary database {db} is removed."
        )
    finally:
        sock.close()
        store.close()
        if args.db is None:
            shutil.rmtree(db.parent, ignore_errors=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
