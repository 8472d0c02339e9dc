"""Safety properties of scale-up under arbitrary tmux answers (hypothesis drives the faults).

Whatever tmux answers, call by call:

* every ``split-window``, ``kill-pane`` and ``send-keys`` is immediately preceded by ``L, S, L``
  on the same target, and every ``set-option`` by ``L, L`` right after the split that created it;
* only panes this run created, pinned and owner-tagged are ever killed or typed into — the team's
  existing panes and foreign panes never;
* the run always ends with a typed outcome, oh-my-codex's result shape, and no scaling lock left.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pure import model as m
from tests.omx_up.fixtures import UpTeam, request, rows, run, task

LIST_VARIANTS = [
    rows(("%11", 0, 42411), ("%21", 0, 42421), ("%31", 0, 42431), ("%32", 0, 42432), ("%99", 0, 9999)),
    rows(("%11", 0, 42411), ("%21", 0, 42421), ("%31", 0, 52431), ("%32", 0, 42432)),
    rows(("%21", 0, 42421)),
    rows(("%21", 1, 42421), ("%31", 1, 42431)),
    "malformed pane snapshot\n",
    "",
    None,  # query failed
]
OWNER_VARIANTS = [m.Proc(exit_code=0, stdout="team:scale-up\n"), m.Proc(exit_code=0, stdout="team:foreign\n"),
                  m.Proc(exit_code=2, stderr="owner-query-failed")]
OK_FAIL = [m.Proc(exit_code=0), m.Proc(exit_code=1, stderr="failed")]
SPLIT_VARIANTS = [m.Proc(exit_code=0, stdout="%31\n"), m.Proc(exit_code=0, stdout="%32\n"),
                  m.Proc(exit_code=0, stdout="%99\n"), m.Proc(exit_code=1, stderr="no space for new pane")]


class FaultyTmux:
    def __init__(self, choices: list[int]) -> None:
        self.choices = choices
        self.calls = 0

    def pick(self, options: list[object]) -> object:
        choice = self.choices[self.calls % len(self.choices)] if self.choices else 0
        self.calls += 1
        return options[choice % len(options)]

    def __call__(self, args: tuple[str, ...]) -> m.Proc:
        verb = args[0]
        if verb == "-V":
            return m.Proc(exit_code=0, stdout="tmux 3.3a\n")
        if verb == "list-panes":
            text = self.pick(list(LIST_VARIANTS))
            return m.Proc(exit_code=1, stderr="lost") if text is None else m.Proc(exit_code=0, stdout=str(text))
        if verb == "show-option":
            return self.pick(list(OWNER_VARIANTS))  # type: ignore[return-value]
        if verb == "split-window":
            return self.pick(list(SPLIT_VARIANTS))  # type: ignore[return-value]
        if verb in ("set-option", "kill-pane", "send-keys"):
            return self.pick(list(OK_FAIL))  # type: ignore[return-value]
        return m.Proc(exit_code=0, stdout="\n")


def _target(args: tuple[str, ...]) -> str:
    return args[args.index("-t") + 1]


def check_choreography(log: list[tuple[str, ...]]) -> None:
    tagged: set[str] = set()
    for i, args in enumerate(log):
        verb = args[0]
        if verb in ("split-window", "kill-pane", "send-keys"):
            before = log[i - 3:i]
            assert [a[0] for a in before] == ["list-panes", "show-option", "list-panes"], (i, log)
            assert _target(before[1]) == _target(args)
        if verb == "set-option":
            assert [a[0] for a in log[i - 3:i]] == ["split-window", "list-panes", "list-panes"], (i, log)
            tagged.add(_target(args))
        if verb in ("kill-pane", "send-keys"):
            assert _target(args) in tagged, f"{verb} on a pane this run did not tag: {args}"
            assert _target(args) not in ("%11", "%21")


# Mostly healthy answers, so that runs get far enough to split, tag, dispatch and roll back.
ANSWER = st.sampled_from([0] * 14 + [1, 2, 3, 4, 5, 6])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(ANSWER, min_size=1, max_size=60),
       count=st.integers(min_value=1, max_value=3),
       inject=st.sampled_from(["", "identity", "inbox", "config", "finalization",
                               "finalization,rollback-membership-persistence"]))
def test_scale_up_is_safe_under_any_tmux_answers(choices: list[int], count: int, inject: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        team = UpTeam(root)
        env = {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": inject} if inject else {}
        tasks = tuple(task(f"t{i}", owner=f"worker-{i}") for i in range(2, 2 + count))
        out = run(team, request(team, count=count, tasks=tasks, env=env), FaultyTmux(choices))  # type: ignore[arg-type]
        check_choreography(out.log)
        result = out.result
        shape = set(result) - {"transcriptWarnings"}  # why a killed pane's transcript was not kept (a deviation)
        assert shape in ({"ok", "error"}, {"ok", "addedWorkers", "newWorkerCount", "nextWorkerIndex"})
        assert out.done.outcome.status in ("ok", "debt", "error", "refused")
        assert (result["ok"] is True) == (out.done.outcome.status == "ok")
        if out.done.outcome.status == "refused":  # refused means nothing was mutated in tmux
            assert not any(a[0] in ("split-window", "set-option", "kill-pane", "send-keys") for a in out.log)
        locks = root / ".omx" / "state" / ".team-locks"
        assert not locks.exists() or list(locks.iterdir()) == []
        members = [w for w in team.config()["workers"]]
        error = str(result.get("error", ""))
        if out.done.outcome.status in ("error", "refused") and "persistence_failed" not in error:
            assert [w["name"] for w in members] == ["worker-1"], (error, members)  # exact rollback
        if out.done.outcome.status == "debt":
            assert error.startswith("scale_up_rollback_cleanup_debt:")
            for worker in members[1:]:  # every retained worker is named by its pane in the debt
                assert worker["pane_id"] in error, (error, members)
        if result["ok"] is True:
            assert len(result["addedWorkers"]) == count
            assert all(_target(a) in {w["pane_id"] for w in result["addedWorkers"]}
                       for a in out.log if a[0] == "set-option")
