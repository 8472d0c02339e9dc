"""``panefleet plan``, ``panefleet apply`` (a fleet file) and ``panefleet destroy``: the teams a fleet
file declares (docs/fleet.md), read as they are, planned (``pure/fleet/converge.py``) and converged
(``shell/cli/fleet_teams.py``).

``apply`` shows the plan and, on a terminal, asks before changing anything (``--yes`` skips the
question; without a terminal it is required). Teams of one file are applied in parallel, one
``panefleet apply --team T`` process each, so that each runs under its own team's locks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from returns.result import Failure

from pure import model as m
from pure.fleet import FLEET_FILE
from pure.fleet.converge import Action, TeamFacts, TeamPlan, converge
from pure.fleet.spec import FleetFile, TeamSpec
from pure.program import Gen
from shell.cli.fleet_targets import FLEET_ENV, targets
from shell.cli.fleet_teams import FleetReadError, Observed, Target, carry_out, observe, takeover_wait
from shell.cli.fleet_view import NO_CHANGES, action_json, plan_json, plan_text, unknown_teams

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_ATTENTION, EXIT_REFUSED = 0, 1, 2, 3, 4


class FleetUsage(Exception):
    """What was asked cannot be done as given (exit 2)."""


# ------------------------------------------------------------------------------------------ reading


def locate(explicit: str | None, start: str) -> str:
    """The fleet file: ``explicit``, else the nearest ``panefleet.toml`` from ``start`` upward (as git
    finds its repository)."""
    from shell.cli.team_home import folders_up

    if explicit:
        return os.path.abspath(explicit)
    for folder in folders_up(start):
        candidate = os.path.join(folder, FLEET_FILE)
        if os.path.isfile(candidate):
            return candidate
    raise FleetUsage(f"no {FLEET_FILE} in {os.path.abspath(start)} or any folder above it; write one "
                     "(docs/fleet.md) or pass -f FILE")


def load(path: str) -> FleetFile:
    from pure.fleet.spec import parse_fleet

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise FleetUsage(f"{path}: cannot read the fleet file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FleetUsage(f"{path}: not UTF-8 text (byte {exc.start})") from None
    parsed = parse_fleet(text, path)
    if isinstance(parsed, Failure):
        raise FleetUsage(str(parsed.failure()))
    return parsed.unwrap()


def selected(fleet: FleetFile, names: list[str]) -> list[TeamSpec]:
    known = {team.name: team for team in fleet.teams}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise FleetUsage(f"{fleet.path} declares no team {', '.join(unknown)} (it declares: {', '.join(known)})")
    return [known[name] for name in names] if names else list(fleet.teams)


def plan_teams(found: list[Target]) -> list[tuple[Target, Observed, TeamPlan]]:
    """Read every team (in parallel: each read is one snapshot of its server) and plan it. A team whose host
    was not reached, or stopped answering while it was read, is planned nothing: its workers are unknown."""
    with ThreadPoolExecutor(max_workers=min(8, len(found)) or 1) as pool:
        observed = list(pool.map(_observe, found))
    return [(target, seen, _plan(target, seen)) for target, seen in zip(found, observed, strict=True)]


def _observe(target: Target) -> Observed:
    why = target.unreached
    if not why:
        try:
            return observe(target)
        except FleetReadError as exc:
            from pure.hosts import fault_named

            if target.host is None or fault_named(str(exc), target.host) is None:
                raise
            why = str(exc).removeprefix(f"team {target.spec.name}: ")
    return Observed(facts=TeamFacts(exists=False), unknown=why)


def _plan(target: Target, seen: Observed) -> TeamPlan:
    if seen.unknown:
        return TeamPlan(team=target.spec.name, actions=(), blocked=(
            f"its {target.spec.declared} declared workers are unknown, and nothing is planned for it: {seen.unknown}",))
    return converge(target.spec, seen.facts)


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str, code: int) -> int:
    from shell.cli.operation import emit_json

    if getattr(args, "output", "text") == "json":
        emit_json(data)
    else:
        (sys.stdout if code in (EXIT_OK, EXIT_ATTENTION) else sys.stderr).write(text.rstrip("\n") + "\n")
    return code


def _failed(args: argparse.Namespace, command: str, message: str, code: int) -> int:
    if code == EXIT_USAGE:
        from shell.cli.operation import usage_error

        return usage_error(args, command, message)
    return _emit(args, {"ok": False, "error": message}, f"panefleet {command}: error: {message}", code)


def _read(args: argparse.Namespace, unreached_ok: bool) -> tuple[FleetFile, list[tuple[Target, Observed, TeamPlan]]]:
    fleet = load(locate(args.file, os.getcwd()))
    found = targets(args, selected(fleet, args.team), unreached_ok=unreached_ok)
    check_roles(fleet, [target for target in found if not target.unreached])
    return fleet, plan_teams(found)


def check_roles(fleet: FleetFile, found: list[Target]) -> None:
    """Each group's role is one of the agent table or of its team's project (pure/fleet/spec.py
    ``role_problem``); the project is read only for a role the table does not have."""
    from pure.fleet.spec import role_problem

    for target in found:
        alone = FleetFile(path=fleet.path, teams=(target.spec,))
        problem = role_problem(alone)
        if problem is not None:
            problem = role_problem(alone, _configured_roles(target))
        if problem is not None:
            raise FleetUsage(str(problem))


def _configured_roles(target: Target) -> frozenset[str]:
    """The roles of the team's project beyond the agent table (pure/omx/task_input.py), read only."""
    from pure.omx.task_input import configured_roles
    from shell.run.loop import placed, run_program

    def program() -> Gen[m.Done]:
        roles = yield from configured_roles(target.spec.cwd, target.env)
        return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({"roles": sorted(roles)})))

    done, _ = run_program(lambda: placed(program(), target.host), target.executor())
    result = done.outcome.result
    return frozenset(result.get("roles") or ()) if isinstance(result, dict) else frozenset()


