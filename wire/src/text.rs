//! Escaping JSON strings faster than serde_json does, with the same bytes.
//!
//! serde_json escapes a string one byte at a time, and most of the bytes a migration writes are
//! in long strings (step outputs, stringified values). [`escape_into`] looks at a 64-bit word
//! at a time and copies the runs between escapes whole; [`json`](crate::json)'s writer uses it
//! for every string it writes.

/// Appends `text` to `out` as a JSON string, quotes included, as serde_json writes it: `"` and
/// `\` escaped with a backslash, the control characters `\b \t \n \f \r` by name and the other
/// ones below U+0020 as `\u00xx`, everything else (DEL and non-ASCII included) as it is.
pub fn escape_into(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut plain = 0;
    let mut base = 0;
    while base < bytes.len() {
        let word = if let Some(word) = bytes.get(base..base + 8) {
            word.try_into().expect("eight bytes")
        } else {
            // The last few bytes, padded with spaces, which need no escape.
            let mut tail = [b' '; 8];
            tail[..bytes.len() - base].copy_from_slice(&bytes[base..]);
            tail
        };
        let mut mask = escapes(u64::from_le_bytes(word));
        while mask != 0 {
            let at = base + (mask.trailing_zeros() / 8) as usize;
            mask &= mask - 1;
            out.extend_from_slice(&bytes[plain..at]);
            push_escape(out, bytes[at]);
            plain = at + 1;
        }
        base += 8;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// Appends the escape of `byte`, one of the bytes [`escapes`] finds.
#[inline]
fn push_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short: &[u8] = match byte {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        0x09 => b"\\t",
        0x0a => b"\\n",
        0x0c => b"\\f",
        0x0d => b"\\r",
        _ => {
            let code = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ];
            out.extend_from_slice(&code);
            return;
        }
    };
    out.extend_from_slice(short);
}

/// The high bit of each byte of `word` that is below 0x20, a `"` or a `\`, and no other bit.
/// Exact per byte: no sum carries into the next byte.
#[inline]
fn escapes(word: u64) -> u64 {
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // The high bit of `x + 0x7f` in a byte whose high bit is clear: whether the byte is not 0.
    let nonzero = |x: u64| ((x & LOWS) + LOWS) | x;
    let at_least_space = ((word & LOWS) + ONES * (0x80 - 0x20)) | word;
    let quote = nonzero(word ^ (ONES * u64::from(b'"')));
    let backslash = nonzero(word ^ (ONES * u64::from(b'\\')));
    !(at_least_space & quote & backslash) & HIGHS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        for byte in 0..=0x7fu8 {
            let text: String = std::iter::repeat_n(char::from(byte), 3)
                .chain("abcdefghijklmnopqrstuvwxyz".chars())
                .chain([char::from(byte)])
                .collect();
            let mut ours = Vec::new();
            escape_into(&mut ours, &text);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&text).unwrap(),
                "byte {byte:#x}"
            );
        }
    }

    #[test]
    fn a_words_escapes_are_exactly_its_bytes_that_need_one() {
        let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for byte in 0..=0xffu8 {
            for other in [0u8, b'"', b'a', 0x1f, 0x20, 0x80, 0xff] {
                for at in 0..8 {
                    let mut word = [other; 8];
                    word[at] = byte;
                    let expected = word
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| needs(**b))
                        .fold(0u64, |mask, (i, _)| mask | 0x80 << (8 * i));
                    assert_eq!(
                        escapes(u64::from_le_bytes(word)),
                        expected,
                        "{byte:#x} at {at} among {other:#x}"
                    );
                }
            }
        }
    }
}
