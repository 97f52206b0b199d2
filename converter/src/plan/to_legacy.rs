//! `PlanV2` → legacy `Plan`: each step written as the SDK's `to_legacy_step` of its class writes
//! it, then the residue put back.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::Value;

use planrun_legacy::{
    Plan, PlanContext, PlanId, PlanInput as LegacyPlanInput, PlanInputV032, PrefixedId, Step,
    Variable,
};
use planrun_v2::{ArgValue, ConditionalBlock, PlanV2, StepRef, StepV2};
use planrun_wire::json::unescape_pointer_token;

use super::{absent, renamed_to_plan_inputs, uuid5, LLM_TOOL_ID};

/// What a for-each loop's clause says: the SDK renders its `None` condition as a callable's name.
pub(super) const NO_LOOP_CONDITION: &str = "If result of None is true";

/// Writes a V2 plan as the SDK's own `PlanV2.to_legacy_plan` does, then re-applies the `/plan/…`
/// residue entries (see [`PlanConversion`](super::PlanConversion)); entries outside `/plan/` are
/// ignored, so a run's whole residue can be passed in.
///
/// Step N is written with output `$step_N_output`; tasks are `Use tool X with args: k=$ref, …`,
/// `Conditional clause: …`, `Loop clause: …`, `User verification: …`,
/// `User input (Multiple choice|Text input): …`, `Exit plan: …` / `Exit plan with error: …`,
/// `Run sub-plan: <label>`, or the step's own task; tool ids are the tool, `llm_tool`, or the
/// ReAct tools comma-joined; inputs are one variable per reference (`$step_K_output` for a step
/// output, the bare name for a plan input, description `""`); the condition is derived from the
/// enclosing conditional blocks (`If $step_2_output is true and $step_0_output is false`).
/// `plan_context` is `{query: label, tool_ids}` (the label being the legacy query) and the plan
/// inputs are copied. Three deliberate deviations from the SDK:
/// * the step position is the step's index, where the SDK looks the step up by `step_name`
///   (the same index unless two steps share a name);
/// * a `StepOutput` naming no step becomes `$unknown_step_output_<hex>` with a hex derived from
///   the name (the SDK uses a random uuid4 hex);
/// * `UserInput.options: []` writes `Multiple choice` (the SDK treats `[]` like `null`): in this
///   format `[]` is what a recognised multiple-choice step gets, its choices not being in the
///   legacy plan.
pub fn plan_to_legacy(plan: &PlanV2, residue: &IndexMap<String, Value>) -> Plan {
    let mut legacy = Plan {
        id: PrefixedId::parse(&plan.id, PlanId::PREFIXES)
            .ok()
            .map(PlanId),
        plan_context: PlanContext {
            query: plan.label.clone(),
            tool_ids: plan.tool_ids.clone(),
        },
        steps: legacy_steps(plan),
        inputs: None,
        plan_inputs: Some(
            plan.plan_inputs
                .iter()
                .map(|input| LegacyPlanInput {
                    name: input.name.clone(),
                    description: input.description.clone(),
                    value: input.value.clone(),
                })
                .collect(),
        ),
    };
    for (key, value) in residue {
        if let Some(rest) = key.strip_prefix("/plan/") {
            let tokens: Vec<Cow<str>> = rest.split('/').map(unescape_pointer_token).collect();
            restore(&mut legacy, plan, &tokens, value);
        }
    }
    legacy
}

