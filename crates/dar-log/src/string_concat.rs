//! [`StringConcat`]: string arrays copied into one as they come, each
//! released once copied. A concatenation of arrays held until the end
//! (`arrow_select::concat`) holds every input beside its output; this one
//! holds at most the input being copied. The paths of a million-file
//! checkpoint (68 MB) are gathered this way, batch by batch while they
//! decode and piece by piece into the file index, so neither step keeps
//! two copies of them.

use arrow_array::{Array, StringArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer};

use crate::error::{LogError, Result};

/// Spare bytes reserved over an estimate of the values' size (an eighth):
/// a guess short of the end costs a copy of everything gathered so far.
const ESTIMATE_SLACK: usize = 8;

/// String arrays gathered into one, in the order pushed.
#[derive(Debug)]
pub(crate) struct StringConcat {
    values: Vec<u8>,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    /// Rows expected in all, when the values' size is estimated from the
    /// first rows pushed rather than known.
    expected_rows: Option<usize>,
    /// What the strings are, for errors.
    context: &'static str,
}

impl StringConcat {
    /// For `rows` strings of `bytes` bytes in all.
    pub(crate) fn with_capacity(rows: usize, bytes: usize, context: &'static str) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self {
            values: Vec::with_capacity(bytes),
            offsets,
            nulls: NullBufferBuilder::new(rows),
            expected_rows: None,
            context,
        }
    }

    /// For about `rows` strings of a size not known yet: the first
    /// non-empty push reserves room for `rows` strings of its average
    /// length, so the values are not copied again as they grow.
    pub(crate) fn expecting(rows: usize, context: &'static str) -> Self {
        let mut concat = Self::with_capacity(rows, 0, context);
        concat.expected_rows = Some(rows);
        concat
    }

    /// Strings gathered so far.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Copies `array` after the strings gathered so far, then drops it
    /// (the caller's last reference releases its buffers).
    pub(crate) fn push(&mut self, array: StringArray) -> Result<()> {
        let o = array.value_offsets();
        let (first, last) = (o[0], o[o.len() - 1]);
        let bytes = (last - first) as usize;
        let total = self.values.len() + bytes;
        if i32::try_from(total).is_err() {
            return Err(LogError::arrow(
                self.context,
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
                .reserve((estimate + estimate / ESTIMATE_SLACK).saturating_sub(self.values.len()));
        }
        // Fits an i32: `total` was checked above.
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

    /// The gathered strings as one array, holding no more spare room than
    /// an estimate's slack.
    pub(crate) fn finish(mut self) -> Result<StringArray> {
        if self.values.capacity() - self.values.len() > self.values.len() / ESTIMATE_SLACK {
            self.values.shrink_to_fit();
        }
        StringArray::try_new(
            OffsetBuffer::new(self.offsets.into()),
            self.values.into(),
            self.nulls.finish(),
        )
        .map_err(|e| LogError::arrow(self.context, e))
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
