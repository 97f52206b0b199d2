//! Secret-bearing config values: held in memory, never shown, never written in clear.
//!
//! Reading accepts any string (a real key, or the SDK's own mask). Writing, `Debug` and `Display`
//! only ever produce the masked form, so a document written with these types cannot leak a
//! secret, and writing an already masked document gives the same bytes again. The legacy and
//! V2 models share these types, so both sides mask exactly the same parts, and [`url_redaction`]
//! tells a caller each secret a URL's masking hid, for reporting.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What every non-empty secret is written as: the SDK's own `SecretStr` mask.
pub const MASK: &str = "**********";

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

    /// Whether the input held a real secret (not empty, not already masked): writing it hides
    /// something, which a caller may want to report.
    pub fn is_clear(&self) -> bool {
        !self.0.is_empty() && self.0 != MASK
    }

    /// What is written instead of the value: the mask, or `""` when empty.
    pub fn redacted(&self) -> &'static str {
        if self.0.is_empty() {
            ""
        } else {
            MASK
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

/// Written as it is displayed: masked.
impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
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
        string_schema(
            "A secret. Always written redacted: \"**********\" when set, \"\" when empty.",
        )
    }
}

/// A URL that may carry credentials (the LLM Redis cache URL); written with every secret in it
/// masked by [`redact_url`].
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

    /// The URL as written: every secret in it replaced by [`MASK`].
    pub fn redacted(&self) -> Cow<'_, str> {
        redact_url(&self.0)
    }

    /// Whether the URL carries a secret in clear, i.e. whether writing it masks anything: a
    /// password, a lone user-info or a `password` query parameter that is not already the mask.
    pub fn has_password(&self) -> bool {
        !url_redaction(&self.0).masked.is_empty()
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

/// Written as it is displayed: with its secrets masked.
impl Serialize for RedactedUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
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
        string_schema("A URL that may embed credentials. Always written with its password (user-info after `:`, a lone user-info, or a `password` query parameter) replaced by \"**********\".")
    }
}

/// The schema of a string-typed secret with `description`, for crates that publish their own
/// wording of the same rule under their own schema name.
pub fn string_schema(description: &str) -> Schema {
    json_schema!({
        "type": "string",
        "description": description
    })
}

/// Where in a URL a secret stood that [`url_redaction`] masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlSecret<'a> {
    /// The password after `:` in the user-info (`redis://user:pw@host`).
    Password,
    /// A user-info without `:` (`redis://pw@host`), which some Redis clients read as the password.
    UserInfo,
    /// A query parameter named `password` in any ASCII case (`?password=pw`); the name as spelt.
    Query(&'a str),
}

/// A URL with its secrets masked, and what the masking hid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRedaction<'a> {
    /// The URL as it is written: the input, byte for byte, except each secret replaced by [`MASK`].
    pub text: Cow<'a, str>,
    /// Each secret that stood in clear, in URL order. A part that already held the mask is
    /// masked again but not listed, so a masked document reports nothing.
    pub masked: Vec<UrlSecret<'a>>,
}

