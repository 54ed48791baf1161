"""Arrow's memory handed back while the big runs work: one pool, shared, restored after."""

from __future__ import annotations

import threading
from typing import Any

import pyarrow as pa
import pytest

import toolkit
import toolkit._ingress.validation as validation
from toolkit._core.memory import returning_pool

try:
    pa.jemalloc_memory_pool()
except NotImplementedError:  # pragma: no cover - a pyarrow built without jemalloc
    pytest.skip("this pyarrow has no jemalloc", allow_module_level=True)


def test_runs_in_threads_share_the_pool_and_the_last_to_end_restores_it() -> None:
    before = pa.default_memory_pool().backend_name
    inside, leave = threading.Event(), threading.Event()

    def other_run() -> None:
        with returning_pool():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other_run)
    thread.start()
    assert inside.wait(10)
    with returning_pool():
        assert pa.default_memory_pool().backend_name == "jemalloc"
    assert pa.default_memory_pool().backend_name == "jemalloc"  # the other run still works
    leave.set()
    thread.join(10)
    assert pa.default_memory_pool().backend_name == before


def test_onboarding_reads_and_checks_from_the_returning_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    as_pandas = validation.as_pandas

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(pa.default_memory_pool().backend_name)
        return as_pandas(*args, **kwargs)

    monkeypatch.setattr(validation, "as_pandas", watched)
    before = pa.default_memory_pool().backend_name
    toolkit.validate(**toolkit.load_folder("sample_data"))
    assert seen and set(seen) == {"jemalloc"}
    assert pa.default_memory_pool().backend_name == before
