//! A JSON tree that borrows its strings from the text it was parsed from: what detection looks at
//! and what the typed models are read out of. It accepts exactly the text [`parse_value`] accepts
//! (duplicate keys refused) and reads into a typed model exactly as the `Value` of the same text
//! does; it only costs less to build, since its objects are lists (no hashing) and a string with
//! no escape is not copied until a model keeps it.
//!
//! [`parse_value`]: super::parse_value

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde::{Deserialize, Deserializer};
use serde_json::{Error, Map, Number, Value};

use super::DUPLICATE_KEY;
use crate::protocol::number_key;

/// A JSON value whose strings and keys borrow from the parsed text where they can.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as serde_json keeps it (its digits, with `arbitrary_precision`).
    Number(Number),
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Node<'a>>),
    /// An object, its keys in the order of the text.
    Object(Object<'a>),
}

/// An object's entries in the order of the text, each key once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'a>(Vec<(Cow<'a, str>, Node<'a>)>);

impl<'a> Object<'a> {
    /// The value of `key`, if it has one.
    pub fn field(&self, key: &str) -> Option<&Node<'a>> {
        self.0.iter().find_map(|(k, v)| (k == key).then_some(v))
    }

    /// Whether it has `key`.
    pub fn has(&self, key: &str) -> bool {
        self.field(key).is_some()
    }

    /// Its keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| &**k)
    }

    /// Its entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node<'a>)> {
        self.into_iter()
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'b, 'a> IntoIterator for &'b Object<'a> {
    type Item = (&'b str, &'b Node<'a>);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'b, (Cow<'a, str>, Node<'a>)>,
        fn(&'b (Cow<'a, str>, Node<'a>)) -> (&'b str, &'b Node<'a>),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (&**k, v))
    }
}

impl<'a> Node<'a> {
    /// [`Node::parse`] of `src` when it is UTF-8 (as every file the SDK writes is); `None` also
    /// when it is not, for the caller to ask `parse_value`, which reads bytes too.
    pub fn from_bytes(src: &'a [u8]) -> Option<Node<'a>> {
        std::str::from_utf8(src).ok().and_then(Node::parse)
    }

    /// Parses `text` strictly, as [`super::parse_value`] does; `None` wherever that gives an
    /// error (the caller asks it for the located error).
    pub fn parse(text: &'a str) -> Option<Node<'a>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let StrictNode(node) = StrictNode::deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(node)
    }

    /// A tree that borrows from `value`.
    pub fn borrowed(value: &'a Value) -> Node<'a> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Number(n.clone()),
            Value::String(s) => Node::String(Cow::Borrowed(s)),
            Value::Array(items) => Node::Array(items.iter().map(Node::borrowed).collect()),
            Value::Object(obj) => Node::Object(Object(
                obj.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Node::borrowed(v)))
                    .collect(),
            )),
        }
    }

    /// The `Value` of the same JSON.
    pub fn into_value(self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(n) => Value::Number(n),
            Node::String(s) => Value::String(s.into_owned()),
            Node::Array(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
            Node::Object(Object(entries)) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), v.into_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }

    /// The object, if it is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Node::Object(obj) => Some(obj),
            _ => None,
        }
    }

    /// The items, if it is an array.
    pub fn as_array(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text, if it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether it is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// The value of `key`, if it is an object that has one.
    pub fn field(&self, key: &str) -> Option<&Node<'a>> {
        self.as_object()?.field(key)
    }

    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Node::Null => Unexpected::Unit,
            Node::Bool(b) => Unexpected::Bool(*b),
            Node::Number(_) => Unexpected::Other("number"),
            Node::String(s) => Unexpected::Str(s),
            Node::Array(_) => Unexpected::Seq,
            Node::Object(_) => Unexpected::Map,
        }
    }

    fn invalid_type(&self, expected: &dyn de::Expected) -> Error {
        de::Error::invalid_type(self.unexpected(), expected)
    }
}

/// A [`Node`] read strictly: no repeated key in an object, numbers kept as serde_json keeps
/// them (their exact text), and `NaN` refused. [`super::parse_value`] reads through it too.
pub(super) struct StrictNode<'a>(pub(super) Node<'a>);

impl<'de> Deserialize<'de> for StrictNode<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor).map(StrictNode)
    }
}

