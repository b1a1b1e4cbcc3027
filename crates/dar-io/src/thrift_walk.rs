//! Thrift compact-protocol bytes walked, without decoding or recursion,
//! the way parquet-rs will read them, before it does: a footer, a column
//! index, an offset index.
//!
//! parquet-rs sizes some vectors by the lengths the bytes claim (the row
//! groups of a footer, the page locations of an offset index, a schema
//! group's children) before reading the elements; a claim of 2^31-1 in a
//! 1 KB footer asked for 200 GB, the allocation failed and the process
//! aborted (SIGABRT: no unwinding, no error). So every length is checked
//! here first: a list, set or map claiming more elements than the bytes
//! left could hold (each element takes at least its type's smallest
//! encoding), a binary longer than the bytes left, and bytes that are not
//! Thrift are refused. What passes holds every element it claims.
//!
//! The walk must read the bytes as parquet will, or a hostile footer could
//! show it one structure and parquet another: parquet reads a field it
//! knows by its id whatever type the field header says, so a field of a
//! known id must carry its declared type ([`Ty`], the tables of
//! [`crate::footer_types`]); and parquet skips a field it does not know
//! by the header's type, reading no byte for a boolean inside a skipped
//! list, set or map, which the walk mirrors.
//!
//! ```text
//! field header: 1 byte (id delta << 4 | type), or type then zigzag i16 id
//! list / set:   1 byte (size << 4 | elem type), or 0xF_ | type + varint size
//! map:          varint size, then (key type << 4 | value type) if size > 0
//! binary:       varint length, then the bytes
//! types: 1/2 bool (the field header's type; in a container 1 byte), 3 byte,
//!        4-6 i16-i64 (zigzag varints), 7 double (8 bytes), 8 binary,
//!        9 list, 10 set, 11 map, 12 struct (fields, then a 0 byte),
//!        13 uuid (16 bytes)
//! ```

use std::fmt;

/// The deepest nesting of structs and containers walked (parquet's own
/// skipping stops at 64 below any field it does not know; Parquet's known
/// structures nest under ten deep).
pub(crate) const MAX_NESTING: usize = 128;

/// A Thrift struct Parquet declares: its name and its fields' ids and
/// types.
#[derive(Debug)]
pub(crate) struct Def {
    /// The struct's name in `parquet.thrift`.
    pub(crate) name: &'static str,
    /// Its fields: id, name, type.
    pub(crate) fields: &'static [(i16, &'static str, Ty)],
}

impl Def {
    /// Field `id`: its name and type. Parquet's fields are numbered from
    /// 1 with few gaps, so the field is almost always at `id - 1`.
    fn field(&self, id: i16) -> Option<(&'static str, Ty)> {
        let at = usize::try_from(id).ok()?.checked_sub(1)?;
        let entry = match self.fields.get(at) {
            Some(e) if e.0 == id => e,
            _ => self.fields.iter().find(|(i, ..)| *i == id)?,
        };
        Some((entry.1, entry.2))
    }
}

