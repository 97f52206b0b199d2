//! Secret-bearing config values: held in memory, never shown, never written in clear.
//!
//! Reading accepts any string (a real key, or the SDK's own mask). Writing, `Debug` and `Display`
//! only ever produce the redacted form, so a document this crate writes cannot leak a secret, and
//! writing an already redacted document gives the same bytes again.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The mask the SDK writes for a non-empty secret.
pub const REDACTED: &str = "**********";

/// A secret string (an API key, the AWS secret access key) that is only ever written as its mask.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The real value, for code that has to use it (never for output).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when no secret is set (the SDK's default `""`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What is written instead of the value: the mask, or `""` when empty.
    pub fn redacted(&self) -> &'static str {
        if self.0.is_empty() {
            ""
        } else {
            REDACTED
        }
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::new(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Secret").field(&self.redacted()).finish()
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.redacted())
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.redacted())
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

impl JsonSchema for Secret {
    fn schema_name() -> Cow<'static, str> {
        "Secret".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "A secret. Always written redacted: \"**********\" when set, \"\" when empty."
        })
    }
}

/// A URL that may carry credentials (the LLM Redis cache URL); written with its password masked.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RedactedUrl(String);

impl RedactedUrl {
    /// Wraps a URL.
    pub fn new(value: impl Into<String>) -> Self {
        RedactedUrl(value.into())
    }

    /// The real URL, credentials included, for code that has to connect with it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL as written: every password replaced by [`REDACTED`].
    pub fn redacted(&self) -> Cow<'_, str> {
        redact_url(&self.0)
    }
}

impl From<&str> for RedactedUrl {
    fn from(value: &str) -> Self {
        RedactedUrl::new(value)
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RedactedUrl")
            .field(&self.redacted())
            .finish()
    }
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl Serialize for RedactedUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for RedactedUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(RedactedUrl)
    }
}

impl JsonSchema for RedactedUrl {
    fn schema_name() -> Cow<'static, str> {
        "RedactedUrl".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "A URL that may embed credentials. Always written with its password (user-info after `:`, a lone user-info, or a `password` query parameter) replaced by \"**********\"."
        })
    }
}

/// Masks the credentials of a URL such as `redis://user:pass@host:6379/0?password=x`.
///
/// Masked: the password after `:` in the user-info, a user-info without `:` (some Redis clients
/// read a lone user-info as the password), and the value of any `password` query parameter.
/// Everything else is kept byte for byte; masking is idempotent.
pub fn redact_url(url: &str) -> Cow<'_, str> {
    let authority_start = url.find("://").map_or(0, |at| at + 3);
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| authority_start + at);
    let query = url[authority_end..].find('?').map(|at| {
        let start = authority_end + at + 1;
        let end = url[start..].find('#').map_or(url.len(), |at| start + at);
        (start, end)
    });

    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..authority_start]);
    let authority = &url[authority_start..authority_end];
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.split_once(':') {
                Some((user, password)) if !password.is_empty() => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(REDACTED);
                }
                Some(_) => out.push_str(userinfo),
                None if userinfo.is_empty() => {}
                None => out.push_str(REDACTED),
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    match query {
        Some((start, end)) => {
            out.push_str(&url[authority_end..start]);
            let pairs: Vec<String> = url[start..end].split('&').map(redact_pair).collect();
            out.push_str(&pairs.join("&"));
            out.push_str(&url[end..]);
        }
        None => out.push_str(&url[authority_end..]),
    }

    if out == url {
        Cow::Borrowed(url)
    } else {
        Cow::Owned(out)
    }
}

fn redact_pair(pair: &str) -> String {
    match pair.split_once('=') {
        Some((key, value)) if key.eq_ignore_ascii_case("password") && !value.is_empty() => {
            format!("{key}={REDACTED}")
        }
        _ => pair.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_are_masked_and_the_rest_kept() {
        for (url, expected) in [
            ("", ""),
            ("redis://localhost:6379/0", "redis://localhost:6379/0"),
            (
                "redis://:hunter2@cache:6379/0",
                "redis://:**********@cache:6379/0",
            ),
            (
                "rediss://bob:hunter2@cache:6380",
                "rediss://bob:**********@cache:6380",
            ),
            ("redis://bob:@cache", "redis://bob:@cache"),
            ("redis://hunter2@cache", "redis://**********@cache"),
            ("redis://bob:p@ss@cache/1", "redis://bob:**********@cache/1"),
            (
                "redis://cache/0?db=1&password=hunter2#frag",
                "redis://cache/0?db=1&password=**********#frag",
            ),
            (
                "unix:///tmp/redis.sock?Password=x",
                "unix:///tmp/redis.sock?Password=**********",
            ),
            ("bob:hunter2@cache:6379", "bob:**********@cache:6379"),
            ("redis://cache/a@b:c", "redis://cache/a@b:c"),
        ] {
            assert_eq!(redact_url(url), expected, "{url}");
            assert_eq!(redact_url(expected), expected, "idempotent on {expected}");
        }
    }
}
