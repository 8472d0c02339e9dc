"""A worker read back from the names of its runtime files and from a pane's start command
(pure/omx/state.py, pure/omx/startup_script.py): only names scale-up makes, only the team's own folder."""

from __future__ import annotations

import pytest

from pure.omx.startup_script import gated_startup_command, started_worker, startup_command
from pure.omx.state import TeamPaths, runtime_file, runtime_worker


@pytest.mark.parametrize(("name", "found"), [
    ("worker-3-startup.sh", ("worker-3", "script")),
    ("worker-12.intent", ("worker-12", "intent")),
    ("worker-0-startup.sh", None), ("worker-03.intent", None), ("worker-1234567890.intent", None),
    ("worker-٣-startup.sh", None), ("leader-startup.sh", None), ("worker-3-startup.sh.tmp", None),
])
def test_runtime_file_names(name: str, found: tuple[str, str] | None) -> None:
    assert runtime_file(name) == found


def test_a_path_is_a_worker_s_only_in_a_runtime_folder_and_of_the_kind_asked() -> None:
    paths = TeamPaths(state_root="/p/.omx/state", team="alpha")
    assert runtime_worker(paths.startup_script(4)) == "worker-4"
    assert runtime_worker(paths.intent("worker-4"), "intent") == "worker-4"
    assert runtime_worker(paths.intent("worker-4"), "script") is None
    assert runtime_worker("/p/elsewhere/worker-4-startup.sh") is None


@pytest.mark.parametrize("root", ["/p/.omx/state", "/it's here/.omx/state"])
def test_the_worker_a_start_command_runs_is_read_in_the_team_s_runtime_folder_only(root: str) -> None:
    paths = TeamPaths(state_root=root, team="alpha")
    script = paths.startup_script(7)
    for command in (startup_command(script), gated_startup_command(script, paths.worker_dir("worker-7"))):
        assert started_worker(command, paths.runtime_dir) == "worker-7"
        assert started_worker(f'"{command}"') == "worker-7"  # as tmux shows it, quoted again
        other = TeamPaths(state_root=root, team="beta")
        assert started_worker(command, other.runtime_dir) is None
    assert started_worker(startup_command(paths.intent("worker-7")), paths.runtime_dir) is None
