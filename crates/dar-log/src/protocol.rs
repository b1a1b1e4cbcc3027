//! What dar reads of a table's protocol (protocol digest §4): the one
//! place that says which reader features dar implements.
//!
//! [`ProtocolReport::new`] lists every feature of a protocol — the table
//! features of `readerFeatures` / `writerFeatures` (reader version 3,
//! writer version 7) and the features the legacy versions imply (reader 2:
//! `columnMapping`; writer 2..6: `appendOnly`, `invariants`,
//! `checkConstraints`, `changeDataFeed`, `generatedColumns`,
//! `columnMapping`, `identityColumns`) — with whether readers must
//! understand it, whether dar does, and what it means for a reader.
//! [`check_protocol`], which refuses a snapshot, is that report's verdict,
//! so what `dar info` says and what a scan does cannot disagree.

use std::fmt;

use crate::actions::Protocol;
use crate::error::{LogError, Result};

/// The reader versions dar reads.
pub const SUPPORTED_READER_VERSIONS: std::ops::RangeInclusive<i32> = 1..=3;

/// Whether a feature concerns readers, by the Delta protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FeatureKind {
    /// A reader-writer feature: a reader that does not implement it must
    /// not read the table.
    ReaderWriter,
    /// A writer feature: readers may ignore it.
    Writer,
    /// A name this crate does not know.
    Unknown,
}

impl FeatureKind {
    /// `reader-writer`, `writer` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            FeatureKind::ReaderWriter => "reader-writer",
            FeatureKind::Writer => "writer",
            FeatureKind::Unknown => "unknown",
        }
    }
}

/// What dar does with a feature of a table it is asked to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Support {
    /// Readers must understand the feature and dar does.
    Reads,
    /// Readers need not understand the feature (a writer feature, or a
    /// feature the protocol does not require of readers).
    NotNeeded,
    /// Readers must understand the feature and dar does not: dar refuses
    /// the table.
    Refused,
}

impl Support {
    /// `reads`, `not needed` or `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Support::Reads => "reads",
            Support::NotNeeded => "not needed",
            Support::Refused => "refused",
        }
    }
}

/// One entry of dar's feature catalog.
struct Known {
    name: &'static str,
    kind: FeatureKind,
    /// For reader-writer features: whether dar implements it.
    dar_reads: bool,
    /// What the feature means for a reader, and what dar does about it.
    meaning: &'static str,
}

const fn rw(name: &'static str, dar_reads: bool, meaning: &'static str) -> Known {
    Known {
        name,
        kind: FeatureKind::ReaderWriter,
        dar_reads,
        meaning,
    }
}

const fn w(name: &'static str, meaning: &'static str) -> Known {
    Known {
        name,
        kind: FeatureKind::Writer,
        dar_reads: true,
        meaning,
    }
}

/// Every feature dar knows, and for reader-writer features whether dar
/// reads it: the single source of truth of [`check_protocol`] and
/// [`ProtocolReport`].
const CATALOG: &[Known] = &[
    rw(
        "columnMapping",
        true,
        "columns have physical names (and ids) in the data files; dar maps them to the logical schema",
    ),
    rw(
        "deletionVectors",
        true,
        "rows are deleted by deletion vectors beside the data files; dar drops them",
    ),
    rw(
        "timestampNtz",
        true,
        "columns of type timestamp without time zone; dar reads them",
    ),
    rw(
        "typeWidening",
        true,
        "column types were widened after files were written; dar casts old files to the table's types",
    ),
    rw(
        "typeWidening-preview",
        true,
        "the preview of typeWidening; dar reads it as typeWidening",
    ),
    rw(
        "v2Checkpoint",
        true,
        "checkpoints may be V2 (a manifest, sidecar files, checkpointMetadata); dar reads them",
    ),
    rw(
        "vacuumProtocolCheck",
        true,
        "vacuum must check the protocol first; nothing changes for a reader",
    ),
    rw(
        "variantType",
        true,
        "columns of type variant (unshredded); dar reads them as their binary metadata and value",
    ),
    rw(
        "variantType-preview",
        true,
        "the preview of variantType; dar reads it as variantType",
    ),
    rw(
        "variantShredding",
        false,
        "variant values may be shredded into typed Parquet columns; dar does not reassemble them",
    ),
    rw(
        "variantShredding-preview",
        false,
        "the preview of variantShredding; dar does not reassemble shredded variants",
    ),
    rw(
        "catalogManaged",
        false,
        "the catalog owns the commits: the newest ones may exist only in the catalog, so the _delta_log alone can be stale; dar reads only the log",
    ),
    rw(
        "catalogOwned-preview",
        false,
        "the preview of catalogManaged: the log alone can be stale; dar reads only the log",
    ),
    rw(
        "geospatial",
        false,
        "columns of type geometry or geography; dar does not read them",
    ),
    w(
        "appendOnly",
        "writers may only add files; nothing for readers",
    ),
    w(
        "invariants",
        "writers enforce column invariants; nothing for readers",
    ),
    w(
        "checkConstraints",
        "writers enforce CHECK constraints; nothing for readers",
    ),
    w(
        "changeDataFeed",
        "writers record row changes in _change_data; a snapshot read ignores them (dar changes reads the feed)",
    ),
    w(
        "generatedColumns",
        "writers compute generated columns; readers see stored values",
    ),
    w(
        "identityColumns",
        "writers assign identity values; readers see stored values",
    ),
    w(
        "allowColumnDefaults",
        "writers fill column defaults; readers see stored values",
    ),
    w(
        "rowTracking",
        "writers assign row ids and commit versions; the rows read the same (dar does not expose row ids)",
    ),
    w(
        "domainMetadata",
        "named configuration in the log; dar keeps it, rows are unaffected",
    ),
    w(
        "clustering",
        "liquid clustering of the data files; a layout, rows are unaffected",
    ),
    w(
        "inCommitTimestamp",
        "commit times are in commitInfo, not file times; dar uses them for --timestamp and commit times",
    ),
    w(
        "icebergCompatV1",
        "writers keep the table readable as Iceberg; nothing for Delta readers",
    ),
    w(
        "icebergCompatV2",
        "writers keep the table readable as Iceberg; nothing for Delta readers",
    ),
    w(
        "icebergCompatV3",
        "writers keep the table readable as Iceberg; nothing for Delta readers",
    ),
    w(
        "icebergWriterCompatV1",
        "writers keep Iceberg writers compatible; nothing for Delta readers",
    ),
    w(
        "materializePartitionColumns",
        "partition values are also written into the data files; dar takes them from the log",
    ),
    w(
        "checkpointProtection",
        "writers may not truncate history before a checkpoint; nothing for readers",
    ),
];

