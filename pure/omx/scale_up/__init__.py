"""``team.scale_up``: oh-my-codex 0.20.3 scale-up as one pure program (docs/scale-up.md).

Forward path (docs/scale-up.md, "Step order"): gate, ``tmux -V``, scaling lock, canonical read,
capacity, frozen launch plans, owner id, legacy pid migration, the initial proof of the split target
(docs/tmux-proofs.md), worktree mode, tasks, then per worker: preparation, ``L S L split-window``,
pin (``L``), tag (``L set-option``), identity, readiness, inbox + dispatch, config save; finally the
leader nudge event.

Any failure after the first artefact exists runs the rollback (docs/scale-up.md, "Rollback") over
the run's undo log (``undo.py``, every creation appended as it happens): a
tracking commit first (so a crash still leaves every live pane recorded), dispatch cleanup, pane
authorization (only panes
this run both pinned and tagged may be killed), the shared teardown primitive, a membership commit
that keeps exactly the unresolved workers, canonical and resource cleanup, and the result: the
original error when everything was undone, else ``scale_up_rollback_cleanup_debt:<d1;d2;…>``.
"""

from __future__ import annotations

from pure.omx.scale_up.config import save_config, saved_config_text
from pure.omx.scale_up.plan import CLI_UNAVAILABLE, cli_unavailable, role_instructions, split_target
from pure.omx.scale_up.program import scale_up
from pure.omx.scale_up.run import PLACEHOLDER, ScaleUpRequest, TaskSpec
from pure.omx.scale_up.worker import worktree_instructions
from pure.omx.scaling import DISABLED, scaling_enabled

__all__ = ["CLI_UNAVAILABLE", "DISABLED", "PLACEHOLDER", "ScaleUpRequest", "TaskSpec", "cli_unavailable", "role_instructions", "save_config", "saved_config_text", "scale_up", "scaling_enabled", "split_target", "worktree_instructions"]
