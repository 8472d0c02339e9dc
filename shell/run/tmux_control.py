"""One tmux control-mode client per run: most tmux steps are answered through it, not a process each.

Spawning ``tmux`` costs ≈5 ms a call on a loaded 2-core machine (``bench/calls.py``); a scale-down of
ten workers makes about sixty calls. A control-mode client (``tmux -C``) takes commands on its
standard input, one per line, and answers each with an output block; a call through it costs a
fraction of a millisecond. ``shell/run/executor.py`` starts one at the first tmux step that can use it,
sends every such step of the run through it, and turns each answer into the same ``m.Proc`` a spawned
``tmux`` gives, so plans, goldens and the audit log's journal do not change.

How the client is started (tmux 3.3a)::

    tmux [-L NAME] -N -C attach-session -E -f no-output,ignore-size

* It attaches to an **existing** session and adds no session, window or pane: ``list-panes -a`` (the
  proofs in ``pure/tmux/``), pane-id allocation and team status see exactly what they saw before.
  A dedicated session would put its own pane into every snapshot and take a pane id. Without ``-t``
  tmux picks the session it would attach any new client to (the most recently used unattached one,
  else the most recently used); a pane or window target is never given, since that would change the
  session's current window.
* ``-N`` never starts a server (attach-session would start one when none is running); ``-E`` does
  not copy the client's environment into the session (``update-environment``); ``ignore-size`` and
  the client never setting a size (``refresh-client -C``) keep every window's size (resize.c
  ``ignore_client_size``); ``no-output`` means no ``%output`` notifications at all.
* While it is attached tmux counts one more client on that session: ``client-attached`` and
  ``client-detached`` hooks run, ``#{session_attached}`` is one higher, the session's activity time
  is updated, and a command sent from elsewhere without ``-c`` may pick this client as the "best"
  client (a ``display-message`` without ``-p`` from such a command goes to it). That lasts for the
  run only (about a second).
* It is closed (its standard input closed, so tmux detaches it; the group killed if it does not
  exit) at the end of every run, however it ends (``shell/run/loop.py``), before a ``kill-server`` (a
  control client still attached to a server being killed, whose owner exits right after, can be
  left hanging), at interpreter exit, and after a reply that misses its deadline. A forked child
  never touches its parent's client. If panefleet is killed outright, the client reads end of input
  and exits by itself, and — on Linux, for a client started on the main thread — it also gets the
  parent-death signal (SIGTERM; ``shell/run/process.py`` ``spawn_control_client``): a client left
  attached would keep the server, and ``kill-server``, waiting for it.
* ``tmux`` is resolved on ``PATH`` when the client starts (the run's first step that uses it), with
  the run's environment, in a session and process group of its own like every spawned call. Its
  environment is the one a spawned call would get, so tmux decides UTF-8 output (``LC_ALL``,
  ``LC_CTYPE``, ``LANG``, ``$TMUX``) and sanitises answers the same way.
* A pane in copy mode takes keys from ``send-keys`` through the target client's key bindings: this
  client's instead of the "best" one's, which changes at most which client a bound command that
  shows a message would show it on.

What goes through it: only :data:`CONTROL_VERBS` (and ``display-message -p``), commands whose answer
and effect do not depend on which client asks, given the explicit targets panefleet passes.
Everything else is spawned exactly as before: ``-V`` (not a server command); ``split-window``,
``new-window``, ``new-session`` (a new pane takes ``PATH`` from an *unattached* client's
environment but from the session's when the client is attached, tmux 3.3a spawn.c; a relative
``-c`` resolves against the client's directory only when it is unattached); ``kill-server``; a step
with its own ``cwd``; arguments that a control line cannot carry with the same meaning
(:func:`control_line`).

How a step becomes a control line and how its answer is read back: ``shell/run/tmux_protocol.py``.

Deadlines (``shell/run/deadlines.py``) cover starting the client and each reply. A reply that does not
come in time: the client is killed with its process group (SIGTERM, SIGKILL after the grace), the
call is observed as ``tmux timed out after …`` like a spawned call, and the rest of the run spawns.
The client cannot start (no server, no session, a stub ``tmux`` on ``PATH`` that does not speak the
protocol — anything but tmux's own ``%begin``/``%end`` answer to the attach): the rest of the run
spawns, and the step is spawned. A client that exits on its own (its session was destroyed) is
replaced at the next step. ``PANEFLEET_TMUX_EXECUTOR=spawn`` turns control mode off.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from shell.run.piped import CLOSE_SECONDS, PipedChild, Spawner
from shell.run.tmux_protocol import ATTACH, MODES, SENTINEL, Mode, _Lost, _TimedOut, collect

if TYPE_CHECKING:  # only the standard library at import: cli.py may check the variable for any command
    from pure import model as m

ENV_VAR = "PANEFLEET_TMUX_EXECUTOR"
# At most this many clients per run (a client is replaced when its session is destroyed).
MAX_CLIENTS = 4


def mode_from_env(env: Mapping[str, str]) -> Mode:
    """``control`` unless ``PANEFLEET_TMUX_EXECUTOR`` says ``spawn``; ``ValueError`` for anything else."""
    value = env.get(ENV_VAR, "").strip()
    if value == "":
        return "control"
    if value not in MODES:
        raise ValueError(f"{ENV_VAR}: {value!r} is not one of {', '.join(MODES)}")
    return "spawn" if value == "spawn" else "control"


# ------------------------------------------------------------------------------------------- client

StartProblem = Literal["unavailable", "refused", "not_control", "timed_out"]


class StartFailure:
    """Why no client could be started: ``unavailable`` (it exited: no server, no tmux), ``refused``
    (tmux answered the attach with an error, e.g. no sessions), ``not_control`` (whatever answered
    does not speak control mode, e.g. a stub ``tmux``), ``timed_out`` (no answer in time)."""

    def __init__(self, problem: StartProblem, detail: str) -> None:
        self.problem = problem
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.problem}: {self.detail}" if self.detail else self.problem


class ControlClient(PipedChild):
    """A running ``tmux -C`` client. Use :meth:`start`; then :meth:`call` per command; :meth:`close`."""

    @classmethod
    def start(cls, path: str, selector: tuple[str, ...], env: Mapping[str, str], deadline: float,
              spawn: Spawner) -> ControlClient | StartFailure:
        """Start ``path`` (tmux, resolved by the caller) in control mode and wait for tmux's answer
        to the attach until ``deadline``. ``spawn(path, args, env, stdin, stdout, stderr)`` starts
        the process in a session of its own and returns the ``sh`` handle."""
        try:
            client = cls.spawned(spawn, path, (*selector, *ATTACH), env)
        except OSError as exc:
            return StartFailure("unavailable", exc.strerror or str(exc))
        try:
            failure = client._handshake(deadline)
        except BaseException:
            client.kill()
            raise
        if failure is not None:
            if failure.problem in ("not_control", "timed_out"):
                client.kill()
            else:
                client.close()
            return failure
        return client

    def _handshake(self, deadline: float) -> StartFailure | None:
        """tmux answers the attach command (run as the client's first command, flagged 0) with a
        block of its own before anything else; notifications may follow it."""
        try:
            while True:
                line = self.stdout.line(deadline)
                if line.startswith(b"%begin "):
                    break
                if not line.startswith(b"%"):
                    return StartFailure("not_control", f"answered {line[:80].decode('utf-8', 'replace')!r}")
            _, failed, body = self.stdout.block(line, deadline)
        except _TimedOut:
            return StartFailure("timed_out", "")
        except _Lost as lost:
            if not self.stdout.eof:
                return StartFailure("not_control", str(lost))
            end = min(deadline, time.monotonic() + CLOSE_SECONDS)
            while self._alive() and time.monotonic() < end:
                time.sleep(0.0005)
            said = self.stderr_text()
            return StartFailure("unavailable", said or str(lost))
        if failed:
            return StartFailure("refused", body.decode("utf-8", "replace").strip())
        return None

    def usable(self) -> bool:
        """Not closed, and tmux has not said it is detaching the client (what has arrived since the
        last answer is looked at first). A client detached by someone else in the instant before a
        command is sent is found out only when that command gets no reply."""
        if self.closed:
            return False
        self.stdout.look()
        return not self.stdout.exiting and not self.stdout.eof

    def call(self, line: bytes, deadline: float) -> m.Proc | None:
        """Send one command line (:func:`control_line`) and wait until ``deadline`` for its answer.

        None: nothing was sent (the client had gone; it is closed), the caller spawns the command.
        Raises :class:`CallTimedOut` (the client is then killed) or :class:`CallLost` (sent, but the
        client exited or broke the protocol before the reply; the command may have run)."""
        try:
            self._write(line + SENTINEL, deadline)
        except _Lost:
            self.close()
            return None
        except _TimedOut:
            self.kill()
            raise CallTimedOut from None
        try:
            answered, usable = collect(self.stdout, deadline)
        except _TimedOut:
            self.kill()
            raise CallTimedOut from None
        except _Lost as lost:
            self.kill()
            raise CallLost(str(lost)) from None
        if not usable:  # it answered, but tmux is detaching it (the command destroyed its session):
            self.close()  # nothing more may be sent to it, since tmux may or may not still run it
        return answered


class CallTimedOut(Exception):
    """No reply before the deadline; the client has been killed."""


class CallLost(Exception):
    """The command was sent but the client exited or broke the protocol before replying."""


ClientDropped = Literal["", "gone", "timed_out", "lost"]


def ask(client: ControlClient, line: bytes, command: tuple[str, ...], shown: tuple[str, ...], deadline: float,
        seconds: float, where: str = "") -> tuple[m.Proc | None, ClientDropped]:
    """One tmux ``command`` through ``client`` (``shown``: its arguments as a spawned call's, for the
    words of a failure): the answer, or None when it must be asked again without the client — it had
    gone before the command was sent, or it ended before answering a read, which changed nothing; and
    why the client is no longer to be used ("" while it is). A call it lost after sending a change is
    not asked again: only its answer says what it made. An interruption kills the client."""
    import shlex

    from pure import model as m
    from shell.run.process import timed_out
    from shell.run.tmux_protocol import READ_ONLY_VERBS

    try:
        answered = client.call(line, deadline)
    except CallTimedOut:
        return timed_out("tmux", shown, seconds, b""), "timed_out"
    except CallLost as lost:
        if command[0] in READ_ONLY_VERBS:
            return None, "lost"
        return m.Proc(exit_code=None, stderr=f"tmux control client{where} ended before answering ({lost}): "
                                             f"{shlex.join(shown)}"), "lost"
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): the client must not outlive panefleet
        client.kill()
        raise
    return answered, "gone" if answered is None else ""

