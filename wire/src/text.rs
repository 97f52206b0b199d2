//! Where the plain text of a JSON string ends, found sixteen bytes at a time (with SSE2 on
//! x86-64, in 64-bit words elsewhere): the journal's reader finds each string's end with it.

/// How many bytes at the start of `bytes` need no escape: the length of the plain text before
/// the first `"`, `\` or control byte (all of `bytes` when it has none).
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
}
