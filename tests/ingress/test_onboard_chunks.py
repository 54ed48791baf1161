"""Onboarding a folder holds a chunk of a file's rows, never the file (issue 28, part 3): the
checks across rows and tables still see every row, on the right lines."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from toolkit import Client
from toolkit._ingress import chunking, csv_reader, readers
from toolkit._ingress.validation import folder_sources, validate
from toolkit.sandbox import Sandbox

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _spy_on_the_reader(
    monkeypatch: pytest.MonkeyPatch, chunk: int, parsed: list[str] | None = None
) -> list[int]:
    """Read CSV files ``chunk`` rows at a time; return the rows of each frame the reader makes
    (and add each file's name to ``parsed`` when the reader starts on it)."""
    monkeypatch.setattr(chunking, "_CHUNK", chunk)
    made: list[int] = []
    real = csv_reader.read_csv_table

    def spy(path: Path, encoding: str | None = None) -> Any:
        if parsed is not None:
            parsed.append(path.name)
        out = real(path, encoding)
        if isinstance(out, pd.DataFrame):  # a reader of the whole file
            made.append(len(out))
            return out

        def chunks() -> Iterator[pd.DataFrame]:
            for frame in out:
                made.append(len(frame))
                yield frame

        return chunks()

    monkeypatch.setattr(readers, "read_csv_table", spy)
    return made


def test_planning_a_folder_reads_a_chunk_at_a_time_and_plans_what_the_whole_does(
    fresh_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "firm"
    shutil.copytree(SAMPLE, folder)
    whole = fresh_client.plan(folder).rows
    made = _spy_on_the_reader(monkeypatch, 4)
    plan = fresh_client.plan(folder)
    assert made and max(made) <= 4  # 62 initiatives: 16 chunks
    pd.testing.assert_frame_equal(plan.rows, whole)  # rows, lines, keys and actions alike
    # the plan holds every row's label, key and reference columns, not the input's other ones
    part = plan.part("initiatives")
    assert part is not None and set(part.source.columns) == {"externalId", "clientExternalId"}


def test_duplicates_and_references_across_chunks_are_found_on_their_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "clients.csv").write_text(
        "externalId,name,callSign,description\n"
        "C-1,Acme,1,a\n"
        "C-2,Bolt,2,b\n"
        "\n"  # a blank line: the rows after it a line further down
        "C-3,Crane,3,c\n"
        "C-1,Dune,4,d\n"
    )
    (tmp_path / "initiatives.csv").write_text(
        "billingType,externalId,name,description,callSign,clientExternalId,unitIncrements,status\n"
        "billable,M-1,One,x,1-1,C-1,360,active\n"
        "billable,M-2,Two,x,1-2,C-2,360,active\n"
        "billable,M-3,Three,x,3-1,C-3,360,active\n"  # its client in another chunk
        "billable,M-4,Four,x,9-1,C-9,360,active\n"  # no such client
    )
    made = _spy_on_the_reader(monkeypatch, 2)
    report = validate(**folder_sources(tmp_path))
    assert made and max(made) <= 2
    got = report.failures[["table", "row", "line", "column", "check"]].values.tolist()
    assert got == [
        ["clients", 0, 2, "externalId", "unique"],
        ["clients", 3, 6, "externalId", "unique"],
        ["initiatives", 3, 5, "clientExternalId", "reference"],
    ]
    assert set(report.failures["message"][:2]) == {
        "externalId 'C-1' is not unique: lines 2, 6 share it"
    }
    assert report.valid("clients").tolist() == [False, True, True, False]
    assert report.frames["initiatives"]["externalId"].tolist() == ["M-1", "M-2", "M-3"]


def test_a_run_from_a_folder_read_a_chunk_at_a_time_sends_each_row_once(
    fresh_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "firm"
    shutil.copytree(SAMPLE, folder)
    made = _spy_on_the_reader(monkeypatch, 4)
    report = fresh_client.onboard(folder, progress=False)
    assert made and max(made) <= 4
    assert report.ok
    sent = {"clients": 20, "initiatives": 62, "code_types": 3, "codes": 36, "code_ranges": 41}
    assert report.counts["sent"].to_dict() == sent
    for table, n in sent.items():  # one result row per input row, in order
        rows = report.results.loc[report.results["table"] == table, "row"]
        assert rows.tolist() == list(range(n))


def _edit_initiatives(path: Path) -> Path:
    """Row 7 (in the second chunk of 4) renamed and the last chunk (rows 60 and 61) cut off."""
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == 63 and "Medical Staff" in lines[8]  # the header and 62 rows
    lines[8] = lines[8].replace("Medical Staff", "Changed Staff", 1)
    path.write_text("".join(lines[:61]))
    return path


def test_a_file_changed_or_cut_after_its_check_gives_the_rows_checked_and_only_those(
    fresh_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "firm"
    shutil.copytree(SAMPLE, folder)
    parsed: list[str] = []
    _spy_on_the_reader(monkeypatch, 4, parsed)
    plan = fresh_client.plan(folder)  # checked and planned
    _edit_initiatives(folder / "initiatives.csv")
    sent: list[Any] = []
    for calls, _ in plan.calls["initiatives"].batches():
        sent += calls
    assert len(sent) == 62  # every row checked, none of the file's changes
    assert sent[7].json["name"] == "Medical Staff Credentialing Appeal"
    assert parsed.count("initiatives.csv") == 1  # parsed once, read back since


def test_a_run_parses_each_file_once_and_sends_what_it_checked_though_the_file_changes(
    sandbox: Sandbox, fresh_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "firm"
    shutil.copytree(SAMPLE, folder)
    parsed: list[str] = []
    made = _spy_on_the_reader(monkeypatch, 4, parsed)
    real, edited = readers.read_chunks, []

    def edited_once_read(path: Path, **kwargs: Any) -> Iterator[pd.DataFrame]:
        yield from real(path, **kwargs)
        if path.name == "initiatives.csv" and not edited:  # its check read it: it changes now
            edited.append(_edit_initiatives(path))

    monkeypatch.setattr(readers, "read_chunks", edited_once_read)
    report = fresh_client.onboard(folder, progress=False)
    assert report.ok
    sent = {"clients": 20, "initiatives": 62, "code_types": 3, "codes": 36, "code_ranges": 41}
    assert report.counts["sent"].to_dict() == sent
    assert sum(made) == sum(sent.values())  # every row parsed once
    assert sorted(parsed) == sorted(f"{table}.csv" for table in sent)
    stored = sandbox.admin.records("initiatives", customer_id=fresh_client.customer_id)
    assert len(stored) == 62
    (name,) = [r["name"] for r in stored if r["externalId"] == "M-1003-001"]
    assert name == "Medical Staff Credentialing Appeal"


def test_a_table_of_one_chunk_is_read_and_parsed_once_in_a_run(
    fresh_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "firm"
    shutil.copytree(SAMPLE, folder)
    made = _spy_on_the_reader(monkeypatch, 1000)  # every sample table in one chunk
    report = fresh_client.onboard(folder, progress=False)
    assert report.ok
    assert made == [20, 62, 3, 36, 41]  # each import table read once: checked, planned, sent


def test_a_read_stopped_early_leaves_no_snapshot_and_later_reads_share_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "codes.csv"
    path.write_text("externalId\nL1\nL2\nL3\n")
    parsed: list[str] = []
    _spy_on_the_reader(monkeypatch, 2, parsed)
    source = readers.TableFile(path)
    for _ in source.chunks():
        break  # stopped in the first chunk: nothing kept
    path.write_text("externalId\nK1\nK2\nK3\n")
    assert [c["externalId"].tolist() for c in source.chunks()] == [["K1", "K2"], ["K3"]]
    path.write_text("externalId\nJ1\n")
    one, two = source.chunks(), source.chunks()  # two reads at once, each at its own offset
    got = [
        (a["externalId"].tolist(), b["externalId"].tolist()) for a, b in zip(one, two, strict=True)
    ]
    assert got == [(["K1", "K2"], ["K1", "K2"]), (["K3"], ["K3"])]
    assert source.read().index.tolist() == [0, 1, 2]
    assert parsed == ["codes.csv", "codes.csv"]  # the stopped read, then the one kept