/// Applies one residue entry; entries that do not fit the plan (an index out of range, a list
/// that is not a v0.3.2 input list) are skipped.
fn restore(legacy: &mut Plan, plan: &PlanV2, tokens: &[Cow<str>], value: &Value) {
    let tokens: Vec<&str> = tokens.iter().map(AsRef::as_ref).collect();
    match tokens.as_slice() {
        ["id"] if *value == absent() => legacy.id = None,
        ["plan_inputs"] if *value == absent() => legacy.plan_inputs = None,
        ["inputs"] if *value == renamed_to_plan_inputs() => {
            legacy.inputs = Some(
                plan.plan_inputs
                    .iter()
                    .map(|input| PlanInputV032 {
                        name: input.name.clone(),
                        description: input.description.clone().unwrap_or_default(),
                    })
                    .collect(),
            );
            legacy.plan_inputs = None;
        }
        ["inputs"] => {
            if let Ok(inputs) = serde_json::from_value(value.clone()) {
                legacy.inputs = Some(inputs);
            }
        }
        ["steps", i, "condition"] if *value == absent() => {
            if let Some(step) = step_at(legacy, i) {
                step.condition = None;
            }
        }
        ["steps", i, "inputs", j, "value"] => {
            let variable = step_at(legacy, i)
                .and_then(|step| j.parse::<usize>().ok().and_then(|j| step.inputs.get_mut(j)));
            if let Some(variable) = variable {
                variable.value = Some(value.clone());
            }
        }
        ["steps", i, key] if !DECLARED_STEP_KEYS.contains(key) => {
            if let Some(step) = step_at(legacy, i) {
                step.extra.insert((*key).to_owned(), value.clone());
            }
        }
        _ => {}
    }
}

/// The keys of a legacy step the SDK declares (never extras).
const DECLARED_STEP_KEYS: [&str; 6] = [
    "task",
    "inputs",
    "tool_id",
    "output",
    "condition",
    "structured_output_schema",
];

fn step_at<'a>(legacy: &'a mut Plan, index: &str) -> Option<&'a mut Step> {
    index
        .parse::<usize>()
        .ok()
        .and_then(|i| legacy.steps.get_mut(i))
}

/// Every step of `plan` as `to_legacy_plan` writes it, before any residue.
pub(super) fn legacy_steps(plan: &PlanV2) -> Vec<Step> {
    plan.steps
        .iter()
        .enumerate()
        .map(|(i, step)| legacy_step(plan, i, step))
        .collect()
}

fn legacy_step(plan: &PlanV2, index: usize, step: &StepV2) -> Step {
    if let StepV2::Legacy {
        task,
        inputs,
        tool_id,
        output,
        condition,
        ..
    } = step
    {
        return Step {
            task: task.clone(),
            inputs: inputs
                .iter()
                .map(|v| Variable {
                    name: v.name.clone(),
                    value: None,
                    description: v.description.clone(),
                })
                .collect(),
            tool_id: tool_id.clone(),
            output: output.clone(),
            condition: Some(condition.clone()),
            extra: IndexMap::new(),
        };
    }
    let steps = &plan.steps;
    let (task, inputs) = match step {
        StepV2::InvokeTool { tool, args, .. } => {
            let shown: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{k}={}", display_arg(steps, v)))
                .collect();
            (
                format!("Use tool {tool} with args: {}", shown.join(", ")),
                variables(steps, args.values()),
            )
        }
        StepV2::Llm { task, inputs, .. }
        | StepV2::SingleToolAgent { task, inputs, .. }
        | StepV2::ReactAgent { task, inputs, .. } => (task.clone(), variables(steps, inputs)),
        StepV2::Conditional {
            condition, args, ..
        } => (
            format!("Conditional clause: {condition}"),
            variables(steps, args.values()),
        ),
        StepV2::Loop {
            condition, args, ..
        } => (
            format!(
                "Loop clause: {}",
                condition.as_deref().unwrap_or(NO_LOOP_CONDITION)
            ),
            variables(steps, args.values()),
        ),
        StepV2::UserInput {
            message, options, ..
        } => {
            let kind = if options.is_some() {
                "Multiple choice"
            } else {
                "Text input"
            };
            (format!("User input ({kind}): {message}"), Vec::new())
        }
        StepV2::UserVerify { message, .. } => (format!("User verification: {message}"), Vec::new()),
        StepV2::Exit { message, error, .. } => {
            let task = if *error {
                format!("Exit plan with error: {message}")
            } else {
                format!("Exit plan: {message}")
            };
            (task, Vec::new())
        }
        StepV2::SubPlan { plan: sub, .. } => (
            format!("Run sub-plan: {}", sub.label),
            sub.plan_inputs
                .iter()
                .map(|input| variable(input.name.clone()))
                .collect(),
        ),
        StepV2::Legacy { .. } => unreachable!("legacy steps are written verbatim above"),
    };
    Step {
        task,
        inputs,
        tool_id: legacy_tool_id(step),
        output: positional_output(index),
        condition: Some(legacy_condition(step.conditional_block(), index as i64)),
        extra: IndexMap::new(),
    }
}

