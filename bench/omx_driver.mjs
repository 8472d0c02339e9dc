// Benchmark driver (bench/vs_oh_my_codex.py): one oh-my-codex 0.20.3 scaleUp or scaleDown per node process.
//   node bench/omx_driver.mjs <package-dir> up <team> <cwd> <count>
//   node bench/omx_driver.mjs <package-dir> down <team> <cwd> <worker> [<worker> ...]
// oh-my-codex runs with this process's environment (its tmux calls, PATH, OMX_* switches); the result
// object is printed as one JSON line on stdout. Not part of panefleet: only the benchmark runs it.
const [, , packageDir, op, team, cwd, ...rest] = process.argv;
const scaling = await import(`${packageDir}/dist/team/scaling.js`);
let result;
try {
  if (op === 'up') {
    result = await scaling.scaleUp(team, Number(rest[0]), 'executor', [], cwd, process.env);
  } else if (op === 'down') {
    result = await scaling.scaleDown(team, cwd, { workerNames: rest, force: true }, process.env);
  } else {
    result = { thrown: `unknown operation ${op}` };
  }
} catch (error) {
  result = { thrown: String(error && error.message ? error.message : error) };
}
process.stdout.write(JSON.stringify(result) + '\n');
