"""Objects render as tables in Jupyter (``_repr_html_``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toolkit import Export, reconcile, validate
from toolkit._ingress.validation import load_folder
from toolkit.testing import fake_export_entries

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


def test_the_validation_report_renders_its_failures_as_tables() -> None:
    html = validate(**load_folder(SAMPLE / "broken"))._repr_html_()
    assert html.count("<table") >= 2 and "NOT ok" in html and "reference" in html


def test_the_onboard_report_renders_counts_and_failed_rows(fresh_client) -> None:
    report = fresh_client.onboard(
        SAMPLE / "broken", on_invalid="skip", dry_run=True, progress=False
    )
    html = report._repr_html_()
    assert html.count("<table") == 3 and "dry run" in html and "C-1003" in html
    assert "row(s) with a warning" in html  # the counts, the failed rows, the warned rows


def test_the_export_renders_counts_date_range_and_a_head_of_each_table() -> None:
    export = Export.from_records(fake_export_entries(12, codes_per_entry=2))
    html = export._repr_html_()
    assert html.count("<table") == 3
    assert "workDate from" in html and "first 5 of 12" in html and "first 5 of 24" in html


def test_the_reconciliation_renders_a_table_of_classes() -> None:
    exported = pd.DataFrame(
        {
            "_id": ["e1", "e2"],
            "userId": ["u1", "u1"],
            "workDate": ["2024-03-01"] * 2,
            "incrementDurationInSeconds": [60, 60],
            "initiative.externalId": ["M-1", "M-1"],
        }
    )
    billing = pd.DataFrame(
        {"entryId": ["e1"], "duration": [60], "workDate": ["2024-03-01"], "matter": ["M-1"]}
    )
    html = reconcile(exported, billing)._repr_html_()
    assert "<table" in html and "matched" in html and "missing_in_billing" in html
