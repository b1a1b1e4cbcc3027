//! [`StringConcat`]: string arrays copied into one as they come, each
//! released once copied. A concatenation of arrays held until the end
//! (`arrow_select::concat`) holds every input beside its output; this one
//! holds at most the input being copied. The paths of a million-file
//! checkpoint (68 MB) are gathered this way, batch by batch while they
//! decode and piece by piece into the file index, so neither step keeps
//! two copies of them.
//!
//! Values of [`MAPPED_BYTES`] or more are gathered in an anonymous memory
//! map, not on the heap: a released map goes back to the OS at once,
//! where freed heap pages stay with the allocator (jemalloc keeps them for
//! seconds, glibc in its per-thread arenas) and add to the peak beside the
//! fresh copy the next step makes.

use arrow_array::{Array, StringArray};
use arrow_buffer::{Buffer, NullBufferBuilder, OffsetBuffer};
use memmap2::MmapMut;

use crate::error::{LogError, Result};

/// Spare bytes reserved over an estimate of the values' size (an eighth):
/// a guess short of the end costs a copy of everything gathered so far.
const ESTIMATE_SLACK: usize = 8;

/// Values this large or larger are gathered in an anonymous map.
pub(crate) const MAPPED_BYTES: usize = 1 << 20;

/// String arrays gathered into one, in the order pushed.
#[derive(Debug)]
pub(crate) struct StringConcat {
    values: Values,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    /// Rows expected in all, when the values' size is estimated from the
    /// first rows pushed rather than known.
    expected_rows: Option<usize>,
    /// What the strings are and where they come from, for errors.
    context: String,
    /// Most value bytes an array's i32 offsets can address.
    limit: usize,
}

impl StringConcat {
    /// For `rows` strings of `bytes` bytes in all.
    pub(crate) fn with_capacity(rows: usize, bytes: usize, context: impl Into<String>) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self {
            values: Values::with_capacity(bytes),
            offsets,
            nulls: NullBufferBuilder::new(rows),
            expected_rows: None,
            context: context.into(),
            limit: i32::MAX as usize,
        }
    }

    /// For about `rows` strings of a size not known yet: the first
    /// non-empty push reserves room for `rows` strings of its average
    /// length, so the values are not copied again as they grow.
    pub(crate) fn expecting(rows: usize, context: impl Into<String>) -> Self {
        let mut concat = Self::with_capacity(rows, 0, context);
        concat.expected_rows = Some(rows);
        concat
    }

    /// Strings gathered so far.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the values are gathered in an anonymous map.
    #[cfg(test)]
    fn is_mapped(&self) -> bool {
        matches!(self.values, Values::Mapped(_))
    }

    /// Copies `array` after the strings gathered so far, then drops it
    /// (the caller's last reference releases its buffers).
    pub(crate) fn push(&mut self, array: StringArray) -> Result<()> {
        let o = array.value_offsets();
        let (first, last) = (o[0], o[o.len() - 1]);
        let bytes = (last - first) as usize;
        let total = self.values.len() + bytes;
        if total > self.limit {
            return Err(LogError::arrow(
                self.context.clone(),
                arrow_schema::ArrowError::OffsetOverflowError(total),
            ));
        }
        if let Some(rows) = self
            .expected_rows
            .take_if(|_| bytes > 0 && !array.is_empty())
        {
            let per_row = bytes.div_ceil(array.len());
            let estimate = rows.max(self.len() + array.len()) * per_row;
            self.values
                .reserve_total(estimate + estimate / ESTIMATE_SLACK);
        }
        // Fits an i32: `total` was checked against the limit above.
        let shift = self.values.len() as i32 - first;
        self.values
            .extend_from_slice(&array.value_data()[first as usize..last as usize]);
        self.offsets.extend(o[1..].iter().map(|v| v + shift));
        match array.nulls() {
            Some(n) => self.nulls.append_buffer(n),
            None => self.nulls.append_n_non_nulls(array.len()),
        }
        Ok(())
    }

    /// The gathered strings as one array, holding no more spare heap room
    /// than an estimate's slack (a map's untouched room is not resident).
    pub(crate) fn finish(mut self) -> Result<StringArray> {
        StringArray::try_new(
            OffsetBuffer::new(self.offsets.into()),
            self.values.into_buffer(),
            self.nulls.finish(),
        )
        .map_err(|e| LogError::arrow(self.context, e))
    }
}

