//! The statistics of a stats JSON string in one validating byte scan:
//! the counts (`numRecords`, `tightBounds`) and the raw text of the wanted
//! columns' `minValues` / `maxValues` / `nullCount` leaves. A scan that
//! checks the grammar and looks keys up in the [`PathTrie`] is several
//! times cheaper than driving serde's visitors through every nested value
//! (opening a table wants the counts only; a plan one or a few columns).
//!
//! It accepts exactly the JSON serde_json accepts (RFC 8259), so a
//! malformed string is malformed either way, and it finds what the serde
//! path ([`super::json::parse`]) finds: a later duplicate of a leaf wins, a
//! section or struct that is not an object holds no stats. Anything it does
//! not decide alone (a key with an escape at the top level or inside a
//! section, a repeated top-level stats key, a top-level value that is not
//! an object, a surrogate escape, nesting deeper than [`MAX_DEPTH`], which
//! this recursive scan leaves to serde's iterative one) it leaves to the
//! full parser, returning `None`.

use super::json::{PathTrie, RawStats, Target};

/// Nesting this scan follows itself.
const MAX_DEPTH: usize = 64;

/// What [`scan`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Scan<'a> {
    /// Valid JSON, and the raw text of what it holds.
    Stats(RawStats<'a>),
    /// Not valid JSON.
    Malformed,
}

/// Scans `text` for the counts and the `leaves` leaves of `trie`; `None`
/// when the full parser must decide.
pub(super) fn scan<'a>(trie: &PathTrie, leaves: usize, text: &'a str) -> Option<Scan<'a>> {
    let mut s = Scanner {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    s.ws();
    if s.peek() != Some(b'{') {
        return None;
    }
    let mut raw = RawStats::new(leaves);
    match s.top_object(trie, leaves, &mut raw) {
        Ok(()) => {}
        Err(Stop::Malformed) => return Some(Scan::Malformed),
        Err(Stop::Undecided) => return None,
    }
    s.ws();
    if s.i != s.b.len() {
        return Some(Scan::Malformed);
    }
    Some(Scan::Stats(raw))
}

enum Stop {
    Malformed,
    Undecided,
}

