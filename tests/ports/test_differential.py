"""Differential test: generated questions put to ``panefleet decide`` and to ``ports/js/decide.mjs``.

Questions are generated from a fixed seed: simulated ``tmux.teardown`` runs whose tmux answers are
drawn from pane tables (faulty ones included), owner answers and kill results, cut at every length,
with journal faults (wrong observation kinds, divergent steps, entries after the end); requests and
entries with decoding problems; raw texts that are not JSON; unknown operation names. Python answers
in-process (the CLI's own handler, ``tests/ports/decide_cli.py``), a few through the real CLI too;
the port answers all of them in one ``--batch`` run. Every answer must be identical, byte for byte.
"""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

from pure import model as m
from pure import operations, wire
from pure import tmux as t
from pure.program import Driver
from tests.ports.decide_cli import Answer, decide_cli, decide_in_process, known_operations
from tests.ports.node import PORT, node

SEED = 20260101
QUESTIONS = 2500
OWNER = "team:alpha"
PANES = ["%13", "%14", "%15", "%1", "%2", "%021", "%abc", "%13\n", "13", "", " %13"]
SPACES = ["", " ", "\t", "\r\n", "\n", "\u00a0", "\u3000", "\ufeff", "\u2028", "\u001f", "\u0085", "\u200b", "\u000b"]
STDERRS = ["", "lost server", "  padded \t\r\n", " \n", "\u00a0no server\u00a0", "can't find pane: %13\n"]
# the tmux servers a pane is pinned on and a table names (docs/ports.md, "The tmux server")
SERVERS = [("4242", "1790000000"), ("5151", "1790000600")]


