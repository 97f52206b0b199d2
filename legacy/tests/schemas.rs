//! The published legacy schemas: their number, headers, names, and descriptions everywhere.

use planrun_legacy::{schema_file, schemas, DocKind, Version, SCHEMA_BASE_URL};
use planrun_v2::agreement::assert_valid_schema;
use serde_json::Value;

/// How many schemas are published. Their text is pinned once, by the committed files under
/// `schemas/` and `tests/schemas_fresh.rs`, which fails when the code generates other bytes.
#[test]
fn the_published_set_has_every_schema() {
    assert_eq!(schemas().len(), 16);
}

#[test]
fn every_schema_is_a_valid_draft_2020_12_schema_with_a_header() {
    for (file, schema) in schemas() {
        assert_valid_schema(&schema);
        let keys: Vec<&str> = schema
            .as_object()
            .unwrap()
            .keys()
            .take(4)
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["$schema", "$id", "title", "description"], "{file}");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["$id"], format!("{SCHEMA_BASE_URL}{file}"));
        assert!(!schema["title"].as_str().unwrap().is_empty(), "{file}");
        assert!(
            !schema["description"].as_str().unwrap().is_empty(),
            "{file}"
        );
    }
}

#[test]
fn run_schemas_are_named_and_titled_by_version() {
    for version in Version::ALL {
        let file = schema_file(DocKind::Run, version);
        assert_eq!(file, format!("run.{version}.schema.json"));
        let (_, schema) = schemas()
            .into_iter()
            .find(|(name, _)| *name == file)
            .unwrap_or_else(|| panic!("no schema {file}"));
        assert_eq!(schema["title"], format!("Run{version}"), "{file}");
    }
}

#[test]
fn every_document_kind_has_a_published_schema() {
    let names: Vec<&str> = schemas().into_iter().map(|(name, _)| name).collect();
    for kind in [
        DocKind::Run,
        DocKind::Plan,
        DocKind::EndUser,
        DocKind::Output,
        DocKind::ToolCall,
        DocKind::Config,
        DocKind::StepOutputValue,
        DocKind::StepOutputValues,
        DocKind::RunContext,
    ] {
        for version in Version::ALL {
            let file = schema_file(kind, version);
            assert!(names.contains(&file), "{kind:?} {version}: {file}");
        }
    }
}

/// Every subschema of `schema`, the root included.
fn subschemas(schema: &Value) -> Vec<&Value> {
    let mut out = vec![schema];
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                if !matches!(
                    key.as_str(),
                    "const" | "enum" | "required" | "examples" | "default"
                ) {
                    out.extend(subschemas(child));
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| out.extend(subschemas(item))),
        _ => {}
    }
    out
}

#[test]
fn every_property_and_definition_is_described() {
    for (file, schema) in schemas() {
        for object in subschemas(&schema) {
            if let Some(properties) = object.get("properties").and_then(Value::as_object) {
                for (key, property) in properties {
                    let trivial =
                        property.get("const").is_some() || property == &Value::Bool(false);
                    assert!(
                        trivial || property.get("description").is_some(),
                        "{file}: property `{key}` has no description: {property}"
                    );
                }
            }
        }
        for (name, definition) in schema["$defs"].as_object().into_iter().flatten() {
            assert!(
                definition.get("description").is_some(),
                "{file}: $defs/{name} has no description"
            );
        }
    }
}

#[test]
fn forbidden_unknown_keys_follow_the_sdk() {
    // `forbid` in the SDK: the run, its outputs, plans, plan contexts, outputs, tool calls and the
    // snapshot. `ignore`/`allow`: everything else (so the schema leaves extra keys open).
    let closed = |schema: &Value, def: &str| schema["$defs"][def]["additionalProperties"] == false;
    for (file, schema) in schemas() {
        if file.starts_with("run.") {
            assert_eq!(schema["additionalProperties"], false, "{file}");
            assert!(closed(&schema, "Outputs"), "{file}");
            assert!(!closed(&schema, "Clarification"), "{file}");
        }
    }
    let all: Vec<(&str, Value)> = schemas();
    let get = |name: &str| &all.iter().find(|(n, _)| *n == name).unwrap().1;
    assert_eq!(get("plan.schema.json")["additionalProperties"], false);
    assert!(closed(get("plan.schema.json"), "PlanContext"));
    assert_eq!(
        get("plan.schema.json")["$defs"]["Step"]["additionalProperties"],
        true
    );
    assert!(get("plan.schema.json")["$defs"]["Variable"]
        .get("additionalProperties")
        .is_none());
    assert_eq!(get("tool_call.schema.json")["additionalProperties"], false);
    assert!(get("end_user.schema.json")
        .get("additionalProperties")
        .is_none());
    assert!(get("config.schema.json")
        .get("additionalProperties")
        .is_none());
    assert_eq!(
        get("run_context.schema.json")["additionalProperties"],
        false
    );
}