/// An object key, borrowed from the text unless it holds an escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
            fn visit_string<E>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node<'de>, E> {
        Number::from_f64(v)
            .map(Node::Number)
            .ok_or_else(|| E::custom("NaN and Infinity are not JSON numbers"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(StrictNode(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Node<'de>, A::Error> {
        /// Up to this many keys a new key is compared with each one; beyond, they are hashed.
        const SCAN: usize = 16;
        let mut entries: Vec<(Cow<'de, str>, Node<'de>)> = Vec::with_capacity(8);
        let mut seen: Option<HashSet<String>> = None;
        while let Some(Key(key)) = access.next_key()? {
            if entries.is_empty() && key == number_key() {
                let text: String = access.next_value()?;
                return Number::from_str(&text)
                    .map(Node::Number)
                    .map_err(de::Error::custom);
            }
            let repeated = match &mut seen {
                Some(seen) => !seen.insert(key.to_string()),
                None if entries.len() < SCAN => entries.iter().any(|(k, _)| *k == key),
                None => {
                    let keys = entries.iter().map(|(k, _)| k.to_string());
                    let set = seen.insert(keys.collect());
                    !set.insert(key.to_string())
                }
            };
            if repeated {
                return Err(de::Error::custom(format_args!("{DUPLICATE_KEY}{key:?}")));
            }
            let StrictNode(value) = access.next_value()?;
            entries.push((key, value));
        }
        Ok(Node::Object(Object(entries)))
    }
}

/// Reads the items of an array as `Value`'s reader does: an array longer than what the visitor
/// took is an error.
fn visit_array<'de, V: Visitor<'de>>(items: Vec<Node<'de>>, visitor: V) -> Result<V::Value, Error> {
    let len = items.len();
    let mut items = Items(items.into_iter());
    let seq = visitor.visit_seq(&mut items)?;
    if items.0.len() == 0 {
        Ok(seq)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in array"))
    }
}

/// Reads the entries of an object as `Value`'s reader does.
fn visit_object<'de, V: Visitor<'de>>(obj: Object<'de>, visitor: V) -> Result<V::Value, Error> {
    let len = obj.0.len();
    let mut entries = Entries {
        iter: obj.0.into_iter(),
        value: None,
    };
    let map = visitor.visit_map(&mut entries)?;
    if entries.iter.len() == 0 {
        Ok(map)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in map"))
    }
}

/// Each method does what `serde_json::Value`'s does for the same JSON (with `arbitrary_precision`);
/// where that would need a reader this type does not mirror (a `RawValue`), it fails, and the
/// caller reads the text as a `Value` instead.
macro_rules! number_method {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self {
                Node::Number(n) => n.$method(visitor),
                other => other.deserialize_any(visitor),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Node<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(b),
            Node::Number(n) => n.deserialize_any(visitor),
            Node::String(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
            Node::String(Cow::Owned(s)) => visitor.visit_string(s),
            Node::Array(items) => visit_array(items, visitor),
            Node::Object(obj) => visit_object(obj, visitor),
        }
    }

    number_method! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Node::Object(Object(entries)) => {
                let mut entries = entries.into_iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, value)), None) => visitor.visit_enum(Variant {
                        variant,
                        value: Some(value),
                    }),
                    _ => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            Node::String(variant) => visitor.visit_enum(Variant {
                variant,
                value: None,
            }),
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"string or map",
            )),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name.starts_with("$serde_json::") {
            return Err(de::Error::custom("a RawValue is read from a Value"));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Bool(b) => visitor.visit_bool(b),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::String(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
            Node::String(Cow::Owned(s)) => visitor.visit_string(s),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::String(_) => self.deserialize_string(visitor),
            Node::Array(items) => visit_array(items, visitor),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Null => visitor.visit_unit(),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Array(items) => visit_array(items, visitor),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Node::Object(obj) => visit_object(obj, visitor),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Node::Array(items) => visit_array(items, visitor),
            Node::Object(obj) => visit_object(obj, visitor),
            other => Err(other.invalid_type(&visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

struct Items<'de>(std::vec::IntoIter<Node<'de>>);

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|item| seed.deserialize(item)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries<'de> {
    iter: std::vec::IntoIter<(Cow<'de, str>, Node<'de>)>,
    value: Option<Node<'de>>,
}

impl<'de> MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(KeyReader(key)).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// Methods of [`KeyReader`] for what it does not read.
macro_rules! not_read_here {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(not_read_here())
        }
    )*};
}

/// An object key, read as `Value`'s map reader reads one: a string. A key read as a number,
/// a bool or an enum fails here (the models have none), and the caller reads a `Value` instead.
struct KeyReader<'de>(Cow<'de, str>);

impl<'de> Deserializer<'de> for KeyReader<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Cow::Borrowed(key) => visitor.visit_borrowed_str(key),
            Cow::Owned(key) => visitor.visit_string(key),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    not_read_here! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_bool
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(not_read_here())
    }

    serde::forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct
        map struct identifier ignored_any
    }
}

fn not_read_here() -> Error {
    de::Error::custom("a key of this type is read from a Value")
}