# ------------------------------------------------------------------------------------------ commands


def read_or_fail(args: argparse.Namespace, command: str,
                 unreached_ok: bool = False) -> tuple[FleetFile, list[tuple[Target, Observed, TeamPlan]]] | int:
    """The fleet and its plan, or the exit code of a failure already said: exit 2 for the file, 1 for a team.
    ``unreached_ok``: a team whose host is not reached is planned nothing, its workers unknown (``plan``);
    otherwise it stops the command before anything changes (``apply``, ``destroy``)."""
    try:
        return _read(args, unreached_ok)
    except FleetUsage as exc:
        return _failed(args, command, str(exc), EXIT_USAGE)
    except FleetReadError as exc:
        return _failed(args, command, str(exc), EXIT_ERROR)


def plan_command(args: argparse.Namespace) -> int:
    read = read_or_fail(args, "plan", unreached_ok=True)
    if isinstance(read, int):
        return read
    fleet, planned = read
    unknown = unknown_teams(planned)
    if unknown:
        # what could be read is shown, on standard output; the hosts not reached make it exit 1
        _emit(args, plan_json(fleet, planned), plan_text(fleet, planned), EXIT_OK)
        if getattr(args, "output", "text") == "text":
            sys.stderr.write("".join(f"panefleet plan: error: {why}\n" for why in unknown)
                             + ("panefleet plan: no plan was saved: a plan must read every team\n" if args.plan_out else ""))
        return EXIT_ERROR
    if args.plan_out:
        try:
            save_plan(args.plan_out, fleet, planned)
        except OSError as exc:
            return _failed(args, "plan", f"cannot write the plan to {args.plan_out}: {exc.strerror or exc}", EXIT_USAGE)
    blocked = any(plan.blocked for _, _, plan in planned)
    return _emit(args, plan_json(fleet, planned), plan_text(fleet, planned), EXIT_ATTENTION if blocked else EXIT_OK)


