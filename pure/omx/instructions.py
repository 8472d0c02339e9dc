"""The team worker instructions file ``<team>/worker-agents.md`` that Codex workers load.

A Codex worker is launched with ``-c model_instructions_file="<team dir>/worker-agents.md"``
(``pure/omx/launch/process.py``, ``resolve_process_launch_args``); Codex refuses to start when that file is
missing. oh-my-codex's team start writes it; panefleet writes it at ``team init`` and, when it is
missing, at ``team scale-up``. The layout is oh-my-codex's: the user's ``$CODEX_HOME/AGENTS.md``
and the project's ``AGENTS.md`` (each without a previous worker overlay), then the worker overlay
between oh-my-codex's markers. The overlay says the protocol in panefleet's words, as the inbox does
(``pure/omx/dispatch.py``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

OVERLAY_START = "<!-- OMX:TEAM:WORKER:START -->"
OVERLAY_END = "<!-- OMX:TEAM:WORKER:END -->"
FILE_NAME = "worker-agents.md"


def source_paths(env: Mapping[str, str], cwd: str) -> tuple[str, ...]:
    """The AGENTS.md files composed into the team file: ``$CODEX_HOME`` (else ``~/.codex``), then the project's."""
    home = env.get("CODEX_HOME", "").strip() or posixpath.join(env.get("HOME", "").strip() or "/root", ".codex")
    user = posixpath.normpath(posixpath.join(cwd, home, "AGENTS.md"))
    project = posixpath.join(cwd, "AGENTS.md")
    return tuple(dict.fromkeys((user, project)))


def strip_overlay(content: str) -> str:
    """``content`` without a worker overlay block (idempotent)."""
    start, end = content.find(OVERLAY_START), content.find(OVERLAY_END)
    if start == -1 or end == -1 or end < start:
        return content
    before = content[:start].rstrip()
    after = content[end + len(OVERLAY_END):].lstrip()
    return before + ("\n\n" + after if after else "") + "\n"


def overlay(team: str) -> str:
    return "\n".join([
        OVERLAY_START,
        "<team_worker_protocol>",
        f'You are a worker of team "{team}". Your name, role and tasks are in your inbox file; your first '
        "instruction names it.",
        "",
        "## Protocol",
        "1. Read your inbox file, then send the startup ACK to the leader it shows "
        "(`omx team api send-message --json`, to_worker \"leader-fixed\", always with your from_worker).",
        "2. Resolve the team state root: OMX_TEAM_STATE_ROOT, else your identity's team_state_root, else the "
        "team config's, else `.omx/state` under the leader's working directory.",
        f"3. Your tasks are `<team_state_root>/team/{team}/tasks/task-<id>.json`; APIs take the bare id "
        '(e.g. "1").',
        "4. Claim a task with `omx team api claim-task --json` before working on it; never write lifecycle "
        "fields (status, owner, result, error) into task files yourself.",
        "5. Do the work, commit it (`git add -A && git commit -m \"task: <subject>\"`), then move the task "
        "from in_progress to completed or failed with `omx team api transition-task-status --json`.",
        "6. Use `omx team api release-task-claim --json` only to hand a task back to pending.",
        f'7. When idle, write {{"state": "idle", "updated_at": "<ISO time>"}} to '
        f"`<team_state_root>/team/{team}/workers/<your name>/status.json` and wait for the leader.",
        f"8. Messages for you arrive in `<team_state_root>/team/{team}/mailbox/<your name>.json`.",
        "",
        "## Rules",
        "- Edit only the files your task names; for a shared file, set your status to blocked with the "
        "reason and wait.",
        '- If blocked, write {"state": "blocked", "reason": "..."} to your status file.',
        "</team_worker_protocol>",
        OVERLAY_END,
    ])


def compose(team: str, sources: Sequence[str | None]) -> str:
    """The file's text from the contents of ``source_paths`` (``None`` for a missing file)."""
    parts = [strip_overlay(text).strip() for text in sources if text is not None]
    base = "\n\n".join(part for part in parts if part)
    return f"{base}\n\n{overlay(team)}\n" if base else f"{overlay(team)}\n"
