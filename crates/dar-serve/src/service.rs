//! The Flight SQL service: statements, prepared statements with
//! parameters, and the metadata a client's catalog browser asks for, over
//! the shared server state.

use std::collections::{BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, CommandGetCatalogs, CommandGetDbSchemas,
    CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables, CommandPreparedStatementQuery,
    CommandPreparedStatementUpdate, CommandStatementIngest, CommandStatementQuery,
    CommandStatementUpdate, DoPutPreparedStatementResult, ProstMessageExt, SqlInfo,
    TicketStatementQuery,
};
use arrow_flight::{
    Action, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse,
    IpcMessage, SchemaAsIpc, Ticket, decode::FlightRecordBatchStream,
};
use arrow_schema::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use futures::{Stream, StreamExt, TryStreamExt};
use prost::Message;
use tonic::{Request, Response, Status, Streaming};

use crate::admission::Admission;
use crate::metrics::{Metrics, Outcome};
use crate::query::{QueryRecord, run};
use crate::session::{CATALOG, SCHEMA, Sessions, number_placeholders, parameters, plan};
use crate::tables::Tables;

/// Prepared statements a server holds at most (a client that never closes
/// its statements cannot grow the server without bound).
const MAX_PREPARED: usize = 4096;

/// A prepared statement: its SQL (placeholders numbered) and the
/// parameters last bound.
#[derive(Debug, Clone)]
struct Prepared {
    sql: String,
    params: Vec<ScalarValue>,
}

/// Everything the service shares among calls.
pub(crate) struct State {
    pub(crate) tables: Tables,
    pub(crate) sessions: Sessions,
    pub(crate) admission: Admission,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) query_timeout: Duration,
    pub(crate) log_queries: bool,
    prepared: Mutex<HashMap<u64, Prepared>>,
    /// The next prepared statement handle.
    next_handle: AtomicU64,
    /// The next query id (for the log).
    next_query: AtomicU64,
    sql_info: SqlInfoData,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("tables", &self.tables)
            .field("admission", &self.admission)
            .finish_non_exhaustive()
    }
}

impl State {
    pub(crate) fn new(
        tables: Tables,
        sessions: Sessions,
        admission: Admission,
        query_timeout: Duration,
        log_queries: bool,
    ) -> Result<Self, crate::Error> {
        Ok(Self {
            tables,
            sessions,
            admission,
            metrics: Arc::new(Metrics::default()),
            query_timeout,
            log_queries,
            prepared: Mutex::new(HashMap::new()),
            next_handle: AtomicU64::new(1),
            next_query: AtomicU64::new(1),
            sql_info: sql_info()?,
        })
    }

    fn prepared(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Prepared>> {
        self.prepared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn sql_info() -> Result<SqlInfoData, crate::Error> {
    let mut b = SqlInfoDataBuilder::new();
    b.append(SqlInfo::FlightSqlServerName, "dar serve");
    b.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
    b.append(SqlInfo::FlightSqlServerArrowVersion, "59");
    b.append(SqlInfo::FlightSqlServerReadOnly, true);
    b.append(SqlInfo::FlightSqlServerSql, true);
    b.append(SqlInfo::FlightSqlServerSubstrait, false);
    b.append(SqlInfo::FlightSqlServerTransaction, 0i32);
    b.append(SqlInfo::FlightSqlServerCancel, false);
    b.append(SqlInfo::SqlIdentifierQuoteChar, "\"");
    b.append(SqlInfo::SqlDdlCatalog, false);
    b.append(SqlInfo::SqlDdlSchema, false);
    b.append(SqlInfo::SqlDdlTable, false);
    b.build()
        .map_err(|e| crate::Error::Config(format!("the server's SQL info: {e}")))
}

/// The Flight SQL service of a server.
#[derive(Debug, Clone)]
pub(crate) struct Service {
    pub(crate) state: Arc<State>,
}

type DoGetStream = Pin<Box<dyn Stream<Item = Result<arrow_flight::FlightData, Status>> + Send>>;

fn ticket_of(message: &impl ProstMessageExt) -> Ticket {
    Ticket::new(message.as_any().encode_to_vec())
}

/// `t` with every dictionary replaced by its value type, as the Flight
/// data encoder sends batches (its default, `DictionaryHandling::Hydrate`,
/// the form every Flight client reads): a `FlightInfo` announces the
/// schema the client will receive.
fn hydrated_type(t: &DataType) -> DataType {
    match t {
        DataType::Dictionary(_, value) => hydrated_type(value),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| hydrated_field(f)).collect())
        }
        DataType::List(f) => DataType::List(Arc::new(hydrated_field(f))),
        DataType::LargeList(f) => DataType::LargeList(Arc::new(hydrated_field(f))),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(Arc::new(hydrated_field(f)), *n),
        DataType::Map(f, sorted) => DataType::Map(Arc::new(hydrated_field(f)), *sorted),
        other => other.clone(),
    }
}

