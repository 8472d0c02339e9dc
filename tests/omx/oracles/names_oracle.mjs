// reads JSON ["name", ...] on stdin; prints oh-my-codex 0.20.3's verdicts for each
const { sanitizeTeamName } = await import(process.env.OMX_DIST + '/team/tmux-session.js');
const c = await import(process.env.OMX_DIST + '/team/contracts.js');
let buf = ''; process.stdin.on('data', (d) => buf += d); process.stdin.on('end', () => {
  const out = JSON.parse(buf).map((name) => {
    let sanitized;
    try { sanitized = { ok: sanitizeTeamName(name) }; } catch (e) { sanitized = { error: e.message }; }
    return {
      sanitized,
      team_ok: c.TEAM_NAME_SAFE_PATTERN.test(name),
      worker_ok: c.WORKER_NAME_SAFE_PATTERN.test(name),
      task_id_ok: c.TASK_ID_SAFE_PATTERN.test(name),
    };
  });
  process.stdout.write(JSON.stringify(out));
});
