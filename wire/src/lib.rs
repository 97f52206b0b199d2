//! What the legacy and V2 Portia run formats share on the wire, kept here once so the two sides
//! cannot drift apart:
//!
//! * [`strict`]: reading only the plain JSON shapes the published schemas describe, with the
//!   [`serde_object!`], [`serde_tagged!`] and [`serde_unit!`] macros;
//! * [`number`]: the exact whole value of a JSON number literal, in any notation;
//! * [`protocol`]: the names serde_json's readers hand exact numbers and raw text out by;
//! * [`secret`]: secrets and credential-bearing URLs, only ever written masked, and one rule for
//!   what a URL's masking hides;
//! * [`schema`]: publishing JSON Schemas with the same header and descriptions;
//! * [`hash`]: the stable FNV-1a hash of names and small texts;
//! * [`join`](mod@join): short texts such as JSON pointers joined without `format!`;
//! * [`json`]: the one JSON layer: strict reading with located errors, and writing in the SDK's
//!   and Python's layouts through serde_json's serializer;
//! * [`text`]: where the plain text of a JSON string ends, sixteen bytes at a time.

pub mod hash;
pub mod join;
pub mod json;
pub mod number;
pub mod protocol;
pub mod schema;
pub mod secret;
pub mod strict;
pub mod text;

pub use secret::{redact_url, url_redaction, RedactedUrl, Secret, UrlRedaction, UrlSecret, MASK};

/// What the exported macros refer to, so that a crate using them needs no `serde` import of its
/// own; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use serde;
}