/// The `tool_id` the SDK writes for a step.
fn legacy_tool_id(step: &StepV2) -> Option<String> {
    match step {
        StepV2::InvokeTool { tool, .. } | StepV2::SingleToolAgent { tool, .. } => {
            Some(tool.clone())
        }
        StepV2::Llm { .. } => Some(LLM_TOOL_ID.to_owned()),
        StepV2::ReactAgent { tools, .. } => Some(tools.join(",")),
        StepV2::SubPlan { plan, .. } => Some(
            plan.steps
                .iter()
                .filter_map(legacy_tool_id)
                .collect::<Vec<_>>()
                .join(","),
        ),
        StepV2::Legacy { tool_id, .. } => tool_id.clone(),
        StepV2::Conditional { .. }
        | StepV2::Loop { .. }
        | StepV2::UserInput { .. }
        | StepV2::UserVerify { .. }
        | StepV2::Exit { .. } => None,
    }
}

pub(super) fn positional_output(index: usize) -> String {
    format!("$step_{index}_output")
}

fn variable(name: String) -> Variable {
    Variable {
        name,
        value: None,
        description: String::new(),
    }
}

/// One variable per reference, as `_inputs_to_legacy_plan_variables` (literals are skipped).
fn variables<'a>(steps: &[StepV2], args: impl IntoIterator<Item = &'a ArgValue>) -> Vec<Variable> {
    args.into_iter()
        .filter_map(|arg| legacy_name(steps, arg))
        .map(variable)
        .collect()
}

/// A reference's `get_legacy_name`; `None` for a literal.
fn legacy_name(steps: &[StepV2], arg: &ArgValue) -> Option<String> {
    match arg {
        ArgValue::Literal { .. } => None,
        ArgValue::StepOutput {
            step: StepRef::Index { index },
            ..
        } => Some(format!("$step_{index}_output")),
        ArgValue::StepOutput {
            step: StepRef::Name { name },
            ..
        } => Some(match steps.iter().position(|s| s.step_name() == name) {
            Some(index) => positional_output(index),
            None => format!(
                "$unknown_step_output_{:032x}",
                uuid5::plan_uuid(name.as_bytes())
            ),
        }),
        ArgValue::Input { name, .. } => Some(name.clone()),
    }
}

/// An argument as `_resolve_input_names_for_printing` shows it inside an invoke-tool task.
fn display_arg(steps: &[StepV2], arg: &ArgValue) -> String {
    match (legacy_name(steps, arg), arg) {
        (Some(name), _) => dollar(&name),
        (None, ArgValue::Literal { value }) => py_str(value),
        (None, _) => unreachable!("only literals have no legacy name"),
    }
}

pub(super) fn dollar(name: &str) -> String {
    if name.starts_with('$') {
        name.to_owned()
    } else {
        format!("${name}")
    }
}

/// The SDK's `_get_legacy_condition`: one part per enclosing block, innermost first.
fn legacy_condition(block: Option<&ConditionalBlock>, index: i64) -> Option<String> {
    let mut parts = Vec::new();
    let mut current = block;
    while let Some(block) = current {
        parts.extend(block_part(&block.clause_step_indexes, index));
        current = block.parent_conditional_block.as_deref();
    }
    render_condition(parts)
}

pub(super) fn render_condition(parts: Vec<String>) -> Option<String> {
    (!parts.is_empty()).then(|| format!("If {}", parts.join(" and ")))
}

