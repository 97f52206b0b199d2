//! Plans: `plan-…json` files shaped like the SDK release that wrote them, instantiated from a
//! scenario with the plan's slots, and what the runs sharing a plan need to know about it.

use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use planrun_legacy::sdk;
use planrun_legacy::Version::{R0, R1, R4, R5, R6};
use planrun_legacy::{
    Plan, PlanContext, PlanId, PlanInput, PlanInputV032, Step, Variable, Version,
};
use planrun_wire::json::to_sdk_json;
use serde_json::Value;

use crate::layout::{PlanFile, PlanSeed};
use crate::rng::Rng;
use crate::scenarios::{Kind, Scenario, StepTpl, SCENARIOS};
use crate::slots::{Slot, Slots};
use crate::summary::{FileKind, GenFile};
use crate::vocab::REGISTRY;
use crate::write::write_new;

/// The plan shape of the SDK release that wrote a plan: which fields it has and whether its tool
/// ids are sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// alpha.50 – 0.1.5: `Variable.value`, no `condition`, tool ids in planner order.
    Alpha,
    /// 0.1.6 – 0.1.7: tool ids sorted, still no `condition`.
    V016,
    /// 0.1.8 – 0.1.11: `Step.condition` and `Variable.value`.
    V018,
    /// v0.1.12 – v0.3.1: `Variable.value` gone.
    V0112,
    /// v0.3.2 – v0.3.3: plan `inputs`.
    V032,
    /// v0.3.4+: `plan_inputs`.
    V034,
}

impl Era {
    /// The release that wrote a plan of runs of `version` (R1 spans 0.1.0 to 0.1.11).
    fn draw(version: Version, rng: &mut Rng) -> Era {
        if version <= R0 {
            Era::Alpha
        } else if version == R1 {
            [Era::Alpha, Era::V016, Era::V018][rng.weighted(&[15, 15, 70])]
        } else if version <= R4 {
            Era::V0112
        } else if version == R5 {
            Era::V032
        } else {
            Era::V034
        }
    }
    fn has_value(self) -> bool {
        matches!(self, Era::Alpha | Era::V016 | Era::V018)
    }
    fn has_condition(self) -> bool {
        !matches!(self, Era::Alpha | Era::V016)
    }
}

/// What runs need to know about their plan.
pub(crate) struct PlanSpec {
    pub(crate) id: PlanId,
    pub(crate) slots: Slots,
    /// Output name and kind of each step.
    pub(crate) steps: Vec<(String, Kind)>,
    /// Plan input names with the slot they carry.
    pub(crate) inputs: Vec<(String, Slot)>,
}

impl PlanSpec {
    /// Whether two steps share an output name.
    pub(crate) fn repeats_an_output(&self) -> bool {
        let mut names = std::collections::HashSet::new();
        !self.steps.iter().all(|(name, _)| names.insert(name))
    }
}

