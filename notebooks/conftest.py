"""nbval executes these notebooks at their own defaults, as a user would (the Makefile's NBVAL_NOTEBOOKS, in make
test's root part). The test suite sets FLASHSCALE_CAP_FIT=refuse for its own campaigns (tests/conftest.py), which
a user's environment does not: a notebook's kernel starts without it, so its caps are lowered to fit this machine
as a user's would be."""
from __future__ import annotations

import os

import pytest

from flashscale.arrays.emulated import CAP_FIT_ENV


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """nbval starts a notebook's kernel in its first cell's setup: the kernel inherits the environment then."""
    suite = os.environ.pop(CAP_FIT_ENV, None)
    try:
        return (yield)
    finally:
        if suite is not None:
            os.environ[CAP_FIT_ENV] = suite
