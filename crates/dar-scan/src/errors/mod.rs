//! What can go wrong: the one error type, its kinds, table-option errors,
//! and how errors are rendered as one line.

pub(crate) mod error;
pub(crate) mod kind;
pub(crate) mod option_error;
pub(crate) mod render;
