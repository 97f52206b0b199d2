//! Prefixed ids (`plan-…`, `wkfl-…`, `pr-…`, `prun-…`, `clar-…`) read the way the SDK reads them
//! and written in the SDK's canonical form.
//!
//! The SDK hands the part after the prefix to Python's `UUID()`, which removes `urn:`, `uuid:`,
//! braces and hyphens wherever they are. No JSON Schema pattern can say "hyphens anywhere", so
//! this toolkit reads the documented subset a pattern can describe ([`UUID_PATTERN`]): 32 hex
//! digits in any case, either hyphenated 8-4-4-4-12 or not at all, optionally in braces,
//! optionally after `urn:uuid:`. Every id the SDK writes (lowercase, hyphenated) is in it.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::json::excerpt;
use crate::version::Version;

/// One UUID as read here, hyphenated or not (no anchors).
const UUID_BODY: &str = "(?:[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32})";

/// Schema pattern of the UUID part of an id (after `<prefix>-`, or in a `{"uuid": …}` object).
pub const UUID_PATTERN: &str = "^(?:urn:uuid:)?(?:(?:[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32})|\\{(?:[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32})\\})$";

/// The id prefixes the SDK has used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prefix {
    /// `plan-`: plans, all versions.
    Plan,
    /// `wkfl-`: workflows (W1).
    Wkfl,
    /// `pr-`: plan runs in R0 only.
    Pr,
    /// `prun-`: plan runs from R1 on.
    Prun,
    /// `clar-`: clarifications, all versions.
    Clar,
}

impl Prefix {
    /// The prefix as written before the first `-`.
    pub fn as_str(self) -> &'static str {
        match self {
            Prefix::Plan => "plan",
            Prefix::Wkfl => "wkfl",
            Prefix::Pr => "pr",
            Prefix::Prun => "prun",
            Prefix::Clar => "clar",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "plan" => Prefix::Plan,
            "wkfl" => Prefix::Wkfl,
            "pr" => Prefix::Pr,
            "prun" => Prefix::Prun,
            "clar" => Prefix::Clar,
            _ => return None,
        })
    }
}

/// A prefix plus a UUID; remembers whether the input was in the SDK's canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrefixedId {
    prefix: Prefix,
    uuid: u128,
}

impl PrefixedId {
    /// Builds an id from its parts.
    pub fn new(prefix: Prefix, uuid: u128) -> Self {
        PrefixedId { prefix, uuid }
    }

    /// The prefix.
    pub fn prefix(&self) -> Prefix {
        self.prefix
    }

    /// The UUID as a 128-bit number.
    pub fn uuid(&self) -> u128 {
        self.uuid
    }

    /// The same UUID under another prefix (the `wkfl-`/`pr-` → `prun-` rewrite).
    pub fn with_prefix(self, prefix: Prefix) -> Self {
        PrefixedId { prefix, ..self }
    }

    /// Parses `<prefix>-<uuid>` as the SDK does: split at the first `-`, the prefix must be one of
    /// `allowed`, and the rest is a UUID in one of the spellings of [`UUID_PATTERN`] (a documented
    /// subset of what Python's `UUID()` reads).
    pub fn parse(text: &str, allowed: &[Prefix]) -> Result<Self, String> {
        let Some((prefix, rest)) = text.split_once('-') else {
            return Err(format!(
                "expected an id like \"{}-<uuid>\", got {}",
                allowed[0].as_str(),
                excerpt(text)
            ));
        };
        let prefix = Prefix::parse(prefix)
            .filter(|p| allowed.contains(p))
            .ok_or_else(|| {
                format!(
                    "prefix {} does not match the expected prefix {}",
                    excerpt(prefix),
                    expected(allowed)
                )
            })?;
        let uuid =
            parse_python_uuid(rest).ok_or_else(|| format!("{} is not a UUID", excerpt(rest)))?;
        Ok(PrefixedId { prefix, uuid })
    }

    fn parse_uuid_object(uuid: &str, allowed: &[Prefix]) -> Result<Self, String> {
        let uuid =
            parse_python_uuid(uuid).ok_or_else(|| format!("{} is not a UUID", excerpt(uuid)))?;
        Ok(PrefixedId {
            prefix: allowed[0],
            uuid,
        })
    }
}

