// Dumps oh-my-codex's agent table (dist/agents/definitions.js) for tests/goldens/omx/agents.json.
const { getAgentNames, getAgent } = await import(process.env.OMX_DIST + '/agents/definitions.js');
const agents = {};
for (const name of getAgentNames()) {
  const a = getAgent(name);
  agents[name] = { reasoning_effort: a.reasoningEffort, tools: a.tools, model_class: a.modelClass, exact_model: a.exactModel ?? null };
}
process.stdout.write(JSON.stringify({
  format_version: '1.0',
  kind: 'function',
  function: 'getAgent(name) for every name in getAgentNames()',
  comment: 'oh-my-codex 0.20.3 dist/agents/definitions.js, dumped by tests/omx/oracles/agents_oracle.mjs (OMX_DIST=<package>/dist node agents_oracle.mjs)',
  agents,
}, null, 2));
