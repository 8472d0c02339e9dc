"""What a herdr operation changes, in the fleet's words: the effects (``m.Effect``) its programs state
on the steps they build, each worded here once (the team's are in ``pure/omx/effects.py``). The plan
view (``shell/cli/plan_view.py``) makes one line of the steps that state the same ``(kind, subject)``.

The subject is what is known when the step is built, and the same for every step of one thing:

* a workspace this operation creates is named by its label (``alpha-workers``): its id is only known
  from the create's answer, and every later step of it (mark, record, rollback, its root shell's close)
  names it so too; any other workspace is named by its id;
* a run's follower pane is named by the label it is given (``pure/herdr/fleet/vocabulary.py``
  ``pane_label``), known before the split: the split, the pane's set-up, its rollback and the run's
  ``herdr.run.set_pane`` record make one line; any other pane is named by its id.
"""

from __future__ import annotations

from pure import model as m
from pure.herdr.fleet.vocabulary import workspace_label


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# ------------------------------------------------------------------------------------- workspaces


def workspace_subject(workspace_id: str, project: str, created: bool) -> str:
    """How a workspace is named (see above): by its label when this operation created it."""
    return workspace_label(project) if created else workspace_id


def new_workspace(project: str) -> m.Effect:
    """The create of ``project``'s workspace and every step that completes it (its pending record, its
    token, its record, the pending record's clearing)."""
    return m.effect("add", "workspace", workspace_label(project), "new herdr workspace")


def workspace_rolled_back(project: str) -> m.Effect:
    """A workspace this operation created, closed again (and no longer recorded) after a later step failed."""
    return m.effect("remove", "workspace", workspace_label(project), "closed again (rolled back)")


def workspace_kept_recorded(project: str) -> m.Effect:
    """A workspace this operation created whose rollback close failed: its record stays."""
    return m.effect("change", "workspace", workspace_label(project), "kept recorded: the next reconcile removes it")


def workspace_recorded(workspace_id: str) -> m.Effect:
    """A workspace carrying our token that the store did not record (``owned.py`` ``apply_ownership``)."""
    return m.effect("change", "workspace", workspace_id, "recorded as owned")


def workspace_forgotten(workspace_id: str) -> m.Effect:
    """A record that proves nothing any more: the record goes, the workspace (not provably ours) stays."""
    return m.effect("change", "workspace", workspace_id, "no longer recorded as owned")


def workspace_claimed(workspace_id: str) -> m.Effect:
    """The workspace an earlier pass's create made (its answer lost), marked ours and recorded
    (``owned.py`` ``settle_pending``)."""
    return m.effect("change", "workspace", workspace_id, "claimed: an earlier pass's create made it (marked ours)")


def pending_cleared(project: str) -> m.Effect:
    """An earlier pass's pending create that made nothing: its record is cleared."""
    return m.effect("change", "workspace", workspace_label(project), "pending create of an earlier pass settled")


def workspace_remarked(workspace_id: str) -> m.Effect:
    """A workspace held by the record and a recorded pane, given our token again (``reconcile.py``)."""
    return m.effect("change", "workspace", workspace_id, "marked ours again (its token was lost)")


def workspace_closed(workspace_id: str) -> m.Effect:
    """An owned workspace with no run left, closed and its record dropped."""
    return m.effect("remove", "workspace", workspace_id, "closed: no live run left in it")


def workspace_closed_with_last_pane(workspace_id: str) -> m.Effect:
    """An owned workspace herdr closes with its last pane: only its record is dropped."""
    return m.effect("remove", "workspace", workspace_id, "closed by herdr with its last pane")


def new_tab(workspace_id: str) -> m.Effect:
    """A tab in an owned workspace with no pane left, its root pane the anchor of the next pane."""
    return m.effect("change", "workspace", workspace_id, "new tab")


def root_shell_closed(workspace: str) -> m.Effect:
    """The root pane of a workspace (or tab) this pass made, a bare shell no run owns, closed once a
    run's pane stands beside it (``workspace``: its :func:`workspace_subject`)."""
    return m.effect("change", "workspace", workspace, "its root shell closed")


# ------------------------------------------------------------------------------------------ panes


def follower_pane(label: str, run_id: str, split_from: str | None = None) -> m.Effect:
    """A run's new follower pane: the split, its set-up and its record (``split_from``: an anchor
    pane that stood before this operation)."""
    return m.effect("add", "pane", label, f"follower pane of run {run_id}"
                    + (f", split from {split_from}" if split_from else ""))


def follower_recorded(label: str) -> m.Effect:
    """``herdr.run.set_pane`` of a pane this operation opened: part of that pane's line."""
    return m.effect("add", "pane", label)


def follower_rolled_back(label: str) -> m.Effect:
    return m.effect("remove", "pane", label, "closed again (rolled back)")


# Why a pane is closed: a reconcile pass's junk causes (``outcomes.py`` ``JunkCause``), and a dead
# follower whose replacement failed.
_CLOSE_CAUSES = {"settled": "its run settled", "duplicate": "a second pane of a live run",
                 "unidentified": "a shell no live run owns", "exited": "its follower exited, no replacement opened"}


def pane_closed(pane_id: str, run_id: str, cause: str) -> m.Effect:
    """A pane of ours closed (its agent released first, when it reports one)."""
    owner = f" of run {run_id}" if run_id else ""
    return m.effect("remove", "pane", pane_id, f"closed{owner}: {_CLOSE_CAUSES.get(cause, cause)}")


def pane_retired(pane_id: str, run_id: str | None) -> m.Effect:
    """``retire`` / ``release``: a pane proven the run's, its agent released, then closed."""
    owner = f" of run {run_id}" if run_id else ""
    return m.effect("remove", "pane", pane_id, f"closed{owner}: retired (its agent released first)")


# ------------------------------------------------------------------------------------------- runs


def run_pane(run_id: str, pane_id: str) -> m.Effect:
    return m.effect("change", "run", run_id, f"pane → {pane_id}")


def run_pane_cleared(run_id: str) -> m.Effect:
    return m.effect("change", "run", run_id, "pane → none")


def run_attempts(run_id: str, attempts: int) -> m.Effect:
    return m.effect("change", "run", run_id, f"re-establishment attempts → {attempts}")


def run_started(run_id: str, project: str, issue: int, attempt: int) -> m.Effect:
    """``herdr.run.start`` (``shell/store/herdr_runs.py``)."""
    return m.effect("add", "run", run_id, f"live: {project} #{issue} attempt {attempt}")


def run_settled(run_id: str) -> m.Effect:
    """``herdr.run.settle`` (``shell/store/herdr_runs.py``)."""
    return m.effect("change", "run", run_id, "settled (the next reconcile closes its pane)")


# ------------------------------------------------------------------------------------------- debt


def debt_record(items: int) -> m.Effect:
    """``herdr.debt.replace``: the pass's debt in place of the last pass's (what ``herdr status`` reads)."""
    return m.effect("change", "debt", "herdr debt", "record replaced: "
                    + (f"{_plural(items, 'item')} left" if items else "none left"))