# ------------------------------------------------------------------------------------- saved plans

FLEET_PLAN_KIND = "panefleet-fleet-plan"


def facts_json(planned: list[tuple[Target, Observed, TeamPlan]]) -> dict[str, Any]:
    """What a plan was made from, team by team: the tmux server and every fact the planner read."""
    from pure.convert import unstructure

    return {target.spec.name: {"tmuxSocket": target.socket, "facts": unstructure(seen.facts)}
            for target, seen, _ in planned}


def save_plan(path: str, fleet: FleetFile, planned: list[tuple[Target, Observed, TeamPlan]]) -> None:
    from shell.run import fs

    data = {"kind": FLEET_PLAN_KIND, "format": 1, "file": fleet.path, "fileSha256": file_sha256(fleet.path),
            "teams": [target.spec.name for target, _, _ in planned], "facts": facts_json(planned),
            "plan": plan_json(fleet, planned)}
    fs.atomic_write(Path(path), (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8"), None)


def file_sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def is_fleet_plan(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return bool(json.load(handle).get("kind") == FLEET_PLAN_KIND)
    except (OSError, ValueError, AttributeError):
        return False


def first_difference(before: Any, now: Any, where: str = "") -> str | None:
    """Where two JSON values first differ, as ``where: before → now``; None when equal."""
    if isinstance(before, dict) and isinstance(now, dict):
        for key in [*before, *(k for k in now if k not in before)]:
            found = first_difference(before.get(key), now.get(key), f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
        return None
    if isinstance(before, list) and isinstance(now, list) and len(before) == len(now):
        for n, (a, b) in enumerate(zip(before, now, strict=True)):
            found = first_difference(a, b, f"{where}[{n}]")
            if found is not None:
                return found
        return None
    return None if before == now else f"{where}: {json.dumps(before)} → {json.dumps(now)}"


def apply_saved(args: argparse.Namespace) -> int:
    """``panefleet apply SAVED.json`` of a fleet plan: read everything again; any fact that differs from
    what the plan was made from (or a changed fleet file) refuses it (exit 4), else its actions run."""
    with open(args.plan_file, encoding="utf-8") as handle:
        saved = json.load(handle)
    args.file, args.team = saved["file"], list(saved["teams"])
    read = read_or_fail(args, "apply")
    if isinstance(read, int):
        return read
    fleet, planned = read
    try:
        digest = file_sha256(fleet.path)
    except OSError as exc:
        return _failed(args, "apply", f"{fleet.path}: {exc.strerror or exc}", EXIT_USAGE)
    changed = (f"{fleet.path} changed since the plan was made" if digest != saved["fileSha256"]
               else first_difference(saved["facts"], facts_json(planned)))
    if changed is not None:
        return _failed(args, "apply", f"the plan is stale, nothing was changed: {changed}", EXIT_REFUSED)
    busy = [(target, plan) for target, _, plan in planned if plan.actions]
    if not busy:
        return _emit(args, {**plan_json(fleet, planned), "applied": []},
                     NO_CHANGES.format(file=os.path.basename(fleet.path)), EXIT_OK)
    return _finish(args, [apply_team(target, plan) for target, plan in busy])


def confirmed(args: argparse.Namespace, command: str, question: str) -> bool | None:
    """``--yes``, or the answer ``yes`` typed on a terminal; ``None`` when no one can be asked."""
    if args.yes:
        return True
    if not sys.stdin.isatty():
        return None
    sys.stderr.write(f"\n{question}\n  Only 'yes' will be accepted: ")
    sys.stderr.flush()
    return sys.stdin.readline().strip() == "yes"


def cmd_apply_fleet(args: argparse.Namespace) -> int:
    read = read_or_fail(args, "apply")
    if isinstance(read, int):
        return read
    fleet, planned = read
    name = os.path.basename(fleet.path)
    if all(plan.converged for _, _, plan in planned):
        return _emit(args, {**plan_json(fleet, planned), "applied": []}, NO_CHANGES.format(file=name), EXIT_OK)
    as_text = getattr(args, "output", "text") == "text"
    if as_text:
        sys.stdout.write(plan_text(fleet, planned) + "\n")
        sys.stdout.flush()
    answer = confirmed(args, "apply", f"Do you want panefleet to carry out this plan for {name}?")
    if answer is None:
        return _failed(args, "apply", "not on a terminal, so no one can be asked: pass --yes to apply the plan",
                       EXIT_USAGE)
    if not answer:
        return _emit(args, {"ok": False, "error": "apply cancelled"}, "Apply cancelled: nothing was changed.",
                     EXIT_REFUSED)
    busy = [(target, plan) for target, _, plan in planned if plan.actions]
    if len(busy) > 1:
        outcomes = _apply_in_parallel(fleet, [target.spec.name for target, _ in busy], args)
    else:
        outcomes = [apply_team(target, plan) for target, plan in busy]
    return _finish(args, outcomes)


def apply_team(target: Target, plan: TeamPlan) -> dict[str, Any]:
    """Carry out one team's plan in order. The first action that fails ends it; one that did its work
    but kept something as recorded debt (a stray pane it cannot prove ours) is named, and the plan goes on."""
    from shell.store.team_record import write_team_record

    environ = {**os.environ, **FLEET_ENV}
    applied: list[dict[str, Any]] = []
    kept: list[str] = []
    for action in plan.actions:
        carried = carry_out(target, action, environ)
        wait = takeover_wait(_error_of(carried.done))
        if wait is not None and carried.done.outcome.status != "ok":
            time.sleep(wait)
            carried = carry_out(target, action, environ)
        result = carried.done.outcome.result
        applied.append({**action_json(action), "status": carried.done.outcome.status,
                        "result": result if isinstance(result, dict) else None})
        if action.kind == "create_team" and carried.ok:
            _remember(target)
        if carried.done.outcome.status == "debt" and isinstance(result, dict) and result.get("ok") is True:
            # done, with something kept and recorded (a stray pane it could not prove ours): named, not fatal
            kept.extend(d.sentence() for d in carried.done.debt)
            continue
        if not carried.ok:
            return {"team": target.spec.name, "ok": False, "applied": applied, "status": carried.done.outcome.status,
                    **explained(target, action, _error_of(carried.done))}
    if target.host is None and os.path.exists(target.paths.config):
        write_team_record(target.paths.team_dir, stopped=False)
    if kept:
        return {"team": target.spec.name, "ok": False, "applied": applied, "status": "debt",
                "error": "kept as cleanup debt: " + "; ".join(dict.fromkeys(kept))}
    return {"team": target.spec.name, "ok": True, "applied": applied}


def _remember(target: Target) -> None:
    """A team the fleet made: its record and registry entry (a team on a host: its registry entry, with the
    host's identity, here)."""
    from shell.store.registry import register_team
    from shell.store.team_record import write_team_record

    identity = target.identity
    if target.host is None:
        write_team_record(target.paths.team_dir, created_by="panefleet", tmux_socket=target.socket,
                          project=target.spec.cwd, stopped=False)
    register_team(team=target.spec.name, project=target.spec.cwd, state_root=target.paths.state_root,
                  tmux_socket=target.socket, host=target.host,
                  machine_id=identity.machine_id if identity is not None else "",
                  host_keys=identity.host_keys if identity is not None else ())


ACTION_COMMANDS = {"create_team": "team init", "restore_leader": "apply", "sweep_debt": "team debt reconcile",
                   "respawn": "team respawn", "add": "team scale-up", "remove": "team scale-down"}


def explained(target: Target, action: Action, error: str) -> dict[str, Any]:
    """An action's failure for people: ``error`` its sentence, ``error_code``, ``error_detail`` the
    planner's words (shell/cli/explain.py)."""
    from shell.cli.explain import Scene, explained_answer

    scene = Scene(command=ACTION_COMMANDS[action.kind], team=target.spec.name, cwd=target.spec.cwd,
                  socket=target.socket, worker=action.workers[0] if len(action.workers) == 1 else None,
                  env=os.environ, ours=True, answer={"ok": False, "error": error})
    answer = explained_answer({"ok": False, "error": error}, scene)
    return {key: answer[key] for key in ("error", "error_code", "error_detail") if key in answer}


def _error_of(done: Any) -> str:
    result = done.outcome.result
    if isinstance(result, dict) and result.get("error"):
        return str(result["error"])
    return str(done.outcome.message or done.outcome.status)


def _apply_in_parallel(fleet: FleetFile, teams: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """One ``panefleet apply --team T --yes -o json`` per team, all at once; each answers its outcome."""
    base = [sys.executable, "-m", "cli"]
    if getattr(args, "tmux_socket", None):
        base += ["--tmux-socket", args.tmux_socket]

    def one(team: str) -> dict[str, Any]:
        proc = subprocess.run([*base, "apply", "-f", fleet.path, "--team", team, "--yes", "-o", "json"],
                              capture_output=True, text=True, check=False)
        try:
            answer = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"team": team, "ok": False, "error": (proc.stderr.strip() or f"exit {proc.returncode}")[-2000:],
                    "applied": []}
        outcomes = answer.get("outcomes") or []
        if outcomes:
            return dict(outcomes[0])
        return {"team": team, "ok": bool(answer.get("ok")), "applied": [], "error": answer.get("error")}

    with ThreadPoolExecutor(max_workers=len(teams)) as pool:
        return list(pool.map(one, teams))


def _finish(args: argparse.Namespace, outcomes: list[dict[str, Any]]) -> int:
    lines = []
    for outcome in outcomes:
        for step in outcome.get("applied") or []:
            done = "done" if step["status"] == "ok" else step["status"]
            subject = " ".join([step["kind"].replace("_", " "), *step["workers"]])
            lines.append(f"{outcome['team']}: {subject}: {done}")
        if not outcome.get("ok"):
            lines.append(f"{outcome['team']}: stopped: {outcome.get('error')}")
    ok = all(o.get("ok") for o in outcomes)
    lines.append("Apply complete." if ok else "Apply stopped: see above; `panefleet plan` shows what is left.")
    statuses = [o.get("status") for o in outcomes if not o.get("ok")]
    code = EXIT_OK if ok else EXIT_ATTENTION if statuses and all(s == "debt" for s in statuses) else \
        EXIT_REFUSED if statuses and all(s == "refused" for s in statuses) else EXIT_ERROR
    if getattr(args, "output", "text") == "json":
        from shell.cli.operation import emit_json

        emit_json({"ok": ok, "outcomes": outcomes})
    else:
        (sys.stdout if ok else sys.stderr).write("\n".join(lines) + "\n")
    return code


def destroy_command(args: argparse.Namespace) -> int:
    from pure.fleet.stop import StopRequest
    from shell.run.loop import run_operation
    from shell.store.team_record import write_team_record

    try:
        fleet = load(locate(args.file, os.getcwd()))
        found = targets(args, selected(fleet, args.team))
    except FleetUsage as exc:
        return _failed(args, "destroy", str(exc), EXIT_USAGE)
    except FleetReadError as exc:
        return _failed(args, "destroy", str(exc), EXIT_ERROR)
    if not 0 <= args.wait <= 600:
        return _failed(args, "destroy", f"--wait must be between 0 and 600 s, not {args.wait:g}", EXIT_USAGE)
    try:
        existing = [t for t in found if t.read_text(t.paths.config) is not None]
    except FleetReadError as exc:
        return _failed(args, "destroy", str(exc), EXIT_ERROR)
    if not existing:
        return _emit(args, {"ok": True, "stopped": []}, "Nothing to destroy: no team of the file exists.", EXIT_OK)
    if getattr(args, "output", "text") == "text":
        what = "stop every worker of" + (" and remove the state of" if args.purge else "")
        sys.stdout.write(f"destroy will {what}: {', '.join(t.spec.name for t in existing)} (leader panes stay)\n")
    answer = confirmed(args, "destroy", "Do you really want to destroy these teams?")
    if answer is None:
        return _failed(args, "destroy", "not on a terminal, so no one can be asked: pass --yes", EXIT_USAGE)
    if not answer:
        return _emit(args, {"ok": False, "error": "destroy cancelled"}, "Destroy cancelled: nothing was changed.",
                     EXIT_REFUSED)
    wait_ms = 0 if args.no_wait else int(args.wait * 1000)
    environ = {**os.environ, **FLEET_ENV}

    def stop(target: Target) -> dict[str, Any]:
        request = StopRequest(team=target.spec.name, cwd=target.spec.cwd, env=target.env, wait_ms=wait_ms,
                              release_leader=args.purge)
        done, _journal, _audit = run_operation("fleet.stop", request, target.executor(), env=environ,
                                               host=target.host)
        result = done.outcome.result if isinstance(done.outcome.result, dict) else {}
        outcome = {"team": target.spec.name, "ok": done.outcome.status == "ok", "status": done.outcome.status,
                   **{k: result.get(k) for k in ("killed", "gone", "kept", "workers", "transcripts")},
                   **({"transcriptWarnings": result["transcriptWarnings"]} if "transcriptWarnings" in result else {})}
        if done.outcome.status != "ok":
            outcome["error"] = _error_of(done)
            return outcome
        if target.host is not None:  # its registry entry is its record: nothing to mark there
            if args.purge:
                executor = target.executor()
                removed = executor.execute(m.RemovePath(path=target.paths.team_dir, recursive=True, host=target.host))
                executor.end_run()
                if isinstance(removed, m.Ack) and removed.ok:
                    outcome["purged"] = target.paths.team_dir
                else:
                    outcome.update(ok=False, error=f"{target.paths.team_dir} on {target.host} was not removed: "
                                                   f"{getattr(removed, 'error', '')}")
            return outcome
        write_team_record(target.paths.team_dir, stopped=True)
        if args.purge:
            import shutil

            shutil.rmtree(target.paths.team_dir)
            outcome["purged"] = target.paths.team_dir
        return outcome

    with ThreadPoolExecutor(max_workers=len(existing)) as pool:
        outcomes = list(pool.map(stop, existing))
    ok = all(o["ok"] for o in outcomes)
    code = EXIT_OK if ok else EXIT_ATTENTION if all(o["status"] in ("ok", "debt") for o in outcomes) else EXIT_ERROR
    return _emit(args, {"ok": ok, "stopped": outcomes}, "\n".join(_stopped_lines(outcomes)), code)


def _stopped_lines(outcomes: list[dict[str, Any]]) -> list[str]:
    """What destroy did to each team, for people; with the transcripts it kept (pure/omx/transcripts.py)."""
    lines = []
    for o in outcomes:
        if not o["ok"]:
            lines.append(f"{o['team']}: not stopped: {o.get('error')}")
            continue
        lines.append(f"{o['team']}: stopped: {len(o.get('killed') or [])} worker pane(s) killed after proof"
                     + (f", {len(o.get('gone') or [])} already gone" if o.get("gone") else "")
                     + ("; state removed" if o.get("purged") else "; records kept, marked stopped"))
        if o.get("transcripts"):
            where = os.path.dirname(next(iter(o["transcripts"].values())))
            lines.append(f"  transcripts of {len(o['transcripts'])} worker(s) kept in {where} "
                         f"(`panefleet team logs {o['team']} WORKER`)")
        lines += [f"  {warning}" for warning in o.get("transcriptWarnings") or []]
    return lines
