"""The approved-execution binding of a team and the approved handoff it resolves to
(docs/scale-up.md, "Approved-execution binding").

``team/<team>/approved-execution.json`` binds a team to one launch line of an approved plan
(``{"prd_path", "task", "command"?}``). Before a scale-up launches anyone, the binding must still
resolve, in oh-my-codex 0.20.3's terms:

* ``missing`` — no binding file: the generic path, no handoff context.
* ``malformed`` — unreadable, not JSON, or no non-blank string ``prd_path``/``task``.
* ``stale`` — the PRD is not one of ``<cwd>/.omx/plans/prd-*.md`` (after path canonicalisation),
  has no matching test spec (``test-spec-<slug>.md``; ``test-spec-<ts>-<slug>.md`` for a
  timestamped PRD), cannot be read, or shows no launch line (``omx team N[:role] "task"`` outside
  code fences, indented code and HTML comments) matching the binding's command, else its task.
* ``ambiguous`` — more than one launch line matches.
* ``valid`` — exactly one: the workers get the ``## Approved Handoff Context`` section (the plan,
  its test specs, the approved repository context summary from ``repo-context-<slug>.md`` or the
  PRD's own ``Approved Repository Context Summary`` section, an Ultragoal hint when the handoff
  mentions Ultragoal, and the baseline sentence).

The seed's fixture states map onto these: ``ambiguous`` (two launch lines but no test spec) and
``missing-baseline`` (no test spec) resolve ``stale``; ``plan-only``, ``incomplete``, ``invalid`` and
``ready`` (context-pack metadata is not consulted in this version) resolve ``valid``.

Everything here is pure; files are read through ``ReadFile``/``ListDir``/``Stat``/``RealPath`` steps.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Literal

from attrs import frozen

from pure import model as m
from pure.program import Gen, expect

Status = Literal["missing", "malformed", "stale", "ambiguous", "valid"]

# JavaScript's \s (WhiteSpace and LineTerminator), which trim()/trimEnd() also remove.
_JS_SPACE_CHARS = "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200B)))
JS_SPACE = re.escape(_JS_SPACE_CHARS)
_S = f"[{JS_SPACE}]"
_NOT_EOL = "[^\n\r\u2028\u2029]"  # JavaScript's "."

TEAM_HINT = (rf"(?P<command>(?:omx{_S}+team|\$team){_S}+(?P<ralph>ralph{_S}+)?(?P<count>[0-9]+)"
             rf"(?::(?P<role>[a-z][a-z0-9-]*))?{_S}+(?P<task>\"(?:[^\"\\]|\\{_NOT_EOL})*\"|'(?:[^'\\]|\\{_NOT_EOL})*'))")
TEAM_HINT_RE = re.compile(TEAM_HINT, re.IGNORECASE | re.ASCII)
TEAM_HINT_EXACT_RE = re.compile(rf"{TEAM_HINT}\Z", re.IGNORECASE | re.ASCII)

PRD_NAME = re.compile(r"prd-.*\.md\Z", re.IGNORECASE | re.DOTALL)
TEST_SPEC_NAME = re.compile(r"test-?spec-.*\.md\Z", re.IGNORECASE | re.DOTALL)
PRD_SLUG = re.compile(r"prd-(?P<slug>.+)\.md\Z", re.IGNORECASE | re.DOTALL)
TEST_SPEC_SLUG = re.compile(r"test-?spec-(?P<slug>.+)\.md\Z", re.IGNORECASE | re.DOTALL)
PRD_RAW_SLUG = re.compile(r"prd-(?P<slug>.*)\.md\Z", re.IGNORECASE | re.DOTALL)
TIMESTAMP = re.compile(r"[0-9]{8}T[0-9]{6}Z\Z")

SUMMARY_MAX_CHARS = 4000
SUMMARY_MAX_LINES = 80
BASELINE = "- Use the approved plan and matching test specs as the execution baseline."
HEADING = "## Approved Handoff Context"


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE_CHARS)


def js_trim_end(text: str) -> str:
    return text.rstrip(_JS_SPACE_CHARS)


# ------------------------------------------------------------------------------------ the binding


@frozen(kw_only=True)
class Binding:
    prd_path: str
    task: str
    command: str | None = None


def normalize_binding(value: object) -> Binding | None:
    """A usable binding, or None: ``prd_path`` and ``task`` must be strings that are not blank."""
    if not isinstance(value, dict):
        return None
    prd, task = value.get("prd_path"), value.get("task")
    if not isinstance(prd, str) or not isinstance(task, str):
        return None
    prd, task = js_trim(prd), js_trim(task)
    if not prd or not task:
        return None
    command = value.get("command")
    command = js_trim(command) if isinstance(command, str) else ""
    return Binding(prd_path=prd, task=task, command=command or None)


def _not_json(constant: str) -> object:
    raise ValueError(f"not JSON: {constant}")


def parse_binding(data: m.FileData) -> Binding | Literal["missing", "malformed"]:
    """The binding file as read: absent ⇒ ``missing``; unreadable or unusable ⇒ ``malformed``."""
    if data.content is None:
        return "missing" if not data.error else "malformed"
    try:
        value = json.loads(data.content, parse_constant=_not_json)
    except (ValueError, RecursionError):  # JSONDecodeError, and NaN/Infinity, which JSON.parse rejects
        return "malformed"
    return normalize_binding(value) or "malformed"


# ------------------------------------------------------------------------------------ artefact names

_ICU_ASCII = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_PRIMARY = {c: i for i, c in enumerate(_ICU_ASCII)}


def _collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """An approximation of JavaScript's default ``localeCompare`` (ICU root collation): punctuation
    before digits before letters, case ignored first, lower case before upper case on a tie."""
    primary = tuple(_PRIMARY.get(c.lower(), 1000 + ord(c)) if ord(c) < 128 else 1000 + ord(c) for c in text)
    tertiary = tuple(1 if c.isupper() else 0 for c in text)
    return primary, tertiary


def _timestamp(name: str) -> str | None:
    """The ``YYYYMMDDTHHMMSSZ`` prefix of a prd/test-spec slug, when the name parses as one."""
    match = PRD_SLUG.match(name) or TEST_SPEC_SLUG.match(name)
    if match is None:
        return None
    head, sep, rest = match.group("slug").partition("-")
    return head if sep and rest and TIMESTAMP.match(head) else None


def artifact_sort_key(path: str) -> tuple[int, tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]:
    """oh-my-codex's planning-artefact order: untimestamped names first (by name), then by timestamp."""
    stamp = _timestamp(posixpath.basename(path))
    return (0 if stamp is None else 1, _collation_key(stamp or ""), _collation_key(path))


