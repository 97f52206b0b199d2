//! Publishing JSON Schemas (draft 2020-12) the same way for every crate: doc comments as
//! one-line descriptions, and a header of `$schema`, `$id`, `title` and `description` first.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

/// Draft 2020-12 settings that join the lines of wrapped doc comments; a crate adds its own
/// transforms to them before calling [`published`].
pub fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with_transform(RecursiveTransform(unwrap_description))
}

/// The schema of `T` generated with `settings`, as the document published under
/// `base_url` + `file` (see [`with_header`]).
pub fn published<T: JsonSchema>(settings: SchemaSettings, base_url: &str, file: &str) -> Value {
    let schema = settings.into_generator().into_root_schema_for::<T>();
    with_header(schema, base_url, file)
}

/// `schema` as the document published under `base_url` + `file`: that is its `$id`, and
/// `$schema`, `$id`, `title` and `description` come first, in that order, so every published
/// file starts alike (a `title` or `description` the schema lacks is left out).
pub fn with_header(mut schema: Schema, base_url: &str, file: &str) -> Value {
    let mut body = std::mem::take(schema.ensure_object());
    let mut out = Map::new();
    if let Some(meta) = body.shift_remove("$schema") {
        out.insert("$schema".to_owned(), meta);
    }
    out.insert("$id".to_owned(), format!("{base_url}{file}").into());
    for key in ["title", "description"] {
        if let Some(value) = body.shift_remove(key) {
            out.insert(key.to_owned(), value);
        }
    }
    out.extend(body);
    Value::Object(out)
}

/// Joins the lines of a description that a doc comment wrapped, keeping paragraph breaks, so
/// that a description reads as prose and not as the source's line breaks.
fn unwrap_description(schema: &mut Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text
            .split("\n\n")
            .map(|paragraph| paragraph.replace('\n', " "))
            .collect::<Vec<_>>()
            .join("\n\n");
    }
}

/// `schema` as a value with a description: added to an inline schema, or beside a `$ref`, for
/// hand-written schemas whose properties need their own descriptions.
pub fn with_description(schema: Schema, description: &str) -> Value {
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.insert("description".to_owned(), description.into());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe type.
    ///
    /// Its doc comment is wrapped
    /// over lines.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Probe {
        /// A field.
        field: bool,
    }

    #[test]
    fn header_comes_first_and_descriptions_are_unwrapped() {
        let schema = published::<Probe>(settings(), "https://example.test/s/", "probe.json");
        let keys: Vec<&str> = schema
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys[..4], ["$schema", "$id", "title", "description"]);
        assert_eq!(schema["$id"], "https://example.test/s/probe.json");
        assert_eq!(
            schema["description"],
            "A probe type.\n\nIts doc comment is wrapped over lines."
        );
    }

    #[test]
    fn a_description_goes_beside_a_ref() {
        let reference = schemars::json_schema!({"$ref": "#/$defs/X"});
        assert_eq!(
            with_description(reference, "Why."),
            serde_json::json!({"$ref": "#/$defs/X", "description": "Why."})
        );
    }
}
