"""Uses of the public API as the README and notebooks write them, for ``mypy --strict``:
``make test`` type-checks this file with the package (its functions are never called)."""

from __future__ import annotations

import toolkit
from toolkit._ingress import folder_sources


def validate_a_folder(folder: str) -> toolkit.ValidationReport:
    return toolkit.validate(**toolkit.load_folder(folder))


def validate_a_folders_files(folder: str) -> toolkit.ValidationReport:
    return toolkit.validate(**folder_sources(folder), code_range_post="add")


def plan_and_onboard_a_folder(client: toolkit.Client, folder: str) -> toolkit.OnboardReport:
    frames = toolkit.load_folder(folder)
    client.plan(frames).check()
    client.plan(folder_sources(folder)).check()
    return client.onboard(frames, progress=False)