def prd_slug(path: str) -> tuple[str | None, str | None]:
    """(timestamp, slug) of a ``prd-*.md`` name, or (None, None) when it does not parse as a PRD."""
    name = posixpath.basename(path)
    match = PRD_SLUG.match(name)
    if match is None:
        return None, None
    raw = match.group("slug")
    head, sep, rest = raw.partition("-")
    if sep and TIMESTAMP.match(head):
        return (head, rest) if rest else (None, None)
    return None, raw


def matching_test_specs(prd_path: str, test_specs: list[str]) -> list[str]:
    stamp, slug = prd_slug(prd_path)
    if slug is None:
        return []
    if stamp is not None:
        wanted = f"test-spec-{stamp}-{slug}.md"
        found = [p for p in test_specs if posixpath.basename(p) == wanted]
    else:
        found = []
        for p in test_specs:
            match = TEST_SPEC_SLUG.match(posixpath.basename(p))
            if match is not None and match.group("slug") == slug:
                found.append(p)
    return sorted(found, key=artifact_sort_key)


def _within(base: str, raw: str, root: str) -> str | None:
    current = base
    for segment in re.split(r"[\\/]+", raw):
        if not segment or segment == ".":
            continue
        if segment == "..":
            if current == root:
                return None
            parent = posixpath.dirname(current)
            if parent == current:
                return None
            current = parent
            continue
        current = posixpath.join(current, segment)
    return posixpath.normpath(current)


def requested_prd(prd_paths: list[str], plans_dir: str, requested: str, cwd: str) -> str | None:
    """Which listed PRD a binding's ``prd_path`` names: itself, or the same path once normalised
    (relative paths are taken from the repository root, then from the plans directory)."""
    requested = js_trim(requested)
    if not requested:
        return None
    if requested in prd_paths:
        return requested
    canonical = {_abs(p, cwd): p for p in prd_paths}
    root = _abs(posixpath.dirname(posixpath.dirname(plans_dir)), cwd)
    candidates = ([_abs(requested, cwd)] if requested.startswith("/")
                  else [_within(root, requested, root), _within(_abs(plans_dir, cwd), requested, root)])
    for candidate in candidates:
        if candidate is not None and candidate in canonical:
            return canonical[candidate]
    return None


