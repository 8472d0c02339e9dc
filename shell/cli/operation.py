"""Running a command's operation: its executor, its real run, dry run or saved plan, the outcome
printed in the output mode asked for, and the exit code.

Exit codes (also in the README):
  0 ok · 1 runtime error · 2 usage error · 3 finished but debt recorded · 4 refused, nothing done

Streams: with ``-o json`` exactly one object goes to stdout, and it always has a boolean ``ok``.
In text mode the outcome of a run goes to stdout when it succeeded and to stderr when it did not
(``ok`` false: refused or failed); debt and the audit log's path (``-v``) are notes on stderr. A dry
run's plan is its output (stdout), whatever it predicts; its exit status is the predicted one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from pure import model as m
from shell.cli.answer import answer_of
from shell.cli.args import add_dry_run, add_output, add_tmux
from shell.run.executor import Executor, StoreHandler
from shell.run.step_text import describe_observation, describe_step

__all__ = ["add_dry_run", "add_output", "add_tmux", "run_cli_operation", "usage_error"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_DEBT, EXIT_REFUSED = 0, 1, 2, 3, 4
EXIT_BY_STATUS = {"ok": EXIT_OK, "error": EXIT_ERROR, "debt": EXIT_DEBT, "refused": EXIT_REFUSED}
EXIT_INTERRUPTED = 130  # a run interrupted by SIGINT, SIGTERM or SIGHUP (docs/design-notes.md, "Interrupts")


def exit_code(done: m.Done) -> int:
    result = done.outcome.result
    if isinstance(result, dict) and result.get("interrupted") is True:
        return EXIT_INTERRUPTED
    return EXIT_BY_STATUS.get(done.outcome.status, EXIT_ERROR)


TextRenderer = Callable[[dict[str, Any]], str]
RunRenderer = Callable[[dict[str, Any], m.Done, list[m.Entry]], str]
Predictor = Callable[[m.Run], m.Proc]
Predictors = Mapping[str, Predictor] | Callable[[Executor], Mapping[str, Predictor]]


def tmux_socket(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """``--tmux-socket``, else ``PANEFLEET_TMUX_SOCKET``, else the server the team's record names
    (``shell/cli/team_home.py``); None: plain ``tmux``."""
    from shell.cli import team_home

    return team_home.tmux_socket(args, env)


def placed_on(args: argparse.Namespace) -> str | None:
    """The machine the command's program runs on (``shell/cli/team_home.py``); None: this one."""
    from shell.cli import team_home

    return team_home.placed_on(args)


def make_executor(args: argparse.Namespace, env: Mapping[str, str], store: StoreHandler | None = None) -> Executor:
    return Executor(env=env, tmux_socket=tmux_socket(args, env), store=store)


def is_change(step: m.Step) -> bool:
    from pure.program import is_mutation

    return is_mutation(step)


def load_operations() -> dict[str, Any]:
    """Every registered operation: ``pure/``'s and the shell's (``shell/store/herdr_runs.py``)."""
    import shell.store.herdr_runs  # noqa: F401 - registers herdr.run_start and herdr.run_settle
    from pure import operations

    return operations.load_all()


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def usage_error(args: argparse.Namespace, command: str, message: str) -> int:
    """An input error found by a command itself (after parsing): exit 2, said on stderr, and answered
    as ``{"ok": false, "error": "usage: …"}`` with ``-o json``."""
    sys.stderr.write(f"panefleet {command}: error: {message}\n")
    if getattr(args, "output", "text") == "json":
        emit_json({"ok": False, "error": f"usage: {message}", "error_code": "usage_error"})
    return EXIT_USAGE


def generic_text(result: dict[str, Any]) -> str:
    if result.get("ok") is False:
        return f"error: {result.get('error')}"
    return "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in result.items() if k != "ok") or "ok"


def debt_lines(done: m.Done) -> str:
    return "".join(f"debt: {debt.sentence()}\n" for debt in done.debt)


