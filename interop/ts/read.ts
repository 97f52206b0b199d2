// Reads a PlanRunV2 through the types json2ts generates from schemas/v2/PlanRunV2.schema.json
// (`planrun schema export --lang typescript --out interop/ts/gen`), validating it with Ajv2020
// first. Every switch over a tagged union is exhaustive (`assertNever`), so a variant, tag or
// field the Rust types have and the schema lost (or the other way round) fails `tsc --noEmit`.

import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type {
  ArgValue,
  Clarification,
  Output,
  PlanRunV2,
  PlanV2,
  StepV2,
} from "./gen/v2/PlanRunV2.js";

function assertNever(value: never, what: string): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}

/** Returns a reader that parses JSON text into a validated PlanRunV2 (throws on a violation). */
export function makeReader(schema: object): (text: string) => PlanRunV2 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  formats.default(ajv);
  const validate = ajv.compile<PlanRunV2>(schema);
  return (text: string): PlanRunV2 => {
    const doc: unknown = JSON.parse(text);
    if (!validate(doc)) {
      throw new Error(`not a PlanRunV2: ${ajv.errorsText(validate.errors)}`);
    }
    return doc;
  };
}

function describeArg(arg: ArgValue): string {
  switch (arg.kind) {
    case "literal":
      return `literal ${JSON.stringify(arg.value)}`;
    case "input":
      return `input ${arg.name}${arg.path === null ? "" : "." + arg.path}`;
    case "step_output": {
      const step = arg.step;
      switch (step.by) {
        case "index":
          return `output of step #${step.index}${arg.full ? " (all)" : ""}`;
        case "name":
          return `output of step ${step.name}${arg.full ? " (all)" : ""}`;
        default:
          return assertNever(step, "step reference");
      }
    }
    default:
      return assertNever(arg, "argument");
  }
}

function describeArgs(args: { [name: string]: ArgValue }): string {
  return Object.entries(args)
    .map(([name, arg]) => `${name}=${describeArg(arg)}`)
    .join(", ");
}

function describeStep(step: StepV2): string {
  const where = step.loop_block === null ? "" : ` in loop@${step.loop_block.start_step_index}`;
  const head = `${step.step_name}${where}`;
  switch (step.type) {
    case "invoke_tool":
      return `${head}: call ${step.tool}(${describeArgs(step.args)})`;
    case "llm":
      return `${head}: llm ${step.model ?? "default"} "${step.task}" [${step.inputs.map(describeArg).join(", ")}]`;
    case "single_tool_agent":
      return `${head}: agent with ${step.tool} "${step.task}"`;
    case "react_agent":
      return `${head}: react agent with ${step.tools.join("/")} (≤${step.tool_call_limit} calls, clarifications ${step.allow_agent_clarifications})`;
    case "conditional":
      return `${head}: ${step.block_clause_type} #${step.clause_index_in_block} if ${step.condition}`;
    case "loop":
      return `${head}: ${step.loop_type} ${step.loop_step_type} #${step.index}${step.over === null ? "" : " over " + describeArg(step.over)}`;
    case "user_input":
      return `${head}: ask "${step.message}"${step.options === null ? "" : ` (${step.options.length} options)`}`;
    case "user_verify":
      return `${head}: verify "${step.message}"`;
    case "exit":
      return `${head}: exit${step.error ? " with error" : ""} "${step.message}"`;
    case "sub_plan":
      return `${head}: sub-plan {${describePlan(step.plan)}}`;
    case "legacy":
      return `${head}: legacy "${step.task}" -> ${step.output}${step.tool_id === null ? "" : " via " + step.tool_id}`;
    default:
      return assertNever(step, "step");
  }
}

function describePlan(plan: PlanV2): string {
  return `${plan.id} "${plan.label}": ${plan.steps.map(describeStep).join("; ")}`;
}

function describeOutput(output: Output): string {
  switch (output.kind) {
    case "local":
      return `value ${JSON.stringify(output.value)}${output.summary === null ? "" : ` (summary: ${output.summary})`}`;
    case "agent_memory":
      return `${output.output_name} in the agent memory of ${output.plan_run_id}`;
    default:
      return assertNever(output, "output");
  }
}

function describeClarification(clarification: Clarification): string {
  const state = clarification.resolved ? "resolved" : "open";
  switch (clarification.category) {
    case "Argument":
    case "Action":
    case "Input":
    case "Value Confirmation":
    case "User Verification":
      return `${clarification.category} (${state}): ${clarification.user_guidance}`;
    case "Multiple Choice":
      return `Multiple Choice (${state}): ${clarification.user_guidance}`;
    case "Custom":
      return `Custom (${state}): ${clarification.user_guidance}`;
    default:
      return assertNever(clarification, "clarification");
  }
}

/** One line per part of the run: what a TypeScript consumer would show. */
export function describe(run: PlanRunV2): string[] {
  const lines: string[] = [];
  switch (run.state) {
    case "NOT_STARTED":
    case "IN_PROGRESS":
    case "NEED_CLARIFICATION":
    case "READY_TO_RESUME":
    case "COMPLETE":
    case "FAILED":
      lines.push(`${run.id} ${run.state} at step ${run.current_step_index} for ${run.end_user.external_id}`);
      break;
    default:
      return assertNever(run.state, "state");
  }
  lines.push(`plan ${describePlan(run.plan)}`);
  for (const value of run.step_output_values) {
    const step = value.step_name ?? "(no step)";
    const output: Output = value.output;
    lines.push(`output ${value.output_name} of ${step}: ${describeOutput(output)}`);
  }
  if (run.final_output !== null) {
    lines.push(`final ${describeOutput(run.final_output)}`);
  }
  for (const [name, input] of Object.entries(run.plan_run_inputs)) {
    lines.push(`input ${name} = ${JSON.stringify(input.value)}`);
  }
  for (const clarification of run.clarifications) {
    lines.push(`clarification ${describeClarification(clarification)}`);
  }
  lines.push(`config storage ${run.config.storage_class}, provider ${run.config.llm_provider ?? "none"}`);
  if (run.legacy !== undefined && run.legacy !== null) {
    lines.push(`legacy from ${run.legacy.source_version}: ${Object.keys(run.legacy.entries).length} entries`);
  }
  return lines;
}