/// A Thrift type as Parquet declares a field or list element.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ty {
    Bool,
    Byte,
    I16,
    I32,
    I64,
    Double,
    Binary,
    List(&'static Ty),
    Struct(&'static Def),
}

impl Ty {
    /// Whether a value of compact type `kind` is of this type.
    fn accepts(self, kind: u8) -> bool {
        match self {
            Ty::Bool => kind == 1 || kind == 2,
            Ty::Byte => kind == 3,
            Ty::I16 => kind == 4,
            Ty::I32 => kind == 5,
            Ty::I64 => kind == 6,
            Ty::Double => kind == 7,
            Ty::Binary => kind == 8,
            Ty::List(_) => kind == 9,
            Ty::Struct(_) => kind == 12,
        }
    }
}

/// Why bytes are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A list, set or map claims more elements, or a binary more bytes,
    /// than the bytes left can hold.
    Claims {
        /// "list", "set", "map" or "binary".
        what: &'static str,
        /// The struct and field it is, when Parquet declares it.
        field: Option<(&'static str, &'static str)>,
        /// The length claimed.
        claimed: u64,
        /// Where its header starts.
        at: usize,
        /// The bytes left after the header.
        room: usize,
    },
    /// A schema group claims more children than schema elements follow it.
    Children {
        /// The group's index in the schema list.
        element: u64,
        /// The children it claims.
        claimed: i64,
        /// The elements after it.
        left: u64,
    },
    /// The schema nests deeper than the reader allows (at least this deep).
    TooDeep(usize),
    /// A field of a struct Parquet declares carries another type (parquet
    /// would read it as the declared one).
    WrongType {
        /// Where its value starts.
        at: usize,
        /// The struct.
        strukt: &'static str,
        /// The field.
        field: i16,
    },
    /// The bytes are not the Thrift structure parquet reads.
    Malformed {
        /// Where the walk stopped.
        at: usize,
        /// What is wrong there.
        reason: &'static str,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Claims {
                what,
                field,
                claimed,
                at,
                room,
            } => {
                let unit = if *what == "binary" {
                    "bytes"
                } else {
                    "elements"
                };
                write!(f, "claims a {what} of {claimed} {unit}")?;
                if let Some((strukt, name)) = field {
                    write!(f, " for {strukt}.{name}")?;
                }
                write!(f, " at byte {at}, where {room} bytes remain")
            }
            Self::Children {
                element,
                claimed,
                left,
            } => write!(
                f,
                "claims {claimed} children for schema element {element}, where {left} schema elements follow"
            ),
            Self::TooDeep(depth) => write!(f, "nests its schema {depth} levels deep"),
            Self::WrongType { at, strukt, field } => write!(
                f,
                "is not valid Parquet Thrift at byte {at} (field {field} of {strukt} is not of its declared type)"
            ),
            Self::Malformed { at, reason } => {
                write!(f, "is not valid Thrift at byte {at} ({reason})")
            }
        }
    }
}

/// Result of a walk.
pub(crate) type Walk<T> = Result<T, Refusal>;

/// What a walk tells its caller about the values parquet will read (the
/// fields of known structs and the lists they hold).
pub(crate) trait Visit {
    /// Integer field `id` of a struct `def` holds `value`.
    fn int(&mut self, _def: &'static Def, _id: i16, _value: i64) -> Walk<()> {
        Ok(())
    }
    /// A list of `size` elements of `elem` starts.
    fn list(&mut self, _elem: Ty, _size: u64) -> Walk<()> {
        Ok(())
    }
    /// A struct `def` ends.
    fn end(&mut self, _def: &'static Def) -> Walk<()> {
        Ok(())
    }
}

/// A visitor that wants to know nothing.
pub(crate) struct NoVisit;

impl Visit for NoVisit {}

/// The smallest encoding of one element of compact type `kind` in a
/// container; `None` for a type that does not exist.
fn min_size(kind: u8) -> Option<u64> {
    match kind {
        1..=6 | 8..=12 => Some(1),
        7 => Some(8),
        13 => Some(16),
        _ => None,
    }
}

/// What is still open: a struct (its last field id, and its fields when
/// parquet reads it as a known struct), or a container (its remaining
/// elements and their types, two for a map whose keys and values
/// alternate; the element type when parquet reads it as a known list).
enum Open {
    Struct {
        last: i16,
        def: Option<&'static Def>,
    },
    Elements {
        left: u64,
        kinds: [u8; 2],
        next: usize,
        elem: Option<Ty>,
    },
}

/// A value still to walk: its compact type, and its declared type when
/// parquet reads it as a known field or element (else parquet skips it).
type Pending = (u8, Option<Ty>);