fn expected(allowed: &[Prefix]) -> String {
    allowed
        .iter()
        .map(|p| format!("\"{}\"", p.as_str()))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// A UUID in one of the spellings of [`UUID_PATTERN`]: an optional `urn:uuid:`, optional braces
/// around it, and 32 hex digits in any case, hyphenated 8-4-4-4-12 or not at all.
fn parse_python_uuid(text: &str) -> Option<u128> {
    let text = text.strip_prefix("urn:uuid:").unwrap_or(text);
    let text = match text.strip_prefix('{') {
        Some(inner) => inner.strip_suffix('}')?,
        None => text,
    };
    // Simple (32 digits) or hyphenated (8-4-4-4-12) only: `try_parse` also takes the braced and
    // URN forms, which were stripped above, once.
    if !matches!(text.len(), 32 | 36) {
        return None;
    }
    uuid::Uuid::try_parse(text).ok().map(|uuid| uuid.as_u128())
}

/// Schema pattern of an id string with one of `prefixes`.
fn id_pattern(prefixes: &[Prefix]) -> String {
    let alternatives: Vec<&str> = prefixes.iter().map(|p| p.as_str()).collect();
    format!(
        "^(?:{})-(?:urn:uuid:)?(?:{UUID_BODY}|\\{{{UUID_BODY}\\}})$",
        alternatives.join("|")
    )
}

/// The schema of an id with one of `prefixes`: the string, or the `{"uuid": …}` object.
fn id_schema(prefixes: &[Prefix], description: &str) -> Schema {
    let example = format!(
        "{}-1742945e-63bf-4a2f-be54-b73e18e0a25e",
        prefixes[0].as_str()
    );
    json_schema!({
        "description": description,
        "anyOf": [
            {
                "type": "string",
                "pattern": id_pattern(prefixes),
                "examples": [example]
            },
            {
                "type": "object",
                "description": "The object form the SDK's validator also reads; the id takes the first prefix (for a run, the document version's prefix).",
                "properties": {
                    "uuid": {
                        "type": "string",
                        "description": "The UUID alone, in one of the spellings the string form accepts after its prefix.",
                        "pattern": UUID_PATTERN
                    }
                },
                "required": ["uuid"],
                "additionalProperties": false
            }
        ]
    })
}

impl PrefixedId {
    /// `<prefix>-<uuid>` written into `buf`, without allocating: ids are everywhere.
    fn text<'b>(&self, buf: &'b mut [u8; 41]) -> &'b str {
        let prefix = self.prefix.as_str();
        buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
        buf[prefix.len()] = b'-';
        let uuid = uuid::Uuid::from_u128(self.uuid)
            .hyphenated()
            .encode_lower(&mut buf[prefix.len() + 1..])
            .len();
        std::str::from_utf8(&buf[..prefix.len() + 1 + uuid]).expect("ASCII")
    }
}

impl fmt::Display for PrefixedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text(&mut [0; 41]))
    }
}

impl Serialize for PrefixedId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.text(&mut [0; 41]))
    }
}

struct IdVisitor(&'static [Prefix]);

impl<'de> Visitor<'de> for IdVisitor {
    type Value = PrefixedId;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a string id with prefix {}", expected(self.0))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<PrefixedId, E> {
        PrefixedId::parse(v, self.0).map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PrefixedId, A::Error> {
        let mut uuid: Option<String> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "uuid" if uuid.is_none() => uuid = Some(map.next_value()?),
                other => {
                    return Err(de::Error::custom(format!(
                        "an id object holds only \"uuid\", found {}",
                        excerpt(other)
                    )))
                }
            }
        }
        let uuid = uuid.ok_or_else(|| de::Error::missing_field("uuid"))?;
        PrefixedId::parse_uuid_object(&uuid, self.0).map_err(de::Error::custom)
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, [$($prefix:ident),+], $description:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub PrefixedId);

        impl $name {
            /// The prefixes this id accepts on input.
            pub const PREFIXES: &'static [Prefix] = &[$(Prefix::$prefix),+];
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(IdVisitor(Self::PREFIXES)).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                id_schema(Self::PREFIXES, $description)
            }
        }
    };
}