/// Gathered bytes: on the heap while small, in an anonymous map from
/// [`MAPPED_BYTES`] on.
#[derive(Debug)]
enum Values {
    Heap(Vec<u8>),
    Mapped(MappedBytes),
}

/// The first `len` bytes of an anonymous map.
#[derive(Debug)]
struct MappedBytes {
    map: MmapMut,
    len: usize,
}

impl AsRef<[u8]> for MappedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.map[..self.len]
    }
}

impl Values {
    fn with_capacity(bytes: usize) -> Self {
        match Self::mapped(bytes) {
            Some(m) => Self::Mapped(m),
            None => Self::Heap(Vec::with_capacity(bytes)),
        }
    }

    /// A map of `bytes` when that is large enough to map and the OS
    /// grants it (else the heap holds the values: only where they live
    /// changes).
    fn mapped(bytes: usize) -> Option<MappedBytes> {
        if bytes < MAPPED_BYTES {
            return None;
        }
        let map = MmapMut::map_anon(bytes).ok()?;
        // Huge pages where the system grants them on request (its
        // transparent huge pages in `madvise` mode): a million paths fault
        // in a few dozen 2 MiB pages instead of 17,000 small ones. Advice
        // only: refused, the map works the same.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        Some(MappedBytes { map, len: 0 })
    }

    fn len(&self) -> usize {
        match self {
            Self::Heap(v) => v.len(),
            Self::Mapped(m) => m.len,
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Self::Heap(v) => v.capacity(),
            Self::Mapped(m) => m.map.len(),
        }
    }