class Gen:
    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd
        self.answering: tuple[str, str] | None = None

    def pid(self) -> int | None:
        if self.r.random() < 0.8:
            return self.r.choice([513, 514, 515, 2**53 - 1, 1])
        return self.r.choice([None, 0, -5, 999])

    def request(self) -> dict[str, Any]:
        count = self.r.choice([0, 1, 1, 2, 2, 3, 4])
        raw: dict[str, Any] = {"targets": [{"pane_id": self.r.choice(PANES[:6] if self.r.random() < 0.8 else PANES),
                                            "pid": self.pid()} for _ in range(count)]}
        for key, values in (("owner_id", [OWNER] * 6 + [None, "", "team:other"]), ("authorize", [True, True, False]),
                            ("leader_pane_id", ["%1", None, "%13"]), ("hud_pane_id", ["%2", None])):
            if self.r.random() < (0.9 if key == "owner_id" else 0.5):
                raw[key] = self.r.choice(values)
        # the server that answers this run's listings (None: they name none), and the pins of some targets
        self.answering = self.r.choice([*SERVERS, *SERVERS, None])
        for target in raw["targets"]:
            if self.r.random() < (0.4 if self.answering else 0.03):
                target["server"] = "@".join(self.answering if self.answering and self.r.random() < 0.8
                                            else self.r.choice(SERVERS))
        return raw

    def row(self, pane: str, pid: object, dead_chance: float = 0.08) -> str:
        dead = "1" if self.r.random() < dead_chance else "0"
        return f"{pane}\t{dead}\t{pid}"

    def table(self, request: dict[str, Any], killed: dict[str, int | None]) -> m.Proc:
        """A pane table; ``killed`` maps each killed pane to the pid it stays listed with (most often
        its own, so that the after-kill back-off runs to its end), or None when the kill removed it."""
        roll = self.r.random()
        if roll < 0.05:
            return m.Proc(exit_code=self.r.choice([1, 2, None]), stderr=self.r.choice(STDERRS))
        rows, listed = [], set()
        for target in request["targets"]:
            pane = target["pane_id"]
            if pane in listed:
                continue
            listed.add(pane)
            if pane in killed:
                if killed[pane] is not None:
                    rows.append(self.row(pane, killed[pane], 0.02))  # mostly live: the back-off runs on
            elif self.r.random() < 0.9 and t.is_pane_id(pane):
                pid = target["pid"] if self.r.random() < 0.92 else self.r.choice([999, 601, 513])
                rows.append(self.row(pane, pid if t.is_positive_pid(pid) else 513))
        if self.r.random() < 0.3:
            rows.append(self.row("%77", 777))
        if roll > (0.96 if killed else 0.9):  # a fault somewhere in the table (rarer while a kill is proven)
            faults = ["%9\t0", "%9\t0\t1\tx", "9\t0\t1", "%9\tx\t1", "%9\t0\t-1", "%9\t0\t0", "%9\t0\t" + "9" * 40,
                      "%9\t0\t" + "8" * 5000, "%9\t0\t9007199254740992", "%9\t0\t1\r", "", "%9\t0\t\u0661"]
            if rows:
                rows.append(rows[0])  # a duplicate
            rows.insert(self.r.randrange(len(rows) + 1), self.r.choice(faults))
            rows = rows[-4:] if self.r.random() < 0.5 else rows
        if self.r.random() < 0.05:
            rows = [r.rsplit("\t", 1)[0] + "\t" for r in rows]  # empty pids
        if self.answering is not None:  # rows naming the server that answers (now and then another, or two)
            steady = 1.0 if killed else 0.97  # after a kill, the same server (so the back-off runs to its end)
            server = self.answering if self.r.random() < steady else self.r.choice(SERVERS)
            rows = ["\t".join((r, *(server if self.r.random() < steady + 0.02 else self.r.choice(SERVERS)))) for r in rows]
        eol = self.r.choice(["\n", "\n", "\r\n"])
        text = eol.join(rows) + (eol if rows and self.r.random() < 0.85 else "")
        return m.Proc(exit_code=0, stdout=text, stderr=self.r.choice(["", "", "warning"]))

    def owner(self, request: dict[str, Any]) -> m.Proc:
        roll = self.r.random()
        if roll < 0.1:
            return m.Proc(exit_code=self.r.choice([1, 1, 2, None]), stderr=self.r.choice(STDERRS))
        tag = self.r.choice([OWNER, "team:other", ""]) if roll < 0.2 else str(request.get("owner_id") or OWNER)
        pad = SPACES[:9] if self.r.random() < 0.85 else SPACES
        return m.Proc(exit_code=0, stdout=self.r.choice(pad) + tag + self.r.choice(pad))

    def kill(self) -> m.Proc:
        if self.r.random() < 0.7:
            return m.Proc(exit_code=0)
        return m.Proc(exit_code=self.r.choice([1, 2, None]), stderr=self.r.choice(STDERRS))

    def answer(self, step: m.Step, request: dict[str, Any], killed: dict[str, int | None]) -> m.Observation:
        if isinstance(step, m.Run):
            verb = step.args[0]
            if verb == "list-panes":
                return self.table(request, killed)
            return self.owner(request) if verb == "show-option" else self.kill()
        return m.Ack(ok=self.r.random() < 0.95, error="")

    def fault(self, entry: m.Entry) -> dict[str, Any]:
        raw: dict[str, Any] = wire.unstructure(entry)
        kind = self.r.choice(["observation", "step", "sleep"])
        if kind == "observation":
            raw["observation"] = self.r.choice([{"kind": "value", "value": "x"}, {"kind": "ack", "ok": True},
                                                {"kind": "file", "content": None}, {"kind": "listing", "names": None},
                                                {"kind": "json", "ok": True, "value": {"a": [1, 2.5]}}])
        elif kind == "step":
            raw["step"] = {**raw["step"], "args": ["list-panes", "-a"]} if raw["step"]["op"] == "run" else \
                {"op": "sleep", "ms": 1}
        else:
            raw["step"] = self.r.choice([{"op": "sleep", "ms": 2000}, {"op": "now"},
                                         {"op": "store", "action": "get", "payload": {"x": 1.5}}])
        return raw

    def run(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A simulated teardown run (with a fault now and then), cut at a random length."""
        request = self.request()
        op = operations.get("tmux.teardown")
        assert op is not None
        req = wire.structure(request, op.request_type).unwrap()
        driver = Driver(lambda: op.program(req))
        journal: list[dict[str, Any]] = []
        killed: dict[str, int | None] = {}
        while len(journal) < 40:
            decision = driver.decision()
            if isinstance(decision, m.Done):
                if self.r.random() < 0.1 and journal:
                    journal.append(journal[-1])  # an entry after the end
                break
            step = decision.steps[0]
            entry = m.Entry(step=step, observation=self.answer(step, request, killed))
            if isinstance(step, m.Run) and step.args[0] == "kill-pane":
                pinned = next(tg["pid"] for tg in request["targets"] if tg["pane_id"] == step.args[-1])
                killed[step.args[-1]] = None if self.r.random() < 0.4 else pinned if self.r.random() < 0.85 else 601
            if self.r.random() < 0.04:
                journal.append(self.fault(entry))
                break
            journal.append(wire.unstructure(entry))
            driver.feed(entry.step, entry.observation)
        cut = len(journal) if self.r.random() < 0.5 else self.r.randrange(len(journal) + 1)
        return request, journal[:cut]

    def compact(self, raw: dict[str, Any]) -> dict[str, Any]:
        """An entry with the fields that have their default left out."""
        out: dict[str, Any] = json.loads(json.dumps(raw))
        for part, defaults in (("step", {"cwd": None, "mutates": False, "note": ""}),
                               ("observation", {"stdout": "", "stderr": "", "error": ""})):
            for key, value in defaults.items():
                if out[part].get(key, object()) == value and type(out[part].get(key)) is type(value):
                    del out[part][key]
        return out

    def text(self, body: Any) -> str:
        indent = self.r.choice([None, None, 2])
        text = json.dumps(body, ensure_ascii=self.r.random() < 0.5, indent=indent)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # an unpaired surrogate travels as its escape only
            text = json.dumps(body, ensure_ascii=True, indent=indent)
        if self.r.random() < 0.1:
            text = text.replace(": 513,", ": 513.0,").replace(": 514}", ": 5.14e2}")
        return text

    def question(self) -> tuple[str, bool]:
        """One stdin text and whether the operation is unknown to the port."""
        roll = self.r.random()
        if roll < 0.70:
            request, journal = self.run()
            if self.r.random() < 0.3:
                journal = [self.compact(e) for e in journal]
            body: dict[str, Any] = {"operation": "tmux.teardown", "request": request}
            if journal or self.r.random() < 0.5:
                body["journal"] = journal
            return self.text(body), False
        if roll < 0.90:
            return self.text(self.broken()), False
        if roll < 0.95:
            return self.r.choice(["", "{", "[]", "null", '"x"', "{} {}", '{"operation": NaN}', '{"a": 1e999}',
                                  '{"operation": "tmux.teardown", "request": {"targets": []}, "x": ' + "[" * 120
                                  + "]" * 120 + "}", "\ufeff{}", '{"operation": "tmux.teardown",}']), False
        name = self.r.choice(["nope", "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "new\nline",
                              "\u00e9t\u00e9", "\u200bzero", "\u00a0nbsp", "\x7fdel", "\x1bescape", "emoji \U0001f600",
                              "tmux.Teardown", "", None, 5, True, False, ["tmux.teardown"], "\u2028"])
        body = {"request": {"targets": []}} if name is None and self.r.random() < 0.5 else {"operation": name}
        return json.dumps(body, ensure_ascii=self.r.random() < 0.5), True

    def broken(self) -> Any:
        """A question with a decoding problem somewhere (or, now and then, none)."""
        request, journal = self.run()
        body: dict[str, Any] = {"operation": "tmux.teardown", "request": request, "journal": journal}
        where = self.r.choice(["request", "request", "journal", "entry", "entry", "entry"])
        bad_values: list[Any] = ["x", 1.5, 2**53, -(2**53), 1e300, True, None, [], {}, "\ud800", 3]
        if where == "journal":
            body["journal"] = self.r.choice([None, {}, "[]", 1])
        elif where == "request":
            target = body["request"]
            if target["targets"] and self.r.random() < 0.6:
                target = self.r.choice(target["targets"])
            key = self.r.choice(sorted(target) + ["extra", "ownerId", "é", "a b"])
            if self.r.random() < 0.2:
                target.pop(key, None)
            else:
                target[key] = self.r.choice(bad_values)
            if self.r.random() < 0.1:
                body["request"] = self.r.choice([None, [], "x"])
        elif journal:
            entry = self.r.choice(journal)
            part = entry[self.r.choice(["step", "observation"])]
            key = self.r.choice(sorted(part) + ["zz", "\u00e9"])
            if self.r.random() < 0.2:
                part.pop(key, None)
            else:
                part[key] = self.r.choice(bad_values + ["zap", ["a", 1]])
        return body


def questions() -> list[tuple[str, bool]]:
    gen = Gen(random.Random(SEED))
    out = [gen.question() for _ in range(QUESTIONS)]
    for text, _ in out:
        text.encode("utf-8")  # every question is something a real stdin can carry
    return out


def js_answers(texts: list[str]) -> list[Answer]:
    lines = "".join(json.dumps(text) + "\n" for text in texts)
    done = subprocess.run([node(), str(PORT / "decide.mjs"), "--batch"], input=lines.encode("utf-8"),
                          capture_output=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    rows = [json.loads(line) for line in done.stdout.decode("utf-8").split("\n") if line]
    return [Answer(r["exit_code"], r["stdout"], r["stderr"]) for r in rows]


def test_the_port_agrees_with_panefleet_decide() -> None:
    asked = questions()
    texts = [text for text, _ in asked]
    js = js_answers(texts)
    assert len(js) == len(texts)
    known = known_operations()
    kinds: dict[str, int] = {}
    for (text, unknown), theirs in zip(asked, js, strict=True):
        ours = decide_in_process(text)
        if unknown:
            ours = ours._replace(stderr=ours.stderr.replace(f"(known: {known})", "(known: tmux.teardown)"))
        assert theirs == ours, f"question {text[:400]!r}\n  python: {ours}\n  js:     {theirs}"
        key = "unknown" if unknown else "exit 2" if ours.exit_code else json.loads(ours.stdout).get("kind", "?")
        if key == "done":
            key += ":" + json.loads(ours.stdout)["outcome"]["status"]
        kinds[key] = kinds.get(key, 0) + 1
    # the generator reaches every kind of answer, often
    assert len(texts) >= 1000
    for key in ("next", "done:ok", "done:debt", "done:error", "exit 2", "unknown"):
        assert kinds.get(key, 0) >= 20, kinds


def test_a_few_through_the_real_cli() -> None:
    asked = questions()
    picked = [text for text, unknown in asked[:200] if not unknown][::40]
    for text, theirs in zip(picked, js_answers(picked), strict=True):
        assert decide_cli(text) == decide_in_process(text) == theirs, text[:200]


def test_the_generated_runs_cover_every_fate_and_problem() -> None:
    fates: dict[str, int] = {}
    problems: dict[str, int] = {}
    for text, unknown in questions():
        ours = decide_in_process(text)
        if unknown or ours.exit_code:
            continue
        decision = json.loads(ours.stdout)
        result = decision.get("outcome", {}).get("result", {})
        for pane in result.get("results", []):
            fates[pane["fate"]] = fates.get(pane["fate"], 0) + 1
            if pane["problem"]:
                code = pane["problem"]["code"]
                problems[code] = problems.get(code, 0) + 1
        if "problem" in result:
            problems[result["problem"]["code"]] = problems.get(result["problem"]["code"], 0) + 1
    for fate in ("killed", "gone", "proof_unavailable", "pid_changed", "kill_failed", "not_attempted"):
        assert fates.get(fate, 0) >= 10, fates
    for code in ("malformed_snapshot", "server_replaced", "query_failed", "invalid_pane_id", "pid_unpinned", "pid_mismatch",
                 "owner_not_authorized", "kill_failed", "still_live", "journal_divergence", "journal_mismatch",
                 "journal_after_done"):
        assert problems.get(code, 0) >= 10, problems