id_type!(
    /// A plan id, `plan-<uuid>`.
    PlanId,
    [Plan],
    "A plan id, `plan-<uuid>`. The SDK writes the uuid lowercase and hyphenated; it also reads it uppercase, without hyphens, in braces or after `urn:uuid:`, and this toolkit writes it back canonically."
);
id_type!(
    /// A run id in any version: `wkfl-` (W1), `pr-` (R0) or `prun-` (R1+); the document's
    /// version check decides which one is right where.
    RunId,
    [Prun, Pr, Wkfl],
    "A run id: `wkfl-<uuid>` (W1), `pr-<uuid>` (R0) or `prun-<uuid>` (R1 on); detection checks that the prefix matches the rest of the document. The SDK writes the uuid lowercase and hyphenated; it also reads it uppercase, without hyphens, in braces or after `urn:uuid:`, and this toolkit writes it back canonically."
);
id_type!(
    /// A clarification id, `clar-<uuid>`.
    ClarificationId,
    [Clar],
    "A clarification id, `clar-<uuid>`. The SDK writes the uuid lowercase and hyphenated; it also reads it uppercase, without hyphens, in braces or after `urn:uuid:`, and this toolkit writes it back canonically."
);

/// The run-id prefixes a run of `version` is read with, for its own id and its clarifications'
/// run references: the version's own prefix (the SDK's typed id checks it), except that R0 and R1
/// are read by one struct and so share `pr-` and `prun-` (detection tells them apart by it).
pub fn run_prefixes(version: Version) -> &'static [Prefix] {
    match version {
        Version::W1 => &[Prefix::Wkfl],
        Version::R0 | Version::R1 => &[Prefix::Prun, Prefix::Pr],
        _ => &[Prefix::Prun],
    }
}

/// Reads a run id with one of the prefixes given, where [`RunId`] alone takes any run prefix.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunIdSeed(pub(crate) &'static [Prefix]);

impl<'de> DeserializeSeed<'de> for RunIdSeed {
    type Value = RunId;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RunId, D::Error> {
        deserializer.deserialize_any(IdVisitor(self.0)).map(RunId)
    }
}

/// [`RunIdSeed`] for a value that may be `null`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptionalRunIdSeed(pub(crate) &'static [Prefix]);

impl<'de> DeserializeSeed<'de> for OptionalRunIdSeed {
    type Value = Option<RunId>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptionalRunIdSeed {
    type Value = Option<RunId>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "null or a string id with prefix {}", expected(self.0))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        RunIdSeed(self.0).deserialize(deserializer).map(Some)
    }
}

/// Holds the `RunId` definition of a run schema to the prefixes a run of `version` is read with
/// ([`run_prefixes`]).
pub(crate) fn restrict_run_ids(schema: &mut serde_json::Value, version: Version) {
    let prefixes = run_prefixes(version);
    let names: Vec<String> = prefixes
        .iter()
        .map(|p| format!("`{}-<uuid>`", p.as_str()))
        .collect();
    let run_id = &mut schema["$defs"]["RunId"];
    run_id["anyOf"][0]["pattern"] = id_pattern(prefixes).into();
    run_id["anyOf"][0]["examples"] = serde_json::json!([format!(
        "{}-1742945e-63bf-4a2f-be54-b73e18e0a25e",
        prefixes[0].as_str()
    )]);
    let shared = if prefixes.len() > 1 {
        " (R0 and R1 are read alike; detection tells them apart by the prefix)"
    } else {
        ""
    };
    run_id["description"] = format!(
        "A run id of {version}: {}{shared}. The SDK writes the uuid lowercase and hyphenated; it also reads it uppercase, without hyphens, in braces or after `urn:uuid:`, and this toolkit writes it back canonically.",
        names.join(" or ")
    )
    .into();
}

/// A run id that must be a `prun-` one: the owner of an agent-memory output (agent memory exists
/// from R2 on, when every run id is `prun-`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PrunId(pub RunId);

impl PrunId {
    const PREFIXES: &'static [Prefix] = &[Prefix::Prun];
}

impl<'de> Deserialize<'de> for PrunId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(IdVisitor(Self::PREFIXES))
            .map(|id| PrunId(RunId(id)))
    }
}