    /// Room for `total` bytes in all; the gathered bytes move (once) when
    /// they must.
    fn reserve_total(&mut self, total: usize) {
        if total <= self.capacity() {
            return;
        }
        let moved = match self {
            Self::Heap(v) if total < MAPPED_BYTES => {
                v.reserve(total - v.len());
                return;
            }
            Self::Heap(v) => Self::mapped(total).map(|mut m| {
                m.map[..v.len()].copy_from_slice(v);
                m.len = v.len();
                m
            }),
            Self::Mapped(old) => Self::mapped(total).map(|mut m| {
                m.map[..old.len].copy_from_slice(&old.map[..old.len]);
                m.len = old.len;
                m
            }),
        };
        *self = match moved {
            Some(m) => Self::Mapped(m),
            // No map: the heap, as a Vec grows.
            None => {
                let mut v = Vec::with_capacity(total);
                v.extend_from_slice(self.bytes());
                Self::Heap(v)
            }
        };
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::Heap(v) => v,
            Self::Mapped(m) => m.as_ref(),
        }
    }

    fn extend_from_slice(&mut self, bytes: &[u8]) {
        let need = self.len() + bytes.len();
        if need > self.capacity() {
            // Doubling, as a Vec grows: amortized linear copies.
            self.reserve_total(need.max(2 * self.capacity()));
        }
        match self {
            Self::Heap(v) => v.extend_from_slice(bytes),
            Self::Mapped(m) => {
                m.map[m.len..need].copy_from_slice(bytes);
                m.len = need;
            }
        }
    }

    fn into_buffer(self) -> Buffer {
        match self {
            Self::Heap(mut v) => {
                if v.capacity() - v.len() > v.len() / ESTIMATE_SLACK {
                    v.shrink_to_fit();
                }
                v.into()
            }
            Self::Mapped(m) => Buffer::from(bytes::Bytes::from_owner(m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Pushed arrays (sliced, with nulls, empty) come out as their
    /// concatenation, whichever way the values' room was sized.
    #[test]
    fn pushes_come_out_as_the_concatenation() {
        let sliced = StringArray::from(vec![Some("skipped"), Some("b/1"), None, Some("b/3")]);
        let parts = [
            StringArray::from(vec!["a/1", "a/2"]),
            sliced.slice(1, 3),
            StringArray::from(Vec::<&str>::new()),
            StringArray::from(vec![Some("c/1"), None]),
        ];
        let refs: Vec<&dyn Array> = parts.iter().map(|p| p as &dyn Array).collect();
        let expected = arrow_select::concat::concat(&refs).unwrap();
        for mut concat in [
            StringConcat::with_capacity(7, 12, "test"),
            StringConcat::expecting(7, "test"),
            StringConcat::expecting(1, "test"),
            StringConcat::with_capacity(0, 0, "test"),
            StringConcat::with_capacity(7, MAPPED_BYTES, "test"),
        ] {
            for p in &parts {
                concat.push(p.clone()).unwrap();
            }
            assert_eq!(concat.len(), 7);
            let got = concat.finish().unwrap();
            assert_eq!(&got as &dyn Array, expected.as_ref());
            assert_eq!(got.null_count(), 2);
        }
    }

    /// An estimate far above what comes is given back: the array holds
    /// about its own bytes, which the index reports as its memory.
    #[test]
    fn an_estimate_far_above_the_values_is_given_back() {
        let mut concat = StringConcat::expecting(100_000, "test");
        concat
            .push(StringArray::from(vec!["a-long-path-name"; 10]))
            .unwrap();
        let got = concat.finish().unwrap();
        assert_eq!(got.len(), 10);
        assert!(
            got.values().capacity() <= 160 + 160 / ESTIMATE_SLACK,
            "{} bytes of room kept for 160",
            got.values().capacity()
        );
    }

    /// Values that grow past [`MAPPED_BYTES`] move to a map, from the
    /// heap or from a smaller map, and come out exact; values known to be
    /// that large are mapped from the start, small ones never.
    #[test]
    fn large_values_are_gathered_in_a_map() {
        let part: StringArray = (0..1000)
            .map(|i| Some(format!("part-{i:05}-{}", "x".repeat(i % 90))))
            .collect();
        let bytes = part.value_data().len();
        let pushes = 2 * MAPPED_BYTES / bytes + 1;
        let expected: Vec<&dyn Array> = vec![&part as &dyn Array; pushes];
        let expected = arrow_select::concat::concat(&expected).unwrap();
        for (mut concat, mapped_at_start) in [
            (StringConcat::with_capacity(0, 0, "test"), false),
            (StringConcat::expecting(1000, "test"), false),
            (StringConcat::with_capacity(0, MAPPED_BYTES, "test"), true),
        ] {
            assert_eq!(concat.is_mapped(), mapped_at_start);
            for _ in 0..pushes {
                concat.push(part.clone()).unwrap();
            }
            assert!(concat.is_mapped());
            let got = concat.finish().unwrap();
            assert_eq!(&got as &dyn Array, expected.as_ref());
        }
        let mut small = StringConcat::expecting(10, "test");
        small.push(part.slice(0, 10)).unwrap();
        assert!(!small.is_mapped());
    }

    /// Values past what i32 offsets address are an error naming what
    /// was gathered, not a wrapped offset (the limit lowered here: the
    /// real one is 2 GiB).
    #[test]
    fn values_past_the_offset_limit_are_an_error_naming_their_source() {
        let mut concat = StringConcat::expecting(4, "add.path of checkpoint _delta_log/x.parquet");
        concat.limit = 8;
        concat.push(StringArray::from(vec!["abcd"])).unwrap();
        concat.push(StringArray::from(vec!["efgh"])).unwrap();
        let err = concat.push(StringArray::from(vec!["i"])).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("_delta_log/x.parquet"), "{text}");
        assert!(matches!(
            err,
            LogError::Arrow {
                source: arrow_schema::ArrowError::OffsetOverflowError(9),
                ..
            }
        ));
    }

    /// Nothing pushed: an empty array.
    #[test]
    fn nothing_pushed_is_empty() {
        let got = StringConcat::expecting(10, "test").finish().unwrap();
        assert_eq!(got.len(), 0);
    }

    proptest! {
        /// Any split of any strings, pushed in order, concatenates.
        #[test]
        fn any_split_concatenates(
            strings in proptest::collection::vec(proptest::option::of("[a-z/]{0,12}"), 0..40),
            cuts in proptest::collection::vec(0usize..40, 0..6),
            expected_rows in 0usize..60,
        ) {
            let all = StringArray::from(strings.clone());
            let mut at: Vec<usize> = cuts.into_iter().map(|c| c.min(all.len())).collect();
            at.push(0);
            at.push(all.len());
            at.sort_unstable();
            let mut concat = StringConcat::expecting(expected_rows, "test");
            for w in at.windows(2) {
                concat.push(all.slice(w[0], w[1] - w[0])).unwrap();
            }
            let got = concat.finish().unwrap();
            prop_assert_eq!(got, all);
        }
    }
}