/// A position in compact-protocol bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn room(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    fn malformed<T>(&self, reason: &'static str) -> Walk<T> {
        Err(Refusal::Malformed {
            at: self.at,
            reason,
        })
    }

    fn byte(&mut self) -> Walk<u8> {
        match self.bytes.get(self.at) {
            Some(b) => {
                self.at += 1;
                Ok(*b)
            }
            None => self.malformed("truncated"),
        }
    }

    /// A varint as parquet reads it (bits past 64 dropped); refused past
    /// ten bytes.
    fn varint(&mut self) -> Walk<u64> {
        let mut out = 0u64;
        let mut shift = 0;
        while shift < 64 {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
            shift += 7;
        }
        self.malformed("a varint longer than 10 bytes")
    }

    fn zigzag(&mut self) -> Walk<i64> {
        let n = self.varint()?;
        Ok(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    fn skip(&mut self, n: u64) -> Walk<()> {
        match usize::try_from(n).ok().filter(|n| *n <= self.room()) {
            Some(n) => {
                self.at += n;
                Ok(())
            }
            None => self.malformed("truncated"),
        }
    }

    /// `claimed` elements of `size` bytes at least, from a header at `at`,
    /// fit in the bytes left.
    fn fits(&self, what: &'static str, claimed: u64, size: u64, at: usize) -> Walk<()> {
        let room = self.room();
        match claimed.checked_mul(size) {
            Some(need) if need <= room as u64 => Ok(()),
            _ => Err(Refusal::Claims {
                what,
                field: None,
                claimed,
                at,
                room,
            }),
        }
    }

    /// A field header after field `last`, as parquet computes its id:
    /// `(id, type)`, type 0 at the end of a struct.
    fn field(&mut self, last: i16) -> Walk<(i16, u8)> {
        let b = self.byte()?;
        let kind = b & 0x0f;
        if kind == 0 {
            return Ok((0, 0));
        }
        if min_size(kind).is_none() {
            return self.malformed("an unknown field type");
        }
        let id = match b >> 4 {
            0 => self.zigzag()? as i16,
            delta => match last.checked_add(i16::from(delta)) {
                Some(id) => id,
                None => return self.malformed("a field id past 32767"),
            },
        };
        Ok((id, kind))
    }

    /// Starts the value `pending`: scalars are read whole, containers and
    /// structs become a new entry of `stack`.
    fn open(&mut self, (kind, ty): Pending, stack: &mut Vec<Open>, v: &mut dyn Visit) -> Walk<()> {
        self.open_value((kind, ty), stack, v).map_err(|e| match e {
            // A claim refused: name the field when Parquet declares it.
            Refusal::Claims {
                what,
                field: None,
                claimed,
                at,
                room,
            } => Refusal::Claims {
                what,
                field: match (stack.last(), ty) {
                    (Some(Open::Struct { def: Some(d), last }), Some(_)) => {
                        d.field(*last).map(|(name, _)| (d.name, name))
                    }
                    _ => None,
                },
                claimed,
                at,
                room,
            },
            other => other,
        })
    }

    /// [`Self::open`], its refusals not naming the field yet.
    fn open_value(
        &mut self,
        (kind, ty): Pending,
        stack: &mut Vec<Open>,
        v: &mut dyn Visit,
    ) -> Walk<()> {
        if ty.is_some_and(|t| !t.accepts(kind)) {
            return Err(match stack.last() {
                Some(Open::Struct { def: Some(d), last }) => Refusal::WrongType {
                    at: self.at,
                    strukt: d.name,
                    field: *last,
                },
                _ => Refusal::Malformed {
                    at: self.at,
                    reason: "a list whose elements are not of Parquet's type",
                },
            });
        }
        match kind {
            1 | 2 => {}         // bool in the field header
            3 => self.skip(1)?, // byte
            4..=6 => {
                let n = self.zigzag()?;
                if let (Some(Open::Struct { def: Some(d), last }), Some(_)) = (stack.last(), ty) {
                    v.int(d, *last, n)?;
                }
            }
            7 => self.skip(8)?, // double
            8 => {
                let at = self.at;
                let n = self.varint()?;
                self.fits("binary", n, 1, at)?;
                self.skip(n)?;
            }
            9 | 10 => {
                let at = self.at;
                let b = self.byte()?;
                let size = match b >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let k = b & 0x0f;
                let elem = match ty {
                    Some(Ty::List(e)) => Some(*e),
                    _ => None,
                };
                if size > 0 {
                    let Some(min) = min_size(k) else {
                        return self.malformed("an unknown element type");
                    };
                    if elem.is_some_and(|e| !e.accepts(k)) {
                        return self.malformed("a list whose elements are not of Parquet's type");
                    }
                    let what = if kind == 9 { "list" } else { "set" };
                    self.fits(what, size, min, at)?;
                }
                if let Some(e) = elem {
                    v.list(e, size)?;
                }
                stack.push(Open::Elements {
                    left: size,
                    kinds: [k, k],
                    next: 0,
                    elem,
                });
            }
            11 => {
                let at = self.at;
                let left = self.varint()?;
                let kinds = if left == 0 { 0 } else { self.byte()? };
                let (k, val) = (kinds >> 4, kinds & 0x0f);
                if left > 0 {
                    let (Some(a), Some(b)) = (min_size(k), min_size(val)) else {
                        return self.malformed("an unknown map key or value type");
                    };
                    self.fits("map", left, a + b, at)?;
                }
                stack.push(Open::Elements {
                    left: left.saturating_mul(2),
                    kinds: [k, val],
                    next: 0,
                    elem: None,
                });
            }
            12 => stack.push(Open::Struct {
                last: 0,
                def: match ty {
                    Some(Ty::Struct(d)) => Some(d),
                    _ => None,
                },
            }),
            13 => self.skip(16)?, // uuid
            _ => return self.malformed("an unknown type"),
        }
        Ok(())
    }

    /// Walks one value of compact type `kind` (`ty` when parquet reads it
    /// as a known type), telling `v`.
    fn value(&mut self, kind: u8, ty: Option<Ty>, v: &mut dyn Visit) -> Walk<()> {
        let mut stack: Vec<Open> = Vec::new();
        let mut pending = Some((kind, ty));
        loop {
            if let Some(p) = pending.take() {
                self.open(p, &mut stack, v)?;
                if stack.len() > MAX_NESTING {
                    return self.malformed("nested too deep");
                }
            }
            match stack.last_mut() {
                None => return Ok(()),
                Some(Open::Struct { last, def }) => {
                    // parquet skips an unknown struct counting ids from 0.
                    let from = if def.is_some() { *last } else { 0 };
                    let (id, kind) = self.field(from)?;
                    if kind == 0 {
                        if let Some(d) = *def {
                            v.end(d)?;
                        }
                        stack.pop();
                        continue;
                    }
                    *last = id;
                    pending = Some((kind, def.and_then(|d| d.field(id)).map(|(_, t)| t)));
                }
                Some(Open::Elements {
                    left,
                    kinds,
                    next,
                    elem,
                }) => {
                    if *left == 0 {
                        stack.pop();
                        continue;
                    }
                    *left -= 1;
                    let k = kinds[*next];
                    *next ^= 1;
                    match (k, *elem) {
                        // A boolean element parquet reads is one byte; one
                        // it skips takes none (parquet-rs 59).
                        (1 | 2, Some(_)) => self.skip(1)?,
                        (1 | 2, None) => {}
                        (k, elem) => pending = Some((k, elem)),
                    }
                }
            }
        }
    }
}

/// Walks the struct `def` at the start of `bytes` as parquet will read
/// it, checking every length it claims and telling `visit` what it reads.
pub(crate) fn walk_struct(bytes: &[u8], def: &'static Def, visit: &mut dyn Visit) -> Walk<()> {
    Cursor { bytes, at: 0 }.value(12, Some(Ty::Struct(def)), visit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct of no known field: everything in it is skipped.
    const UNKNOWN: Def = Def {
        name: "Unknown",
        fields: &[],
    };

    fn walk(bytes: &[u8]) -> Walk<()> {
        walk_struct(bytes, &UNKNOWN, &mut NoVisit)
    }

    fn claims(bytes: &[u8]) -> Option<(&'static str, u64)> {
        match walk(bytes) {
            Err(Refusal::Claims { what, claimed, .. }) => Some((what, claimed)),
            _ => None,
        }
    }

    #[test]
    fn honest_structs_pass() {
        // 1: list<i32> [1, 2], 2: map<i32, binary> {1: "ab"}, 3: bool,
        // 4: list<i32> [], 5: double, 6: uuid, 7: set<struct> {}
        let mut b = vec![0x19, 0x25, 0x02, 0x04];
        b.extend([0x1B, 0x01, 0x58, 0x02, 0x02, b'a', b'b']);
        b.push(0x11);
        b.extend([0x19, 0x05]);
        b.push(0x17);
        b.extend([0; 8]);
        b.push(0x1D);
        b.extend([7; 16]);
        b.extend([0x1A, 0x1C, 0x00]);
        b.push(0);
        assert_eq!(walk(&b), Ok(()));
        // An empty list whose header is all zero (some writers).
        assert_eq!(walk(&[0x19, 0x00, 0x00]), Ok(()));
    }

    #[test]
    fn claims_beyond_the_bytes_are_refused() {
        let big = [0xFF, 0xFF, 0xFF, 0xFF, 0x07]; // 2^31-1
        let mut list = vec![0x19, 0xFC];
        list.extend(big);
        list.extend([0x00, 0x00]);
        assert_eq!(claims(&list), Some(("list", (1 << 31) - 1)));
        // Three doubles claimed, two bytes there.
        assert_eq!(claims(&[0x19, 0x37, 0x00, 0x00]), Some(("list", 3)));
        let mut map = vec![0x1B];
        map.extend(big);
        map.extend([0x55, 0x00]);
        assert_eq!(claims(&map), Some(("map", (1 << 31) - 1)));
        let mut bin = vec![0x18];
        bin.extend(big);
        assert_eq!(claims(&bin), Some(("binary", (1 << 31) - 1)));
        // u64::MAX elements of 16 bytes: no overflow, a refusal.
        let mut uuids = vec![0x1A, 0xFD];
        uuids.extend([0xFF; 9]);
        uuids.push(0x01);
        assert_eq!(claims(&uuids), Some(("set", u64::MAX)));
        // Booleans parquet skips without reading a byte: still refused.
        let mut bools = vec![0x19, 0xF1];
        bools.extend(big);
        assert_eq!(claims(&bools), Some(("list", (1 << 31) - 1)));
    }

    /// A field of a known id carrying another type than declared is
    /// refused: parquet would read it as the declared type.
    #[test]
    fn known_fields_carry_their_declared_type() {
        const KNOWN: Def = Def {
            name: "Known",
            fields: &[(1, "a", Ty::List(&Ty::I32)), (2, "b", Ty::Struct(&UNKNOWN))],
        };
        let ok = [0x19, 0x15, 0x02, 0x1C, 0x00, 0x00];
        assert_eq!(walk_struct(&ok, &KNOWN, &mut NoVisit), Ok(()));
        // Field 1 as a bool, field 2 as a binary, a list of i64.
        for bad in [
            &[0x11, 0x00][..],
            &[0x19, 0x00, 0x18, 0x00, 0x00],
            &[0x19, 0x16, 0x02, 0x00],
        ] {
            let refusal = walk_struct(bad, &KNOWN, &mut NoVisit);
            assert!(
                matches!(
                    refusal,
                    Err(Refusal::WrongType {
                        strukt: "Known",
                        ..
                    } | Refusal::Malformed { .. })
                ),
                "{bad:?}: {refusal:?}"
            );
        }
        // Unknown ids are skipped by the header's type, booleans in a
        // skipped list reading no byte (so the first 0x00 ends the struct).
        let mut v = Ends(0);
        assert_eq!(
            walk_struct(&[0x39, 0x21, 0x00, 0x00], &KNOWN, &mut v),
            Ok(())
        );
        assert_eq!(v.0, 1);
    }

    /// Counts the ends of known structs.
    struct Ends(usize);

    impl Visit for Ends {
        fn end(&mut self, _def: &'static Def) -> Walk<()> {
            self.0 += 1;
            Ok(())
        }
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for bad in [
            &[][..],
            &[0x19][..],
            &[0x1E, 0x00][..],       // field type 14
            &[0x19, 0x1E, 0x00][..], // element type 14
            &[
                0x16, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
            ][..],
        ] {
            assert!(
                matches!(walk(bad), Err(Refusal::Malformed { .. })),
                "{bad:?}"
            );
        }
        let mut deep = vec![0x1C; 10_000];
        deep.push(0);
        assert!(matches!(
            walk(&deep),
            Err(Refusal::Malformed {
                reason: "nested too deep",
                ..
            })
        ));
    }
}
