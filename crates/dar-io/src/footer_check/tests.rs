use super::*;

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

/// A list header of `n` elements of compact type `kind`.
fn list(out: &mut Vec<u8>, n: u64, kind: u8) {
    if n < 15 {
        out.push(((n as u8) << 4) | kind);
    } else {
        out.push(0xF0 | kind);
        varint(out, n);
    }
}

/// A footer whose schema is a chain of `groups` nested groups ending in
/// one INT32 leaf, the root claiming `root_children` children, written in
/// Thrift's compact protocol by hand, plus a `row_groups` list after it
/// claiming `row_groups` row groups (holding one, with an empty column
/// list).
fn footer_with(groups: usize, root_children: i64, row_groups: u64) -> Vec<u8> {
    let mut b = vec![0x15];
    varint(&mut b, zz(1)); // 1: version
    let elems = groups + 1;
    b.push(0x19); // 2: list
    list(&mut b, elems as u64, 12);
    for i in 0..elems {
        if i + 1 == elems {
            b.extend([0x15, 0x02, 0x25, 0x02]); // 1: type INT32, 3: OPTIONAL
            b.extend([0x18, 0x01, b'x']); // 4: name
        } else {
            b.extend([0x48, 0x01, b'g']); // 4: name
            b.push(0x15); // 5: num_children
            varint(&mut b, zz(if i == 0 { root_children } else { 1 }));
        }
        b.push(0);
    }
    b.push(0x16); // 3: num_rows
    varint(&mut b, zz(0));
    b.push(0x19); // 4: row_groups, one struct with an empty column list
    list(&mut b, row_groups, 12);
    b.extend([0x19, 0x0C, 0x16, 0x00, 0x16, 0x00, 0x00]);
    b.push(0);
    b
}

fn footer(groups: usize) -> Vec<u8> {
    footer_with(groups, 1, 1)
}

#[test]
fn depth_of_nested_groups() {
    assert_eq!(check_footer(&footer(1)), Ok(1));
    assert_eq!(check_footer(&footer(3)), Ok(3));
    assert_eq!(
        check_footer(&footer(MAX_SCHEMA_DEPTH)),
        Ok(MAX_SCHEMA_DEPTH)
    );
    assert_eq!(
        check_footer(&footer(5_000)),
        Err(Refusal::TooDeep(MAX_SCHEMA_DEPTH + 1))
    );
}

/// The two claims that aborted parquet: 2^31-1 row groups (200 GB of
/// row-group metadata) and a root of 2^31-1 children (16 GB of pointers).
#[test]
fn claimed_lengths_are_refused() {
    let max = i32::MAX;
    match check_footer(&footer_with(3, 1, max as u64)) {
        Err(Refusal::Claims {
            what: "list",
            claimed,
            room,
            ..
        }) => assert_eq!((claimed, room), (max as u64, 8)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        check_footer(&footer_with(3, i64::from(max), 1)),
        Err(Refusal::Children {
            element: 0,
            claimed: i64::from(max),
            left: 3
        })
    );
    // parquet reads num_children as the low 32 bits of the varint.
    assert!(matches!(
        check_footer(&footer_with(3, (1 << 32) + i64::from(max), 1)),
        Err(Refusal::Children { .. })
    ));
    // A negative count is parquet's to refuse; no allocation follows it.
    assert!(check_footer(&footer_with(3, -5, 1)).is_ok());
}

/// A row-group list disguised as a boolean field: a walk by the header's
/// types sees a bool and nested structs, parquet reads field 4 as a list
/// whatever its header says, its size from bytes the walk took for field
/// headers (about 260 million row groups: 25 GB).
#[test]
fn a_known_field_in_disguise_is_refused() {
    let mut b = footer_with(1, 1, 0);
    let at = b.len() - 10; // the row_groups field header
    assert_eq!(b[at], 0x19);
    b.truncate(at);
    b.push(0x11); // field 4 as a bool
    b.extend([0xFC, 0x8C, 0x8C, 0x8C, 0x7C]); // parquet: a list header
    b.extend([0; 6]);
    assert!(matches!(
        check_footer(&b),
        Err(Refusal::WrongType {
            strukt: "FileMetaData",
            field: 4,
            ..
        })
    ));
}

#[test]
fn page_indexes_are_checked() {
    // ColumnIndex: null_pages [false], min ["a"], max ["b"], boundary 0.
    let ok = [
        0x19, 0x11, 0x02, 0x19, 0x18, 0x01, b'a', 0x19, 0x18, 0x01, b'b', 0x15, 0x00, 0x00,
    ];
    assert_eq!(check_column_index(&ok), Ok(()));
    let mut claims = vec![0x19, 0xF1];
    varint(&mut claims, i32::MAX as u64);
    claims.push(0);
    assert!(matches!(
        check_column_index(&claims),
        Err(Refusal::Claims { .. })
    ));
    // OffsetIndex: one page location, then 2^31-1 claimed.
    let ok = [0x19, 0x1C, 0x16, 0x08, 0x15, 0x10, 0x16, 0x00, 0x00, 0x00];
    assert_eq!(check_offset_index(&ok), Ok(()));
    let mut claims = vec![0x19, 0xFC];
    varint(&mut claims, i32::MAX as u64);
    claims.extend(&ok[2..]);
    assert!(matches!(
        check_offset_index(&claims),
        Err(Refusal::Claims { .. })
    ));
}

#[test]
fn garbage_is_refused_not_a_panic() {
    assert!(check_footer(&[]).is_err());
    assert!(check_footer(&[0xff; 64]).is_err());
    let f = footer(3);
    for cut in 0..f.len() {
        assert!(check_footer(&f[..cut]).is_err(), "{cut}");
    }
    // Structs nested past the walk's bound in an unknown field (10).
    let mut deep = vec![0xAC];
    deep.extend([0x1C; 10_000]);
    deep.push(0);
    assert!(matches!(
        check_footer(&deep),
        Err(Refusal::Malformed {
            reason: "nested too deep",
            ..
        })
    ));
    // A struct where FileMetaData declares an i32.
    assert!(matches!(
        check_footer(&[0x1C, 0x00, 0x00]),
        Err(Refusal::WrongType { field: 1, .. })
    ));
}
