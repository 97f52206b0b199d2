//! `pattern` and `format`: constraints on a string's text. One added breaks BACKWARD and one
//! dropped breaks FORWARD; a changed one is taken to break both, because the comparison does
//! not decide whether one regular expression (or format) accepts less than another.

use super::walk::{join, At, Pair, Walk, BACKWARD, BOTH, FORWARD};
use super::Rule;

impl<'a> Walk<'a> {
    /// Compares the `pattern` and the `format` of two schemas.
    pub(super) fn cmp_strings(&mut self, pair: Pair<'a, '_>) {
        let (o, n) = pair.keywords();
        let (old, new, path) = (&pair.old.ptr, &pair.new.ptr, pair.path);
        for (keyword, added, removed, changed) in [
            (
                "pattern",
                Rule::PatternAdded,
                Rule::PatternRemoved,
                Rule::PatternChanged,
            ),
            (
                "format",
                Rule::FormatAdded,
                Rule::FormatRemoved,
                Rule::FormatChanged,
            ),
        ] {
            match (o.get(keyword), n.get(keyword)) {
                (None, Some(nv)) => {
                    let at = At::new(path, old, &join(new, &[keyword]));
                    self.fire(added, at, format!("NEW requires {keyword} {nv}"), BACKWARD);
                }
                (Some(ov), None) => {
                    let at = At::new(path, &join(old, &[keyword]), new);
                    self.fire(removed, at, format!("NEW drops {keyword} {ov}"), FORWARD);
                }
                (Some(ov), Some(nv)) if ov != nv => {
                    let detail = format!("{keyword} {ov} became {nv}");
                    self.fire(changed, pair.at_keyword(keyword), detail, BOTH);
                }
                _ => {}
            }
        }
    }
}
