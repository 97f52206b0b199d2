//! The legacy RunContext snapshot (plan, run, end user, native step outputs, config) becomes a V2
//! `RunContext`: its run through the usual upgrade, its services as descriptors.

use planrun_legacy::{parse, RunContextSnapshot};
use planrun_v2::{
    HooksDescriptor, RunContext, StorageDescriptor, TelemetryDescriptor, ToolRegistryDescriptor,
};
use planrun_wire::json::to_sdk_json;
use serde_json::Value;

use crate::report::{EntryKind, LossReport};
use crate::upgrade::{resolve_config, upgrade, ConvertError, Converted, Sources};

/// Converts a RunContext snapshot. Its native step values (the SDK's in-memory
/// `StepOutputValue`s) replace the stringified copies the run stored for the same step.
pub fn run_context_from_legacy(
    snapshot: &RunContextSnapshot,
) -> Result<(RunContext, LossReport), ConvertError> {
    let run = parse(to_sdk_json(&snapshot.plan_run).as_bytes())
        .map_err(|e| ConvertError::Rejected(format!("/plan_run: {e}")))?;
    let (config, mut report) = resolve_config(Some(&snapshot.config))?;
    let sources = Sources {
        run: &run,
        plan: crate::upgrade::PlanSource::Read(&snapshot.legacy_plan),
        end_user: Some(&snapshot.end_user),
        plan_read: &[],
        end_user_read: &[],
        config: &config,
        agent_memory: None,
    };
    let Converted {
        run: mut plan_run,
        report: run_report,
    } = upgrade(&sources)?;
    report.extend(run_report);
    native_step_values(snapshot, &mut plan_run, &mut report);
    let storage = storage(snapshot);
    report.push(
        EntryKind::Derived,
        Some("/config/storage_class".into()),
        Some("/storage".into()),
        "the storage descriptor follows the config's storage_class",
        None,
    );
    let tool_ids = snapshot.legacy_plan.plan_context.tool_ids.clone();
    report.push(
        EntryKind::Derived,
        Some("/legacy_plan/plan_context/tool_ids".into()),
        Some("/tool_registry/tool_ids".into()),
        "the registry's tools as the plan saw them",
        None,
    );
    report.defaulted(
        "/execution_hooks",
        "hooks are code; none is recorded",
        Value::Array(Vec::new()),
    );
    report.push(
        EntryKind::Defaulted,
        None,
        Some("/telemetry".into()),
        "telemetry settings are not part of a snapshot",
        None,
    );
    Ok((
        RunContext {
            plan_run,
            storage,
            tool_registry: ToolRegistryDescriptor { tool_ids },
            execution_hooks: HooksDescriptor { hooks: Vec::new() },
            telemetry: TelemetryDescriptor {
                enabled: false,
                endpoint: None,
            },
        },
        report,
    ))
}

/// Puts the RunContext's native step values in place of the stringified ones the run stored
/// (or after them, for a step the run has no value of).
fn native_step_values(
    snapshot: &RunContextSnapshot,
    plan_run: &mut planrun_v2::PlanRunV2,
    report: &mut LossReport,
) {
    for (i, native) in snapshot.step_output_values.iter().enumerate() {
        let from = Some(format!("/step_output_values/{i}"));
        let value = planrun_v2::Output::Local {
            value: native.value.clone(),
            summary: None,
        };
        let stored = plan_run
            .step_output_values
            .iter_mut()
            .find(|v| v.step_num == Some(native.step_num));
        if let Some(stored) = stored {
            let summary = match &stored.output {
                planrun_v2::Output::Local { summary, .. } => summary.clone(),
                planrun_v2::Output::AgentMemory { summary, .. } => Some(summary.clone()),
            };
            stored.output = planrun_v2::Output::Local {
                value: native.value.clone(),
                summary,
            };
            stored.description.clone_from(&native.description);
            stored.step_name = Some(native.step_name.clone());
            let to = format!(
                "/plan_run/step_output_values/{}",
                planrun_wire::json::escape_pointer_token(&stored.output_name)
            );
            report.push(
                EntryKind::Coerced,
                from,
                Some(to),
                "the RunContext's native value replaces the stringified one the run stored",
                None,
            );
        } else {
            plan_run
                .step_output_values
                .push(planrun_v2::StepOutputValue {
                    step_num: Some(native.step_num),
                    step_name: Some(native.step_name.clone()),
                    output_name: format!("$step_{}_output", native.step_num),
                    description: native.description.clone(),
                    output: value,
                });
            report.push(
                EntryKind::Moved,
                from,
                Some("/plan_run/step_output_values/-".into()),
                "a step value only the RunContext held",
                None,
            );
        }
    }
}

/// The storage the config's `storage_class` names.
fn storage(snapshot: &RunContextSnapshot) -> StorageDescriptor {
    match snapshot.config.storage_class.as_deref() {
        Some("DISK") => StorageDescriptor::Disk {
            dir: snapshot.config.storage_dir.clone().flatten(),
        },
        Some("CLOUD") => StorageDescriptor::Cloud {
            endpoint: snapshot.config.portia_api_endpoint.clone(),
        },
        _ => StorageDescriptor::Memory {},
    }
}
