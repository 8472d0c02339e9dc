// Run oh-my-codex 0.20.3 scaleUp (or a public read) against a prepared cwd; print the result as JSON.
// Oracle generation only: the test suite never runs this.
const [, , distDir, callJson] = process.argv;
const call = JSON.parse(callJson);
const scaling = await import(`${distDir}/team/scaling.js`);
const state = await import(`${distDir}/team/state.js`);
let result;
try {
  if (call.fn === 'scaleUp') {
    result = await scaling.scaleUp(call.team, call.count, call.agentType, call.tasks, call.cwd, call.env);
  } else if (call.fn === 'read') {
    await state.readTeamConfig(call.team, call.cwd);
    result = { ok: true };
  }
} catch (error) {
  result = { thrown: String(error && error.message ? error.message : error) };
}
process.stdout.write(JSON.stringify(result) + '\n');