fn known(name: &str) -> Option<&'static Known> {
    CATALOG.iter().find(|k| k.name == name)
}

/// Whether dar reads tables whose `readerFeatures` list `name`.
pub fn dar_reads_feature(name: &str) -> bool {
    known(name).is_some_and(|k| k.kind == FeatureKind::ReaderWriter && k.dar_reads)
}

/// The reader features dar implements, in catalog order.
pub fn supported_reader_features() -> impl Iterator<Item = &'static str> {
    CATALOG
        .iter()
        .filter(|k| k.kind == FeatureKind::ReaderWriter && k.dar_reads)
        .map(|k| k.name)
}

/// Where a feature of a protocol comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FeatureSource {
    /// Listed in `readerFeatures` (reader version 3; writers list it too).
    ReaderFeatures,
    /// Listed in `writerFeatures` only (writer version 7).
    WriterFeatures,
    /// Implied by the legacy `minReaderVersion` (2: `columnMapping`).
    ReaderVersion(i32),
    /// Implied by the legacy `minWriterVersion` (2 to 6).
    WriterVersion(i32),
}

impl fmt::Display for FeatureSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureSource::ReaderFeatures => f.write_str("readerFeatures"),
            FeatureSource::WriterFeatures => f.write_str("writerFeatures"),
            FeatureSource::ReaderVersion(v) => write!(f, "minReaderVersion {v}"),
            FeatureSource::WriterVersion(v) => write!(f, "minWriterVersion {v}"),
        }
    }
}

/// One feature of a table's protocol, as dar sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureStatus {
    /// The feature name as the protocol spells it.
    pub name: String,
    /// Reader-writer, writer, or unknown to dar.
    pub kind: FeatureKind,
    /// Where the protocol names it.
    pub source: FeatureSource,
    /// Whether readers must understand it (listed in `readerFeatures`, or
    /// implied by the reader version).
    pub required_by_readers: bool,
    /// What dar does with it.
    pub support: Support,
    /// What it means for a reader, and what dar does about it.
    pub meaning: String,
}

/// Every feature of a protocol with what dar makes of it, and the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolReport {
    /// `minReaderVersion`.
    pub min_reader_version: i32,
    /// `minWriterVersion`.
    pub min_writer_version: i32,
    /// The features: reader features first (as listed, or implied by the
    /// reader version), then the writer-only ones.
    pub features: Vec<FeatureStatus>,
}

/// The writer features the legacy writer versions imply, with the version
/// that introduced each (protocol digest §4, "legacy versions").
const LEGACY_WRITER: &[(i32, &str)] = &[
    (2, "appendOnly"),
    (2, "invariants"),
    (3, "checkConstraints"),
    (4, "changeDataFeed"),
    (4, "generatedColumns"),
    (5, "columnMapping"),
    (6, "identityColumns"),
];

