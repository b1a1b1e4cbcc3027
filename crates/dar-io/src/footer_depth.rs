//! How deeply a Parquet footer's schema nests, read without recursion
//! before parquet decodes the footer: parquet-rs builds the schema tree,
//! and everything downstream converts it, recursively, so a 50 KB footer
//! nesting 5,000 groups overflowed the thread's stack and aborted the
//! process. A footer nesting deeper than [`MAX_SCHEMA_DEPTH`] is refused.
//!
//! The footer is Thrift's compact protocol (`FileMetaData`):
//!
//! ```text
//! FileMetaData { 1: i32 version, 2: list<SchemaElement> schema, ... }
//! SchemaElement { ..., 4: string name, 5: i32 num_children, ... }
//! field header: 1 byte (delta << 4 | type), or type then zigzag i16 id
//! list header:  1 byte (size << 4 | elem type), or 0xF_ | type + varint
//! ```
//!
//! The schema is a flat list in depth-first order, each group giving its
//! number of children; the depth is the height of the stack of groups
//! still open. Everything else is skipped with an explicit stack (at most
//! [`MAX_THRIFT_NESTING`] structs and lists deep).

/// The deepest schema nesting accepted (root = 1). Spark's and every other
/// writer's real schemas stay far below it.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// The deepest nesting of Thrift structs and lists the skimmer skips.
const MAX_THRIFT_NESTING: usize = 64;

