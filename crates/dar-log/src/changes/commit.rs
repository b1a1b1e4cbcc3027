//! Reading one commit of a change range: the configuration it brings, the
//! checks it must pass, its timestamp and its change files.

use std::sync::Arc;

use bytes::Bytes;

use super::select::{ChangeRow, select};
use super::{ChangeFeed, CommitChanges};
use crate::actions::{Metadata, Protocol};
use crate::add_columns::{AddColumnsBuilder, AddRow};
use crate::commit::{Action, commit_info, parse_actions};
use crate::error::{LogError, Result};
use crate::file_index::{FileIndex, StatsLoading};
use crate::history::missing_ict;
use crate::listing::log_dir;
use crate::schema::unreadable_column;
use crate::snapshot::TableHeader;
use crate::table_configuration::TableConfiguration;

/// Reads the commits of a range in order, carrying the configuration in
/// force from one commit to the next.
pub(super) struct CommitReader {
    feed: Arc<ChangeFeed>,
    /// The protocol and metadata before the start (`None` from version 0),
    /// until the start's configuration is built from them.
    before: Option<TableHeader>,
    /// The configuration at the last commit read.
    config: Option<TableConfiguration>,
}

impl CommitReader {
    pub(super) fn new(feed: Arc<ChangeFeed>, before: Option<TableHeader>) -> Self {
        Self {
            feed,
            before,
            config: None,
        }
    }

    /// The changes of commit `i` of the range, from its `bytes`.
    pub(super) fn read(&mut self, i: usize, bytes: &Bytes) -> Result<CommitChanges> {
        let feed = Arc::clone(&self.feed);
        let f = &feed.commits[i];
        let version = f.version;
        let path = f.location.to_string();
        let mut actions = Vec::new();
        let (mut protocol, mut metadata, mut ict) = (None, None, None);
        parse_actions(&path, bytes, |line, action| {
            match action {
                Action::Metadata(m) => metadata = Some(*m),
                Action::Protocol(p) => protocol = Some(p),
                Action::CommitInfo(raw) if ict.is_none() => {
                    ict = commit_info(&path, line, raw)?.in_commit_timestamp;
                }
                Action::Add(_) | Action::Remove(_) | Action::Cdc(_) => {
                    actions.push((line, action));
                }
                _ => {}
            }
            Ok(())
        })?;
        let config = self.configuration(version, protocol, metadata)?;
        let timestamp_ms = if config.uses_in_commit_timestamp() {
            ict.ok_or_else(|| missing_ict(path.clone()))?
        } else {
            feed.file_times[i]
        };
        let end = &feed.end_config;
        let partitioned = !end.metadata().partition_columns.is_empty();
        // A commit holds at most one add and one remove per file: a repeat
        // is read once, or refused when it differs.
        let actions = crate::duplicates::without_repeats(&path, version, &feed.paths, actions)?;
        let rows = select(&feed.paths, &path, version, partitioned, &actions)?;
        changes_of(&feed, &path, version, timestamp_ms, rows)
    }

    /// The configuration at `version`, whose commit holds `protocol` and
    /// `metadata` when it changes them: at the start, built from the state
    /// before it and checked; later, evolved and checked where it changes.
    fn configuration(
        &mut self,
        version: u64,
        protocol: Option<Protocol>,
        metadata: Option<Metadata>,
    ) -> Result<&TableConfiguration> {
        let changes_metadata = metadata.is_some();
        let next = match self.config.take() {
            Some(c) => {
                let next = c.evolve(protocol, metadata, version)?;
                if changes_metadata {
                    check_readable_as_end(&next, &self.feed.end_config)?;
                }
                next
            }
            None => {
                let before = self.before.take();
                let (p, m) = match before {
                    Some(b) => (b.protocol, b.metadata),
                    None => {
                        let log_dir = log_dir(self.feed.paths.root()).to_string();
                        let (Some(p), Some(m)) = (protocol.clone(), metadata.clone()) else {
                            return Err(if protocol.is_none() {
                                LogError::MissingProtocol { log_dir, version }
                            } else {
                                LogError::MissingMetadata { log_dir, version }
                            });
                        };
                        (p, m)
                    }
                };
                let start = TableConfiguration::try_new(
                    protocol.unwrap_or(p),
                    metadata.unwrap_or(m),
                    version,
                )?;
                check_readable_as_end(&start, &self.feed.end_config)?;
                start
            }
        };
        Ok(self.config.insert(next))
    }
}

/// The checks of the configuration at the start and at every commit of the
/// range that changes the metadata: the feed on, and a schema (and
/// partition columns) whose data the end's schema reads.
fn check_readable_as_end(config: &TableConfiguration, end: &TableConfiguration) -> Result<()> {
    let version = config.version();
    if !config.is_change_data_feed_enabled() {
        return Err(LogError::ChangeDataFeedDisabled { version });
    }
    if !config.has_schema() {
        return Err(LogError::MissingSchema { version });
    }
    if let Some((column, reason)) =
        unreadable_column(config.schema(), end.schema(), end.column_mapping_mode())
    {
        return Err(LogError::ChangeFeedSchema {
            version,
            end: end.version(),
            column,
            reason,
        });
    }
    let (partitions, end_partitions) = (
        &config.metadata().partition_columns,
        &end.metadata().partition_columns,
    );
    if partitions != end_partitions {
        return Err(LogError::ChangeFeedSchema {
            version,
            end: end.version(),
            column: partitions.join(", "),
            reason: format!(
                "are the partition columns, not [{}]",
                end_partitions.join(", ")
            ),
        });
    }
    Ok(())
}

/// The [`CommitChanges`] of the change files `rows` of one commit: a file
/// index typed against the end schema, with where each file's rows come
/// from.
fn changes_of(
    feed: &ChangeFeed,
    path: &str,
    version: u64,
    timestamp_ms: i64,
    rows: Vec<ChangeRow<'_>>,
) -> Result<CommitChanges> {
    let mut builder = AddColumnsBuilder::default();
    let mut sources = Vec::with_capacity(rows.len());
    let mut paired_dv = Vec::with_capacity(rows.len());
    for row in rows {
        let (_, plain) = feed
            .paths
            .file_key_and_plainness(row.path, row.dv.map(|d| d.key_parts()))?;
        builder
            .append(AddRow {
                path: row.path,
                partition_values: row.partition_values,
                size: row.size,
                modification_time: None,
                stats: row.stats,
                dv: row.dv.map(crate::commit::DvLine::fields),
                plain_path: plain,
            })
            .map_err(|source| LogError::MalformedJson {
                path: path.to_string(),
                line: row.line,
                source,
            })?;
        sources.push(row.source);
        paired_dv.push(
            row.paired
                .map(|d| {
                    dar_dv::DvDescriptor::try_new(
                        &d.storage_type,
                        d.path_or_inline_dv.as_ref(),
                        d.offset.map(i64::from),
                        i64::from(d.size_in_bytes),
                        d.cardinality,
                    )
                    .map_err(|e| LogError::InvalidDeletionVector {
                        path: row.path.to_string(),
                        source: Box::new(e),
                    })
                })
                .transpose()?,
        );
    }
    let end = &feed.end_config;
    let files = FileIndex::build(
        &feed.paths,
        end.schema(),
        end.column_mapping_mode(),
        end.metadata(),
        &[builder.finish()],
        StatsLoading::OnDemand,
    )?;
    Ok(CommitChanges {
        version,
        timestamp_ms,
        files,
        sources,
        paired_dv,
    })
}