impl ProtocolReport {
    /// The report of `protocol`. Feature lists are read only where the
    /// protocol says they apply (`readerFeatures` at reader version 3,
    /// `writerFeatures` at writer version 7); below, the versions imply
    /// the features.
    pub fn new(protocol: &Protocol) -> Self {
        let rv = protocol.min_reader_version;
        let wv = protocol.min_writer_version;
        let mut features: Vec<FeatureStatus> = Vec::new();
        let mut push = |name: &str, source: FeatureSource, required: bool| {
            if features.iter().any(|f| f.name == name) {
                return;
            }
            features.push(status(name, source, required));
        };
        if rv == 3 {
            for f in protocol.reader_features.iter().flatten() {
                push(f, FeatureSource::ReaderFeatures, true);
            }
        } else if rv == 2 {
            push("columnMapping", FeatureSource::ReaderVersion(2), true);
        }
        if wv == 7 {
            for f in protocol.writer_features.iter().flatten() {
                push(f, FeatureSource::WriterFeatures, false);
            }
        } else {
            for (since, name) in LEGACY_WRITER {
                if wv >= *since {
                    push(name, FeatureSource::WriterVersion(wv), false);
                }
            }
        }
        Self {
            min_reader_version: rv,
            min_writer_version: wv,
            features,
        }
    }

    /// Whether dar reads the reader version.
    pub fn reader_version_supported(&self) -> bool {
        SUPPORTED_READER_VERSIONS.contains(&self.min_reader_version)
    }

    /// The features that stop dar reading the table.
    pub fn refused(&self) -> impl Iterator<Item = &FeatureStatus> {
        self.features
            .iter()
            .filter(|f| f.support == Support::Refused)
    }

    /// Whether dar reads this table's protocol in full: a supported reader
    /// version and no refused feature.
    pub fn dar_reads(&self) -> bool {
        self.reader_version_supported() && self.refused().next().is_none()
    }

    /// One line: `dar reads this table exactly`, or what stops it.
    pub fn verdict(&self) -> String {
        if self.dar_reads() {
            return "dar reads this table exactly".to_string();
        }
        let mut why: Vec<String> = Vec::new();
        if !self.reader_version_supported() {
            why.push(format!(
                "minReaderVersion {} (dar reads {} to {})",
                self.min_reader_version,
                SUPPORTED_READER_VERSIONS.start(),
                SUPPORTED_READER_VERSIONS.end()
            ));
        }
        let names: Vec<&str> = self.refused().map(|f| f.name.as_str()).collect();
        if !names.is_empty() {
            let noun = if names.len() == 1 {
                "reader feature"
            } else {
                "reader features"
            };
            why.push(format!("{noun} {}", names.join(", ")));
        }
        format!("dar cannot read this table: {}", why.join("; "))
    }

    /// The refusal as an error for snapshot `version` (`Ok` when dar reads
    /// the protocol): the reader version first, then the first refused
    /// feature.
    pub fn check(&self, version: u64) -> Result<()> {
        if !self.reader_version_supported() {
            return Err(LogError::UnsupportedReaderVersion {
                reader_version: self.min_reader_version,
                version,
            });
        }
        match self.refused().next() {
            Some(f) => Err(LogError::UnsupportedFeature {
                feature: f.name.clone(),
                version,
            }),
            None => Ok(()),
        }
    }
}

fn status(name: &str, source: FeatureSource, required: bool) -> FeatureStatus {
    let k = known(name);
    let kind = k.map_or(FeatureKind::Unknown, |k| k.kind);
    let support = match (required, k) {
        (false, _) => Support::NotNeeded,
        (true, Some(k)) if k.kind == FeatureKind::ReaderWriter && k.dar_reads => Support::Reads,
        // A writer feature listed in readerFeatures asks nothing of readers.
        (true, Some(k)) if k.kind == FeatureKind::Writer => Support::NotNeeded,
        (true, _) => Support::Refused,
    };
    let meaning = match (k, support) {
        (None, Support::Refused) => {
            "a reader feature dar does not know: it cannot tell how to read the table".to_string()
        }
        (None, _) => "a writer feature dar does not know; readers may ignore it".to_string(),
        (Some(k), Support::NotNeeded) if k.kind == FeatureKind::ReaderWriter => format!(
            "{} (listed for writers only: not required of readers)",
            k.meaning
        ),
        (Some(k), _) => k.meaning.to_string(),
    };
    FeatureStatus {
        name: name.to_string(),
        kind,
        source,
        required_by_readers: required,
        support,
        meaning,
    }
}