/// The condition one block contributes for the step at `index`: none for its `if` and `endif`
/// clauses (and, where the SDK would raise, for a step before the block's first clause); the
/// earlier clauses being false; and, for a step inside a clause, that clause being true.
pub(super) fn block_part(clauses: &[i64], index: i64) -> Option<String> {
    let active = *clauses.iter().rev().find(|&&c| c <= index)?;
    if clauses.first() == Some(&index) || clauses.last() == Some(&index) {
        return None;
    }
    let earlier: Vec<String> = clauses
        .iter()
        .filter(|&&c| c != active)
        .take_while(|&&c| c < index)
        .map(|c| format!("$step_{c}_output is false"))
        .collect();
    let mut part = earlier.join(" and ");
    if !clauses.contains(&index) {
        let active = format!("$step_{active}_output is true");
        part = if part.is_empty() {
            active
        } else {
            format!("{active} and {part}")
        };
    }
    Some(part)
}

// ---------------------------------------------------------------------------------------------
// Python's str()/repr() of a JSON literal, for invoke-tool tasks
// ---------------------------------------------------------------------------------------------

/// `str(value)` as an f-string shows a literal: a string as itself, anything else as `repr`.
fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr` of the value `json.loads` would give.
fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => py_number(&n.to_string()),
        Value::String(s) => py_quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", py_quote(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A JSON number as Python shows it: integers exactly, floats with `repr`'s shortest digits.
fn py_number(text: &str) -> String {
    if !text.contains(['.', 'e', 'E']) {
        let zero = text.trim_start_matches('-').bytes().all(|b| b == b'0');
        return if zero { "0".into() } else { text.into() };
    }
    match text.parse::<f64>() {
        Ok(f) => py_float(f),
        Err(_) => text.into(),
    }
}

/// Python's `repr(float)`: positional for exponents −4..16, else `d.ddde±XX`.
fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    let body = if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let point = exponent as usize + 1;
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    };
    format!("{sign}{body}")
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; backslash escapes for
/// the quote, `\\`, `\t`, `\n`, `\r` and non-printable characters (control, format and separator
/// characters; an approximation of `str.isprintable` for the rarest code points).
fn py_quote(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !py_printable(c) => {
                let code = c as u32;
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn py_printable(c: char) -> bool {
    !(c.is_control()
        || matches!(
            c,
            '\u{a0}'
                | '\u{ad}'
                | '\u{1680}'
                | '\u{2000}'..='\u{200f}'
                | '\u{2028}'..='\u{202f}'
                | '\u{205f}'..='\u{2064}'
                | '\u{3000}'
                | '\u{feff}'
                | '\u{e000}'..='\u{f8ff}'
        ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn python_reprs() {
        for (text, shown) in [
            ("5", "5"),
            ("-0", "0"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("4.5", "4.5"),
            ("1.0", "1.0"),
            ("100.0", "100.0"),
            ("1e16", "1e+16"),
            ("1.5e-7", "1.5e-07"),
            ("0.0001", "0.0001"),
            ("-0.0", "-0.0"),
            ("1E300", "1e+300"),
            ("123456789.125", "123456789.125"),
        ] {
            assert_eq!(py_number(text), shown, "{text}");
        }
        let value = json!([null, true, "it's", "a\"b'c", "tab\there", {"k": [1, 2.5]}]);
        assert_eq!(
            py_repr(&value),
            r#"[None, True, "it's", 'a"b\'c', 'tab\there', {'k': [1, 2.5]}]"#
        );
        assert_eq!(py_str(&json!("plain")), "plain");
    }

    #[test]
    fn conditions_follow_the_sdk() {
        let clauses = [0, 2, 4, 6];
        let part = |i| block_part(&clauses, i);
        assert_eq!(part(0), None);
        assert_eq!(part(1).as_deref(), Some("$step_0_output is true"));
        assert_eq!(part(2).as_deref(), Some("$step_0_output is false"));
        assert_eq!(
            part(3).as_deref(),
            Some("$step_2_output is true and $step_0_output is false")
        );
        assert_eq!(
            part(5).as_deref(),
            Some("$step_4_output is true and $step_0_output is false and $step_2_output is false")
        );
        assert_eq!(part(6), None);
        assert_eq!(block_part(&[3, 5], 1), None, "a step before the block");
    }
}
