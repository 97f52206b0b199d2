//! Escaping JSON strings faster than serde_json does, with the same bytes.
//!
//! serde_json escapes a string one byte at a time, and most of the bytes a migration writes are
//! in long strings (step outputs, stringified values). [`escape_into`] looks at sixteen bytes
//! at a time (with SSE2 on x86-64, in 64-bit words elsewhere) and copies the runs between
//! escapes whole; [`json`](crate::json)'s writer uses it for every string it writes.

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
        let block: [u8; BLOCK] = if let Some(block) = bytes.get(base..base + BLOCK) {
            block.try_into().expect("a block")
        } else {
            // The last few bytes, padded with spaces, which need no escape.
            let mut tail = [b' '; BLOCK];
            tail[..bytes.len() - base].copy_from_slice(&bytes[base..]);
            tail
        };
        let mut mask = escapes(&block);
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            copy_run(out, bytes, plain, at);
            push_escape(out, bytes[at]);
            plain = at + 1;
        }
        base += BLOCK;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// How many bytes at the start of `bytes` need no escape: the length of the plain text before
/// the first `"`, `\` or control byte (all of `bytes` when it has none). A reader of JSON that
/// [`escape_into`] wrote finds a string's end with it, sixteen bytes at a time.
pub fn plain_len(bytes: &[u8]) -> usize {
    let mut base = 0;
    while let Some(block) = bytes.get(base..base + BLOCK) {
        let mask = escapes(block.try_into().expect("a block"));
        if mask != 0 {
            return base + mask.trailing_zeros() as usize;
        }
        base += BLOCK;
    }
    let mut tail = [b' '; BLOCK];
    tail[..bytes.len() - base].copy_from_slice(&bytes[base..]);
    let mask = escapes(&tail);
    if mask == 0 {
        bytes.len()
    } else {
        base + mask.trailing_zeros() as usize
    }
}

/// Appends `bytes[from..to]`. A run of a block or less (between two escapes, in text that has
/// many) is copied as the whole block from `from` and cut back, a fixed-size copy the compiler
/// makes a few moves instead of a `memcpy` call.
#[inline]
fn copy_run(out: &mut Vec<u8>, bytes: &[u8], from: usize, to: usize) {
    if to - from <= BLOCK {
        if let Some(block) = bytes.get(from..from + BLOCK) {
            let block: &[u8; BLOCK] = block.try_into().expect("a block");
            let len = out.len();
            out.extend_from_slice(block);
            out.truncate(len + (to - from));
            return;
        }
    }
    out.extend_from_slice(&bytes[from..to]);
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

/// How many bytes [`escapes`] looks at at once.
const BLOCK: usize = 16;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use self::vector_escapes as escapes;
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use self::word_escapes as escapes;

/// Bit `i` set for each byte `block[i]` that is below 0x20, a `"` or a `\`, and no other bit:
/// SSE2, which every x86-64 processor has, tests the sixteen bytes at once.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
#[allow(
    unsafe_code,
    reason = "SSE2 intrinsics on a sixteen-byte block, measured faster"
)]
fn vector_escapes(block: &[u8; BLOCK]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let byte = |b: u8| i8::from_ne_bytes([b]);
    // SAFETY: these intrinsics need only SSE2, which this function is compiled with (the cfg
    // above), and the load reads the block's sixteen bytes, unaligned.
    let found = unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast());
        let limit = _mm_set1_epi8(byte(0x1f));
        // A byte is below 0x20 when the larger of it and 0x1f is 0x1f.
        let control = _mm_cmpeq_epi8(_mm_max_epu8(bytes, limit), limit);
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte(b'"')));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte(b'\\')));
        _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash)))
    };
    u32::from_ne_bytes(found.to_ne_bytes())
}

/// Bit `i` set for each byte `block[i]` that is below 0x20, a `"` or a `\`, and no other bit,
/// found in 64-bit words: exact per byte, as no sum carries into the next byte.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline]
fn word_escapes(block: &[u8; BLOCK]) -> u32 {
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // The high bit of `x + 0x7f` in a byte whose high bit is clear: whether the byte is not 0.
    let nonzero = |x: u64| ((x & LOWS) + LOWS) | x;
    let mut mask = 0;
    for (i, word) in block.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let at_least_space = ((word & LOWS) + ONES * (0x80 - 0x20)) | word;
        let quote = nonzero(word ^ (ONES * u64::from(b'"')));
        let backslash = nonzero(word ^ (ONES * u64::from(b'\\')));
        let mut highs = !(at_least_space & quote & backslash) & HIGHS;
        while highs != 0 {
            mask |= 1 << (8 * i + highs.trailing_zeros() as usize / 8);
            highs &= highs - 1;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holds the escape of `text` to serde_json's; `case` names it in a failure.
    fn escapes_as_serde_json(text: &str, case: &str) {
        let mut ours = Vec::new();
        escape_into(&mut ours, text);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(text).unwrap(),
            "{case}"
        );
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        for byte in 0..=0x7fu8 {
            let text: String = std::iter::repeat_n(char::from(byte), 3)
                .chain("abcdefghijklmnopqrstuvwxyz".chars())
                .chain([char::from(byte)])
                .collect();
            escapes_as_serde_json(&text, &format!("byte {byte:#x}"));
        }
    }

    #[test]
    fn a_blocks_escapes_are_exactly_its_bytes_that_need_one() {
        let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for byte in 0..=0xffu8 {
            for other in [0u8, b'"', b'a', 0x1f, 0x20, 0x80, 0xff] {
                for at in 0..BLOCK {
                    let mut block = [other; BLOCK];
                    block[at] = byte;
                    let expected = block
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| needs(**b))
                        .fold(0u32, |mask, (i, _)| mask | 1 << i);
                    assert_eq!(
                        word_escapes(&block),
                        expected,
                        "words: {byte:#x} at {at} among {other:#x}"
                    );
                    assert_eq!(
                        escapes(&block),
                        expected,
                        "{byte:#x} at {at} among {other:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_plain_text_ends_at_the_first_byte_that_needs_an_escape() {
        let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for len in 0..=3 * BLOCK + 1 {
            for byte in 0..=0xffu8 {
                for at in 0..=len {
                    let mut bytes = vec![b'x'; len];
                    if at < len {
                        bytes[at] = byte;
                    }
                    let expected = bytes.iter().position(|&b| needs(b)).unwrap_or(len);
                    assert_eq!(plain_len(&bytes), expected, "{byte:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn runs_of_every_length_between_escapes_are_copied_whole() {
        // Runs shorter than, as long as and longer than a block, ending anywhere near the end.
        for gap in 0..=2 * BLOCK + 1 {
            for len in 0..=3 * BLOCK {
                let text: String = (0..len)
                    .map(|i| if i % (gap + 1) == gap { '"' } else { 'x' })
                    .collect();
                escapes_as_serde_json(&text, &format!("gap {gap}, length {len}"));
            }
        }
    }
}
