//! Thrift's compact protocol as a value tree: decoded from bytes, edited,
//! encoded again, for crafting the hostile Parquet footers and page
//! indexes of [`crate::claims`]. Written apart from dar's own Thrift
//! checks, so that the cases tests craft do not share their blind spots.
//!
//! ```text
//! field header: 1 byte (id delta << 4 | type), or type then zigzag i16 id
//! list / set:   1 byte (size << 4 | elem type), or 0xF_ | type + varint size
//! map:          varint size, then (key type << 4 | value type) if size > 0
//! binary:       varint length, bytes
//! i16/i32/i64:  zigzag varint; double: 8 bytes LE; bool elements: 1 byte
//! ```

use crate::error::{Result, TestkitError};

/// One Thrift value, as the compact protocol carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum Thrift {
    /// A bool (in a struct, carried in the field header's type).
    Bool(bool),
    /// A byte.
    Byte(u8),
    /// An i16.
    I16(i64),
    /// An i32.
    I32(i64),
    /// An i64.
    I64(i64),
    /// A double, as its 8 bytes.
    Double([u8; 8]),
    /// A binary or string.
    Binary(Vec<u8>),
    /// A list (or a set when `set`) of elements of compact type `elem`.
    List {
        /// Whether it is a set.
        set: bool,
        /// The element type (compact protocol code).
        elem: u8,
        /// The elements.
        items: Vec<Thrift>,
    },
    /// A map; `kinds` is `key type << 4 | value type`.
    Map {
        /// Key and value types.
        kinds: u8,
        /// The entries.
        entries: Vec<(Thrift, Thrift)>,
    },
    /// A struct: its fields in order.
    Struct(Vec<(i16, Thrift)>),
    /// A UUID.
    Uuid([u8; 16]),
    /// The value inside, whose header claims `claim` elements (list, set,
    /// map) or bytes (binary) while its content stays as it is.
    Claimed {
        /// The count the header claims.
        claim: u64,
        /// The value.
        value: Box<Thrift>,
    },
    /// `bytes` as they are, under a field header saying type `kind`.
    Raw {
        /// The compact type its field header says.
        kind: u8,
        /// The bytes after the header.
        bytes: Vec<u8>,
    },
}

fn bad(reason: impl Into<String>) -> TestkitError {
    TestkitError::Thrift {
        reason: reason.into(),
    }
}