def _abs(path: str, cwd: str) -> str:
    """Node's ``path.resolve``: ``normpath`` without POSIX's special leading ``//``."""
    normal = posixpath.normpath(posixpath.join(cwd, path))
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


# ----------------------------------------------------------------------------- markdown visibility

FENCE = re.compile(r" {0,3}(?P<marker>`{3,}|~{3,})(?P<suffix>[^\r\n]*)\Z")
COMMENT_LINE = re.compile(r" {0,3}<!--")
INDENTED = re.compile(r"(?: {4,}|\t)")


def _advance_comment(depth: int, line: str) -> int:
    if depth == 0 and not COMMENT_LINE.match(line):
        return 0
    index = 0
    while index < len(line):
        opened, closed = line.find("<!--", index), line.find("-->", index)
        if opened == -1 and closed == -1:
            break
        if opened != -1 and (closed == -1 or opened < closed):
            depth += 1
            index = opened + 4
            continue
        depth = max(depth - 1, 0)
        index = closed + 3
    return depth


def _advance_fence(fence: tuple[str, int] | None, line: str) -> tuple[str, int] | None:
    match = FENCE.match(line)
    if match is None:
        return fence
    marker, suffix = match.group("marker"), match.group("suffix")
    if fence is not None:
        closes = marker[0] == fence[0] and len(marker) >= fence[1] and re.fullmatch(r"[ \t]*", suffix)
        return None if closes else fence
    return marker[0], len(marker)


def visible_chunks(content: str) -> list[str]:
    """The runs of consecutive lines outside code fences, HTML comments and indented code."""
    fence: tuple[str, int] | None = None
    depth = 0
    chunks: list[str] = []
    chunk: list[str] = []
    for line in re.split(r"\r?\n", content):
        visible = False
        if fence is not None:
            fence = _advance_fence(fence, line)
        elif depth > 0 or COMMENT_LINE.match(line):
            depth = _advance_comment(depth, line)
        elif INDENTED.match(line):
            pass
        else:
            fence = _advance_fence(None, line)
            depth = 0
            visible = fence is None
        if visible:
            chunk.append(line)
        elif chunk:
            chunks.append("\n".join(chunk))
            chunk = []
    if chunk:
        chunks.append("\n".join(chunk))
    return chunks


# ------------------------------------------------------------------------------------ launch hints


def decode_quoted(raw: str) -> str | None:
    text = js_trim(raw)
    if not text:
        return None
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1].replace('\\"', '"')
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("\\'", "'")
    return None


def normalized_command(match: re.Match[str]) -> str | None:
    """``omx team [ralph] N[:role] "task"`` as oh-my-codex compares launch commands."""
    raw, token, count = js_trim(match.group("command")), js_trim(match.group("task")), js_trim(match.group("count"))
    if not raw or not token or not count:
        return None
    prefix = "$team" if re.match(r"\$team\b", raw, re.IGNORECASE | re.ASCII) else "omx team"
    role = js_trim(match.group("role") or "")
    parts = [prefix]
    if js_trim(match.group("ralph") or ""):
        parts.append("ralph")
    parts.extend([f"{count}:{role}" if role else count, token])
    return " ".join(parts)


def _normalize_requested_command(command: str) -> str:
    exact = TEAM_HINT_EXACT_RE.match(command)
    return (normalized_command(exact) if exact else None) or command


def select_launch_line(content: str, binding: Binding) -> tuple[str, str | None, str | None]:
    """``("unique", task, command)``, ``("ambiguous", None, None)`` or ``("no-match", None, None)``:
    the binding's command when it has one, else its task, against the PRD's visible launch lines."""
    matches = [mt for chunk in visible_chunks(content) for mt in TEAM_HINT_RE.finditer(chunk)]
    found: list[tuple[str, str | None]] = []
    wanted = _normalize_requested_command(binding.command) if binding.command else None
    for mt in matches:
        task = decode_quoted(mt.group("task"))
        if not task:
            continue
        command = normalized_command(mt)
        if wanted is not None:
            if command is None or command != wanted:
                continue
        elif js_trim(task) != binding.task:
            continue
        found.append((task, command))
    if not found:
        return "no-match", None, None
    if len(found) > 1:
        return "ambiguous", None, None
    return "unique", found[0][0], found[0][1]


# -------------------------------------------------------------------------- repository context


@frozen(kw_only=True)
class Summary:
    source_path: str
    content: str
    truncated: bool