/// Masks the credentials of a URL such as `redis://user:pass@host:6379/0?password=x` and lists
/// each secret it hid: the one rule by which every crate of this workspace writes a URL.
///
/// Masked: the password after `:` in the user-info (an empty one is left empty), a non-empty
/// user-info without `:` (some Redis clients read a lone user-info as the password), and the
/// non-empty value of any `password` query parameter. A URL without `://` is read as starting
/// with its authority. Everything else is kept byte for byte; masking is idempotent.
pub fn url_redaction(url: &str) -> UrlRedaction<'_> {
    let authority_start = url.find("://").map_or(0, |at| at + 3);
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| authority_start + at);
    let mut secrets: Vec<(Range<usize>, UrlSecret<'_>)> = Vec::new();
    if let Some(at) = url[authority_start..authority_end].rfind('@') {
        let userinfo = authority_start..authority_start + at;
        match url[userinfo.clone()].find(':') {
            Some(colon) if userinfo.start + colon + 1 < userinfo.end => {
                secrets.push((
                    userinfo.start + colon + 1..userinfo.end,
                    UrlSecret::Password,
                ));
            }
            Some(_) => {}
            None if userinfo.is_empty() => {}
            None => secrets.push((userinfo, UrlSecret::UserInfo)),
        }
    }
    if let Some(at) = url[authority_end..].find('?') {
        let start = authority_end + at + 1;
        let end = url[start..].find('#').map_or(url.len(), |at| start + at);
        let mut pair_start = start;
        for pair in url[start..end].split('&') {
            if let Some((key, value)) = pair.split_once('=') {
                if key.eq_ignore_ascii_case("password") && !value.is_empty() {
                    let value_start = pair_start + key.len() + 1;
                    secrets.push((value_start..pair_start + pair.len(), UrlSecret::Query(key)));
                }
            }
            pair_start += pair.len() + 1;
        }
    }
    secrets.retain(|(range, _)| &url[range.clone()] != MASK);
    if secrets.is_empty() {
        return UrlRedaction {
            text: Cow::Borrowed(url),
            masked: Vec::new(),
        };
    }
    let mut text = String::with_capacity(url.len());
    let mut kept_from = 0;
    for (range, _) in &secrets {
        text.push_str(&url[kept_from..range.start]);
        text.push_str(MASK);
        kept_from = range.end;
    }
    text.push_str(&url[kept_from..]);
    UrlRedaction {
        text: Cow::Owned(text),
        masked: secrets.into_iter().map(|(_, secret)| secret).collect(),
    }
}

/// A URL as it is written: [`url_redaction`]'s text, without the list of what it hid.
pub fn redact_url(url: &str) -> Cow<'_, str> {
    url_redaction(url).text
}

#[cfg(test)]
mod tests {
    use super::*;

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
            ("redis://a:b:c@cache", "redis://a:**********@cache"),
            (
                "redis://cache/0?db=1&password=hunter2#frag",
                "redis://cache/0?db=1&password=**********#frag",
            ),
            (
                "unix:///tmp/redis.sock?Password=x",
                "unix:///tmp/redis.sock?Password=**********",
            ),
            ("redis://cache?password=&x=1", "redis://cache?password=&x=1"),
            ("bob:hunter2@cache:6379", "bob:**********@cache:6379"),
            ("redis://cache/a@b:c", "redis://cache/a@b:c"),
        ] {
            assert_eq!(redact_url(url), expected, "{url}");
            assert_eq!(redact_url(expected), expected, "idempotent on {expected}");
        }
    }

    #[test]
    fn each_secret_in_clear_is_listed_once() {
        let redaction = url_redaction("redis://:pw@h:6379/0?db=1&PassWord=x&password=y#password=z");
        assert_eq!(
            redaction.text,
            "redis://:**********@h:6379/0?db=1&PassWord=**********&password=**********#password=z"
        );
        assert_eq!(
            redaction.masked,
            [
                UrlSecret::Password,
                UrlSecret::Query("PassWord"),
                UrlSecret::Query("password")
            ]
        );
        assert_eq!(
            url_redaction("redis://secret@h").masked,
            [UrlSecret::UserInfo]
        );
        for quiet in [
            "redis://h:6379",
            "redis://bob:@h",
            "redis://:**********@h?password=**********",
            "redis://**********@h",
        ] {
            let redaction = url_redaction(quiet);
            assert!(redaction.masked.is_empty(), "{quiet}");
            assert!(matches!(redaction.text, Cow::Borrowed(_)), "{quiet}");
        }
    }

    #[test]
    fn secrets_never_show() {
        let secret = Secret::new("sk-live");
        assert!(secret.is_clear());
        assert!(!Secret::new(MASK).is_clear());
        assert!(!Secret::default().is_clear());
        assert_eq!(
            format!("{secret} {secret:?}"),
            r#"********** Secret("**********")"#
        );
        let url = RedactedUrl::new("redis://u:hunter2@h/0");
        assert!(url.has_password());
        assert!(!RedactedUrl::new(url.redacted()).has_password());
        assert_eq!(
            format!("{url} {url:?}"),
            r#"redis://u:**********@h/0 RedactedUrl("redis://u:**********@h/0")"#
        );
    }
}