fn fill(template: &str, slots: &Slots, inputs: &[(String, Slot)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        match Slot::from_name(&after[..close]) {
            Some(slot) => match inputs.iter().find(|(_, s)| *s == slot) {
                Some((name, _)) if name.starts_with('$') => out.push_str(name),
                Some((name, _)) => {
                    out.push('$');
                    out.push_str(name);
                }
                None => out.push_str(slots.text(slot)),
            },
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Builds the plan of `seed` and writes its file into `out`, as the release that wrote it last
/// did; `None` for a plan that was never saved.
pub(crate) fn build_plan(seed: &PlanSeed, out: &Path) -> io::Result<(PlanSpec, Option<GenFile>)> {
    let mut rng = Rng::new(seed.seed);
    let scenario = &SCENARIOS[seed.scenario];
    let slots = Slots::draw(&mut rng);
    let era = Era::draw(seed.version, &mut rng);
    // v0.7.0+ `to_legacy_plan` output: positional outputs, bare input names, empty descriptions.
    let builder = seed.version == R6 && rng.chance(0.1);
    let use_inputs =
        matches!(era, Era::V032 | Era::V034) && !scenario.inputs.is_empty() && rng.chance(0.6);
    let inputs: Vec<(String, Slot)> = if use_inputs {
        scenario
            .inputs
            .iter()
            .map(|i| {
                let name = if builder {
                    i.name.trim_start_matches('$')
                } else {
                    i.name
                };
                (name.to_owned(), i.slot)
            })
            .collect()
    } else {
        Vec::new()
    };
    let draft = Draft {
        scenario,
        inputs: &inputs,
        use_inputs,
        builder,
        era,
        slots: &slots,
    };

    let mut tool_ids: Vec<String> = Vec::new();
    let mut steps = Vec::with_capacity(scenario.steps.len());
    let mut metas = Vec::with_capacity(scenario.steps.len());
    for (i, tpl) in scenario.steps.iter().enumerate() {
        let variables = draft.variables(i, tpl);
        let condition = tpl.condition.map(|c| {
            if builder {
                format!("If {} is true", draft.output_name(tpl.uses[0].0))
            } else {
                c.to_owned()
            }
        });
        // The W1-era planner sometimes left the tool of an LLM step unset.
        let tool_id = match tpl.tool {
            Some("llm_tool") if era == Era::Alpha && rng.chance(0.3) => None,
            tool => tool.map(str::to_owned),
        };
        if let Some(tool) = &tool_id {
            if !tool_ids.contains(tool) {
                tool_ids.push(tool.clone());
            }
        }
        steps.push(Step {
            task: fill(tpl.task, &slots, &inputs),
            inputs: variables,
            tool_id,
            output: draft.output_name(i),
            condition: era.has_condition().then_some(condition),
            extra: IndexMap::new(),
        });
        metas.push((draft.output_name(i), tpl.kind));
    }
    if seed.repeats_output && steps.len() >= 2 {
        let first = steps[0].output.clone();
        let last = steps.len() - 1;
        steps[last].output.clone_from(&first);
        metas[last].0 = first;
    }
    registry_tools(&mut tool_ids, builder, era, &mut rng);
    let plan_inputs =
        (era == Era::V034).then(|| v034_inputs(scenario, &inputs, builder, &slots, &mut rng));
    let plan = Plan {
        id: Some(seed.id),
        plan_context: PlanContext {
            query: fill(scenario.query, &slots, &[]),
            tool_ids,
        },
        steps,
        inputs: (era == Era::V032).then(|| {
            scenario
                .inputs
                .iter()
                .zip(&inputs)
                .map(|(tpl, (name, _))| PlanInputV032 {
                    name: name.clone(),
                    description: tpl.description.to_owned(),
                })
                .collect()
        }),
        plan_inputs,
    };
    let file = write_plan(seed, &plan, out)?;
    let spec = PlanSpec {
        id: seed.id,
        slots,
        steps: metas,
        inputs,
    };
    Ok((spec, file))
}

/// What every step of a plan being drafted draws on.
struct Draft<'a> {
    scenario: &'a Scenario,
    inputs: &'a [(String, Slot)],
    use_inputs: bool,
    /// Written as v0.7.0+ `to_legacy_plan` writes a Plan Builder plan: positional outputs, bare
    /// input names, empty descriptions.
    builder: bool,
    era: Era,
    slots: &'a Slots,
}

impl Draft<'_> {
    /// The output of step `i`.
    fn output_name(&self, i: usize) -> String {
        if self.builder {
            format!("$step_{i}_output")
        } else {
            self.scenario.steps[i].output.to_owned()
        }
    }

    /// The variables of step `i`: the plan inputs it reads, the earlier outputs it uses, and
    /// (in the eras that had them) its constants.
    fn variables(&self, i: usize, tpl: &StepTpl) -> Vec<Variable> {
        let mut variables = Vec::new();
        if self.use_inputs {
            for (tpl_input, (name, _)) in self.scenario.inputs.iter().zip(self.inputs) {
                if tpl_input.step == i {
                    variables.push(Variable {
                        name: name.clone(),
                        value: None,
                        description: if self.builder {
                            String::new()
                        } else {
                            tpl_input.description.to_owned()
                        },
                    });
                }
            }
        }
        for (k, description) in tpl.uses {
            variables.push(Variable {
                name: self.output_name(*k),
                value: self.era.has_value().then_some(Value::Null),
                description: if self.builder {
                    String::new()
                } else {
                    (*description).to_owned()
                },
            });
        }
        if self.era.has_value() {
            for (name, slot, description) in tpl.consts {
                variables.push(Variable {
                    name: (*name).to_owned(),
                    value: Some(self.slots.native[*slot as usize].clone()),
                    description: (*description).to_owned(),
                });
            }
        }
        variables
    }
}

/// The planner saw the whole tool registry, not only the tools it used: a few more of its
/// tools, in the era's order (shuffled in the alpha, sorted after).
fn registry_tools(tool_ids: &mut Vec<String>, builder: bool, era: Era, rng: &mut Rng) {
    if !builder {
        for _ in 0..rng.below(4) {
            let tool = (*rng.pick(REGISTRY)).to_owned();
            if !tool_ids.contains(&tool) {
                tool_ids.push(tool);
            }
        }
    }
    if era == Era::Alpha {
        rng.shuffle(tool_ids);
    } else {
        tool_ids.sort();
    }
}

/// A v0.3.4+ plan's inputs: some without a description, some with a default value.
fn v034_inputs(
    scenario: &Scenario,
    inputs: &[(String, Slot)],
    builder: bool,
    slots: &Slots,
    rng: &mut Rng,
) -> Vec<PlanInput> {
    scenario
        .inputs
        .iter()
        .zip(inputs)
        .map(|(tpl, (name, slot))| PlanInput {
            name: name.clone(),
            description: if builder || rng.chance(0.15) {
                None
            } else {
                Some(tpl.description.to_owned())
            },
            value: if rng.chance(0.4) {
                slots.native[*slot as usize].clone()
            } else {
                Value::Null
            },
        })
        .collect()
}

/// Writes the plan file as the release of `seed.file` saved it (none for a plan never saved).
fn write_plan(seed: &PlanSeed, plan: &Plan, out: &Path) -> io::Result<Option<GenFile>> {
    let text = to_sdk_json(plan);
    let (text, written_by) = match seed.file {
        PlanFile::Saved => (Some(text), seed.version),
        PlanFile::SavedAgain(later) => match sdk::plan_as_saved(text.as_bytes(), later) {
            Some(saved) => (Some(to_sdk_json(&saved)), later),
            None => (Some(text), seed.version),
        },
        PlanFile::NeverSaved => (None, seed.version),
    };
    text.map(|text| {
        write_new(
            out,
            PathBuf::from(format!("{}.json", seed.id)),
            &text,
            FileKind::Plan,
            written_by,
        )
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_slots_and_inputs() {
        let mut rng = Rng::new(3);
        let slots = Slots::draw(&mut rng);
        let city = slots.text(Slot::City).to_owned();
        assert_eq!(
            fill("Weather in {city}", &slots, &[]),
            format!("Weather in {city}")
        );
        let inputs = vec![
            ("$destination".to_owned(), Slot::City),
            ("channel".to_owned(), Slot::Channel),
        ];
        assert_eq!(
            fill(
                "Fly to {city}, post to #{channel} {unknown}",
                &slots,
                &inputs
            ),
            "Fly to $destination, post to #$channel {unknown}"
        );
    }
}
