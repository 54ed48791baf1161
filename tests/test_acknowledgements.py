"""toolkit.egress.acknowledgements: the acknowledgement frame's ``errors`` are taken as given."""

from __future__ import annotations

import pandas as pd
import pytest

from toolkit.egress.acknowledgements import check_acknowledgements
from toolkit.errors import ValidationError


def failed(*errors: object) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "userId": ["u1"] * len(errors),
            "entryId": [f"e{i}" for i in range(len(errors))],
            "outcome": ["failed"] * len(errors),
            "errors": list(errors),
        }
    )


def test_error_text_containing_a_semicolon_is_one_message() -> None:
    checked = check_acknowledgements(failed("rate missing; client closed"))
    assert checked.loc[0, "errors"] == ["rate missing; client closed"]


def test_error_list_stays_a_list_and_its_items_are_not_split() -> None:
    checked = check_acknowledgements(failed(["rate missing; see note", "client closed"]))
    assert checked.loc[0, "errors"] == ["rate missing; see note", "client closed"]


def test_error_text_is_split_only_on_an_explicit_separator() -> None:
    frame = failed("rate missing; client closed", ["a; b"])
    checked = check_acknowledgements(frame, separator=";")
    assert checked["errors"].tolist() == [["rate missing", "client closed"], ["a; b"]]


@pytest.mark.parametrize("blank", ["", "   ", None, []])
def test_a_failed_row_without_error_text_is_refused(blank: object) -> None:
    with pytest.raises(ValidationError) as info:
        check_acknowledgements(failed(blank))
    assert info.value.failure_cases["column"].tolist() == ["errors"]
