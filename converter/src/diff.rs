//! Structural differences between two JSON documents, by JSON pointer: what `planrun diff` prints
//! and what the round-trip tests compare.

use serde::Serialize;
use serde_json::Value;

use planrun_legacy::json::escape_pointer_token;

/// One difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Difference {
    /// Only in the first document.
    Removed {
        /// Where.
        pointer: String,
        /// The value.
        value: Value,
    },
    /// Only in the second document.
    Added {
        /// Where.
        pointer: String,
        /// The value.
        value: Value,
    },
    /// In both, with different values (arrays of different lengths count as one change).
    Changed {
        /// Where.
        pointer: String,
        /// In the first document.
        from: Value,
        /// In the second document.
        to: Value,
    },
}

impl Difference {
    /// Where the difference is.
    pub fn pointer(&self) -> &str {
        match self {
            Difference::Removed { pointer, .. }
            | Difference::Added { pointer, .. }
            | Difference::Changed { pointer, .. } => pointer,
        }
    }
}

/// Every difference from `a` to `b`, in document order (key order is not a difference).
pub fn diff(a: &Value, b: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(a, b, &mut String::new(), &mut out);
    out
}

fn walk(a: &Value, b: &Value, pointer: &mut String, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, left) in x {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape_pointer_token(key));
                match y.get(key) {
                    Some(right) => walk(left, right, pointer, out),
                    None => out.push(Difference::Removed {
                        pointer: pointer.clone(),
                        value: left.clone(),
                    }),
                }
                pointer.truncate(len);
            }
            for (key, right) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                out.push(Difference::Added {
                    pointer: format!("{pointer}/{}", escape_pointer_token(key)),
                    value: right.clone(),
                });
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (left, right)) in x.iter().zip(y).enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                walk(left, right, pointer, out);
                pointer.truncate(len);
            }
        }
        (left, right) if left == right => {}
        (left, right) => out.push(Difference::Changed {
            pointer: pointer.clone(),
            from: left.clone(),
            to: right.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_found_by_pointer() {
        let a = json!({"a": 1, "b": [1, 2], "c/d": {"x": true}, "gone": 0});
        let b = json!({"b": [1, 3], "a": 1, "c/d": {"x": false}, "new": null});
        let differences = diff(&a, &b);
        let pointers: Vec<&str> = differences.iter().map(Difference::pointer).collect();
        assert_eq!(pointers, ["/b/1", "/c~1d/x", "/gone", "/new"]);
        assert!(diff(&a, &a).is_empty());
    }
}
