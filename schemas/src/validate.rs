//! Validation of documents against the published JSON Schemas ([`crate::published`]), and the choice
//! of the schema that applies to a document: a V2 document by its shape, a legacy one by
//! detection (its kind and the newest version that could have written it).
//!
//! Each schema is compiled once, on its first use, and kept for the life of the process.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use planrun_legacy::Detection;
use serde::Serialize;
use serde_json::Value;

use crate::published as schemas;

/// One way a document breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// RFC 6901 pointer to the offending value (`""` is the whole document).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(document root)"
        } else {
            &self.pointer
        };
        write!(f, "at {pointer}: {}", self.message)
    }
}

/// No published schema has the name asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no schema named {name:?}; the published schemas are {}", schemas::names().join(", "))]
pub struct UnknownSchema {
    /// The name asked for.
    pub name: String,
}

/// Every published schema by name, each compiled on its first use.
fn validators() -> &'static HashMap<String, (Value, OnceLock<Validator>)> {
    static VALIDATORS: OnceLock<HashMap<String, (Value, OnceLock<Validator>)>> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        schemas::all()
            .into_iter()
            .map(|(name, schema)| (name, (schema, OnceLock::new())))
            .collect()
    })
}

/// Checks `doc` against the published schema `schema` (a name of [`schemas::all`], e.g.
/// `legacy/run.R4.schema.json`); returns every violation, none when the document is valid.
pub fn validate(doc: &Value, schema: &str) -> Result<Vec<Violation>, UnknownSchema> {
    let (source, compiled) = validators().get(schema).ok_or_else(|| UnknownSchema {
        name: schema.to_owned(),
    })?;
    let validator = compiled.get_or_init(|| {
        jsonschema::draft202012::new(source)
            .unwrap_or_else(|e| panic!("published schema {schema} does not compile: {e}"))
    });
    // The common case, a valid document, is answered without collecting errors.
    if validator.is_valid(doc) {
        return Ok(Vec::new());
    }
    Ok(validator.iter_errors(doc).map(|e| violation(&e)).collect())
}

/// Values quoted in messages longer than this are replaced by a placeholder.
const MAX_QUOTED: usize = 120;

fn violation(error: &ValidationError<'_>) -> Violation {
    let mut message = message(error);
    if let Some(closest) = closest_alternative(error) {
        message.push_str(&format!(
            " (closest alternative: {})",
            Violation {
                pointer: closest.instance_path().to_string(),
                message: self::message(closest),
            }
        ));
    }
    Violation {
        pointer: error.instance_path().to_string(),
        message,
    }
}

/// The error's message; a long offending value is not quoted in full.
fn message(error: &ValidationError<'_>) -> String {
    let quoted = serde_json::to_string(error.instance().as_ref()).map_or(0, |text| text.len());
    if quoted > MAX_QUOTED {
        error.masked_with("the value").to_string()
    } else {
        error.to_string()
    }
}

/// For an `anyOf`/`oneOf` that no alternative matched, the first error of the alternative that
/// got furthest into the document (the deepest pointer, then the fewest errors).
fn closest_alternative<'e>(error: &'e ValidationError<'_>) -> Option<&'e ValidationError<'static>> {
    let (ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context }) =
        error.kind()
    else {
        return None;
    };
    context
        .iter()
        .filter(|errors| !errors.is_empty())
        .min_by_key(|errors| {
            let depth = errors
                .iter()
                .map(|e| e.instance_path().as_str().matches('/').count())
                .max()
                .unwrap_or(0);
            (std::cmp::Reverse(depth), errors.len())
        })
        .and_then(|errors| {
            errors
                .iter()
                .max_by_key(|e| e.instance_path().as_str().matches('/').count())
        })
}

/// The legacy schema of a detected document: its kind's, at the version it is read as
/// ([`Detection::version`], the newest version that could have written it).
pub fn schema_for(detection: &Detection) -> String {
    format!(
        "{}/{}",
        schemas::LEGACY_DIR,
        planrun_legacy::schema_file(detection.kind, detection.version())
    )
}

