"""Every kind of debt has its one wording (pure/model.py ``DEBT_WORDS``), used by every text output."""

from __future__ import annotations

from typing import get_args

from pure import model as m


def _kinds(literal: object) -> set[str]:
    out: set[str] = set()
    for arg in get_args(literal):
        out |= _kinds(arg) if get_args(arg) else {arg}
    return out


def test_every_debt_kind_is_worded_once_and_nothing_else_is() -> None:
    assert set(m.DEBT_WORDS) == _kinds(m.DebtKind)
    for what, retry in m.DEBT_WORDS.values():
        assert what and retry and not what.endswith(".")
    debt = m.Debt(kind="stray_pane", subject="%4", reason="stray_pid_changed")
    assert debt.sentence() == ("stray_pane %4: stray_pid_changed (a pane a run that did not finish left, not "
                               "proven ours (pure/omx/strays.py); `team debt reconcile` retries it)")


def test_a_kind_read_back_from_text_is_worded_and_an_unknown_one_is_kept_as_it_is() -> None:
    assert m.debt_words("kept_worker") == m.DEBT_WORDS["kept_worker"]
    assert m.debt_words("no_such_kind") == ("no_such_kind", "")