fn hydrated_field(f: &Field) -> Field {
    f.clone().with_data_type(hydrated_type(f.data_type()))
}

fn hydrated(schema: &Schema) -> Schema {
    Schema::new_with_metadata(
        schema
            .fields()
            .iter()
            .map(|f| hydrated_field(f))
            .collect::<Vec<_>>(),
        schema.metadata().clone(),
    )
}

fn info(
    schema: &Schema,
    ticket: Ticket,
    descriptor: FlightDescriptor,
) -> Result<FlightInfo, Status> {
    Ok(FlightInfo::new()
        .try_with_schema(&hydrated(schema))
        .map_err(|e| Status::internal(format!("the result schema cannot be encoded: {e}")))?
        .with_endpoint(FlightEndpoint::new().with_ticket(ticket))
        .with_descriptor(descriptor))
}

/// One metadata batch as a `DoGet` stream.
fn batch_stream(batch: Result<RecordBatch, FlightError>) -> Result<Response<DoGetStream>, Status> {
    let batch = batch.map_err(|e| Status::internal(format!("metadata cannot be built: {e}")))?;
    let stream = FlightDataEncoderBuilder::new()
        .with_schema(batch.schema())
        .build(futures::stream::once(async { Ok(batch) }))
        .map_err(Status::from);
    Ok(Response::new(Box::pin(stream)))
}

fn handle_id(handle: &[u8]) -> Result<u64, Status> {
    std::str::from_utf8(handle)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            Status::invalid_argument("the prepared statement handle is not one this server gave")
        })
}

fn schema_bytes(schema: &Schema) -> Result<prost::bytes::Bytes, Status> {
    let IpcMessage(bytes) = SchemaAsIpc::new(schema, &Default::default())
        .try_into()
        .map_err(|e: arrow_schema::ArrowError| {
            Status::internal(format!("the schema cannot be encoded: {e}"))
        })?;
    Ok(bytes)
}

impl Service {
    fn next_query(&self) -> u64 {
        self.state.next_query.fetch_add(1, Ordering::Relaxed)
    }

    /// The schema `sql` (with `params`) returns, planned on the current
    /// snapshots. A statement that fails to plan (a refused write, a
    /// typo) is counted and logged as a query of `kind` that failed.
    async fn schema_of(
        &self,
        kind: &'static str,
        sql: &str,
        params: &[ScalarValue],
    ) -> Result<Schema, Status> {
        let planned = async {
            let (ctx, _) = self.state.sessions.session(&self.state.tables)?;
            let df = plan(&ctx, sql, params).await?;
            Ok::<_, Status>(df.schema().as_arrow().clone())
        };
        match planned.await {
            Ok(schema) => Ok(schema),
            Err(failed) => {
                self.plan_failed(kind, sql, &failed);
                Err(failed)
            }
        }
    }

    /// Counts and logs a statement that failed to plan.
    fn plan_failed(&self, kind: &'static str, sql: &str, failed: &Status) {
        QueryRecord {
            id: self.next_query(),
            kind,
            sql: sql.to_string(),
            tables: BTreeSet::new(),
            plan: None,
            started: Instant::now(),
            log: self.state.log_queries,
            metrics: Arc::clone(&self.state.metrics),
        }
        .finish(Outcome::Error, 0, Some(failed.message()));
    }