def _utf16_prefix(text: str, units: int) -> tuple[str, bool]:
    encoded = text.encode("utf-16-le", "surrogatepass")
    if len(encoded) <= units * 2:
        return text, False
    cut = encoded[: units * 2].decode("utf-16-le", "surrogatepass")
    return re.sub("[\ud800-\udfff]", "\ufffd", cut), True


def bounded_summary(source: str, content: str) -> Summary | None:
    lines = [js_trim_end(line) for line in content.replace("\r\n", "\n").split("\n")]
    if not js_trim("\n".join(lines)):
        return None
    limited_lines = lines[:SUMMARY_MAX_LINES]
    limited, cut = _utf16_prefix(js_trim("\n".join(limited_lines)), SUMMARY_MAX_CHARS)
    if cut:
        limited = js_trim_end(limited)
    return Summary(source_path=source, content=limited, truncated=len(lines) > len(limited_lines) or cut)


SUMMARY_HEADING = re.compile(rf"#{{1,6}}{_S}+Approved Repository Context Summary{_S}*\Z", re.IGNORECASE)
ANY_HEADING = re.compile(rf"(#{{1,6}}){_S}+")


def inline_summary(prd_path: str, content: str) -> Summary | None:
    """The PRD's own ``Approved Repository Context Summary`` section, up to the next heading of the
    same or a higher level."""
    lines = content.replace("\r\n", "\n").split("\n")
    index = next((i for i, line in enumerate(lines) if SUMMARY_HEADING.match(js_trim(line))), -1)
    if index < 0:
        return None
    hashes = re.match(r"#+", lines[index])
    level = len(hashes.group(0)) if hashes else 1
    body: list[str] = []
    for line in lines[index + 1:]:
        heading = ANY_HEADING.match(line)
        if heading and len(heading.group(1)) <= level:
            break
        body.append(line)
    return bounded_summary(prd_path, "\n".join(body))


# ------------------------------------------------------------------------------------ the handoff


@frozen(kw_only=True)
class Hint:
    source_path: str
    test_spec_paths: tuple[str, ...]
    task: str
    command: str | None
    source_text: str
    summary: Summary | None = None


@frozen(kw_only=True)
class Resolution:
    status: Status
    binding: Binding | None = None
    hint: Hint | None = None

    def error(self, team: str) -> str | None:
        """oh-my-codex's scale-up refusal for this state, or None when scale-up may proceed."""
        if self.status == "malformed":
            return f"approved_execution_binding_malformed:{team}"
        if self.status in ("stale", "ambiguous") and self.binding is not None:
            return f"approved_execution_binding_{self.status}:{self.binding.prd_path}:{self.binding.task}"
        return None

    def inbox_section(self) -> str | None:
        """The ``## Approved Handoff Context`` inbox section of a valid binding."""
        return None if self.hint is None else f"{HEADING}\n\n{handoff_section(self.hint)}"


GOAL_ID = re.compile(r"\bG[0-9]{3}[-\w]*", re.ASCII)


def ultragoal_hint_lines(hint: Hint) -> list[str]:
    text = "\n".join([hint.task, hint.command or "", hint.source_text])
    if not re.search(r"ultragoal|\.omx/ultragoal", text, re.IGNORECASE):
        return []
    goal = GOAL_ID.search(text)
    mode = "per_story" if re.search(r"per[- ]story", text, re.IGNORECASE) else "aggregate"
    return [
        "",
        "- Approved-plan Ultragoal hint:",
        "  - source: approved Team handoff text; leader must verify `.omx/ultragoal/goals.json` before checkpointing.",
        "  - goals_path: .omx/ultragoal/goals.json",
        "  - ledger_path: .omx/ultragoal/ledger.jsonl",
        f"  - hinted_goal_id: {goal.group(0) if goal else '<read .omx/ultragoal/goals.json first>'}",
        f"  - codex_goal_mode: {mode}",
        "  - checkpoint_policy: fresh_leader_get_goal_required",
        "  - Team workers provide task/evidence updates only; workers do not own ultragoal goal state or create "
        "worker ultragoal ledgers.",
        "  - No checkpoint command is emitted from approved-plan hints; concrete commands require verified "
        "leader-owned Ultragoal context.",
        "  - Final aggregate story requires final quality gates before update_goal, then fresh get_goal and "
        "--quality-gate-json.",
    ]