/// An enum's variant and its value, if the JSON gave one (`{"Variant": value}`).
struct Variant<'de> {
    variant: Cow<'de, str>,
    value: Option<Node<'de>>,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = Error;
    type Variant = VariantValue<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, VariantValue<'de>), Error> {
        let variant: de::value::StringDeserializer<Error> =
            self.variant.into_owned().into_deserializer();
        let value = VariantValue(self.value);
        seed.deserialize(variant).map(|v| (v, value))
    }
}

struct VariantValue<'de>(Option<Node<'de>>);

impl<'de> VariantAccess<'de> for VariantValue<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Some(value) => Deserialize::deserialize(value),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Node::Array(items)) if items.is_empty() => visitor.visit_unit(),
            Some(Node::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(Node::Object(obj)) => visit_object(obj, visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"struct variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Debug;

    use indexmap::IndexMap;
    use serde::de::DeserializeOwned;
    use serde::Deserialize;
    use serde_json::Value;

    use super::super::{parse_value, ErrorKind};
    use super::Node;

    /// Reading `text` as `T` through a [`Node`] succeeds exactly when reading it through a
    /// `Value` does, with the same value; `Node::parse` accepts exactly what serde_json's own
    /// `Value` reader does on texts without a repeated key.
    fn same<T: DeserializeOwned + PartialEq + Debug>(text: &str) {
        let by_value = serde_json::from_str::<Value>(text).ok();
        let node = Node::parse(text);
        assert_eq!(node.is_some(), by_value.is_some(), "parse of {text}");
        let (Some(node), Some(value)) = (node, by_value) else {
            return;
        };
        assert_eq!(Node::borrowed(&value), node, "the trees of {text} differ");
        assert_eq!(node.clone().into_value(), value, "into_value of {text}");
        let by_node = T::deserialize(node).ok();
        let by_value = T::deserialize(value).ok();
        assert_eq!(
            by_node,
            by_value,
            "{text} as {}",
            std::any::type_name::<T>()
        );
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Shape {
        Unit,
        Newtype(i64),
        Tuple(i64, String),
        Struct { a: Option<i64> },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: Option<Value>,
        #[serde(default)]
        b: Vec<u8>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Pair(i64, String);

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u64),
        Text(String),
        Map(IndexMap<String, Option<i64>>),
    }

    const TEXTS: &[&str] = &[
        "null",
        "true",
        "0",
        "-7",
        "1.5",
        "-0.0",
        "1e400",
        "18446744073709551616123",
        r#""text""#,
        r#""esc\u0061ped\n""#,
        r#""\ud83d\ude00""#,
        "[]",
        "[1]",
        r#"[1, "x"]"#,
        r#"[1, "x", 3]"#,
        "[1, 2, 3]",
        "{}",
        r#"{"a": null}"#,
        r#"{"a": 1, "b": [1, 2]}"#,
        r#"{"a": 1, "c": 2}"#,
        r#"{"k\u0065y": {"x": null}}"#,
        r#""Unit""#,
        r#"{"Unit": null}"#,
        r#"{"Unit": 1}"#,
        r#"{"Newtype": 3}"#,
        r#"{"Newtype": null}"#,
        r#"{"Tuple": [1, "x"]}"#,
        r#"{"Tuple": []}"#,
        r#"{"Struct": {"a": null}}"#,
        r#"{"Struct": [null]}"#,
        r#"{"Struct": {"a": 1}, "Unit": null}"#,
        r#""Newtype""#,
        "NaN",
        "[1,]",
        "{} {}",
    ];

    #[test]
    fn every_shape_reads_as_through_a_value() {
        for text in TEXTS {
            same::<Value>(text);
            same::<Option<Value>>(text);
            same::<Option<i64>>(text);
            same::<u8>(text);
            same::<f64>(text);
            same::<String>(text);
            same::<Vec<u8>>(text);
            same::<Vec<Value>>(text);
            same::<(i64, String)>(text);
            same::<Pair>(text);
            same::<()>(text);
            same::<bool>(text);
            same::<Shape>(text);
            same::<Strict>(text);
            same::<Either>(text);
            same::<IndexMap<String, Option<Value>>>(text);
            same::<serde::de::IgnoredAny>(text);
        }
    }

    /// A repeated key is refused by the tree and by `parse_value`, which reads through it.
    #[test]
    fn a_repeated_key_is_refused() {
        let text = r#"{"a": 1, "b": {"a": 2, "a": 3}}"#;
        assert_eq!(Node::parse(text), None);
        let err = parse_value(text.as_bytes()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::DuplicateKey, "{err}");
        assert_eq!(err.pointer, "/b", "{err}");
    }
}