def as_run_renderer(render: TextRenderer | None, render_run: RunRenderer | None) -> RunRenderer:
    """One renderer form: ``render_run`` owns the text; ``render`` gets the result, debt follows."""
    if render_run is not None:
        return render_run
    chosen = render or generic_text

    def rendered(result: dict[str, Any], done: m.Done, journal: list[m.Entry]) -> str:
        changes = result.get("changesMade")
        if isinstance(changes, list) and changes:
            return stopped_text(result, changes)
        return chosen(result)

    return rendered


def stopped_text(result: dict[str, Any], changes: list[Any]) -> str:
    """A crash in the middle: whatever the renderer says, list exactly what was changed."""
    from pure import wire

    lines = [f"error: {result.get('error')}",
             "panefleet stopped after making these changes (check them; run `panefleet team status` / "
             "`herdr status`):"]
    for raw in changes:
        step = wire.structure_as(raw, m.Step).value_or(None)
        lines.append(f"  - {describe_step(step) if step is not None else raw}")
    return "\n".join(lines)


def run_cli_operation(
    name: str,
    request: object,
    args: argparse.Namespace,
    *,
    env: Mapping[str, str] | None = None,
    render: TextRenderer = generic_text,
    render_run: RunRenderer | None = None,
    store: StoreHandler | None = None,
    predictors: Predictors | None = None,
    predicted_capture: str | None = None,
    annotate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> int:
    """Run a registered operation (or its dry run, or save its plan) and print its outcome; return
    the exit code.

    ``render`` turns the result into text. ``render_run`` is for operations whose text needs the
    whole run (what the journal shows was changed, killed, cleaned): it owns the text entirely.
    ``predictors`` (or a function of the real executor giving them) and ``predicted_capture`` shape
    the dry run (see ``shell/run/dryrun.py``). ``annotate`` adds facts only the shell can observe to a real
    run's answer (e.g. who holds a lock, for ``team status``)."""
    environ = dict(os.environ if env is None else env)
    executor = make_executor(args, environ, store)
    renderer = as_run_renderer(render, render_run)
    plan_out = getattr(args, "plan_out", None)
    host = placed_on(args)
    if host is not None:
        if plan_out:
            return usage_error(args, "--plan-out", "a saved plan of a team on another machine is not supported yet")
        refused = _check_host(host, args)
        if refused is not None:
            return refused
        request = _for_host(request, host, environ)
    if getattr(args, "dry_run", False) or plan_out:
        done, journal = dry_run(name, request, executor, predictors, predicted_capture, host)
        if plan_out:
            from shell.cli.plan_file import PlanFileError, write_plan

            try:
                write_plan(plan_out, name, request, journal, done, env=environ, tmux_socket=executor.tmux_socket)
            except PlanFileError as exc:
                return usage_error(args, "--plan-out", str(exc))
        print_dry_run(name, request, done, journal, args, renderer, plan_file=plan_out)
        return exit_code(done)
    return run_and_print(name, request, args, executor, environ, renderer, annotate)


def dry_run(name: str, request: object, executor: Executor, predictors: Predictors | None,
            predicted_capture: str | None, host: str | None = None) -> tuple[m.Done, list[m.Entry]]:
    from pure import operations
    from shell.run.dryrun import DryRunExecutor
    from shell.run.loop import placed, run_program

    op = operations.get(name)
    assert op is not None, name
    chosen = predictors(executor) if callable(predictors) else predictors
    dry = DryRunExecutor(executor, chosen, predicted_capture=predicted_capture)
    return run_program(lambda: placed(op.program(request), host), dry)


def _for_host(request: object, host: str, environ: Mapping[str, str]) -> object:
    """``request`` with its recorded environment's machine facts read on ``host`` (``shell/cli/team_host.py``)."""
    import attrs

    from shell.cli.team_host import placed_env

    recorded = getattr(request, "env", None)
    if not attrs.has(type(request)) or not isinstance(recorded, dict):
        return request
    return attrs.evolve(request, env=placed_env(recorded, host, environ))  # type: ignore[misc]


def _check_host(host: str, args: argparse.Namespace) -> int | None:
    """None when the team's machine is the one it was made on (``shell/cli/team_host.py``); else the exit
    status, the reason printed. ``team init`` keeps the identity it read, for the team's registry entry."""
    from returns.result import Failure

    from shell.cli import team_host
    from shell.cli.team_home import TeamHome

    home = getattr(args, "team_home", None)
    checked = team_host.check(host, home.entry if isinstance(home, TeamHome) else None, os.environ)
    if isinstance(checked, Failure):
        problem = str(checked.failure())
        sys.stderr.write(f"panefleet: {problem}\n")
        if getattr(args, "output", "text") == "json":
            emit_json({"ok": False, "error": problem, "error_code": problem.split(":", 1)[0]})
        return 1
    args.host_identity = checked.unwrap()
    return None


def run_and_print(name: str, request: object, args: argparse.Namespace, executor: Any,
                  environ: Mapping[str, str], renderer: RunRenderer,
                  annotate: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> int:
    """Run for real through ``executor`` and print the outcome (the audit log is pruned after)."""
    from shell.run.audit_prune import prune_after_run
    from shell.run.loop import run_operation

    socket = getattr(executor, "tmux_socket", getattr(getattr(executor, "real", None), "tmux_socket", None))
    if getattr(args, "output", "text") == "text" and sys.stderr.isatty():
        from shell.cli.progress import Progress

        executor = Progress(executor)  # progress lines for a run longer than about a second
    host = placed_on(args)
    done, journal, audit = run_operation(name, request, executor, env=environ, host=host)
    if name == "team.init" and done.outcome.status == "ok":  # also a saved plan of one, applied
        from shell.cli.team_home import remember_new_team

        # the team's record and registry entry
        remember_new_team(request, socket, environ, host, getattr(args, "host_identity", None))
    result = done.outcome.result
    if annotate is not None and isinstance(result, dict):
        import attrs

        done = attrs.evolve(done, outcome=attrs.evolve(done.outcome, result=m.JsonValue({**result, **annotate(result)})))
    prune_after_run(environ, audit)
    print_outcome(done, journal, args, renderer)
    if getattr(args, "output", "text") != "json" and audit is not None and (
            getattr(args, "verbose", 0) or environ.get("PANEFLEET_SHOW_AUDIT")):
        sys.stderr.write(f"audit log: {audit}\n")
    return exit_code(done)


def for_people(answer: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """A failed answer with its sentence in ``error``, its stable code in ``error_code`` and the
    planner's message in ``error_detail`` (shell/cli/explain.py ``explained_answer``)."""
    from shell.cli.explain import explained_answer, scene_of

    return explained_answer(answer, scene_of(args, os.environ, answer))


def explained_text(text: str, answer: dict[str, Any], args: argparse.Namespace) -> str:
    """A renderer's text with the failure's code replaced by its sentence (renderers match on the
    code, so they are given the answer as the planner made it)."""
    raw, sentence = answer.get("error"), for_people(answer, args).get("error")
    if not isinstance(raw, str) or not raw or not isinstance(sentence, str) or raw == sentence:
        return text
    if f": {raw}" in text:
        return text.replace(f": {raw}", f": {sentence}", 1)
    return f"error: {sentence}\n{text}"


def print_outcome(done: m.Done, journal: list[m.Entry], args: argparse.Namespace, renderer: RunRenderer) -> None:
    result = answer_of(done)
    if getattr(args, "output", "text") == "json":
        emit_json(for_people(result, args))
        return
    text = explained_text(renderer(result, done, journal).rstrip("\n") + "\n", result, args)
    if result.get("interrupted") is True:
        text = undone_text(journal) + text
    (sys.stdout if result.get("ok") is True else sys.stderr).write(text)
    sys.stderr.write(debt_lines(done))


def undone_text(journal: list[m.Entry]) -> str:
    """What an interrupted run removed (its undo, and any stray sweep before it), in one line; nothing
    when it removed nothing."""
    killed = [e.step.args[e.step.args.index("-t") + 1] for e in journal
              if isinstance(e.step, m.Run) and e.step.args[:1] == ("kill-pane",) and "-t" in e.step.args
              and isinstance(e.observation, m.Proc) and e.observation.exit_code == 0]
    removed = sum(1 for e in journal if isinstance(e.step, m.RemovePath))
    if not killed and not removed:
        return ""
    panes = f"killed pane(s) {', '.join(killed)}, each after its proof" if killed else "killed no pane"
    return f"interrupted: {panes}; removed {removed} file(s) and folder(s) it had made\n"


# -------------------------------------------------------------------------------------- dry runs


def plan_json(name: str, request: object, done: m.Done, journal: list[m.Entry], args: argparse.Namespace
              ) -> dict[str, Any]:
    """``{"ok", "dryRun", "predicted", "changes", "steps"}``: ``predicted`` is exactly what the real run
    would print with ``-o json``; ``ok`` is its ``ok``."""
    from pure import wire
    from shell.cli.plan_view import changes

    predicted = answer_of(done)
    return {
        "ok": predicted["ok"],
        "dryRun": True,
        "predicted": for_people(predicted, args),
        "changes": [c.to_json() for c in changes(journal, done)],
        "steps": [{"change": is_change(e.step), "step": wire.unstructure(e.step),
                   "observation": wire.unstructure(e.observation)} for e in journal],
    }


def plan_text(name: str, request: object, done: m.Done, journal: list[m.Entry], renderer: RunRenderer,
              args: argparse.Namespace, *, steps: bool, heading: str = "dry run: reads are real, changes are predicted; nothing was changed"
              ) -> str:
    """What will change (one line per thing), the predicted result in words, the step trace with
    ``steps``, and the count line."""
    from shell.cli.plan_view import changes, count_line, render_changes

    predicted = answer_of(done)
    found = changes(journal, done)
    out = [f"What will change ({heading}):" if found else f"No changes ({heading})."]
    if found:
        out += render_changes(found)
    words = _placeholder_pids(explained_text(renderer(predicted, done, journal).rstrip("\n"), predicted, args), journal)
    out.append("Predicted result:")
    out += ["  " + line for line in words.splitlines()]
    out += [f"  {line}" for line in debt_lines(done).splitlines()]
    if steps:
        out.append("Steps (+ changes, predicted; the others are real reads):")
        for number, entry in enumerate(journal, start=1):
            mark = "+" if is_change(entry.step) else " "
            out.append(f"{mark}{number:4d}. {describe_step(entry.step)}  →  {describe_observation(entry.observation)}")
    out.append(count_line(found))
    return "\n".join(out) + "\n"


def _placeholder_pids(text: str, journal: list[m.Entry]) -> str:
    """A planned pane's id and pid are guesses (``shell/run/dryrun.py``): the real run gets ids tmux
    chooses then, so say "(new)" instead of a number."""
    import re

    from shell.run.dryrun import PLACEHOLDER_PID_BASE

    created = [e for e in journal if isinstance(e.step, m.Run) and e.step.mutates and e.step.tool == "tmux"
               and e.step.args[:1] in (("split-window",), ("new-window",), ("new-session",))]
    if not created:
        return text
    pids = "|".join(str(PLACEHOLDER_PID_BASE + n) for n in range(1, len(created) + 1))
    panes = [e.observation.stdout.split()[0] for e in created
             if isinstance(e.observation, m.Proc) and re.fullmatch(r"%\d+\s*", e.observation.stdout)]
    text = re.sub(rf"\b({pids})\b", "(new)", text)
    return re.sub(rf"({'|'.join(panes)})\b", "(new)", text) if panes else text


def print_dry_run(name: str, request: object, done: m.Done, journal: list[m.Entry], args: argparse.Namespace,
                  renderer: RunRenderer, *, plan_file: str | None = None) -> None:
    if getattr(args, "output", "text") == "json":
        answer = plan_json(name, request, done, journal, args)
        if plan_file:
            answer["planFile"] = plan_file
        emit_json(answer)
        return
    steps = bool(getattr(args, "steps", False) or getattr(args, "verbose", 0))
    sys.stdout.write(plan_text(name, request, done, journal, renderer, args, steps=steps))
    if plan_file:
        sys.stdout.write(f"Saved to {plan_file}: `panefleet apply {plan_file}` carries it out, or refuses when "
                         "what it was computed from has changed.\n")