def handoff_section(hint: Hint) -> str:
    """The body of the ``## Approved Handoff Context`` section, line for line as oh-my-codex gives it."""
    lines = [f"- Approved plan: {hint.source_path}"]
    if hint.test_spec_paths:
        lines.append(f"- Test specs: {', '.join(hint.test_spec_paths)}")
    if hint.summary is not None:
        lines.append(f"- Approved repository context summary source: {hint.summary.source_path}"
                     + (" (bounded/truncated)" if hint.summary.truncated else ""))
        content = js_trim(hint.summary.content)
        if content:
            lines.extend(["", content])
    lines.extend(ultragoal_hint_lines(hint))
    lines.append(BASELINE)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ the program


@frozen(kw_only=True)
class Plans:
    plans_dir: str
    prd_paths: tuple[str, ...]
    test_spec_paths: tuple[str, ...]


def read_plans(cwd: str) -> Gen[Plans]:
    plans_dir = posixpath.join(cwd, ".omx", "plans")
    listing = yield from expect(m.ListDir(path=plans_dir), m.Listing)
    names = sorted(listing.names or (), key=artifact_sort_key)
    return Plans(plans_dir=plans_dir,
                 prd_paths=tuple(posixpath.join(plans_dir, n) for n in names if PRD_NAME.match(n)),
                 test_spec_paths=tuple(posixpath.join(plans_dir, n) for n in names if TEST_SPEC_NAME.match(n)))


def _hint_for(plans: Plans, binding: Binding, prd_path: str, cwd: str) -> Gen[Hint | Literal["ambiguous"] | None]:
    selected = requested_prd(list(plans.prd_paths), plans.plans_dir, prd_path, cwd)
    if selected is None:
        return None
    specs = matching_test_specs(selected, list(plans.test_spec_paths))
    if not specs:
        return None
    data = yield from expect(m.ReadFile(path=selected), m.FileData)
    if data.content is None:
        return None
    content = data.content
    status, task, command = select_launch_line(content, binding)
    if status == "ambiguous":
        return "ambiguous"
    if status != "unique" or task is None:
        return None
    raw_slug = PRD_RAW_SLUG.match(posixpath.basename(selected))
    slug = raw_slug.group("slug") if raw_slug else ""
    summary: Summary | None = None
    if slug:
        sidecar = posixpath.join(plans.plans_dir, f"repo-context-{slug}.md")
        side = yield from expect(m.ReadFile(path=sidecar), m.FileData)
        if side.content is not None:
            summary = bounded_summary(sidecar, side.content)
    if summary is None:
        summary = inline_summary(selected, content)
    return Hint(source_path=selected, test_spec_paths=tuple(specs), task=task, command=command,
                source_text=content, summary=summary)


def _canonical(path: str, cwd: str) -> Gen[str]:
    """oh-my-codex's comparable path: the real path of an existing file, else the normalised path."""
    absolute = _abs(path, cwd)
    kind = yield from expect(m.Stat(path=absolute), m.Value)
    if kind.value == "absent":
        return absolute
    real = yield from expect(m.RealPath(path=absolute), m.Value)
    return real.value


def resolve_binding(binding_path: str, cwd: str) -> Gen[Resolution]:
    """Read the binding at ``binding_path`` and resolve it against the plans under ``cwd``."""
    data = yield from expect(m.ReadFile(path=binding_path), m.FileData)
    parsed = parse_binding(data)
    if parsed == "missing" or parsed == "malformed":
        return Resolution(status=parsed)
    binding = parsed
    if binding.prd_path.startswith("/"):
        # An absolute PRD path that does not exist can name no listed PRD, not even through a
        # symlink: decided without listing the plans.
        kind = yield from expect(m.Stat(path=_abs(binding.prd_path, "/")), m.Value)
        if kind.value == "absent":
            return Resolution(status="stale", binding=binding)
    plans = yield from read_plans(cwd)
    hint = yield from _hint_for(plans, binding, binding.prd_path, cwd)
    if hint is None and plans.prd_paths:
        wanted = yield from _canonical(binding.prd_path, cwd)
        for candidate in plans.prd_paths:
            if (yield from _canonical(candidate, cwd)) == wanted:
                if candidate != binding.prd_path:
                    hint = yield from _hint_for(plans, binding, candidate, cwd)
                break
    if hint == "ambiguous":
        return Resolution(status="ambiguous", binding=binding)
    if hint is None:
        return Resolution(status="stale", binding=binding)
    assert isinstance(hint, Hint)
    return Resolution(status="valid", binding=binding, hint=hint)
