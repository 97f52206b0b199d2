//! The toolkit's one JSON layer: every crate reads and writes JSON text through it.
//!
//! * Reading is strict (no repeated key, no `NaN`, every number's exact text kept), through one
//!   visitor ([`Node`], a tree that borrows its strings from the text), and every error says
//!   where it is: a JSON pointer, line and column, and what was expected ([`ParseError`]).
//! * Writing is serde_json's own serializer with a [`Format`]: pydantic's
//!   `model_dump_json(indent=4)` bytes ([`to_sdk_json`]) or Python's `json.dumps` ones
//!   ([`to_python_json`]).
//! * Pointers and positions: from a pointer to its place in the text and back, and the
//!   [`diff`] of two trees by pointer.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod error;
mod format;
mod node;

pub use error::{excerpt, ErrorKind, ParseError};
pub use format::{append, matches, to_vec_pretty, Format, Layout, Numbers};
pub use node::{Node, Object};

use node::StrictNode;

/// How the strict reader's message for a repeated key begins (the key follows, quoted).
pub(crate) const DUPLICATE_KEY: &str = "duplicate key ";

/// Parses bytes into a JSON tree, rejecting duplicate keys, and reports errors with position.
pub fn parse_value(src: &[u8]) -> Result<Value, ParseError> {
    // Valid UTF-8 (every file the SDK wrote) is checked once, in bulk, rather than string by
    // string; anything else is read as bytes so that serde_json locates the bad sequence.
    match std::str::from_utf8(src) {
        Ok(text) => strict_value(src, serde_json::Deserializer::from_str(text)),
        Err(_) => strict_value(src, serde_json::Deserializer::from_slice(src)),
    }
}

fn strict_value<'de, R: serde_json::de::Read<'de>>(
    src: &[u8],
    mut de: serde_json::Deserializer<R>,
) -> Result<Value, ParseError> {
    let value = match StrictNode::deserialize(&mut de) {
        Ok(StrictNode(node)) => node.into_value(),
        Err(first) => {
            // Only a failed read pays for tracking the path: read again to locate the error.
            let mut de = serde_json::Deserializer::from_slice(src);
            return Err(
                match serde_path_to_error::deserialize::<_, StrictNode>(&mut de) {
                    Err(err) => syntax_error(src, err.inner(), path_to_pointer(err.path())),
                    Ok(_) => syntax_error(src, &first, String::new()),
                },
            );
        }
    };
    de.end()
        .map_err(|err| syntax_error(src, &err, String::new()))?;
    Ok(value)
}

/// Reads a typed document out of an already parsed tree; errors point into `src`.
pub fn from_tree<T: DeserializeOwned>(src: &[u8], tree: &Value) -> Result<T, ParseError> {
    if let Ok(value) = T::deserialize(tree) {
        return Ok(value);
    }
    locate_error::<T>(src, tree)
}

/// Reads a typed document straight from JSON text: what [`parse_value`] then [`from_tree`] give,
/// without building the `Value` tree unless the text or the document has an error to locate.
pub fn from_text<T: DeserializeOwned>(src: &[u8]) -> Result<T, ParseError> {
    match Node::from_bytes(src) {
        Some(node) => node.read(src),
        None => from_tree(src, &parse_value(src)?),
    }
}

/// A parsed tree a typed document is read out of: borrowed, for a caller that still needs it,
/// or owned, so that its strings move into the document instead of being copied.
pub trait Tree: Sized {
    /// Whether it is an object with `key`.
    fn has(&self, key: &str) -> bool;
    /// The tree, owned.
    fn into_owned(self) -> Value;
    /// Reads it as `T`; `src` is the text it was parsed from.
    fn read<T: DeserializeOwned>(self, src: &[u8]) -> Result<T, ParseError>;
}

impl Tree for &Value {
    fn has(&self, key: &str) -> bool {
        self.as_object().is_some_and(|obj| obj.contains_key(key))
    }
    fn into_owned(self) -> Value {
        self.clone()
    }
    fn read<T: DeserializeOwned>(self, src: &[u8]) -> Result<T, ParseError> {
        from_tree(src, self)
    }
}

