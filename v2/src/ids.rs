//! Prefixed ids in the one canonical form V2 accepts: `<prefix>-<lowercase hyphenated uuid>`.
//!
//! The fields stay plain `String`s; these readers reject any other spelling (uppercase hex, braces,
//! `urn:uuid:`, `{"uuid": …}` objects), exactly as the `pattern` in the schemas does. Lenient
//! legacy spellings are the converter's business, not the V2 wire format's.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;

/// Schema pattern of a plan run id (`prun-…`).
pub const PLAN_RUN_ID_PATTERN: &str =
    "^prun-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
/// Schema pattern of a plan id (`plan-…`).
pub const PLAN_ID_PATTERN: &str =
    "^plan-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
/// Schema pattern of a clarification id (`clar-…`).
pub const CLARIFICATION_ID_PATTERN: &str =
    "^clar-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/// True when `text` is `<prefix>-` followed by a lowercase, hyphenated 8-4-4-4-12 uuid.
pub fn is_canonical(prefix: &str, text: &str) -> bool {
    let Some(uuid) = text
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('-'))
    else {
        return false;
    };
    let groups: Vec<&str> = uuid.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(is_lower_hex))
}

fn is_lower_hex(byte: u8) -> bool {
    byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)
}

fn read<'de, D: Deserializer<'de>>(deserializer: D, prefix: &str) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if is_canonical(prefix, &text) {
        Ok(text)
    } else {
        Err(D::Error::custom(format!(
            "expected a `{prefix}-` id with a lowercase hyphenated uuid, found {text:?}"
        )))
    }
}

/// Reads a `prun-` id.
pub(crate) fn plan_run<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    read(deserializer, "prun")
}

/// Reads a `plan-` id.
pub(crate) fn plan<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    read(deserializer, "plan")
}

/// Reads a `clar-` id.
pub(crate) fn clarification<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    read(deserializer, "clar")
}

#[cfg(test)]
mod tests {
    use super::is_canonical;

    #[test]
    fn only_the_canonical_spelling_is_accepted() {
        let good = "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e";
        assert!(is_canonical("prun", good));
        for bad in [
            "prun-1742945E-63bf-4a2f-be54-b73e18e0a25e",
            "pr-1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "plan-1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-1742945e63bf4a2fbe54b73e18e0a25e",
            "prun-{1742945e-63bf-4a2f-be54-b73e18e0a25e}",
            "prun-1742945e-63bf-4a2f-be54-b73e18e0a25",
            "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e-",
            "prun-1742945g-63bf-4a2f-be54-b73e18e0a25e",
            "prun--1742945e-63bf-4a2f-be54-b73e18e0a25",
            " prun-1742945e-63bf-4a2f-be54-b73e18e0a25e",
            "prun-1742945e-63bf-4a2f-be54-b73e18e0a25e\n",
        ] {
            assert!(!is_canonical("prun", bad), "{bad}");
        }
    }
}
