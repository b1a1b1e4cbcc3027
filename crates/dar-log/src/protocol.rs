//! The reader-side protocol check (protocol digest §4).

use crate::actions::Protocol;
use crate::error::{LogError, Result};

/// Reader features this crate (with the rest of dar) implements.
pub const SUPPORTED_READER_FEATURES: [&str; 9] = [
    "deletionVectors",
    "columnMapping",
    "timestampNtz",
    "typeWidening",
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "variantType",
    "variantType-preview",
];

/// Refuse a protocol this reader cannot honour. `version` names the snapshot
/// in the error. Writer features never block reading.
pub fn check_protocol(protocol: &Protocol, version: u64) -> Result<()> {
    let rv = protocol.min_reader_version;
    if !(1..=3).contains(&rv) {
        return Err(LogError::UnsupportedReaderVersion {
            reader_version: rv,
            version,
        });
    }
    if rv == 3 {
        for f in protocol.reader_features.iter().flatten() {
            if !SUPPORTED_READER_FEATURES.contains(&f.as_str()) {
                return Err(LogError::UnsupportedFeature {
                    feature: f.clone(),
                    version,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rv: i32, readers: &[&str], writers: &[&str]) -> Protocol {
        Protocol {
            min_reader_version: rv,
            min_writer_version: 7,
            reader_features: (rv == 3).then(|| readers.iter().map(|s| s.to_string()).collect()),
            writer_features: Some(writers.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn checks() {
        assert!(check_protocol(&p(1, &[], &["anything"]), 0).is_ok());
        assert!(check_protocol(&p(2, &[], &[]), 0).is_ok());
        assert!(
            check_protocol(
                &p(
                    3,
                    &SUPPORTED_READER_FEATURES,
                    &["catalogManaged", "futureWriterOnly"]
                ),
                0
            )
            .is_ok()
        );
        let err = check_protocol(&p(3, &["deletionVectors", "geospatial"], &[]), 4).unwrap_err();
        assert!(
            matches!(&err, LogError::UnsupportedFeature { feature, version: 4 } if feature == "geospatial")
        );
        assert!(err.to_string().contains("'geospatial'"));
        assert!(matches!(
            check_protocol(&p(4, &[], &[]), 1),
            Err(LogError::UnsupportedReaderVersion {
                reader_version: 4,
                ..
            })
        ));
        assert!(matches!(
            check_protocol(&p(0, &[], &[]), 1),
            Err(LogError::UnsupportedReaderVersion { .. })
        ));
    }
}
