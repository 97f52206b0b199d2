//! Prefixed ids (`plan-…`, `wkfl-…`, `pr-…`, `prun-…`, `clar-…`) read the way the SDK reads them
//! (§1 of the wire-format spec) and written in the SDK's canonical form.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::excerpt;

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
    /// `allowed`, and the rest is read like Python's `UUID()` (any case, hyphens anywhere, braces,
    /// `urn:uuid:`).
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

/// Python's `UUID(hex)`: strip `urn:`/`uuid:`, braces and hyphens, then exactly 32 hex digits.
fn parse_python_uuid(text: &str) -> Option<u128> {
    let text = text.replace("urn:", "").replace("uuid:", "");
    let hex: String = text
        .trim_matches(|c| c == '{' || c == '}')
        .chars()
        .filter(|&c| c != '-')
        .collect();
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u128::from_str_radix(&hex, 16).ok()
}

impl fmt::Display for PrefixedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = format!("{:032x}", self.uuid);
        write!(
            f,
            "{}-{}-{}-{}-{}-{}",
            self.prefix.as_str(),
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

impl Serialize for PrefixedId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
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
    ($(#[$doc:meta])* $name:ident, [$($prefix:ident),+]) => {
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
    };
}

id_type!(
    /// A plan id, `plan-<uuid>`.
    PlanId,
    [Plan]
);
id_type!(
    /// A run id in any version: `wkfl-` (W1), `pr-` (R0) or `prun-` (R1+); the document's
    /// version check decides which one is right where.
    RunId,
    [Prun, Pr, Wkfl]
);
id_type!(
    /// A clarification id, `clar-<uuid>`.
    ClarificationId,
    [Clar]
);

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
}