    /// Runs `sql` and streams its batches as they come (see `query`).
    async fn execute(
        &self,
        kind: &'static str,
        sql: String,
        params: Vec<ScalarValue>,
    ) -> Result<Response<DoGetStream>, Status> {
        let state = &self.state;
        let mut record = QueryRecord {
            id: self.next_query(),
            kind,
            sql,
            tables: BTreeSet::new(),
            plan: None,
            started: Instant::now(),
            log: state.log_queries,
            metrics: Arc::clone(&state.metrics),
        };
        let slot = match state.admission.admit().await {
            Ok(slot) => slot,
            Err(refused) => {
                record.finish(Outcome::Refused, 0, Some(refused.message()));
                return Err(refused);
            }
        };
        let started = async {
            let (ctx, versions) = state.sessions.session(&state.tables)?;
            let df = plan(&ctx, &record.sql, &params).await?;
            record.tables = crate::query::tables_read(df.logical_plan(), &versions);
            let task = Arc::new(df.task_ctx());
            let physical = df
                .create_physical_plan()
                .await
                .map_err(|e| crate::session::status(&e))?;
            let stream = datafusion::physical_plan::execute_stream(Arc::clone(&physical), task)
                .map_err(|e| crate::session::status(&e))?;
            Ok::<_, Status>((stream, physical))
        };
        let (stream, physical) = match tokio::time::timeout(state.query_timeout, started).await {
            Ok(Ok(started)) => started,
            Ok(Err(failed)) => {
                record.finish(Outcome::Error, 0, Some(failed.message()));
                return Err(failed);
            }
            Err(_) => {
                let message = format!(
                    "the query took longer than the server's query timeout ({:?}) to plan",
                    state.query_timeout
                );
                record.finish(Outcome::Timeout, 0, Some(&message));
                return Err(Status::deadline_exceeded(message));
            }
        };
        let schema = stream.schema();
        record.plan = Some(physical);
        let running = run(stream, state.query_timeout, record, slot);
        let flight = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .build(running)
            .map_err(Status::from);
        Ok(Response::new(Box::pin(flight)))
    }
}

/// Refuses a statement update: it plans it with `dar sql`'s rules, so a
/// DDL, DML or COPY gets the same refusal as there.
async fn refuse_update(service: &Service, sql: &str) -> Status {
    match service.schema_of("update", sql, &[]).await {
        Err(refused) => refused,
        Ok(_) => Status::invalid_argument(
            "this statement changes nothing: send queries as statements (CommandStatementQuery); \
             dar serve only reads tables",
        ),
    }
}

#[tonic::async_trait]
impl FlightSqlService for Service {
    type FlightService = Service;