/// Why a footer is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DepthError {
    /// The schema nests more than [`MAX_SCHEMA_DEPTH`] levels.
    TooDeep(usize),
    /// The bytes are not a `FileMetaData` (parquet will say what is wrong).
    Malformed,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(out);
            }
        }
        None
    }

    fn zigzag(&mut self) -> Option<i64> {
        let n = self.varint()?;
        Some(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    fn skip(&mut self, n: u64) -> Option<()> {
        let n = usize::try_from(n).ok()?;
        let end = self.at.checked_add(n)?;
        (end <= self.bytes.len()).then(|| self.at = end)
    }

    /// A field header: `(field id, type)`, type 0 for the end of a struct.
    fn field(&mut self, last: i64) -> Option<(i64, u8)> {
        let b = self.byte()?;
        let kind = b & 0x0f;
        if kind == 0 {
            return Some((0, 0));
        }
        let delta = i64::from(b >> 4);
        let id = if delta == 0 {
            self.zigzag()?
        } else {
            last + delta
        };
        Some((id, kind))
    }

    /// A list or set header: `(size, element type)`.
    fn list(&mut self) -> Option<(u64, u8)> {
        let b = self.byte()?;
        let size = match b >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        Some((size, b & 0x0f))
    }

    /// Skips a value of compact type `kind`, containers included, without
    /// recursion.
    fn skip_value(&mut self, kind: u8) -> Option<()> {
        // What is still open: a struct (its last field id), or a container
        // with its remaining element count and element types (two for a
        // map: keys and values alternate).
        enum Open {
            Struct(i64),
            Elements {
                left: u64,
                kinds: [u8; 2],
                next: usize,
            },
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut pending = Some(kind);
        loop {
            if let Some(kind) = pending.take() {
                match kind {
                    1 | 2 => {}                    // bool in the header
                    3 => self.skip(1)?,            // byte
                    4..=6 => drop(self.varint()?), // i16, i32, i64
                    7 => self.skip(8)?,            // double
                    8 => {
                        let n = self.varint()?; // binary
                        self.skip(n)?;
                    }
                    9 | 10 => {
                        let (left, k) = self.list()?; // list, set
                        stack.push(Open::Elements {
                            left,
                            kinds: [k, k],
                            next: 0,
                        });
                    }
                    11 => {
                        let left = self.varint()?; // map
                        let kinds = if left == 0 { 0 } else { self.byte()? };
                        stack.push(Open::Elements {
                            left: left.checked_mul(2)?,
                            kinds: [kinds >> 4, kinds & 0x0f],
                            next: 0,
                        });
                    }
                    12 => stack.push(Open::Struct(0)), // struct
                    _ => return None,
                }
                if stack.len() > MAX_THRIFT_NESTING {
                    return None;
                }
            }
            match stack.last_mut() {
                None => return Some(()),
                Some(Open::Struct(last)) => {
                    let (id, kind) = self.field(*last)?;
                    if kind == 0 {
                        stack.pop();
                    } else {
                        *last = id;
                        pending = Some(kind);
                    }
                }
                Some(Open::Elements { left, kinds, next }) => {
                    if *left == 0 {
                        stack.pop();
                    } else {
                        *left -= 1;
                        let k = kinds[*next];
                        *next ^= 1;
                        // Booleans in containers are a whole byte.
                        if k == 1 || k == 2 {
                            self.skip(1)?;
                        } else {
                            pending = Some(k);
                        }
                    }
                }
            }
        }
    }

    /// The `num_children` of one `SchemaElement` (0 for a leaf).
    fn schema_element(&mut self) -> Option<u64> {
        let mut last = 0;
        let mut children = 0;
        loop {
            let (id, kind) = self.field(last)?;
            if kind == 0 {
                return Some(children);
            }
            last = id;
            if id == 5 && kind == 5 {
                children = u64::try_from(self.zigzag()?).unwrap_or(0);
            } else {
                self.skip_value(kind)?;
            }
        }
    }
}

/// The nesting depth of the schema in the footer `bytes` (the Thrift
/// `FileMetaData`, without the trailing length and magic).
pub(crate) fn check_schema_depth(bytes: &[u8]) -> Result<usize, DepthError> {
    let mut c = Cursor { bytes, at: 0 };
    let mut last = 0;
    loop {
        let (id, kind) = c.field(last).ok_or(DepthError::Malformed)?;
        if kind == 0 {
            // No schema list at all: parquet refuses the footer itself.
            return Err(DepthError::Malformed);
        }
        last = id;
        if id != 2 || kind != 9 {
            c.skip_value(kind).ok_or(DepthError::Malformed)?;
            continue;
        }
        let (size, elem) = c.list().ok_or(DepthError::Malformed)?;
        if elem != 12 {
            return Err(DepthError::Malformed);
        }
        // Children each open group still waits for.
        let mut open: Vec<u64> = Vec::new();
        let mut deepest = 0;
        for _ in 0..size {
            let children = c.schema_element().ok_or(DepthError::Malformed)?;
            // This element fills one slot of the innermost open group.
            while open.last() == Some(&0) {
                open.pop();
            }
            if let Some(top) = open.last_mut() {
                *top -= 1;
            }
            if children > 0 {
                open.push(children);
                deepest = deepest.max(open.len());
                if deepest > MAX_SCHEMA_DEPTH {
                    return Err(DepthError::TooDeep(deepest));
                }
            }
        }
        return Ok(deepest.max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A footer whose schema is a chain of `groups` nested groups ending in
    /// one INT32 leaf, written in Thrift's compact protocol by hand, plus a
    /// `row_groups` list after it (skipped).
    fn footer(groups: usize) -> Vec<u8> {
        fn zz(n: i64) -> u64 {
            ((n << 1) ^ (n >> 63)) as u64
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
        let mut b = vec![0x15];
        varint(&mut b, zz(1)); // 1: version
        let elems = groups + 1;
        b.push(0x19); // 2: list
        if elems < 15 {
            b.push(((elems as u8) << 4) | 12);
        } else {
            b.push(0xFC);
            varint(&mut b, elems as u64);
        }
        for i in 0..elems {
            if i + 1 == elems {
                b.extend([0x15, 0x02, 0x25, 0x02]); // 1: type INT32, 3: OPTIONAL
                b.extend([0x18, 0x01, b'x']); // 4: name
            } else {
                b.extend([0x48, 0x01, b'g']); // 4: name
                b.push(0x15); // 5: num_children
                varint(&mut b, zz(1));
            }
            b.push(0);
        }
        b.push(0x16); // 3: num_rows
        varint(&mut b, zz(0));
        b.push(0x19); // 4: row_groups, one struct with a nested list
        b.push(0x1C);
        b.extend([0x19, 0x1C, 0x15, 0x04, 0x00, 0x00]);
        b.push(0);
        b
    }

    #[test]
    fn depth_of_nested_groups() {
        assert_eq!(check_schema_depth(&footer(1)), Ok(1));
        assert_eq!(check_schema_depth(&footer(3)), Ok(3));
        assert_eq!(
            check_schema_depth(&footer(MAX_SCHEMA_DEPTH)),
            Ok(MAX_SCHEMA_DEPTH)
        );
        assert_eq!(
            check_schema_depth(&footer(5_000)),
            Err(DepthError::TooDeep(MAX_SCHEMA_DEPTH + 1))
        );
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        assert_eq!(check_schema_depth(&[]), Err(DepthError::Malformed));
        assert_eq!(check_schema_depth(&[0xff; 64]), Err(DepthError::Malformed));
        let f = footer(3);
        for cut in 0..f.len() {
            let _ = check_schema_depth(&f[..cut]);
        }
        // Structs nested past the skimmer's bound in an unknown field.
        let mut deep = vec![0x1C; 10_000];
        deep.push(0);
        assert_eq!(check_schema_depth(&deep), Err(DepthError::Malformed));
    }
}
