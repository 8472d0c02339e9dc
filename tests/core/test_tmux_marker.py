"""Every test with a real tmux server is marked ``tmux`` (pyproject.toml), so that ``-m "not tmux"``
leaves out exactly those: the ``tmux_server`` fixture (tests/conftest.py) fails a test that is not."""

from __future__ import annotations

import pytest


@pytest.mark.tmux_executors("control")  # tmux_server needs tmux_executor; one executor is enough
def test_an_unmarked_test_gets_no_tmux_server(request: pytest.FixtureRequest, tmux_executor: str) -> None:
    with pytest.raises(pytest.fail.Exception, match="starts a real tmux server: mark it @pytest.mark.tmux"):
        request.getfixturevalue("tmux_server")