/// Refuse a protocol this reader cannot honour: [`ProtocolReport::check`]
/// of `protocol`. `version` names the snapshot in the error. Writer
/// features never block reading.
pub fn check_protocol(protocol: &Protocol, version: u64) -> Result<()> {
    ProtocolReport::new(protocol).check(version)
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

    fn legacy(rv: i32, wv: i32) -> Protocol {
        Protocol {
            min_reader_version: rv,
            min_writer_version: wv,
            reader_features: None,
            writer_features: None,
        }
    }

    #[test]
    fn checks() {
        let supported: Vec<&str> = supported_reader_features().collect();
        assert!(check_protocol(&p(1, &[], &["anything"]), 0).is_ok());
        assert!(check_protocol(&p(2, &[], &[]), 0).is_ok());
        assert!(
            check_protocol(
                &p(3, &supported, &["catalogManaged", "futureWriterOnly"]),
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

    #[test]
    fn the_catalog_is_what_the_check_enforces() {
        for k in CATALOG {
            let r = ProtocolReport::new(&p(3, &[k.name], &[k.name]));
            let reads = k.kind == FeatureKind::Writer || k.dar_reads;
            assert_eq!(r.dar_reads(), reads, "{}", k.name);
            assert_eq!(check_protocol(&p(3, &[k.name], &[]), 0).is_ok(), reads);
            assert_eq!(
                dar_reads_feature(k.name),
                k.dar_reads && k.kind == FeatureKind::ReaderWriter
            );
        }
        for refused in [
            "catalogManaged",
            "variantShredding",
            "variantShredding-preview",
            "geospatial",
        ] {
            assert!(!dar_reads_feature(refused), "{refused}");
        }
        assert!(dar_reads_feature("deletionVectors"));
        assert!(
            !dar_reads_feature("appendOnly"),
            "a writer feature is no reader feature"
        );
    }

    #[test]
    fn features_with_sources_and_verdicts() {
        let r = ProtocolReport::new(&p(
            3,
            &["deletionVectors", "geospatial", "madeUpFeature"],
            &[
                "deletionVectors",
                "geospatial",
                "madeUpFeature",
                "appendOnly",
                "someWriterThing",
            ],
        ));
        let names: Vec<&str> = r.features.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "deletionVectors",
                "geospatial",
                "madeUpFeature",
                "appendOnly",
                "someWriterThing"
            ]
        );
        let s: Vec<Support> = r.features.iter().map(|f| f.support).collect();
        assert_eq!(
            s,
            [
                Support::Reads,
                Support::Refused,
                Support::Refused,
                Support::NotNeeded,
                Support::NotNeeded
            ]
        );
        assert_eq!(r.features[2].kind, FeatureKind::Unknown);
        assert!(
            r.features[2].meaning.contains("does not know"),
            "{:?}",
            r.features[2]
        );
        assert_eq!(r.features[3].source, FeatureSource::WriterFeatures);
        assert_eq!(
            r.verdict(),
            "dar cannot read this table: reader features geospatial, madeUpFeature"
        );
        let r = ProtocolReport::new(&p(3, &["deletionVectors"], &["deletionVectors"]));
        assert_eq!(r.verdict(), "dar reads this table exactly");
        // A reader-writer feature that only writers list asks nothing of readers.
        let r = ProtocolReport::new(&p(3, &[], &["catalogManaged"]));
        assert!(r.dar_reads());
        assert_eq!(r.features[0].support, Support::NotNeeded);
        assert!(r.features[0].meaning.contains("writers only"));
        let r = ProtocolReport::new(&p(4, &[], &[]));
        assert_eq!(
            r.verdict(),
            "dar cannot read this table: minReaderVersion 4 (dar reads 1 to 3)"
        );
    }

    #[test]
    fn legacy_versions_imply_features() {
        let r = ProtocolReport::new(&legacy(1, 1));
        assert!(r.features.is_empty() && r.dar_reads());
        let r = ProtocolReport::new(&legacy(1, 2));
        let names: Vec<&str> = r.features.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["appendOnly", "invariants"]);
        assert_eq!(r.features[0].source, FeatureSource::WriterVersion(2));
        let r = ProtocolReport::new(&legacy(2, 6));
        let names: Vec<&str> = r.features.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "columnMapping",
                "appendOnly",
                "invariants",
                "checkConstraints",
                "changeDataFeed",
                "generatedColumns",
                "identityColumns"
            ]
        );
        assert_eq!(r.features[0].source, FeatureSource::ReaderVersion(2));
        assert_eq!(r.features[0].support, Support::Reads);
        assert!(
            r.features[1..]
                .iter()
                .all(|f| f.support == Support::NotNeeded)
        );
        // Lists are ignored below the versions that carry them.
        let mut odd = legacy(1, 4);
        odd.reader_features = Some(vec!["geospatial".into()]);
        odd.writer_features = Some(vec!["geospatial".into()]);
        let r = ProtocolReport::new(&odd);
        assert!(r.dar_reads());
        assert!(r.features.iter().all(|f| f.name != "geospatial"));
    }
}
