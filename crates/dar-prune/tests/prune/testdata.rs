//! Expectations on the shared Delta test tables (verified against the data
//! with pyarrow; see the comments).
