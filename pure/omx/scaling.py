"""What scale-up and scale-down share: the ``OMX_TEAM_SCALING_ENABLED`` gate and the leader-nudge
event each appends to the team's event log when it has changed the membership (oh-my-codex's
``team_leader_nudge``, docs/scale-up.md, "Step order", and docs/scale-down.md)."""

from __future__ import annotations

import json

from pure import model as m
from pure.omx import effects, ids
from pure.omx.state import TeamPaths
from pure.program import Gen, expect

DISABLED = "Dynamic scaling is disabled. Set OMX_TEAM_SCALING_ENABLED=1 to enable."
ENABLED_VALUES = ("1", "true", "yes", "on", "enabled")


def scaling_enabled(env: dict[str, str]) -> bool:
    return env.get("OMX_TEAM_SCALING_ENABLED", "").strip().lower() in ENABLED_VALUES


def leader_nudge(paths: TeamPaths, reason: str) -> Gen[m.Ack]:
    """Append the ``team_leader_nudge`` event (a fresh id, then the time); the append's ack."""
    event_id = yield from ids.fresh_uuid()
    now = yield from expect(m.Clock(), m.Value)
    event = {"type": "team_leader_nudge", "worker": "leader-fixed", "reason": reason,
             "event_id": event_id, "team": paths.team, "created_at": now.value}
    line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
    return (yield from expect(m.AppendFile(path=paths.events, content=line, effect=effects.EVENT), m.Ack))
