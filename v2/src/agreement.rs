//! Checks that serde and a published schema agree on a document (the law that serde accepts a document if and only if its schema does): serde
//! accepts it if and only if the schema does. Reusable by every crate that publishes schemas.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde_json::de::StrRead;
use serde_json::{Map, Value};

/// A compiled draft 2020-12 schema, ready to check many documents.
pub struct Agreement {
    validator: jsonschema::Validator,
}

impl Agreement {
    /// Compiles `schema` as draft 2020-12. Panics if the schema is not a valid schema.
    pub fn new(schema: &Value) -> Self {
        let validator = jsonschema::draft202012::new(schema)
            .unwrap_or_else(|error| panic!("the schema does not compile: {error}"));
        Agreement { validator }
    }

    /// Whether the schema accepts `doc`.
    pub fn schema_accepts(&self, doc: &Value) -> bool {
        self.validator.is_valid(doc)
    }

    /// Panics, naming the schema's errors, unless the schema's verdict on `doc` is `serde_ok`.
    pub fn assert(&self, doc: &Value, serde_ok: bool) {
        self.assert_with_detail(doc, serde_ok, "");
    }

    /// Deserializes `doc` as `T`, asserts that the schema agrees, and returns the common verdict.
    pub fn assert_for<T: DeserializeOwned>(&self, doc: &Value) -> bool {
        let serde = serde_verdict::<T>(doc);
        let detail = serde
            .as_ref()
            .err()
            .map_or(String::new(), |e| format!("serde error: {e}\n"));
        self.assert_with_detail(doc, serde.is_ok(), &detail);
        serde.is_ok()
    }

    fn assert_with_detail(&self, doc: &Value, serde_ok: bool, detail: &str) {
        let schema_ok = self.schema_accepts(doc);
        if schema_ok == serde_ok {
            return;
        }
        let errors: Vec<String> = self
            .validator
            .iter_errors(doc)
            .take(5)
            .map(|error| format!("  at {}: {error}", error.instance_path()))
            .collect();
        panic!(
            "serde and the schema disagree: serde {}, schema {}\n{detail}{}\ndocument:\n{}",
            verdict(serde_ok),
            verdict(schema_ok),
            if errors.is_empty() {
                String::new()
            } else {
                format!("schema errors:\n{}", errors.join("\n"))
            },
            serde_json::to_string_pretty(doc).unwrap_or_else(|_| doc.to_string()),
        );
    }
}

/// Panics unless `schema` accepts `doc` exactly when `serde_ok` is true.
pub fn assert_agreement(schema: &Value, doc: &Value, serde_ok: bool) {
    Agreement::new(schema).assert(doc, serde_ok);
}

/// Deserializes `doc` as `T`, panics unless `schema` agrees, and returns the common verdict.
pub fn assert_agreement_for<T: DeserializeOwned>(schema: &Value, doc: &Value) -> bool {
    Agreement::new(schema).assert_for::<T>(doc)
}

/// Whether serde accepts `doc` as a `T` when reading its JSON text, with serde's message when not.
pub fn serde_verdict<T: DeserializeOwned>(doc: &Value) -> Result<(), String> {
    serde_json::from_str::<T>(&doc.to_string())
        .map(drop)
        .map_err(|error| error.to_string())
}

fn verdict(accepts: bool) -> &'static str {
    if accepts {
        "accepts"
    } else {
        "rejects"
    }
}

/// A copy of a document with one edit, and what the edit was.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// The edit, e.g. `remove /plan/id` or `/state := null`.
    pub edit: String,
    /// The edited document.
    pub doc: Value,
}

/// Every single-edit variant of `doc`: each node replaced by values of other types and by nearby
/// values of its own type (integer-valued decimals, out-of-range integers, strings with an extra
/// character), each object by the array of its values and each string by `{string: null}` (the
/// sequence and map forms serde's derives accept besides the plain ones), each key removed, and
/// an unknown key added to each object.
///
/// Agreement is expected on all of them whatever the verdict, which makes them a cheap way to
/// probe the edges of a schema without writing the expected answers down.
pub fn mutants(doc: &Value) -> Vec<Mutant> {
    let mut out = Vec::new();
    collect_mutants(doc, doc, "", &mut out);
    out
}

