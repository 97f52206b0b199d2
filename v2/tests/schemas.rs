//! The published schemas: their number, headers, tags as `const`, and the "every key required"
//! rule.

use planrun_v2::agreement::assert_valid_schema;
use planrun_v2::{schemas, SCHEMA_BASE_URL};
use serde_json::Value;

/// How many schemas are published. Their text is pinned once, by the committed files under
/// `schemas/` and `tests/schemas_fresh.rs`, which fails when the code generates other bytes.
#[test]
fn the_published_set_has_every_schema() {
    assert_eq!(schemas().len(), 9);
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
        assert_eq!(schema["title"], file.trim_end_matches(".schema.json"));
        assert!(
            !schema["description"].as_str().unwrap().is_empty(),
            "{file}"
        );
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
fn every_union_branch_carries_its_tag_as_a_const() {
    let mut branches = 0;
    for (file, schema) in schemas() {
        for one_of in subschemas(&schema).iter().filter_map(|s| s.get("oneOf")) {
            // Unit enums are `oneOf` string consts (one per documented value); unions are objects.
            for branch in one_of.as_array().unwrap() {
                if branch["type"] == "string" {
                    assert!(branch["const"].is_string(), "{file}: {branch}");
                    continue;
                }
                let required = branch["required"].as_array().unwrap();
                let tag = required[0].as_str().unwrap();
                assert!(
                    ["type", "kind", "category", "by"].contains(&tag),
                    "{file}: {branch}"
                );
                assert_eq!(
                    branch["properties"][tag]["type"], "string",
                    "{file}: {branch}"
                );
                assert!(
                    branch["properties"][tag]["const"].is_string(),
                    "{file}: {branch}"
                );
                assert_eq!(branch["additionalProperties"], false, "{file}: {branch}");
                branches += 1;
            }
        }
    }
    // StepV2 (11), Output (2), Clarification (7), ArgValue (3), StepRef (2), StorageDescriptor (3),
    // counted once per schema that embeds them.
    assert!(branches >= 28, "{branches}");
}

#[test]
fn every_key_is_required_except_the_legacy_residue() {
    for (file, schema) in schemas() {
        for object in subschemas(&schema) {
            let Some(properties) = object.get("properties").and_then(Value::as_object) else {
                continue;
            };
            let required: Vec<&str> = object["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|key| key.as_str().unwrap())
                .collect();
            for key in properties.keys() {
                let optional = key == "legacy" && properties.contains_key("clarifications");
                assert_eq!(
                    !required.contains(&key.as_str()),
                    optional,
                    "{file}: `{key}` in {object}"
                );
            }
            assert_eq!(object["additionalProperties"], false, "{file}: {object}");
        }
    }
}

#[test]
fn every_property_and_definition_is_described() {
    for (file, schema) in schemas() {
        for object in subschemas(&schema) {
            if let Some(properties) = object.get("properties").and_then(Value::as_object) {
                for (key, property) in properties {
                    let is_tag = property.get("const").is_some();
                    assert!(
                        is_tag || property.get("description").is_some(),
                        "{file}: property `{key}` has no description"
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
fn integer_fields_carry_the_i64_range() {
    for (file, schema) in schemas() {
        for integer in subschemas(&schema)
            .into_iter()
            .filter(|s| s["type"] == "integer")
        {
            assert_eq!(integer["minimum"], i64::MIN, "{file}: {integer}");
            assert_eq!(integer["maximum"], i64::MAX, "{file}: {integer}");
        }
    }
}
