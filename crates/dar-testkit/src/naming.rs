//! Deterministic names: a seeded generator for UUID-like ids, data file
//! names and DV file names, so that the same script writes byte-identical
//! tables on every run (no OS randomness anywhere).

use uuid::Uuid;

/// SplitMix64: tiny, seedable, and good enough to make distinct ids.
#[derive(Debug, Clone)]
pub(crate) struct Ids {
    state: u64,
}

impl Ids {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A version-4-shaped UUID drawn from the generator.
    pub(crate) fn uuid(&mut self) -> Uuid {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next_u64().to_be_bytes());
        bytes[8..].copy_from_slice(&self.next_u64().to_be_bytes());
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

/// `pad20(v)`: the version as 20 zero-padded digits.
pub(crate) fn pad20(version: u64) -> String {
    format!("{version:020}")
}

/// `part-<counter>-<uuid>.c000[.<codec>].parquet`, Spark's data file shape.
pub(crate) fn data_file_name(counter: u64, uuid: Uuid, codec_suffix: &str) -> String {
    spark_file_name("part", counter, uuid, codec_suffix)
}

/// `cdc-<counter>-<uuid>.c000[.<codec>].parquet`, Spark's change file shape.
pub(crate) fn cdc_file_name(counter: u64, uuid: Uuid, codec_suffix: &str) -> String {
    spark_file_name("cdc", counter, uuid, codec_suffix)
}

fn spark_file_name(kind: &str, counter: u64, uuid: Uuid, codec_suffix: &str) -> String {
    if codec_suffix.is_empty() {
        format!("{kind}-{counter:05}-{uuid}.c000.parquet")
    } else {
        format!("{kind}-{counter:05}-{uuid}.c000.{codec_suffix}.parquet")
    }
}

/// `deletion_vector_<uuid>.bin` (§9.2).
pub(crate) fn dv_file_name(uuid: Uuid) -> String {
    format!("deletion_vector_{uuid}.bin")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_seeded_and_distinct() {
        let mut a = Ids::new(7);
        let mut b = Ids::new(7);
        let (x, y) = (a.uuid(), a.uuid());
        assert_eq!(x, b.uuid());
        assert_ne!(x, y);
        assert_eq!(x.get_version_num(), 4);
        assert_eq!(pad20(12), "00000000000000000012");
        assert_eq!(
            data_file_name(3, Uuid::nil(), "snappy"),
            "part-00003-00000000-0000-0000-0000-000000000000.c000.snappy.parquet"
        );
        assert_eq!(dv_file_name(Uuid::nil()).len(), 56);
    }
}
