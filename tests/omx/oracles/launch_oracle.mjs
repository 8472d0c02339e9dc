// Oracle for tests/goldens/omx/launch.json: runs oh-my-codex 0.20.3's own launch-policy functions.
// Reads a JSON array of cases on stdin (see gen_launch.py), prints one result per case.
// Stage 1 composes the exported model-contract/tmux-session functions exactly as
// dist/team/scaling.js buildScaleUpWorkerLaunchPlans does; stage 2 calls the real
// writeWorkerStartupScriptCommand, then executes the written script with fake CLIs on PATH that
// print their argv.
import { mkdirSync, writeFileSync, readFileSync, rmSync, chmodSync } from 'fs';
import { execFileSync } from 'child_process';
import { join } from 'path';
const D = process.env.OMX_DIST;
const mc = await import(D + '/team/model-contract.js');
const ts = await import(D + '/team/tmux-session.js');
const { resolveCodexHomeForLaunch } = await import(D + '/cli/codex-home.js');

function runtimeRoleFor(workerName, tasks, agentType) {
  const roles = tasks.filter((t) => t.owner === workerName).map((t) => t.role).filter((r) => Boolean(r));
  const unique = new Set(roles);
  return roles.length > 0 && unique.size === 1 ? roles[0] : agentType;
}

function stage1(c, env) {
  const codexHomeOverride = resolveCodexHomeForLaunch(c.leader_cwd, env);
  const launchEnv = codexHomeOverride ? { ...env, CODEX_HOME: codexHomeOverride } : env;
  const tasks = [...c.existing_tasks, ...c.incoming_tasks];
  const plans = [];
  for (let offset = 0; offset < c.count; offset += 1) {
    const workerIndex = c.next_worker_index + offset;
    const workerName = `worker-${workerIndex}`;
    const role = runtimeRoleFor(workerName, tasks, c.agent_type ?? undefined);
    const preferredReasoning = mc.resolveAgentReasoningEffort(role, codexHomeOverride)
      ?? mc.resolveAgentReasoningEffort(c.agent_type ?? undefined, codexHomeOverride);
    const inheritedRaw = launchEnv.OMX_TEAM_WORKER_INHERITED_MODEL;
    const inherited = typeof inheritedRaw === 'string' ? inheritedRaw.trim() : undefined;
    const args = mc.resolveTeamWorkerLaunchArgs({
      existingRaw: launchEnv.OMX_TEAM_WORKER_LAUNCH_ARGS,
      inheritedArgs: inherited ? ['--model', inherited] : [],
      fallbackModel: mc.resolveAgentDefaultModel(role, codexHomeOverride ?? launchEnv.CODEX_HOME),
      preferredReasoning,
      honorExactRoleModel: mc.shouldHonorAgentExactModel(role, codexHomeOverride),
    });
    const cli = ts.resolveTeamWorkerCliForResolvedLaunchArgs(offset + 1, c.count, args, launchEnv);
    ts.assertTeamWorkerCliPolicyCompatibility(cli, args);
    plans.push({ worker_index: workerIndex, worker_name: workerName, role: role ?? null, launch_args: args, worker_cli: cli });
  }
  return { plans, codexHomeOverride };
}

let buf = '';
process.stdin.on('data', (d) => (buf += d));
process.stdin.on('end', () => {
  const cases = JSON.parse(buf);
  const savedArgv = process.argv;
  const out = cases.map((c) => {
    rmSync(c.root, { recursive: true, force: true });
    mkdirSync(c.worker_cwd, { recursive: true });
    mkdirSync(c.leader_cwd, { recursive: true });
    mkdirSync(join(c.root, 'bin'), { recursive: true });
    for (const cli of ['codex', 'claude', 'gemini']) {
      const p = join(c.root, 'bin', cli);
      writeFileSync(p, `#!${process.execPath}\nprocess.stdout.write(JSON.stringify(process.argv.slice(2)));\n`);
      chmodSync(p, 0o755);
    }
    if (c.setup_scope_json !== null) {
      mkdirSync(join(c.leader_cwd, '.omx'), { recursive: true });
      writeFileSync(join(c.leader_cwd, '.omx', 'setup-scope.json'), c.setup_scope_json);
    }
    mkdirSync(c.codex_home_dir, { recursive: true });
    if (c.omx_config_json !== null) writeFileSync(join(c.codex_home_dir, '.omx-config.json'), c.omx_config_json);
    if (c.config_toml !== null) writeFileSync(join(c.codex_home_dir, 'config.toml'), c.config_toml);
    for (const k of Object.keys(process.env)) delete process.env[k];
    Object.assign(process.env, c.process_env);
    process.argv = c.process_argv;
    const result = {};
    try {
      const { plans, codexHomeOverride } = stage1(c, c.env);
      result.plans = plans;
      const plan = plans[c.position];
      // scaling.js order: state root, leader cwd, instructions file, CODEX_HOME override, worktree vars.
      const extraEnv = {};
      for (const [k, v] of c.extra_env) {
        extraEnv[k] = v;
        if (k === 'OMX_MODEL_INSTRUCTIONS_FILE' && codexHomeOverride) extraEnv.CODEX_HOME = codexHomeOverride;
      }
      result.extra_env = Object.entries(extraEnv);
      try {
        const spec = ts.buildWorkerProcessLaunchSpec(c.team_name, plan.worker_index, plan.launch_args, c.worker_cwd, extraEnv, plan.worker_cli, undefined, plan.role ?? undefined);
        result.spec = { command: spec.command, args: spec.args, env: Object.entries(spec.env) };
        const cmd = ts.writeWorkerStartupScriptCommand(c.team_name, plan.worker_index, plan.launch_args, c.worker_cwd, extraEnv, plan.worker_cli, undefined, plan.role ?? undefined);
        const scriptPath = join(extraEnv.OMX_TEAM_STATE_ROOT, 'team', c.team_name, 'runtime', `worker-${plan.worker_index}-startup.sh`);
        result.startup_command = cmd;
        result.script = readFileSync(scriptPath, 'utf-8');
        result.executed_argv = JSON.parse(execFileSync('/bin/sh', [scriptPath], { encoding: 'utf-8', env: { PATH: '/usr/bin:/bin', HOME: c.root } }));
      } catch (e) {
        result.build_error = e.message;
      }
    } catch (e) {
      result.error = e.message;
    } finally {
      process.argv = savedArgv;
    }
    return result;
  });
  process.stdout.write(JSON.stringify(out));
});
