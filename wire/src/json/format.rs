//! JSON text in the layouts this toolkit writes, as a serde_json [`Formatter`]: serde_json's
//! pretty layout with any indentation (pydantic's `model_dump_json(indent=4)` is serde_json's
//! layout with four spaces), or one line with Python's `json.dumps` separators; numbers kept as
//! text (`arbitrary_precision`) as serde_json writes them or as pydantic spells them. serde_json's
//! own serializer does the rest, raw values and escaping included. [`matches`] checks a text
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

    /// In the pretty layout, a comma if `comma`, a line break and the current level's
    /// indentation, in one write (most elements); in Python's, `, ` if `comma`.
    fn line<W: ?Sized + Write>(&self, writer: &mut W, comma: bool) -> io::Result<()> {
        /// A comma, a line break and the most indentation written in one piece.
        const BREAK: [u8; 130] = {
            let mut line = [b' '; 130];
            line[0] = b',';
            line[1] = b'\n';
            line
        };
        let Layout::Pretty(indent) = self.layout else {
            return writer.write_all(if comma { b", " } else { b"" });
        };
        let start = usize::from(!comma);
        let mut width = self.depth * indent.len();
        let first = width.min(BREAK.len() - 2);
        writer.write_all(&BREAK[start..first + 2])?;
        width -= first;
        while width > 0 {
            let piece = width.min(BREAK.len() - 2);
            writer.write_all(&BREAK[2..piece + 2])?;
            width -= piece;
        }
        Ok(())
    }

    /// What comes before an element or a key.
    fn element<W: ?Sized + Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        match (self.layout, first) {
            (Layout::Python, true) => Ok(()),
            _ => self.line(writer, !first),
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
            self.line(writer, false)?;
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

    fn write_number_str<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        value: &str,
    ) -> io::Result<()> {
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

/// Appends `value`'s text in `layout` with `numbers` to `out`. The buffer itself is the
/// serializer's writer (taken for the while and put back), so each piece goes straight to
/// `Vec`'s own `write_all`, not through a forwarding `&mut` writer.
pub fn append<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    layout: Layout,
    numbers: Numbers,
) -> Result<(), Error> {
    let mut serializer =
        Serializer::with_formatter(std::mem::take(out), Format::new(layout, numbers));
    let written = value.serialize(&mut serializer);
    *out = serializer.into_inner();
    written
}

/// Whether `value`'s text in `layout` with `numbers` is exactly `expected`, found without
/// building the text: each piece is compared where it lands, and the first difference stops it.
pub fn matches<T: Serialize + ?Sized>(
    expected: &[u8],
    value: &T,
    layout: Layout,
    numbers: Numbers,
) -> bool {
    let mut serializer =
        Serializer::with_formatter(Compare { rest: expected }, Format::new(layout, numbers));
    value.serialize(&mut serializer).is_ok() && serializer.into_inner().rest.is_empty()
}

/// Appends `value` to `out` as `serde_json::to_writer_pretty` writes it (two spaces per level).
pub fn to_vec_pretty<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    append(out, value, Layout::Pretty(b"  "), Numbers::AsKept)
}

/// A writer that accepts only the bytes it expects next, so that comparing a value's text with
/// expected bytes needs no buffer for the whole text and stops at the first difference.
#[derive(Debug)]
struct Compare<'a> {
    rest: &'a [u8],
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
