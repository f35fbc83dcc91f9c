"""The local root's two applies (``local_applies``) as a package fixture, for the modules that read them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.terraform.local_applies import Applied, applied_local_root


@pytest.fixture(scope="package")
def local_applied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Applied]:
    with applied_local_root(tmp_path_factory) as applied:
        yield applied