/// A cursor over compact-protocol bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| bad(format!("truncated at byte {}", self.at)))?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| bad(format!("{n} bytes past the end at {}", self.at)))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(bad("varint longer than 10 bytes"))
    }

    fn zigzag(&mut self) -> Result<i64> {
        let n = self.varint()?;
        Ok(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    fn value(&mut self, kind: u8, in_field: bool, depth: usize) -> Result<Thrift> {
        if depth > 64 {
            return Err(bad("nested deeper than 64"));
        }
        Ok(match kind {
            1 | 2 if in_field => Thrift::Bool(kind == 1),
            1 | 2 => Thrift::Bool(self.byte()? == 1),
            3 => Thrift::Byte(self.byte()?),
            4 => Thrift::I16(self.zigzag()?),
            5 => Thrift::I32(self.zigzag()?),
            6 => Thrift::I64(self.zigzag()?),
            7 => Thrift::Double(self.take(8)?.try_into().map_err(|_| bad("double"))?),
            8 => {
                let n = usize::try_from(self.varint()?).map_err(|_| bad("binary length"))?;
                Thrift::Binary(self.take(n)?.to_vec())
            }
            9 | 10 => {
                let header = self.byte()?;
                let size = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let elem = header & 0x0f;
                let mut items = Vec::new();
                for _ in 0..size {
                    items.push(self.value(elem, false, depth + 1)?);
                }
                Thrift::List {
                    set: kind == 10,
                    elem,
                    items,
                }
            }
            11 => {
                let size = self.varint()?;
                let kinds = if size == 0 { 0 } else { self.byte()? };
                let mut entries = Vec::new();
                for _ in 0..size {
                    let k = self.value(kinds >> 4, false, depth + 1)?;
                    let v = self.value(kinds & 0x0f, false, depth + 1)?;
                    entries.push((k, v));
                }
                Thrift::Map { kinds, entries }
            }
            12 => {
                let mut fields = Vec::new();
                let mut last = 0i64;
                loop {
                    let b = self.byte()?;
                    let kind = b & 0x0f;
                    if kind == 0 {
                        break;
                    }
                    let id = match b >> 4 {
                        0 => self.zigzag()?,
                        delta => last + i64::from(delta),
                    };
                    last = id;
                    let id = i16::try_from(id).map_err(|_| bad(format!("field id {id}")))?;
                    fields.push((id, self.value(kind, true, depth + 1)?));
                }
                Thrift::Struct(fields)
            }
            13 => Thrift::Uuid(self.take(16)?.try_into().map_err(|_| bad("uuid"))?),
            other => return Err(bad(format!("unknown type {other} at byte {}", self.at))),
        })
    }
}

/// Decodes one struct from the start of `bytes`; returns it and the bytes
/// it took.
pub fn decode_struct(bytes: &[u8]) -> Result<(Thrift, usize)> {
    let mut r = Reader { bytes, at: 0 };
    let value = r.value(12, false, 0)?;
    Ok((value, r.at))
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn zigzag(out: &mut Vec<u8>, n: i64) {
    varint(out, ((n << 1) ^ (n >> 63)) as u64);
}

impl Thrift {
    /// The value's compact type code (a bool in a struct field: 1 true,
    /// 2 false).
    fn kind(&self) -> u8 {
        match self {
            Thrift::Bool(true) => 1,
            Thrift::Bool(false) => 2,
            Thrift::Byte(_) => 3,
            Thrift::I16(_) => 4,
            Thrift::I32(_) => 5,
            Thrift::I64(_) => 6,
            Thrift::Double(_) => 7,
            Thrift::Binary(_) => 8,
            Thrift::List { set: false, .. } => 9,
            Thrift::List { set: true, .. } => 10,
            Thrift::Map { .. } => 11,
            Thrift::Struct(_) => 12,
            Thrift::Uuid(_) => 13,
            Thrift::Claimed { value, .. } => value.kind(),
            Thrift::Raw { kind, .. } => *kind,
        }
    }

    /// The compact-protocol bytes of this value (a struct: its fields and
    /// the stop byte).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out, false, None);
        out
    }

    fn write(&self, out: &mut Vec<u8>, in_field: bool, claim: Option<u64>) {
        match self {
            Thrift::Bool(_) if in_field => {}
            Thrift::Bool(b) => out.push(if *b { 1 } else { 2 }),
            Thrift::Byte(b) => out.push(*b),
            Thrift::I16(n) | Thrift::I32(n) | Thrift::I64(n) => zigzag(out, *n),
            Thrift::Double(b) => out.extend(b),
            Thrift::Binary(b) => {
                varint(out, claim.unwrap_or(b.len() as u64));
                out.extend(b);
            }
            Thrift::List { elem, items, .. } => {
                let n = claim.unwrap_or(items.len() as u64);
                if n < 15 {
                    out.push(((n as u8) << 4) | elem);
                } else {
                    out.push(0xF0 | elem);
                    varint(out, n);
                }
                for item in items {
                    item.write(out, false, None);
                }
            }
            Thrift::Map { kinds, entries } => {
                let n = claim.unwrap_or(entries.len() as u64);
                varint(out, n);
                if n > 0 {
                    out.push(*kinds);
                }
                for (k, v) in entries {
                    k.write(out, false, None);
                    v.write(out, false, None);
                }
            }
            Thrift::Struct(fields) => {
                let mut last = 0i16;
                for (id, value) in fields {
                    let delta = i32::from(*id) - i32::from(last);
                    if (1..=15).contains(&delta) {
                        out.push(((delta as u8) << 4) | value.kind());
                    } else {
                        out.push(value.kind());
                        zigzag(out, i64::from(*id));
                    }
                    value.write(out, true, None);
                    last = *id;
                }
                out.push(0);
            }
            Thrift::Uuid(b) => out.extend(b),
            Thrift::Claimed { claim, value } => value.write(out, in_field, Some(*claim)),
            Thrift::Raw { bytes, .. } => out.extend(bytes),
        }
    }

    /// The value at `path` (fields of structs, items of lists).
    pub fn at_mut(&mut self, path: &[Step]) -> Result<&mut Thrift> {
        let mut here = self;
        for step in path {
            here = match (here, step) {
                (Thrift::Struct(fields), Step::Field(id)) => fields
                    .iter_mut()
                    .find(|(f, _)| f == id)
                    .map(|(_, v)| v)
                    .ok_or_else(|| bad(format!("no field {id}")))?,
                (Thrift::List { items, .. }, Step::Item(i)) => items
                    .get_mut(*i)
                    .ok_or_else(|| bad(format!("no item {i}")))?,
                (other, step) => {
                    return Err(bad(format!("{step:?} into {}", other.kind())));
                }
            };
        }
        Ok(here)
    }

    /// The paths to every list, set, map, binary and integer inside this
    /// value: where a claim can be planted.
    pub fn sites(&self) -> Vec<Vec<Step>> {
        let mut out = Vec::new();
        let mut todo = vec![(Vec::new(), self)];
        while let Some((path, value)) = todo.pop() {
            match value {
                Thrift::Struct(fields) => {
                    for (id, v) in fields {
                        let mut p = path.clone();
                        p.push(Step::Field(*id));
                        todo.push((p, v));
                    }
                }
                Thrift::List { items, .. } => {
                    for (i, v) in items.iter().enumerate() {
                        let mut p = path.clone();
                        p.push(Step::Item(i));
                        todo.push((p, v));
                    }
                    out.push(path);
                }
                Thrift::Map { .. }
                | Thrift::Binary(_)
                | Thrift::I16(_)
                | Thrift::I32(_)
                | Thrift::I64(_) => out.push(path),
                _ => {}
            }
        }
        out.sort();
        out
    }

    /// The integer value of an i16, i32 or i64.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Thrift::I16(n) | Thrift::I32(n) | Thrift::I64(n) => Some(*n),
            _ => None,
        }
    }
}

