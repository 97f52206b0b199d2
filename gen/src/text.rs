//! Prose: sentences, paragraphs and markdown reports built from the vocabulary and a plan's
//! slots, for summaries and text outputs of realistic size.

use crate::rng::Rng;
use crate::slots::{Slot, Slots};
use crate::vocab::{OBJECTS, SUBJECTS, TAILS, VERBS};

fn sentence(rng: &mut Rng, slots: &Slots, out: &mut String) {
    out.push_str(rng.word(SUBJECTS));
    out.push(' ');
    out.push_str(rng.word(VERBS));
    out.push(' ');
    out.push_str(rng.word(OBJECTS));
    out.push(' ');
    match rng.below(10) {
        0 => {
            out.push_str("for ");
            out.push_str(slots.text(Slot::Topic));
        }
        1 => {
            out.push_str("in ");
            out.push_str(slots.text(Slot::City));
        }
        _ => out.push_str(rng.word(TAILS)),
    }
    out.push('.');
}

pub(crate) fn paragraph(rng: &mut Rng, slots: &Slots, out: &mut String) {
    for i in 0..rng.between(3, 6) {
        if i > 0 {
            out.push(' ');
        }
        sentence(rng, slots, out);
    }
}

/// Markdown-ish report text of about `target` bytes.
pub(crate) fn report(rng: &mut Rng, slots: &Slots, target: usize) -> String {
    let mut out = String::with_capacity(target + 512);
    out.push_str("# ");
    out.push_str(slots.text(Slot::Topic));
    out.push_str("\n\n## Summary\n\n");
    paragraph(rng, slots, &mut out);
    let mut section = 1;
    while out.len() < target {
        out.push_str(&format!("\n\n## Finding {section}\n\n"));
        section += 1;
        paragraph(rng, slots, &mut out);
        if rng.chance(0.4) {
            for _ in 0..rng.between(2, 4) {
                out.push_str("\n- ");
                sentence(rng, slots, &mut out);
            }
        }
    }
    out
}

pub(crate) fn two_sentences(rng: &mut Rng, slots: &Slots) -> String {
    let mut out = String::with_capacity(256);
    sentence(rng, slots, &mut out);
    out.push(' ');
    sentence(rng, slots, &mut out);
    out
}

pub(crate) fn short_text(rng: &mut Rng, slots: &Slots) -> String {
    let mut out = String::with_capacity(128);
    sentence(rng, slots, &mut out);
    out
}

pub(crate) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