impl Tree for Value {
    fn has(&self, key: &str) -> bool {
        (&self).has(key)
    }
    fn into_owned(self) -> Value {
        self
    }
    fn read<T: DeserializeOwned>(self, src: &[u8]) -> Result<T, ParseError> {
        if let Ok(value) = T::deserialize(self) {
            return Ok(value);
        }
        // The tree is gone; only a failed read pays for parsing `src` again to locate the error.
        locate_error::<T>(src, &parse_value(src)?)
    }
}

impl Tree for Node<'_> {
    fn has(&self, key: &str) -> bool {
        self.field(key).is_some()
    }
    fn into_owned(self) -> Value {
        self.into_value()
    }
    fn read<T: DeserializeOwned>(self, src: &[u8]) -> Result<T, ParseError> {
        if let Ok(value) = T::deserialize(self) {
            return Ok(value);
        }
        // The error is located (or, should a `Value` read the text after all, the document read)
        // in the `Value` tree, as every reader's is.
        from_tree(src, &parse_value(src)?)
    }
}

/// The error of reading `tree` as `T`, with the pointer and position of where it failed (or,
/// should the read succeed after all, what it gives).
fn locate_error<T: DeserializeOwned>(src: &[u8], tree: &Value) -> Result<T, ParseError> {
    serde_path_to_error::deserialize::<_, T>(tree).map_err(|err| {
        let pointer = path_to_pointer(err.path());
        let message = strip_position(&err.inner().to_string());
        located(src, pointer, ErrorKind::Data, message)
    })
}

/// Builds an error for a value at `pointer`, finding its line and column in `src`.
pub fn located(src: &[u8], pointer: String, kind: ErrorKind, message: String) -> ParseError {
    let (line, column) =
        offset_of_pointer(src, &pointer).map_or((0, 0), |offset| line_column(src, offset));
    ParseError {
        path: None,
        pointer,
        line,
        column,
        kind,
        message,
    }
}

fn syntax_error(src: &[u8], inner: &serde_json::Error, key_pointer: String) -> ParseError {
    let offset = offset_of_line_column(src, inner.line(), inner.column());
    // serde_json says column 0 when it stopped on a newline (or read nothing): report that byte's
    // own 1-based position, since column 0 means "unknown" here.
    let (line, column) = match (inner.line(), inner.column()) {
        (line, 0) if line > 0 => line_column(src, offset.saturating_sub(1)),
        position => position,
    };
    let raw = strip_position(&inner.to_string());
    let at = |o: usize| src.get(o.saturating_sub(1)..).unwrap_or_default();
    let (kind, message) = if let Some(key) = raw.strip_prefix(DUPLICATE_KEY) {
        (
            ErrorKind::DuplicateKey,
            format!("duplicate key {key} in one object (the SDK would silently keep the last one; remove one of them)"),
        )
    } else if raw.contains("recursion limit") {
        (
            ErrorKind::TooDeep,
            "nesting deeper than 128 levels is not accepted".to_owned(),
        )
    } else if starts_non_finite(at(offset)) || starts_non_finite(at(offset + 1)) {
        (
            ErrorKind::NonFiniteNumber,
            "NaN and Infinity are not JSON numbers (Python's json writes them; pydantic writes null): replace with null or a string".to_owned(),
        )
    } else if let Some(said) = not_json(src, offset.saturating_sub(1), inner, (line, column)) {
        (ErrorKind::Syntax, said)
    } else if inner.classify() == serde_json::error::Category::Eof {
        (ErrorKind::Syntax, format!("{raw} (the file is cut short)"))
    } else {
        (ErrorKind::Syntax, raw)
    };
    let pointer = if kind == ErrorKind::DuplicateKey {
        key_pointer
    } else {
        pointer_at_offset(src, offset)
    };
    ParseError {
        path: None,
        pointer,
        line,
        column,
        kind,
        message,
    }
}

