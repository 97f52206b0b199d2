//! Short texts (JSON pointers, file names, keys) joined from pieces without `format!`, whose
//! formatting machinery costs several times the copying on texts made for every entry of every
//! run. [`join!`](crate::join!) takes the pieces; each is a string or an unsigned integer,
//! written in decimal as `format!("{n}")` writes it.

use std::borrow::Cow;

/// A piece of a joined text.
pub trait Piece {
    /// At most how many bytes the piece takes.
    fn size(&self) -> usize;
    /// Appends the piece to `out`.
    fn push_to(&self, out: &mut String);
}

impl Piece for str {
    fn size(&self) -> usize {
        self.len()
    }
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for String {
    fn size(&self) -> usize {
        self.len()
    }
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for Cow<'_, str> {
    fn size(&self) -> usize {
        self.len()
    }
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl<T: Piece + ?Sized> Piece for &T {
    fn size(&self) -> usize {
        (**self).size()
    }
    fn push_to(&self, out: &mut String) {
        (**self).push_to(out);
    }
}

macro_rules! decimal {
    ($($int:ty),*) => {$(
        impl Piece for $int {
            fn size(&self) -> usize {
                20
            }
            fn push_to(&self, out: &mut String) {
                push_decimal(out, u64::from(*self));
            }
        }
    )*};
}

decimal!(u8, u16, u32, u64);

impl Piece for usize {
    fn size(&self) -> usize {
        20
    }
    fn push_to(&self, out: &mut String) {
        push_decimal(out, *self as u64);
    }
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut String, n: u64) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// `format!("{n:016x}")`: sixteen lowercase hex digits, for the hashes journaled and compared
/// for every file written and verified.
pub fn hex16(n: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    (0..16)
        .rev()
        .map(|nibble| char::from(HEX[((n >> (4 * nibble)) & 0xf) as usize]))
        .collect()
}

/// The pieces, one after the other, in a string allocated once.
pub fn join(pieces: &[&dyn Piece]) -> String {
    let mut out = String::with_capacity(pieces.iter().map(|p| Piece::size(*p)).sum());
    for piece in pieces {
        piece.push_to(&mut out);
    }
    out
}

/// `join!("/plan/steps/", i, "/type")` is `format!("/plan/steps/{i}/type")`, made by
/// [`join`](fn@join): each piece is evaluated once.
#[macro_export]
macro_rules! join {
    ($($piece:expr),+ $(,)?) => {
        $crate::join::join(&[$(&$piece as &dyn $crate::join::Piece),+])
    };
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn joined_pieces_are_what_format_writes(
            a in ".{0,12}",
            n in any::<u64>(),
            small in any::<u8>(),
            index in any::<usize>(),
        ) {
            let owned = a.clone();
            let cow = std::borrow::Cow::Borrowed(a.as_str());
            prop_assert_eq!(
                crate::join!("/x/", n, a.as_str(), '/'.to_string(), small, owned, index, cow, 0u32),
                format!("/x/{n}{a}/{small}{a}{index}{a}0")
            );
        }
    }

    #[test]
    fn hashes_are_sixteen_lowercase_hex_digits() {
        for n in [0, 1, 0x0123_4567_89ab_cdef, u64::MAX, 1 << 63] {
            assert_eq!(super::hex16(n), format!("{n:016x}"));
        }
    }

    #[test]
    fn integers_at_their_bounds_are_written_in_decimal() {
        for n in [0, 1, 9, 10, 99, 100, u64::MAX - 1, u64::MAX] {
            assert_eq!(crate::join!(n), n.to_string());
        }
        assert_eq!(crate::join!(usize::MAX), usize::MAX.to_string());
    }
}
