//! The counts of a stats JSON string (`numRecords`, `tightBounds`) in one
//! validating byte scan, for opening a table: no column's stats are
//! wanted then, and a scan that only checks the grammar is several times
//! cheaper than driving serde's visitors through every nested value.
//!
//! It accepts exactly the JSON serde_json accepts (RFC 8259), so a
//! malformed string is malformed either way. Anything it does not decide
//! alone (a top-level key with an escape, a repeated count key, a
//! top-level value that is not an object, a surrogate escape, nesting
//! deeper than [`MAX_DEPTH`], which this recursive scan leaves to serde's
//! iterative one) it leaves to the full parser, returning `None`.

/// Nesting this scan follows itself.
const MAX_DEPTH: usize = 64;

/// What [`scan`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Scan<'a> {
    /// Valid JSON: the raw text of the two counts, when present.
    Counts {
        num_records: Option<&'a str>,
        tight_bounds: Option<&'a str>,
    },
    /// Not valid JSON.
    Malformed,
}

/// Scans `text`; `None` when the full parser must decide.
pub(super) fn scan(text: &str) -> Option<Scan<'_>> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    s.ws();
    if s.peek() != Some(b'{') {
        return None;
    }
    let found = match s.top_object() {
        Ok(found) => found,
        Err(Stop::Malformed) => return Some(Scan::Malformed),
        Err(Stop::Undecided) => return None,
    };
    s.ws();
    if s.i != s.b.len() {
        return Some(Scan::Malformed);
    }
    let slice = |r: Option<(usize, usize)>| r.map(|(a, b)| &text[a..b]);
    Some(Scan::Counts {
        num_records: slice(found.0),
        tight_bounds: slice(found.1),
    })
}

enum Stop {
    Malformed,
    Undecided,
}

type Step<T = ()> = Result<T, Stop>;

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
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

    /// The top-level object: the byte ranges of `numRecords` and
    /// `tightBounds` values.
    #[allow(clippy::type_complexity, reason = "two optional ranges")]
    fn top_object(&mut self) -> Step<(Option<(usize, usize)>, Option<(usize, usize)>)> {
        let (mut num, mut tight) = (None, None);
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok((num, tight));
        }
        loop {
            let (start, end, escaped) = self.string()?;
            if escaped {
                return Err(Stop::Undecided);
            }
            let key = &self.b[start..end];
            self.ws();
            self.eat(b':')?;
            self.ws();
            let at = self.i;
            self.value(1)?;
            let slot = match key {
                b"numRecords" => Some(&mut num),
                b"tightBounds" => Some(&mut tight),
                _ => None,
            };
            if let Some(slot) = slot {
                if slot.is_some() {
                    return Err(Stop::Undecided);
                }
                *slot = Some((at, self.i));
            }
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok((num, tight));
                }
                _ => return Err(Stop::Malformed),
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
    /// backslash or a control character (SWAR, as serde_json does).
    fn skip_plain(&mut self) {
        const ONES: u64 = u64::from_ne_bytes([1; 8]);
        const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
        let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let v = u64::from_ne_bytes(word);
            let special = zero_byte(v ^ (ONES * u64::from(b'"')))
                | zero_byte(v ^ (ONES * u64::from(b'\\')))
                | (v.wrapping_sub(ONES * 0x20) & !v & HIGH);
            if special != 0 {
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

    use super::*;

    /// What the full parser makes of `text`: `None` for malformed.
    fn serde_counts(text: &str) -> Option<(Option<String>, Option<String>)> {
        let trie = super::super::json::PathTrie::new(std::iter::empty::<&[String]>());
        super::super::json::parse(&trie, 0, text).ok().map(|r| {
            (
                r.num_records.map(|v| v.get().to_string()),
                r.tight_bounds.map(|v| v.get().to_string()),
            )
        })
    }

    fn agree(text: &str) {
        let Some(fast) = scan(text) else { return };
        let full = serde_counts(text);
        match fast {
            Scan::Malformed => assert_eq!(full, None, "{text:?}"),
            Scan::Counts {
                num_records,
                tight_bounds,
            } => assert_eq!(
                full,
                Some((
                    num_records.map(String::from),
                    tight_bounds.map(String::from)
                )),
                "{text:?}"
            ),
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
        ] {
            agree(text);
        }
        assert_eq!(
            scan(r#"{"numRecords":7,"x":{"y":[true,null]}}"#),
            Some(Scan::Counts {
                num_records: Some("7"),
                tight_bounds: None
            })
        );
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan(&deep), None, "left to serde");
        assert!(serde_counts(&deep).is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn random_texts_agree_with_serde(
            text in r#"\{("(numRecords|tightBounds|a|b\\n)"\s?:\s?(-?[0-9]{1,3}(\.[0-9])?|true|false|null|"[a-z\\"]{0,3}"|\{\}|\[1,\{"c":2\}\]|\{"d":\[\]\})[,]?){0,4}\}\s?"#,
            cut in 0usize..64,
            byte in any::<u8>(),
        ) {
            agree(&text);
            // Damaged: a byte replaced (ASCII, so the text stays UTF-8).
            let mut bytes = text.clone().into_bytes();
            if !bytes.is_empty() {
                let at = cut % bytes.len();
                bytes[at] = byte % 128;
                if let Ok(damaged) = String::from_utf8(bytes) {
                    agree(&damaged);
                }
            }
        }
    }
}