/// The message, in words, when the parser failed on its first token
/// (byte `fault`): a file that is not JSON at all (`hello`, `{x}`, an empty file) rather than
/// JSON broken or cut short further on, for which serde's own words (`expected value`, `expected
/// ident`) say little.
fn not_json(
    src: &[u8],
    fault: usize,
    inner: &serde_json::Error,
    (line, column): (usize, usize),
) -> Option<String> {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let Some(start) = src.iter().position(|b| !blank(b)) else {
        // Most often a write that was cut short before its first byte.
        let what = if src.is_empty() {
            "is empty"
        } else {
            "holds only whitespace"
        };
        return Some(format!("not JSON: the file {what} (cut short?)"));
    };
    if inner.classify() != serde_json::error::Category::Syntax {
        return None;
    }
    // The first token: the document's first word, or the first key or element of its object or
    // array.
    let (first, expected) = match src[start] {
        b'{' | b'[' => {
            let first = start + 1 + src[start + 1..].iter().position(|b| !blank(b))?;
            let expected = if src[start] == b'{' {
                ", where an object's first key in double quotes should be"
            } else {
                ", where an array's first value should be"
            };
            (first, expected)
        }
        _ => (
            start,
            ", where a JSON document starts: {, [, a string in double quotes, a number, true, false or null",
        ),
    };
    let word = |at: usize| -> usize {
        src[at..]
            .iter()
            .position(|b| blank(b) || b",:[]{}\"".contains(b))
            .map_or(src.len(), |n| at + n)
    };
    let end = word(first).max(first + 1).min(src.len());
    if !(first..end).contains(&fault) {
        return None;
    }
    let found = String::from_utf8_lossy(&src[first..end]);
    Some(format!(
        "not JSON: found {} at line {line} column {column}{expected}",
        excerpt(&found)
    ))
}

fn starts_non_finite(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"-").unwrap_or(bytes);
    bytes.starts_with(b"NaN") || bytes.starts_with(b"Infinity")
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => message[..i].to_owned(),
        _ => message.to_owned(),
    }
}

/// Renders a serde path as an RFC 6901 JSON pointer.
pub fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => {
                let _ = write!(out, "/{index}");
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push('/');
                out.push_str(&escape_pointer_token(key));
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// Escapes one reference token of a JSON pointer (`~` → `~0`, `/` → `~1`).
pub fn escape_pointer_token(token: &str) -> Cow<'_, str> {
    if !token.bytes().any(|b| b == b'~' || b == b'/') {
        return Cow::Borrowed(token);
    }
    let mut out = String::with_capacity(token.len() + 4);
    let mut plain = 0;
    for (at, byte) in token.bytes().enumerate() {
        let escape = match byte {
            b'~' => "~0",
            b'/' => "~1",
            _ => continue,
        };
        out.push_str(&token[plain..at]);
        out.push_str(escape);
        plain = at + 1;
    }
    out.push_str(&token[plain..]);
    Cow::Owned(out)
}

/// Unescapes one reference token of a JSON pointer (`~1` → `/`, then `~0` → `~`, as RFC 6901
/// says: `~01` is `~1`).
pub fn unescape_pointer_token(token: &str) -> Cow<'_, str> {
    if !token.contains('~') {
        return Cow::Borrowed(token);
    }
    Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
}

/// pydantic's `model_dump_json(indent=4)`: serde_json's pretty layout with four spaces a level.
const SDK_LAYOUT: Layout = Layout::Pretty(b"    ");

/// Writes a value exactly as pydantic's `model_dump_json(indent=4)` does: serde_json's pretty
/// layout with four spaces, and numbers kept as text spelt as pydantic spells them (serde_json
/// writes an exponent `e+16`, pydantic `e16`).
pub fn to_sdk_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(1024);
    append(&mut out, value, SDK_LAYOUT, Numbers::NoExponentPlus)
        .expect("legacy models serialise to JSON infallibly");
    String::from_utf8(out).expect("the writer writes UTF-8")
}

/// Whether [`to_sdk_json`] of `value` gives exactly `expected`, found without building the text:
/// each piece the writer emits is compared where it lands, and the first difference stops it.
pub fn writes_as_sdk<T: Serialize + ?Sized>(value: &T, expected: &[u8]) -> bool {
    matches(expected, value, SDK_LAYOUT, Numbers::NoExponentPlus)
}

/// Writes a value as Python's `json.dumps(value, ensure_ascii=False)` does (`", "` and `": "`).
pub fn to_python_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(64);
    append(&mut out, value, Layout::Python, Numbers::AsKept)
        .expect("JSON values serialise infallibly");
    String::from_utf8(out).expect("the writer writes UTF-8")
}