/// The V2 schema of a document that has the shape of a V2 document, if it has one: a PlanRunV2
/// (`plan` an object, and `step_output_values`), a V2 RunContext (`plan_run` an object, and
/// `storage`) or a PlanV2 (`steps` and `label`, no `plan_context`). Legacy documents have none of
/// these shapes.
pub fn v2_schema_for(doc: &Value) -> Option<String> {
    let obj = doc.as_object()?;
    let file = if obj.get("plan").is_some_and(Value::is_object)
        && obj.contains_key("step_output_values")
    {
        "PlanRunV2.schema.json"
    } else if obj.get("plan_run").is_some_and(Value::is_object) && obj.contains_key("storage") {
        "RunContext.schema.json"
    } else if obj.contains_key("steps")
        && obj.contains_key("label")
        && !obj.contains_key("plan_context")
    {
        "PlanV2.schema.json"
    } else {
        return None;
    };
    Some(format!("{}/{file}", schemas::V2_DIR))
}

/// The schema that applies to a document: the V2 one of its shape, else the legacy one of its
/// detected kind and version. `src` is the document's text (for error positions), `doc` its tree.
/// A legacy document that detection cannot place is a violation in itself.
pub fn schema_for_document(src: &[u8], doc: &Value) -> Result<String, Violation> {
    if let Some(name) = v2_schema_for(doc) {
        return Ok(name);
    }
    planrun_legacy::detect(src)
        .map(|detection| schema_for(&detection))
        .map_err(|e| Violation {
            pointer: e.pointer.clone(),
            message: format!("cannot tell which schema applies: {}", e.message),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_published_schema_compiles() {
        assert_eq!(validators().len(), schemas::all().len());
        for name in validators().keys() {
            assert!(validate(&json!(null), name).is_ok(), "{name}");
        }
    }

    #[test]
    fn unknown_schemas_are_named() {
        let err = validate(&json!({}), "legacy/run.R9.schema.json").unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("\"legacy/run.R9.schema.json\""), "{shown}");
        assert!(shown.contains("legacy/run.R4.schema.json"), "{shown}");
    }

    #[test]
    fn violations_carry_pointers_and_keep_long_values_out() {
        let doc = json!({
            "plan_id": "x".repeat(500),
            "end_user_id": "local",
            "state": "PAUSED",
            "colour": "blue"
        });
        let violations = validate(&doc, "legacy/run.R6.schema.json").unwrap();
        let pointers: Vec<&str> = violations.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&"/plan_id"), "{violations:?}");
        assert!(pointers.contains(&"/state"), "{violations:?}");
        assert!(pointers.contains(&""), "{violations:?}");
        for v in &violations {
            assert!(v.message.len() < 600, "{v}");
        }
        assert!(validate(
            &json!({"external_id": "local"}),
            "legacy/end_user.schema.json"
        )
        .unwrap()
        .is_empty());
    }

    #[test]
    fn v2_documents_are_recognised_by_shape() {
        assert_eq!(
            v2_schema_for(&json!({"plan": {}, "step_output_values": []})).as_deref(),
            Some("v2/PlanRunV2.schema.json")
        );
        assert_eq!(
            v2_schema_for(&json!({"plan_run": {}, "storage": {"kind": "memory"}})).as_deref(),
            Some("v2/RunContext.schema.json")
        );
        assert_eq!(
            v2_schema_for(&json!({"steps": [], "label": "x"})).as_deref(),
            Some("v2/PlanV2.schema.json")
        );
        for legacy in [
            json!({"plan_id": "x", "end_user_id": "local"}),
            json!({"plan_context": {}, "steps": []}),
            json!({"plan_run": {}, "legacy_plan": {}}),
            json!([]),
        ] {
            assert_eq!(v2_schema_for(&legacy), None, "{legacy}");
        }
    }
}
