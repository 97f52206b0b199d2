//! JSON text in the layouts this toolkit writes, as a serde_json [`Formatter`]: serde_json's
//! pretty layout with any indentation (pydantic's `model_dump_json(indent=4)` is serde_json's
//! layout with four spaces), or one line with Python's `json.dumps` separators; numbers kept as
//! text (`arbitrary_precision`) as serde_json writes them or as pydantic spells them. serde_json's
//! own serializer does the rest, raw values and escaping included. [`Compare`] checks a text
//! against expected bytes without building it.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;
use serde_json::{Error, Serializer};

/// How numbers kept as text (`arbitrary_precision`) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    /// As they are, as serde_json writes them.
    AsKept,
    /// With a positive exponent's `+` left out (`1e+16` as `1e16`), as pydantic writes them.
    NoExponentPlus,
}

/// How JSON text is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// serde_json's pretty layout: each element on a line of its own, indented by this many
    /// spaces per nesting level, keys followed by `": "`.
    Pretty(&'static [u8]),
    /// Python's `json.dumps` with its default separators: `, ` and `: `, on one line.
    Python,
}

/// The [`Formatter`] of a [`Layout`] and a [`Numbers`] style.
#[derive(Debug, Clone)]
pub struct Format {
    layout: Layout,
    numbers: Numbers,
    depth: usize,
    /// Whether the innermost array or object open has an element: only then does its closing
    /// bracket go on a line of its own (`[]` and `{}` stay whole).
    has_value: bool,
}

impl Format {
    /// A formatter at the top level.
    pub fn new(layout: Layout, numbers: Numbers) -> Self {
        Format {
            layout,
            numbers,
            depth: 0,
            has_value: false,
        }
    }

    /// `before`, then in the pretty layout a line break and the current level's indentation,
    /// in one write.
    fn line<W: ?Sized + Write>(&self, writer: &mut W, before: &[u8]) -> io::Result<()> {
        /// A line break and the most indentation written in one piece.
        const BREAK: [u8; 129] = {
            let mut line = [b' '; 129];
            line[0] = b'\n';
            line
        };
        let Layout::Pretty(indent) = self.layout else {
            return writer.write_all(before);
        };
        writer.write_all(before)?;
        let mut width = self.depth * indent.len();
        let first = width.min(BREAK.len() - 1);
        writer.write_all(&BREAK[..=first])?;
        width -= first;
        while width > 0 {
            let piece = width.min(BREAK.len() - 1);
            writer.write_all(&BREAK[1..=piece])?;
            width -= piece;
        }
        Ok(())
    }

    /// What comes before an element or a key.
    fn element<W: ?Sized + Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        match (self.layout, first) {
            (Layout::Python, true) => Ok(()),
            (Layout::Python, false) => writer.write_all(b", "),
            (Layout::Pretty(_), true) => self.line(writer, b""),
            (Layout::Pretty(_), false) => self.line(writer, b","),
        }
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value && matches!(self.layout, Layout::Pretty(_)) {
            self.line(writer, b"")?;
        }
        writer.write_all(bracket)
    }
}

impl Formatter for Format {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.element(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.element(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn write_number_str<W: ?Sized + Write>(&mut self, writer: &mut W, value: &str) -> io::Result<()> {
        match (self.numbers, value.split_once("e+")) {
            (Numbers::NoExponentPlus, Some((mantissa, exponent))) => {
                writer.write_all(mantissa.as_bytes())?;
                writer.write_all(b"e")?;
                writer.write_all(exponent.as_bytes())
            }
            _ => writer.write_all(value.as_bytes()),
        }
    }
}

/// Appends `value`'s text in `layout` with `numbers` to `out`.
pub fn write<W: Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
    layout: Layout,
    numbers: Numbers,
) -> Result<(), Error> {
    value.serialize(&mut Serializer::with_formatter(
        out,
        Format::new(layout, numbers),
    ))
}

/// Appends `value` to `out` as `serde_json::to_writer_pretty` writes it (two spaces per level).
pub fn to_vec_pretty<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    write(out, value, Layout::Pretty(b"  "), Numbers::AsKept)
}

/// A writer that accepts only the bytes it expects next, so that comparing a value's text with
/// expected bytes needs no buffer for the whole text and stops at the first difference.
#[derive(Debug)]
pub struct Compare<'a> {
    rest: &'a [u8],
}

impl<'a> Compare<'a> {
    /// Expects exactly `expected`.
    pub fn new(expected: &'a [u8]) -> Self {
        Compare { rest: expected }
    }

    /// Whether everything expected was written.
    pub fn is_done(&self) -> bool {
        self.rest.is_empty()
    }
}

impl Write for Compare<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes).map(|()| bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                Ok(())
            }
            None => Err(io::Error::other("not the expected bytes")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