fn collect_mutants(root: &Value, node: &Value, pointer: &str, out: &mut Vec<Mutant>) {
    for replacement in replacements(node) {
        let mut doc = root.clone();
        *doc.pointer_mut(pointer).expect("pointer into the document") = replacement.clone();
        out.push(Mutant {
            edit: format!("{pointer} := {replacement}"),
            doc,
        });
    }
    match node {
        Value::Object(map) => {
            for key in map.keys() {
                let mut doc = root.clone();
                if let Some(Value::Object(target)) = doc.pointer_mut(pointer) {
                    target.shift_remove(key);
                }
                out.push(Mutant {
                    edit: format!("remove {pointer}/{}", escape(key)),
                    doc,
                });
            }
            let mut doc = root.clone();
            if let Some(Value::Object(target)) = doc.pointer_mut(pointer) {
                target.insert(UNKNOWN_KEY.to_owned(), Value::Null);
            }
            out.push(Mutant {
                edit: format!("add {pointer}/{UNKNOWN_KEY}"),
                doc,
            });
            for (key, child) in map {
                collect_mutants(root, child, &format!("{pointer}/{}", escape(key)), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                collect_mutants(root, child, &format!("{pointer}/{index}"), out);
            }
        }
        _ => {}
    }
}

const UNKNOWN_KEY: &str = "§unknown§";

fn replacements(node: &Value) -> Vec<Value> {
    let number = |text: &str| serde_json::from_str::<Value>(text).expect("a JSON number literal");
    match node {
        Value::Null => vec![
            Value::Bool(false),
            "".into(),
            number("0"),
            Value::Object(Map::default()),
        ],
        Value::Bool(b) => vec![Value::Null, Value::Bool(!b), "true".into(), number("1")],
        Value::Number(n) => {
            let mut out = vec![
                Value::Null,
                n.to_string().into(),
                number("1.5"),
                number("-1"),
            ];
            out.extend(
                [
                    "3.0",
                    "1e2",
                    "-0.0",
                    "9223372036854775808",
                    "-9223372036854775809",
                    "1e400",
                ]
                .map(number),
            );
            out
        }
        Value::String(s) => vec![
            Value::Null,
            number("0"),
            number("1"),
            "".into(),
            UNKNOWN_KEY.into(),
            format!("{s}x").into(),
            s.to_uppercase().into(),
            Value::Object([(s.clone(), Value::Null)].into_iter().collect()),
        ],
        Value::Array(items) => {
            let mut longer = items.clone();
            longer.push(Value::Null);
            vec![
                Value::Null,
                Value::Object(Map::default()),
                Value::Array(Vec::new()),
                Value::Array(longer),
            ]
        }
        Value::Object(map) => vec![
            Value::Null,
            Value::Array(Vec::new()),
            Value::Array(map.values().cloned().collect()),
            Value::Object(Map::default()),
        ],
    }
}

/// Escapes a key for use in a JSON pointer (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Panics unless `schema` is a valid draft 2020-12 schema (checked against the meta-schema).
pub fn assert_valid_schema(schema: &Value) {
    if let Err(error) = jsonschema::meta::validate(schema) {
        panic!("not a valid JSON Schema: {error}");
    }
}

/// Panics unless `T`'s own reader gives `text` the verdict, and the value, that `derived` (the
/// derived reader of an internally tagged enum) gives it behind the strict check of its `tag`.
/// For the types read key by key instead of through serde's buffered copy.
pub fn assert_tagged_verdict<T: DeserializeOwned + PartialEq + Debug>(
    text: &str,
    tag: &str,
    derived: impl FnOnce(&mut serde_json::Deserializer<StrRead<'_>>) -> serde_json::Result<T>,
) {
    let through_derived = {
        let mut de = serde_json::Deserializer::from_str(text);
        planrun_wire::strict::tagged(&mut de, tag, derived).and_then(|value| {
            de.end()?;
            Ok(value)
        })
    };
    match (serde_json::from_str::<T>(text), through_derived) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("own reader {a:?}, derived {b:?}, on {text}"),
    }
}

/// The object with its keys in reverse order (a tag written first comes last); anything else
/// as it is.
pub fn reversed(doc: &Value) -> Value {
    match doc {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}