    async fn do_handshake(
        &self,
        _request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<
        Response<Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>>,
        Status,
    > {
        // The token (if any) was checked before this call; a handshake
        // returns no session token of its own: every call carries the
        // bearer token.
        let response = HandshakeResponse {
            protocol_version: 0,
            payload: Default::default(),
        };
        Ok(Response::new(Box::pin(futures::stream::iter([Ok(
            response,
        )]))))
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let sql = number_placeholders(&query.query)?;
        let schema = self.schema_of("statement", &sql, &[]).await?;
        let ticket = TicketStatementQuery {
            statement_handle: sql.into_bytes().into(),
        };
        info(&schema, ticket_of(&ticket), request.into_inner()).map(Response::new)
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let sql = String::from_utf8(ticket.statement_handle.to_vec())
            .map_err(|_| Status::invalid_argument("the ticket is not one this server gave"))?;
        self.execute("statement", sql, Vec::new()).await
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        _request: Request<Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        let sql = number_placeholders(&query.query)?;
        let (ctx, _) = self.state.sessions.session(&self.state.tables)?;
        let df = match plan(&ctx, &sql, &[]).await {
            Ok(df) => df,
            Err(failed) => {
                self.plan_failed("prepare", &sql, &failed);
                return Err(failed);
            }
        };
        let types = df
            .logical_plan()
            .get_parameter_types()
            .map_err(|e| crate::session::status(&e))?;
        let mut numbered: Vec<(usize, Option<DataType>)> = Vec::with_capacity(types.len());
        for (name, data_type) in types {
            let n = name
                .strip_prefix('$')
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    Status::invalid_argument(format!(
                        "placeholder {name}: use $1, $2, ... or ? for parameters"
                    ))
                })?;
            numbered.push((n, data_type));
        }
        numbered.sort_by_key(|(n, _)| *n);
        let fields: Vec<Field> = numbered
            .into_iter()
            .map(|(n, t)| Field::new(format!("${n}"), t.unwrap_or(DataType::Null), true))
            .collect();
        let dataset = hydrated(df.schema().as_arrow());
        let id = self.state.next_handle.fetch_add(1, Ordering::Relaxed);
        {
            let mut prepared = self.state.prepared();
            if prepared.len() >= MAX_PREPARED {
                return Err(Status::resource_exhausted(format!(
                    "the server holds {MAX_PREPARED} prepared statements already; close some"
                )));
            }
            prepared.insert(
                id,
                Prepared {
                    sql,
                    params: Vec::new(),
                },
            );
        }
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: id.to_string().into_bytes().into(),
            dataset_schema: schema_bytes(&dataset)?,
            parameter_schema: schema_bytes(&Schema::new(fields))?,
        })
    }

    async fn do_put_prepared_statement_query(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<DoPutPreparedStatementResult, Status> {
        let id = handle_id(&query.prepared_statement_handle)?;
        if !self.state.prepared().contains_key(&id) {
            return Err(Status::not_found("no such prepared statement (closed?)"));
        }
        let mut batches = FlightRecordBatchStream::new_from_flight_data(
            request.into_inner().map_err(FlightError::from),
        );
        let mut kept: Vec<RecordBatch> = Vec::new();
        let mut rows = 0;
        while let Some(batch) = batches.next().await {
            let batch = batch.map_err(|e| {
                Status::invalid_argument(format!("the parameters cannot be read: {e}"))
            })?;
            rows += batch.num_rows();
            if rows > 1 {
                break;
            }
            kept.push(batch);
        }
        if rows > 1 {
            return Err(Status::invalid_argument(
                "more than one row of parameters was bound; this server executes a prepared \
                 statement with one row of parameters at a time",
            ));
        }
        let params = parameters(&kept)?;
        match self.state.prepared().get_mut(&id) {
            Some(p) => p.params = params,
            None => return Err(Status::not_found("no such prepared statement (closed?)")),
        }
        Ok(DoPutPreparedStatementResult {
            prepared_statement_handle: Some(query.prepared_statement_handle),
        })
    }

    async fn get_flight_info_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let id = handle_id(&query.prepared_statement_handle)?;
        let prepared = self.state.prepared().get(&id).cloned();
        let Some(prepared) = prepared else {
            return Err(Status::not_found("no such prepared statement (closed?)"));
        };
        let schema = self
            .schema_of("prepared", &prepared.sql, &prepared.params)
            .await?;
        info(&schema, ticket_of(&query), request.into_inner()).map(Response::new)
    }

    async fn do_get_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let id = handle_id(&query.prepared_statement_handle)?;
        let prepared = self.state.prepared().get(&id).cloned();
        let Some(prepared) = prepared else {
            return Err(Status::not_found("no such prepared statement (closed?)"));
        };
        self.execute("prepared", prepared.sql, prepared.params)
            .await
    }

    async fn do_action_close_prepared_statement(
        &self,
        query: ActionClosePreparedStatementRequest,
        _request: Request<Action>,
    ) -> Result<(), Status> {
        let id = handle_id(&query.prepared_statement_handle)?;
        self.state.prepared().remove(&id);
        Ok(())
    }

    async fn do_put_statement_update(
        &self,
        query: CommandStatementUpdate,
        _request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        Err(refuse_update(self, &query.query).await)
    }

    async fn do_put_prepared_statement_update(
        &self,
        query: CommandPreparedStatementUpdate,
        _request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let id = handle_id(&query.prepared_statement_handle)?;
        let prepared = self.state.prepared().get(&id).cloned();
        match prepared {
            Some(p) => Err(refuse_update(self, &p.sql).await),
            None => Err(Status::not_found("no such prepared statement (closed?)")),
        }
    }

    async fn do_put_statement_ingest(
        &self,
        _query: CommandStatementIngest,
        _request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        Err(Status::invalid_argument(
            "ingest refused: dar serve only reads tables",
        ))
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        info(&schema, ticket_of(&query), request.into_inner()).map(Response::new)
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let mut builder = query.into_builder();
        builder.append(CATALOG);
        batch_stream(builder.build())
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        info(&schema, ticket_of(&query), request.into_inner()).map(Response::new)
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let mut builder = query.into_builder();
        builder.append(CATALOG, SCHEMA);
        batch_stream(builder.build())
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        info(&schema, ticket_of(&query), request.into_inner()).map(Response::new)
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let mut builder = query.into_builder();
        for table in self.state.tables.iter() {
            let schema = datafusion::catalog::TableProvider::schema(table.provider().as_ref());
            builder
                .append(CATALOG, SCHEMA, &table.name, "TABLE", &schema)
                .map_err(|e| Status::internal(format!("table '{}': {e}", table.name)))?;
        }
        batch_stream(builder.build())
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        info(&schema, ticket_of(&query), request.into_inner()).map(Response::new)
    }

    async fn do_get_table_types(
        &self,
        query: CommandGetTableTypes,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let mut builder = query.into_builder();
        builder.append("TABLE");
        batch_stream(builder.build())
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder(&self.state.sql_info).schema();
        info(&schema, ticket_of(&query), request.into_inner()).map(Response::new)
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        batch_stream(query.into_builder(&self.state.sql_info).build())
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}
