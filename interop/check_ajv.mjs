// Validates the interop documents in Node with Ajv2020 (strict mode, ajv-formats) against the
// committed schemas, and reads every valid one with the TypeScript reader (ts/read.ts, compiled
// to ts-out/read.js by tsc).
//
// Checks, each counted as one test:
// * every schema under SCHEMAS/v2 and SCHEMAS/legacy compiles;
// * every valid PlanRunV2 document is valid against v2/PlanRunV2.schema.json, and each of its
//   parts against its own schema (PlanV2, StepV2, EndUser, Config, StepOutputValue,
//   Clarification, Output);
// * every generated RunContext descriptor is valid against v2/RunContext.schema.json;
// * every rejected document (the Rust side rejects it) is invalid;
// * the TypeScript reader reads every valid document and describes it.
//
// Usage: node check_ajv.mjs SCHEMAS_DIR DOCS_DIR
// Prints one line per failure and ends with `ajv: N passed, M failed`; exits 1 on a failure.

import fs from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { describe, makeReader } from "./ts-out/read.js";

const [schemasDir, docsDir] = process.argv.slice(2);
if (!schemasDir || !docsDir) {
  console.error("usage: node check_ajv.mjs SCHEMAS_DIR DOCS_DIR");
  process.exit(2);
}

let passed = 0;
let failed = 0;
function result(ok, what, why = "") {
  if (ok) {
    passed += 1;
  } else {
    failed += 1;
    console.log(`FAIL ${what}${why ? ": " + why : ""}`);
  }
}

const jsonFiles = (dir) =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort().map((f) => path.join(dir, f))
    : [];
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));

// Strict mode, but for strictRequired (off by default): the legacy schemas forbid a key with
// `not: {required: [key]}`, whose key is deliberately not among the properties.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
formats.default(ajv);
const validators = {};
for (const sub of ["v2", "legacy"]) {
  for (const file of jsonFiles(path.join(schemasDir, sub)).filter((f) => f.endsWith(".schema.json"))) {
    const name = `${sub}/${path.basename(file)}`;
    try {
      validators[name] = ajv.compile(readJson(file));
      result(true, `compile ${name}`);
    } catch (e) {
      result(false, `compile ${name}`, e.message);
    }
  }
}
const v2 = (type) => validators[`v2/${type}.schema.json`];
for (const type of ["PlanRunV2", "PlanV2", "StepV2", "EndUser", "Config", "StepOutputValue", "Clarification", "Output", "RunContext"]) {
  if (!v2(type)) {
    result(false, `schema v2/${type}.schema.json`, "missing or does not compile");
  }
}

function check(type, what, value) {
  const validate = v2(type);
  if (!validate) return;
  const ok = validate(value);
  result(ok, `${type} ${what}`, ok ? "" : ajv.errorsText(validate.errors).slice(0, 600));
}

function parts(doc) {
  const out = [
    ["PlanV2", "/plan", doc.plan],
    ["EndUser", "/end_user", doc.end_user],
    ["Config", "/config", doc.config],
  ];
  doc.plan.steps.forEach((s, i) => out.push(["StepV2", `/plan/steps/${i}`, s]));
  doc.step_output_values.forEach((v, i) => out.push(["StepOutputValue", `/step_output_values/${i}`, v]));
  doc.clarifications.forEach((c, i) => out.push(["Clarification", `/clarifications/${i}`, c]));
  if (doc.final_output !== null) out.push(["Output", "/final_output", doc.final_output]);
  return out;
}

const valid = jsonFiles(path.join(docsDir, "valid"));
const contexts = jsonFiles(path.join(docsDir, "run_context"));
const casesFile = path.join(docsDir, "rejected", "cases.json");
const cases = fs.existsSync(casesFile) ? readJson(casesFile) : [];
if (valid.length === 0 || contexts.length === 0 || cases.length === 0) {
  result(false, `documents under ${docsDir}`, "none found");
}

for (const file of valid) {
  const doc = readJson(file);
  const name = path.basename(file);
  check("PlanRunV2", name, doc);
  for (const [type, where, value] of parts(doc)) {
    check(type, `${name}#${where}`, value);
  }
}
for (const file of contexts) {
  check("RunContext", path.basename(file), readJson(file));
}
for (const c of cases) {
  const validate = v2("PlanRunV2");
  if (!validate) break;
  const ok = !validate(readJson(path.join(docsDir, "rejected", `${c.name}.json`)));
  result(ok, `rejected/${c.name}.json (${c.category})`, ok ? "" : "Ajv accepts it");
}

const planRunSchema = path.join(schemasDir, "v2", "PlanRunV2.schema.json");
const read = makeReader(readJson(planRunSchema));
for (const file of valid) {
  const what = `TypeScript reader ${path.basename(file)}`;
  try {
    const lines = describe(read(fs.readFileSync(file, "utf8")));
    result(lines.length >= 3, what, `described in ${lines.length} lines`);
  } catch (e) {
    result(false, what, e.message.slice(0, 600));
  }
}

console.log(
  `validated ${valid.length} PlanRunV2 documents, ${contexts.length} RunContext descriptors, ${cases.length} rejected documents`,
);
console.log(`ajv: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
