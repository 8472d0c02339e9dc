// Run one oh-my-codex call against a prepared cwd; print its result as JSON (oracle generation only).
const [, , distDir, callJson] = process.argv;
const call = JSON.parse(callJson);
const scaling = await import(`${distDir}/team/scaling.js`);
const state = await import(`${distDir}/team/state.js`);
let result;
try {
  if (call.fn === 'scaleDown') {
    result = await scaling.scaleDown(call.team, call.cwd, call.options, call.env);
  } else if (call.fn === 'reconcile') {
    result = await scaling.reconcileScaleDownCleanupDebt(call.team, call.cwd, null);
  } else if (call.fn === 'createTask') {
    result = { ok: true, task: await state.createTask(call.team, call.task, call.cwd) };
  } else if (call.fn === 'claimTask') {
    result = await state.claimTask(call.team, call.taskId, call.worker, call.expectedVersion, call.cwd);
  } else if (call.fn === 'read') {
    await state.readTeamConfig(call.team, call.cwd);
    result = { ok: true };
  }
} catch (error) {
  result = { thrown: String(error) };
}
process.stdout.write(JSON.stringify(result) + '\n');
