// .ci/conformance-summary.mjs: compact, CI-readable summary of one MCP
// conformance run, read from the checks.json files the suite writes with -o.
// Called by .ci/conformance.sh (run with the Node 22 from .tools/node22):
//
//   node conformance-summary.mjs LABEL RESULTS_DIR RUN_LIST ALL_LIST BASELINE SUITE_DIR
//
//   LABEL           e.g. conformance-0.1.16 (starts the closing line)
//   RESULTS_DIR     the suite's -o directory: server-<scenario>-<ISO ts>/checks.json
//   RUN_LIST        one scenario name per line: what this run should have produced
//   ALL_LIST        every server scenario of this suite version (`list --server`)
//   BASELINE        the --expected-failures YAML given to the suite
//   SUITE_DIR       the installed package dir, to borrow its `yaml` parser
//
// Why not trust the suite's own summary: its "Total: N passed, N failed" counts
// checks, ignores WARNINGs (which fail a scenario in --expected-failures mode),
// and a scenario that crashed writes no checks.json at all. Here a scenario is
// "passed" only if it has results with no FAILURE and no WARNING check, the same
// rule the suite's baseline mode applies.
//
// It also judges every scenario itself, where the suite may not: with
// --requirements the suite's exit status counts only the scenarios the
// revision scores, and runs the others (pending, extension, added after the
// release) for show. Here a failure is a failure whichever list it is on.
//
// Exit: 0 when every scenario of RUN_LIST passed or failed as the baseline
// expects; 1 when a scenario failed outside the baseline, or a baseline entry
// now passes (stale); 2 when something the suite itself does not catch is
// wrong (a scenario without results, a baseline entry naming a scenario that
// does not exist: the suite silently ignores those, so a typo would hide a
// regression). The suite's own exit code is handled by the caller too.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const [label, resultsDir, runList, allList, baselinePath, suiteDir] = process.argv.slice(2);
if (!suiteDir) {
  console.error('usage: conformance-summary.mjs LABEL RESULTS_DIR RUN_LIST ALL_LIST BASELINE SUITE_DIR');
  process.exit(2);
}

const readList = (f) => readFileSync(f, 'utf8').split('\n').map((s) => s.trim()).filter(Boolean);
const wanted = readList(runList);
const known = new Set(readList(allList));
let problems = 0;

// Baseline entries: "<scenario>" (both versions) or "<scenario>:<check-id>"
// (alpha only). Parsed with the suite's own yaml dependency so we read the
// file exactly as it does.
const baseline = { scenarios: new Set(), checks: new Set() };
try {
  const yaml = createRequire(join(suiteDir, 'package.json'))('yaml');
  const doc = yaml.parse(readFileSync(baselinePath, 'utf8')) ?? {};
  for (const entry of doc.server ?? []) {
    if (typeof entry !== 'string') {
      // e.g. `- scenario: check` parses as a mapping; the suite rejects it too.
      console.log(`BASELINE ERROR ${baselinePath}: entry ${JSON.stringify(entry)} is not a plain string (write 'scenario' or 'scenario:check-id', no space after the colon)`);
      problems++;
      continue;
    }
    const s = entry;
    const i = s.indexOf(':');
    if (i === -1) baseline.scenarios.add(s);
    else baseline.checks.add(s);
    const scen = i === -1 ? s : s.slice(0, i);
    if (!known.has(scen)) {
      console.log(`BASELINE ERROR ${baselinePath}: '${s}' names no scenario of this suite (typo?); the suite would ignore it`);
      problems++;
    }
  }
} catch (e) {
  // The suite also rejects a bad file (and exits 1); say why here too.
  console.log(`BASELINE ERROR ${baselinePath}: ${e.message}`);
  problems++;
}

// Newest result directory per scenario (there is one per scenario per run;
// the caller empties RESULTS_DIR first, this only guards against leftovers).
const dirs = existsSync(resultsDir) ? readdirSync(resultsDir).sort() : [];
const results = new Map();
for (const d of dirs) {
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(d);
  const f = join(resultsDir, d, 'checks.json');
  if (m && existsSync(f)) results.set(m[1], f);
}

let passed = 0;
let failed = 0;
let expected = 0;
let stale = 0;
const lines = [];
for (const scen of wanted) {
  const f = results.get(scen);
  if (!f) {
    failed++;
    problems++;
    lines.push(`FAILURE ${scen}: no checks.json (the scenario crashed or never ran; see the suite log)`);
    continue;
  }
  let checks;
  try {
    checks = JSON.parse(readFileSync(f, 'utf8'));
  } catch (e) {
    failed++;
    problems++;
    lines.push(`FAILURE ${scen}: unreadable ${f}: ${e.message}`);
    continue;
  }
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  // Stale entries: the scenario passed, or a named check ran and never failed.
  for (const entry of baseline.checks) {
    if (!entry.startsWith(`${scen}:`)) continue;
    const id = entry.slice(scen.length + 1);
    const runs = checks.filter((c) => c.id === id);
    if (runs.length > 0 && runs.every((c) => c.status !== 'FAILURE' && c.status !== 'WARNING')) {
      stale++;
      lines.push(`STALE ${entry}: the check passes now; remove it from ${baselinePath.replace(/^.*\/(\.ci\/)/, '$1')}`);
    }
  }
  if (bad.length === 0) {
    passed++;
    if (baseline.scenarios.has(scen)) {
      stale++;
      lines.push(`STALE ${scen}: the scenario passes now; remove it from ${baselinePath.replace(/^.*\/(\.ci\/)/, '$1')}`);
    }
    continue;
  }
  failed++;
  const isExpected =
    baseline.scenarios.has(scen) || bad.every((c) => baseline.checks.has(`${scen}:${c.id}`));
  if (isExpected) expected++;
  for (const c of bad) {
    const msg = c.errorMessage || c.description || '';
    const tag = isExpected ? ' (expected: in baseline)' : '';
    lines.push(`${c.status} ${scen} [${c.id}]${tag}: ${msg}`.replace(/\s+/g, ' ').trim());
  }
}

for (const l of lines) console.log(l);
console.log(
  `scenarios: ${passed} passed, ${failed} failed (${expected} of them expected by ${baselinePath.replace(/^.*\/(\.ci\/)/, '$1')})`,
);
// Closing line in the plain 'N passed, N failed' shape, one word before the colon.
console.log(`${label}: ${passed} passed, ${failed} failed`);
process.exit(problems > 0 ? 2 : failed - expected > 0 || stale > 0 ? 1 : 0);