/// 1-based line and byte column of a byte offset, as serde_json counts them.
pub fn line_column(src: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, offset - line_start + 1)
}

fn offset_of_line_column(src: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match src[offset..].iter().position(|&b| b == b'\n') {
            Some(i) => offset += i + 1,
            None => return src.len(),
        }
    }
    (offset + column).min(src.len())
}

/// The byte offset where the value at `pointer` starts, if the text has one.
pub fn offset_of_pointer(src: &[u8], pointer: &str) -> Option<usize> {
    let target: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer
            .strip_prefix('/')?
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect()
    };
    let mut found = None;
    walk(src, |path, offset| {
        if path == target.as_slice() {
            found = Some(offset);
            true
        } else {
            false
        }
    });
    found
}

/// The pointer of the innermost value that starts at or before `offset` (best effort on bad input).
pub fn pointer_at_offset(src: &[u8], offset: usize) -> String {
    let mut last: Vec<String> = Vec::new();
    walk(src, |path, start| {
        if start > offset {
            return true;
        }
        last.clear();
        last.extend(path.iter().cloned());
        false
    });
    last.iter().fold(String::new(), |mut out, token| {
        out.push('/');
        out.push_str(&escape_pointer_token(token));
        out
    })
}

enum Container {
    Object,
    Array(usize),
}

/// Walks JSON text without building it, calling `visit(path, offset)` at the start of every
/// value until it returns true. Iterative, so any nesting depth is safe; stops at the first error.
fn walk(src: &[u8], mut visit: impl FnMut(&[String], usize) -> bool) {
    let mut stack: Vec<Container> = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut i = 0;
    'value: loop {
        i = skip_ws(src, i);
        if i >= src.len() || visit(&path, i) {
            return;
        }
        match src[i] {
            b'{' => {
                i = skip_ws(src, i + 1);
                if src.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    let Some(next) = read_key(src, i, &mut path) else {
                        return;
                    };
                    stack.push(Container::Object);
                    i = next;
                    continue 'value;
                }
            }
            b'[' => {
                i = skip_ws(src, i + 1);
                if src.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    stack.push(Container::Array(0));
                    path.push("0".to_owned());
                    continue 'value;
                }
            }
            b'"' => match skip_string(src, i) {
                Some(next) => i = next,
                None => return,
            },
            _ => {
                while i < src.len()
                    && !matches!(src[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                {
                    i += 1;
                }
            }
        }
        loop {
            let Some(top) = stack.last_mut() else {
                return;
            };
            path.pop();
            i = skip_ws(src, i);
            match (top, src.get(i)) {
                (Container::Object, Some(b',')) => {
                    let Some(next) = read_key(src, skip_ws(src, i + 1), &mut path) else {
                        return;
                    };
                    i = next;
                    continue 'value;
                }
                (Container::Array(n), Some(b',')) => {
                    *n += 1;
                    path.push(n.to_string());
                    i += 1;
                    continue 'value;
                }
                (Container::Object, Some(b'}')) | (Container::Array(_), Some(b']')) => {
                    stack.pop();
                    i += 1;
                }
                _ => return,
            }
        }
    }
}

fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && matches!(src[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// Reads `"key" :` at `i`, pushes the decoded key and returns the offset after the colon.
fn read_key(src: &[u8], i: usize, path: &mut Vec<String>) -> Option<usize> {
    let end = skip_string(src, i)?;
    let key: String = serde_json::from_slice(&src[i..end]).ok()?;
    let colon = skip_ws(src, end);
    (src.get(colon) == Some(&b':')).then(|| {
        path.push(key);
        colon + 1
    })
}

/// Returns the offset just after the string literal that starts at `i`.
fn skip_string(src: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < src.len() {
        match src[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

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
    walk_differences(a, b, &mut String::new(), &mut out);
    out
}

fn walk_differences(a: &Value, b: &Value, pointer: &mut String, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, left) in x {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape_pointer_token(key));
                match y.get(key) {
                    Some(right) => walk_differences(left, right, pointer, out),
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
                walk_differences(left, right, pointer, out);
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

    #[test]
    fn pointer_tokens_escape_tilde_then_slash_and_borrow_the_rest() {
        assert_eq!(escape_pointer_token("a~/b"), "a~0~1b");
        assert_eq!(escape_pointer_token("~1"), "~01");
        assert!(matches!(
            escape_pointer_token("$flights"),
            Cow::Borrowed("$flights")
        ));
        assert_eq!(escape_pointer_token("é/~ü"), "é~1~0ü");
        assert_eq!(unescape_pointer_token("a~0~1b"), "a~/b");
        assert_eq!(unescape_pointer_token("~01"), "~1");
        assert!(matches!(
            unescape_pointer_token("a/b"),
            Cow::Borrowed("a/b")
        ));
    }

    proptest::proptest! {
        #[test]
        fn a_pointer_token_unescapes_to_itself(token in "[a-z~/é0-9]{0,12}|\\PC{0,12}") {
            let escaped = escape_pointer_token(&token);
            proptest::prop_assert!(!escaped.contains('/'));
            proptest::prop_assert_eq!(unescape_pointer_token(&escaped), token.as_str());
        }
    }

    #[test]
    fn the_comparing_writer_agrees_with_the_text() {
        let value = serde_json::json!({"a": [1, 2.5e16, "x\"y"], "b": {"c": null}, "d": "é"});
        let text = to_sdk_json(&value);
        assert!(writes_as_sdk(&value, text.as_bytes()));
        for cut in 0..text.len() {
            let mut other = text.clone().into_bytes();
            assert!(
                !writes_as_sdk(&value, &other[..cut]),
                "a prefix of {cut} bytes"
            );
            other[cut] ^= 1;
            assert!(!writes_as_sdk(&value, &other), "byte {cut} changed");
        }
        assert!(!writes_as_sdk(&value, format!("{text}\n").as_bytes()));
    }

    #[test]
    fn pointers_find_their_values() {
        let src = br#"{"a": [1, {"b/c": "x", "d~": [true]}], "e": null}"#;
        let at = |p: &str| offset_of_pointer(src, p).map(|o| src[o] as char);
        assert_eq!(at(""), Some('{'));
        assert_eq!(at("/a/1/b~1c"), Some('"'));
        assert_eq!(at("/a/1/d~0/0"), Some('t'));
        assert_eq!(at("/e"), Some('n'));
        assert_eq!(at("/a/2"), None);
        assert_eq!(pointer_at_offset(src, 32), "/a/1/d~0/0");
    }

    #[test]
    fn numbers_keep_their_text() {
        let v = parse_value(b"[1.0, 1e16, 2.5e-7, 123456789012345678901234567890, -0.0]").unwrap();
        assert_eq!(
            to_sdk_json(&v),
            "[\n    1.0,\n    1e16,\n    2.5e-7,\n    123456789012345678901234567890,\n    -0.0\n]"
        );
    }

    #[test]
    fn duplicate_keys_are_rejected_with_their_pointer() {
        let err = parse_value(b"{\"a\": {\"b\": 1,\n \"b\": 2}}").unwrap_err();
        assert_eq!(err.kind, ErrorKind::DuplicateKey);
        assert_eq!(err.pointer, "/a");
        assert!(err.message.contains("\"b\""), "{}", err.message);
        assert_eq!(err.line, 2);
    }

    #[test]
    fn nan_is_named() {
        let err = parse_value(b"{\"x\": [1, NaN]}").unwrap_err();
        assert_eq!(err.kind, ErrorKind::NonFiniteNumber);
        assert_eq!((err.line, err.column), (1, 11));
    }

    #[test]
    fn differences_are_found_by_pointer() {
        let a = serde_json::json!({"a": 1, "b": [1, 2], "c/d": {"x": true}, "gone": 0});
        let b = serde_json::json!({"b": [1, 3], "a": 1, "c/d": {"x": false}, "new": null});
        let differences = diff(&a, &b);
        let pointers: Vec<&str> = differences.iter().map(Difference::pointer).collect();
        assert_eq!(pointers, ["/b/1", "/c~1d/x", "/gone", "/new"]);
        assert!(diff(&a, &a).is_empty());
    }
}
