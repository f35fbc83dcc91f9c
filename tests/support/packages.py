"""Deployment zips for the tests: the outreach package alone, or the full zips built once per run."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from outreach_dev import packaging

_BUILT_MARK = ".built"


def code_only_packages(directory: Path) -> Path:
    """One zip per function with the outreach package only: Terraform and moto need a zip, not its
    dependencies. Returns ``directory``, the roots' ``package_dir``."""
    first, *others = packaging.FUNCTIONS
    written = packaging.write_zip(packaging.source_entries(), directory / f"{first}.zip")
    for function in others:
        packaging.copy_zip(written, directory / f"{function}.zip")
    return directory


def full_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make package``'s zips, built by the first test process of the run that asks and read by every
    other one (the build is reproducible: a second build gives the same bytes,
    ``tests/outreach_dev/test_packaging.py``). Under pytest-xdist the workers' temporary directories
    share a parent, which holds the zips and the lock the builder holds while it writes them."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    directory = root / "full-packages"
    with (root / "full-packages.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (directory / _BUILT_MARK).exists():
            directory.mkdir(exist_ok=True)
            packaging.build_packages(dist_dir=directory)
            (directory / _BUILT_MARK).touch()
    return directory
