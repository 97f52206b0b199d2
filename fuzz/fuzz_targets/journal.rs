//! The journal reader `--resume` trusts, on any bytes. Laws: it stops at a line boundary inside
//! the bytes; the journal cut there (what a resume keeps) reads back to the same lines, whole,
//! and so do the cheaper views of each line the resume also reads (its tag as JSON, and as read
//! from the line's first bytes), and a line read without the JSON reader is the line serde_json
//! reads, in the bytes the writer writes for it; a line appended after the cut is read back; and
//! a journal cut anywhere reads as the lines that end before the cut.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use planrun_store::migrate::journal::{Event, Line, LineTag, Reader};

/// Every line the reader takes, with the offset where each ends; and whether it stopped torn.
fn read(bytes: &[u8]) -> (Vec<Line>, Vec<u64>, bool) {
    let mut reader = Reader::new(Cursor::new(bytes));
    let (mut lines, mut ends) = (Vec::new(), Vec::new());
    while let Some(line) = reader.next_line().expect("reading memory cannot fail") {
        lines.push(line);
        ends.push(reader.good_len);
    }
    (lines, ends, reader.torn)
}

fuzz_target!(|data: &[u8]| {
    let (lines, ends, _) = read(data);
    let good = ends.last().copied().unwrap_or(0);
    let good_usize = usize::try_from(good).expect("an offset into memory");
    assert!(good_usize <= data.len(), "the reader went past the end");
    assert!(
        good == 0 || data[good_usize - 1] == b'\n',
        "it stopped inside a line"
    );

    let kept = &data[..good_usize];
    let (again, _, torn) = read(kept);
    assert!(!torn, "the journal cut at the reader's end is still torn");
    assert_eq!(again, lines, "the cut journal reads back otherwise");

    for (n, raw) in kept.split_inclusive(|&b| b == b'\n').enumerate() {
        if let Some(fast) = Line::canonical(raw) {
            let serde = serde_json::from_slice::<Line>(raw).ok();
            assert_eq!(
                serde.as_ref(),
                Some(&fast),
                "line {n}: read otherwise without the JSON reader"
            );
            assert_eq!(
                fast.to_jsonl().as_bytes(),
                raw,
                "line {n}: not the bytes the writer writes"
            );
        }
    }

    let mut tags = Reader::new(Cursor::new(kept));
    let mut n = 0;
    while let Some(tag) = tags
        .next_as::<LineTag>()
        .expect("reading memory cannot fail")
    {
        assert_eq!(
            tag.event, lines[n].event,
            "line {n}: another event in the cheap view"
        );
        assert_eq!(
            tag.run, lines[n].run,
            "line {n}: another run in the cheap view"
        );
        n += 1;
    }
    assert!(
        !tags.torn && n == lines.len(),
        "the cheap view stops elsewhere: {n} of {}",
        lines.len()
    );

    let mut prefixes = Reader::new(Cursor::new(kept));
    let mut n = 0;
    while let Some(tag) = prefixes.next_tag().expect("reading memory cannot fail") {
        assert_eq!(
            (tag.event, tag.run.as_ref()),
            (lines[n].event, lines[n].run.as_ref()),
            "line {n}: another tag from the line's first bytes"
        );
        n += 1;
    }
    assert!(
        !prefixes.torn && n == lines.len(),
        "the tags read from first bytes stop elsewhere: {n} of {}",
        lines.len()
    );

    let appended = Line {
        event: Event::Completed,
        run: Some("prun-00000000-0000-4000-8000-000000000000.json".into()),
        bytes_in: Some(u64::MAX),
        ..Line::default()
    };
    let mut resumed = kept.to_vec();
    resumed.extend_from_slice(appended.to_jsonl().as_bytes());
    let (after, _, torn) = read(&resumed);
    assert!(!torn, "a line appended after the cut is torn");
    assert_eq!(
        after.len(),
        lines.len() + 1,
        "a line appended after the cut is lost"
    );
    assert_eq!(
        after.last(),
        Some(&appended),
        "the appended line reads back otherwise"
    );

    let cut = cut_point(data);
    let (prefix, _, _) = read(&data[..cut]);
    let whole = ends.iter().take_while(|&&end| end <= cut as u64).count();
    assert_eq!(
        prefix,
        lines[..whole],
        "cut at {cut}: not the lines that end before the cut"
    );
});

/// A cut point chosen by the data itself, so one input tries one cut and the fuzzer tries many.
fn cut_point(data: &[u8]) -> usize {
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    usize::try_from(hash % (data.len() as u64 + 1)).expect("within the data")
}
