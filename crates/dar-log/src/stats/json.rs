//! The [`PathTrie`] of wanted stats leaves, and the serde pass over a
//! stats JSON string that decides what the byte scan (`super::scan`) leaves
//! undecided (escaped keys, repeated sections, deep nesting), locating the
//! raw text of every wanted leaf without building a value tree.
//!
//! The trie drives a serde visitor: at each object it looks keys up (first
//! at the position stats usually list them in, schema order, then by
//! comparison or hash), hands wanted leaves back as borrowed slices of the
//! input (`&RawValue` text), descends into wanted structs, and skips
//! everything else with `IgnoredAny`. Typed conversion happens afterwards,
//! from the slices.

use std::collections::HashMap;
use std::fmt;

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use smallvec::SmallVec;

/// Where an object was expected, anything else means "no stats here".
macro_rules! ignore_non_objects {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(())
        }
    };
}

/// Where a key leads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Target {
    /// Stats column `i`.
    Leaf(usize),
    /// Trie node `i` (a struct).
    Node(usize),
}

#[derive(Debug, Default)]
struct TrieNode {
    /// Keys in schema order, for the positional fast path.
    names: Vec<Box<str>>,
    targets: Vec<Target>,
    /// Key -> position in `names`.
    index: HashMap<Box<str>, usize>,
    /// Bit `min(len, 63)` set for the byte length of each name: a key of
    /// another length is no name here, without comparing (most keys of a
    /// stats section are columns no predicate wants).
    lengths: u64,
}

impl TrieNode {
    fn length_bit(len: usize) -> u64 {
        1 << len.min(63)
    }
}

/// Physical paths of the stats columns, as a trie.
#[derive(Debug)]
pub(super) struct PathTrie {
    nodes: Vec<TrieNode>,
}

impl PathTrie {
    /// A trie over `paths`; leaf `i` is `paths[i]`.
    pub(super) fn new<'p>(paths: impl IntoIterator<Item = &'p [String]>) -> Self {
        let mut nodes = vec![TrieNode::default()];
        for (leaf, path) in paths.into_iter().enumerate() {
            let mut node = 0;
            for (depth, name) in path.iter().enumerate() {
                let last = depth + 1 == path.len();
                let existing = nodes[node].index.get(name.as_str()).copied();
                match (existing, last) {
                    (Some(pos), false) => match nodes[node].targets[pos] {
                        Target::Node(child) => node = child,
                        // A leaf and a struct under one name cannot both be
                        // in a valid schema; keep the first.
                        Target::Leaf(_) => break,
                    },
                    (Some(_), true) => {}
                    (None, _) => {
                        let target = if last {
                            Target::Leaf(leaf)
                        } else {
                            nodes.push(TrieNode::default());
                            Target::Node(nodes.len() - 1)
                        };
                        let current = &mut nodes[node];
                        current
                            .index
                            .insert(name.as_str().into(), current.names.len());
                        current.names.push(name.as_str().into());
                        current.lengths |= TrieNode::length_bit(name.len());
                        current.targets.push(target);
                        match target {
                            Target::Node(child) => node = child,
                            Target::Leaf(_) => {}
                        }
                    }
                }
            }
        }
        Self { nodes }
    }

    /// Where `key` leads from `node`; `cursor` is the position after the
    /// previous key found there (stats list keys in schema order, so the
    /// next key is usually the next name). A node of few names is searched
    /// by comparison, a larger one by hash.
    pub(super) fn lookup(&self, node: usize, key: &str, cursor: &mut usize) -> Option<Target> {
        /// Names up to which comparing beats hashing the key.
        const LINEAR: usize = 8;
        let n = &self.nodes[node];
        if n.lengths & TrieNode::length_bit(key.len()) == 0 {
            return None;
        }
        let pos = if n.names.get(*cursor).is_some_and(|name| &**name == key) {
            *cursor
        } else if n.names.len() <= LINEAR {
            n.names.iter().position(|name| &**name == key)?
        } else {
            *n.index.get(key)?
        };
        *cursor = pos + 1;
        Some(n.targets[pos])
    }
}

/// The raw JSON text of the pieces of one stats object.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct RawStats<'a> {
    pub(super) num_records: Option<&'a str>,
    pub(super) tight_bounds: Option<&'a str>,
    /// `[min of each leaf..., max of each leaf..., nullCount of each leaf...]`.
    pub(super) slots: Slots<'a>,
}

impl RawStats<'_> {
    /// Nothing found yet, for `leaves` leaves.
    pub(super) fn new(leaves: usize) -> Self {
        Self {
            num_records: None,
            tight_bounds: None,
            slots: SmallVec::from_elem(None, 3 * leaves),
        }
    }
}

/// The slots of [`RawStats`]: on the stack for up to three leaves (min,
/// max and null count of each), as a predicate names few columns and one
/// stats string is scanned per file, a million per table.
pub(super) type Slots<'a> = SmallVec<[Option<&'a str>; 9]>;