type Step<T = ()> = Result<T, Stop>;

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Step {
        if self.peek() == Some(byte) {
            self.i += 1;
            Ok(())
        } else {
            Err(Stop::Malformed)
        }
    }

    /// A key without escapes and its colon: the key's text.
    fn plain_key(&mut self) -> Step<&'a str> {
        if self.peek() != Some(b'"') {
            return Err(Stop::Malformed);
        }
        let (start, end, escaped) = self.string()?;
        if escaped {
            return Err(Stop::Undecided);
        }
        self.ws();
        self.eat(b':')?;
        self.ws();
        // Quotes are ASCII, so the key's bounds are character boundaries.
        Ok(&self.text[start..end])
    }

    /// After a member: past a comma (then true) or the closing brace
    /// (then false).
    fn next_member(&mut self) -> Step<bool> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                self.ws();
                Ok(true)
            }
            Some(b'}') => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(Stop::Malformed),
        }
    }

    /// A value and its raw text.
    fn raw_value(&mut self, depth: usize) -> Step<&'a str> {
        let at = self.i;
        self.value(depth)?;
        Ok(&self.text[at..self.i])
    }

    /// The top-level object into `raw`.
    fn top_object(&mut self, trie: &PathTrie, leaves: usize, raw: &mut RawStats<'a>) -> Step {
        // Which of numRecords, tightBounds and the three sections were
        // seen: a repeat is left to serde.
        let mut seen = 0u8;
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = self.plain_key()?;
            let (bit, base) = match key {
                "numRecords" => (1, None),
                "tightBounds" => (2, None),
                // Sections matter only when leaves are wanted.
                "minValues" if leaves > 0 => (4, Some(0)),
                "maxValues" if leaves > 0 => (8, Some(leaves)),
                "nullCount" if leaves > 0 => (16, Some(2 * leaves)),
                _ => (0, None),
            };
            if seen & bit != 0 {
                return Err(Stop::Undecided);
            }
            seen |= bit;
            match (bit, base) {
                (1, _) => raw.num_records = Some(self.raw_value(1)?),
                (2, _) => raw.tight_bounds = Some(self.raw_value(1)?),
                (_, Some(base)) => self.section(trie, 0, base, 1, &mut raw.slots)?,
                _ => self.value(1)?,
            }
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    /// A value inside `minValues` / `maxValues` / `nullCount` at trie
    /// `node`: an object's wanted leaves go to `slots[base + leaf]`;
    /// anything else is checked and holds no stats.
    fn section(
        &mut self,
        trie: &PathTrie,
        node: usize,
        base: usize,
        depth: usize,
        slots: &mut [Option<&'a str>],
    ) -> Step {
        if self.peek() != Some(b'{') {
            return self.value(depth);
        }
        if depth >= MAX_DEPTH {
            return Err(Stop::Undecided);
        }
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        let mut cursor = 0;
        loop {
            let key = self.plain_key()?;
            match trie.lookup(node, key, &mut cursor) {
                Some(Target::Leaf(leaf)) => slots[base + leaf] = Some(self.raw_value(depth + 1)?),
                Some(Target::Node(child)) => self.section(trie, child, base, depth + 1, slots)?,
                None => self.value(depth + 1)?,
            }
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    fn value(&mut self, depth: usize) -> Step {
        match self.peek() {
            Some(b'{') => self.container(depth, b'}', true),
            Some(b'[') => self.container(depth, b']', false),
            Some(b'"') => self.string().map(|_| ()),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Stop::Malformed),
        }
    }

    /// An object (`keyed`) or array below the top level.
    fn container(&mut self, depth: usize, close: u8, keyed: bool) -> Step {
        if depth >= MAX_DEPTH {
            return Err(Stop::Undecided);
        }
        self.i += 1;
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            return Ok(());
        }
        loop {
            if keyed {
                if self.peek() != Some(b'"') {
                    return Err(Stop::Malformed);
                }
                self.string()?;
                self.ws();
                self.eat(b':')?;
                self.ws();
            }
            self.value(depth + 1)?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Stop::Malformed),
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Step {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(Stop::Malformed)
        }
    }

    /// A string: the range of its content, and whether it has escapes.
    fn string(&mut self) -> Step<(usize, usize, bool)> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            self.skip_plain();
            let Some(&c) = self.b.get(self.i) else {
                return Err(Stop::Malformed);
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok((start, self.i - 1, escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.i += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.i += 1;
                        }
                        Some(b'u') => {
                            let hex = self.b.get(self.i + 1..self.i + 5);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return Err(Stop::Malformed);
                            }
                            // serde_json checks surrogate pairs: leave those to it.
                            if matches!(self.b[self.i + 1], b'd' | b'D')
                                && matches!(self.b[self.i + 2], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                            {
                                return Err(Stop::Undecided);
                            }
                            self.i += 5;
                        }
                        _ => return Err(Stop::Malformed),
                    }
                }
                0x00..=0x1f => return Err(Stop::Malformed),
                _ => self.i += 1,
            }
        }
    }

    /// Skips string bytes 8 at a time while none of them is a quote, a
    /// backslash or a control character (SWAR, as serde_json does), then
    /// to the first such byte of the word that has one: a string of a few
    /// characters costs one or two words, not one word per byte.
    fn skip_plain(&mut self) {
        const ONES: u64 = u64::from_ne_bytes([1; 8]);
        const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
        let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            // Little-endian: the first byte in memory is the lowest.
            let v = u64::from_le_bytes(word);
            let special = zero_byte(v ^ (ONES * u64::from(b'"')))
                | zero_byte(v ^ (ONES * u64::from(b'\\')))
                | (v.wrapping_sub(ONES * 0x20) & !v & HIGH);
            if special != 0 {
                // A borrow only sets bits above a true match, so the
                // lowest set bit is the first special byte.
                self.i += (special.trailing_zeros() / 8) as usize;
                return;
            }
            self.i += 8;
        }
    }

    fn number(&mut self) -> Step {
        let digits = |s: &mut Self| {
            let from = s.i;
            while let Some(b'0'..=b'9') = s.peek() {
                s.i += 1;
            }
            s.i - from
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(Stop::Malformed),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return Err(Stop::Malformed);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if digits(self) == 0 {
                return Err(Stop::Malformed);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::json::{self, PathTrie};
    use super::*;

    /// The leaves the tests look for: `a`, `s.x` and `s.y`.
    fn trie() -> PathTrie {
        let paths: Vec<Vec<String>> = [vec!["a"], vec!["s", "x"], vec!["s", "y"]]
            .into_iter()
            .map(|p| p.into_iter().map(String::from).collect())
            .collect();
        PathTrie::new(paths.iter().map(Vec::as_slice))
    }

    /// The scan agrees with the serde parser on `text` whenever it decides,
    /// for the counts alone and for the three leaves.
    fn agree(text: &str) {
        let counts_only = PathTrie::new(std::iter::empty::<&[String]>());
        for (trie, leaves) in [(counts_only, 0), (trie(), 3)] {
            let Some(fast) = scan(&trie, leaves, text) else {
                continue;
            };
            let full = json::parse(&trie, leaves, text).ok();
            match fast {
                Scan::Malformed => assert_eq!(full, None, "{text:?}"),
                Scan::Stats(raw) => assert_eq!(full, Some(raw), "{text:?}"),
            }
        }
    }

    /// [`agree`] on `text`, and on it damaged: the byte at `cut` (modulo
    /// its length) replaced by `byte` made ASCII, so the text stays UTF-8.
    fn agree_intact_and_damaged(text: &str, cut: usize, byte: u8) {
        agree(text);
        let mut bytes = text.as_bytes().to_vec();
        if !bytes.is_empty() {
            let at = cut % bytes.len();
            bytes[at] = byte % 128;
            if let Ok(damaged) = String::from_utf8(bytes) {
                agree(&damaged);
            }
        }
    }

    #[test]
    fn examples_agree_with_serde() {
        for text in [
            r#"{"numRecords":3,"minValues":{"a":1,"s":"x\"y"},"maxValues":{"a":[1,2.5e3,-0]},"nullCount":{"a":0},"tightBounds":true}"#,
            r#" { "numRecords" : 10 , "tightBounds" : false } "#,
            r#"{}"#,
            r#"{"numRecords":01}"#,
            r#"{"numRecords":1,}"#,
            r#"{"numRecords":1}x"#,
            r#"{"a":"\u00e9\n","numRecords":-2.5}"#,
            r#"{"a":"\ud83d\ude00","numRecords":1}"#,
            r#"{"a":"bad\x"}"#,
            r#"{"a":tru}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":{"b":}}"#,
            r#"{"a":1.}"#,
            r#"{"a":1e}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"numRecords":1,"numRecords":2}"#,
            r#"{"num\u0052ecords":5}"#,
            r#"{"numRecords":null,"tightBounds":"yes"}"#,
            r#"{"a":"unterminated}"#,
            r#"{"minValues":{"a":1,"a":2},"maxValues":{"s":{"y":"z","x":[]},"a":{"q":1}}}"#,
            r#"{"minValues":{"s":{"x":1},"s":{"y":2}},"nullCount":{"s":5,"a":null}}"#,
            r#"{"minValues":{"s":{"x":1}},"minValues":{"a":2}}"#,
            r#"{"minValues":[{"a":1}],"maxValues":"a","nullCount":{"\u0061":1}}"#,
            r#"{"minValues":{"b":{"a":1},"a" : -1.5e-3 },"maxValues":{"a":"\u00e9"}}"#,
            r#"{"minValues":{"a":1,}}"#,
            r#"{"minValues":{"a"}}"#,
            r#"{"minValues":{"s":{"x":1}}"#,
        ] {
            agree(text);
        }
        let found = |text| match scan(&trie(), 3, text) {
            Some(Scan::Stats(raw)) => raw,
            other => panic!("{other:?}"),
        };
        let raw =
            found(r#"{"numRecords":7,"x":{"y":[true,null]},"minValues":{"s":{"y":"q"},"a":-1}}"#);
        assert_eq!(raw.num_records, Some("7"));
        assert_eq!(raw.tight_bounds, None);
        assert_eq!(raw.slots[..3], [Some("-1"), None, Some("\"q\"")]);
        // A later duplicate of a leaf wins, as with serde.
        let raw = found(r#"{"maxValues":{"a":1,"a":{"b":2}}}"#);
        assert_eq!(raw.slots[3], Some(r#"{"b":2}"#));
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan(&trie(), 3, &deep), None, "left to serde");
        assert!(json::parse(&trie(), 3, &deep).is_ok());
        let escaped = r#"{"minValues":{"\u0061":1}}"#;
        assert_eq!(scan(&trie(), 3, escaped), None, "left to serde");
        assert_eq!(
            json::parse(&trie(), 3, escaped).unwrap().slots[0],
            Some("1")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn random_texts_agree_with_serde(
            text in r#"\{("(numRecords|tightBounds|a|b\\n)"\s?:\s?(-?[0-9]{1,3}(\.[0-9])?|true|false|null|"[a-z\\"]{0,3}"|\{\}|\[1,\{"c":2\}\]|\{"d":\[\]\})[,]?){0,4}\}\s?"#,
            cut in 0usize..64,
            byte in any::<u8>(),
        ) {
            agree_intact_and_damaged(&text, cut, byte);
        }

        #[test]
        fn random_sections_agree_with_serde(
            text in r#"\{("(numRecords|minValues|maxValues|nullCount)"\s?:\s?(1|\{("(a|s|x|y|\\u0061)"\s?:\s?(-?[0-9]{1,2}|"[a-z]{0,2}"|null|\[\]|\{("(x|y|z)":(1|"q"|\{\})[,]?){0,3}\})[,]?){0,4}\})[,]?){0,4}\}"#,
            cut in 0usize..128,
            byte in any::<u8>(),
        ) {
            agree_intact_and_damaged(&text, cut, byte);
        }
    }
}