/// One step of a path into a [`Thrift`] value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// The field of a struct with this id.
    Field(i16),
    /// The item of a list at this index.
    Item(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_struct_comes_back_byte_for_byte() {
        let value = Thrift::Struct(vec![
            (1, Thrift::I32(-3)),
            (2, Thrift::Bool(true)),
            (
                4,
                Thrift::List {
                    set: false,
                    elem: 12,
                    items: vec![Thrift::Struct(vec![(40, Thrift::Binary(b"x".to_vec()))]); 20],
                },
            ),
            (
                5,
                Thrift::Map {
                    kinds: 0x58,
                    entries: vec![(Thrift::I32(1), Thrift::Binary(vec![]))],
                },
            ),
            (6, Thrift::Double([1; 8])),
        ]);
        let bytes = value.encode();
        assert_eq!(decode_struct(&bytes).unwrap(), (value, bytes.len()));
    }

    #[test]
    fn a_claim_changes_only_the_header() {
        let list = Thrift::List {
            set: false,
            elem: 5,
            items: vec![Thrift::I32(1)],
        };
        let claimed = Thrift::Claimed {
            claim: (1 << 31) - 1,
            value: Box::new(list),
        };
        let mut out = Vec::new();
        claimed.write(&mut out, false, None);
        assert_eq!(out, [0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x02]);
    }
}