/// Parses one stats string. Only malformed JSON is an error; a stats value
/// that is not an object yields no stats.
pub(super) fn parse<'a>(
    trie: &PathTrie,
    leaves: usize,
    text: &'a str,
) -> Result<RawStats<'a>, serde_json::Error> {
    let mut raw = RawStats::new(leaves);
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_any(TopVisitor {
        trie,
        leaves,
        raw: &mut raw,
    })?;
    de.end()?;
    Ok(raw)
}

struct TopVisitor<'t, 'r, 'a> {
    trie: &'t PathTrie,
    leaves: usize,
    raw: &'r mut RawStats<'a>,
}

enum TopKey {
    NumRecords,
    TightBounds,
    Section(usize),
    Other,
}

impl<'de, 't, 'r> Visitor<'de> for TopVisitor<'t, 'r, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a stats object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let leaves = self.leaves;
        while let Some(key) = map.next_key_seed(KeySeed(|k: &str| match k {
            "numRecords" => TopKey::NumRecords,
            "tightBounds" => TopKey::TightBounds,
            "minValues" => TopKey::Section(0),
            "maxValues" => TopKey::Section(leaves),
            "nullCount" => TopKey::Section(2 * leaves),
            _ => TopKey::Other,
        }))? {
            match key {
                TopKey::NumRecords => self.raw.num_records = Some(raw_text(&mut map)?),
                TopKey::TightBounds => self.raw.tight_bounds = Some(raw_text(&mut map)?),
                TopKey::Section(base) => map.next_value_seed(NodeSeed {
                    trie: self.trie,
                    node: 0,
                    base,
                    slots: &mut self.raw.slots,
                })?,
                TopKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    ignore_non_objects!();
}

/// The next value's raw text, borrowed from the input.
fn raw_text<'de, A: MapAccess<'de>>(map: &mut A) -> Result<&'de str, A::Error> {
    map.next_value::<&'de RawValue>().map(RawValue::get)
}

/// A struct level inside `minValues`/`maxValues`/`nullCount`.
struct NodeSeed<'t, 's, 'a> {
    trie: &'t PathTrie,
    node: usize,
    /// Offset of this section in `slots`.
    base: usize,
    slots: &'s mut [Option<&'a str>],
}

impl<'de, 't, 's> DeserializeSeed<'de> for NodeSeed<'t, 's, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, 't, 's> Visitor<'de> for NodeSeed<'t, 's, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a stats struct")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Self {
            trie,
            node,
            base,
            slots,
        } = self;
        let mut cursor = 0;
        while let Some(target) =
            map.next_key_seed(KeySeed(|k: &str| trie.lookup(node, k, &mut cursor)))?
        {
            match target {
                Some(Target::Leaf(i)) => slots[base + i] = Some(raw_text(&mut map)?),
                Some(Target::Node(child)) => map.next_value_seed(NodeSeed {
                    trie,
                    node: child,
                    base,
                    slots: &mut *slots,
                })?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    ignore_non_objects!();
}

/// Deserializes an object key as a borrowed (or, when escaped, transient)
/// `&str` and maps it without allocating.
struct KeySeed<F>(F);

impl<'de, R, F: FnOnce(&str) -> R> DeserializeSeed<'de> for KeySeed<F> {
    type Value = R;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<R, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, R, F: FnOnce(&str) -> R> Visitor<'de> for KeySeed<F> {
    type Value = R;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, v: &str) -> Result<R, E> {
        Ok((self.0)(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name is found at every node size (compared, or hashed past
    /// 8 names), whatever its length (the length filter folds lengths of
    /// 63 bytes and more into one bit), and keys of other names or of a
    /// name's length but other bytes are not.
    #[test]
    fn lookup_finds_exactly_the_names() {
        let long = |c: char, n: usize| c.to_string().repeat(n);
        for count in [1, 3, 8, 9, 20] {
            let names: Vec<String> = (0..count)
                .map(|i| match i % 4 {
                    0 => format!("c{i}"),
                    1 => long('x', 63 + i),
                    2 => format!("{}{i}", long('é', 40)),
                    _ => format!("col_{i}"),
                })
                .collect();
            let paths: Vec<Vec<String>> = names.iter().map(|n| vec![n.clone()]).collect();
            let trie = PathTrie::new(paths.iter().map(Vec::as_slice));
            for (i, name) in names.iter().enumerate() {
                // From the positional guess and from elsewhere.
                for start in [i, 0, count - 1] {
                    let mut cursor = start;
                    match trie.lookup(0, name, &mut cursor) {
                        Some(Target::Leaf(leaf)) => assert_eq!(leaf, i, "{count}: {name}"),
                        other => panic!("{count}: {name}: {other:?}"),
                    }
                    assert_eq!(cursor, i + 1);
                }
            }
            for other in [
                "",
                "c",
                "C0",
                &long('x', 62),
                &long('y', 64),
                &long('x', 200),
                "col_",
            ] {
                let mut cursor = 0;
                assert!(
                    trie.lookup(0, other, &mut cursor).is_none(),
                    "{count}: {other}"
                );
            }
        }
    }
}