impl JsonSchema for PrunId {
    fn schema_name() -> Cow<'static, str> {
        "PlanRunId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        id_schema(
            Self::PREFIXES,
            "A `prun-<uuid>` run id (agent memory exists from R2 on, when every run id is `prun-`). The SDK writes the uuid lowercase and hyphenated; it also reads it uppercase, without hyphens, in braces or after `urn:uuid:`.",
        )
    }
}

/// Reads a [`RunId`] that must have the `prun-` prefix.
pub(crate) fn prun<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RunId, D::Error> {
    PrunId::deserialize(deserializer).map(|id| id.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_uuid_forms_are_accepted_and_canonicalised() {
        let canonical = "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e";
        for input in [
            canonical,
            "prun-1742945E-63BF-4A2F-BE54-B73E18E0A25E",
            "prun-1742945e63bf4a2fbe54b73e18e0a25e",
            "prun-{1742945e-63bf-4a2f-be54-b73e18e0a25e}",
            "prun-urn:uuid:1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-urn:uuid:{1742945E63BF4A2FBE54B73E18E0A25E}",
            "prun-1742945e-63BF-4a2f-BE54-b73e18e0a25e",
        ] {
            let id = PrefixedId::parse(input, RunId::PREFIXES).unwrap();
            assert_eq!(id.to_string(), canonical, "{input}");
        }
        let object: RunId =
            serde_json::from_str(r#"{"uuid": "1742945e-63bf-4a2f-be54-b73e18e0a25e"}"#).unwrap();
        assert_eq!(object.to_string(), canonical);
    }

    #[test]
    fn wrong_prefixes_and_bad_uuids_are_rejected() {
        let err = PrefixedId::parse("plan-1742945e-63bf-4a2f-be54-b73e18e0a25e", RunId::PREFIXES)
            .unwrap_err();
        assert!(err.contains("does not match"), "{err}");
        assert!(PrefixedId::parse("prun-1742945e", RunId::PREFIXES).is_err());
        assert!(PrefixedId::parse("prun", RunId::PREFIXES).is_err());
        assert!(serde_json::from_str::<PlanId>("42").is_err());
    }

    #[test]
    fn spellings_no_pattern_can_describe_are_rejected() {
        // Python's UUID() reads all of these; the documented subset does not.
        for input in [
            "prun-17-42945e63bf4a2fbe54b73e18e0a25e",
            "prun-1742945e63bf-4a2f-be54-b73e18e0a25e",
            "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e-",
            "prun-uuid:1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-urn:1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-{1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e}",
            "prun-{{1742945e-63bf-4a2f-be54-b73e18e0a25e}}",
            "prun-{urn:uuid:1742945e-63bf-4a2f-be54-b73e18e0a25e}",
            "prun- 1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-1742945g-63bf-4a2f-be54-b73e18e0a25e",
        ] {
            assert!(
                PrefixedId::parse(input, RunId::PREFIXES).is_err(),
                "{input}"
            );
        }
        assert!(serde_json::from_str::<RunId>(
            r#"{"uuid": "1742945e63bf-4a2f-be54-b73e18e0a25e"}"#
        )
        .is_err());
        assert!(serde_json::from_str::<RunId>(
            r#"{"uuid": "1742945e-63bf-4a2f-be54-b73e18e0a25e", "x": 1}"#
        )
        .is_err());
    }

    #[test]
    fn agent_memory_owners_are_prun_runs() {
        for good in [
            r#""prun-1742945e-63bf-4a2f-be54-b73e18e0a25e""#,
            r#"{"uuid": "1742945e-63bf-4a2f-be54-b73e18e0a25e"}"#,
        ] {
            let id: PrunId = serde_json::from_str(good).unwrap();
            assert_eq!(id.0 .0.prefix(), Prefix::Prun, "{good}");
        }
        for bad in [
            r#""wkfl-1742945e-63bf-4a2f-be54-b73e18e0a25e""#,
            r#""pr-1742945e-63bf-4a2f-be54-b73e18e0a25e""#,
        ] {
            assert!(serde_json::from_str::<PrunId>(bad).is_err(), "{bad}");
        }
    }
}
