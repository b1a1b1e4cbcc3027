//! The worker token: a shared secret that a worker requires on every call,
//! and that its coordinator (and the worker itself, calling its peers)
//! sends as `authorization: Bearer <token>`.
//!
//! A token is read from a file or from [`TOKEN_ENV`], never from a command
//! line (where every user of the machine could read it). It is compared in
//! constant time, marked sensitive so HTTP/2 header compression never
//! indexes it, and appears in no error or `Debug` output.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use http::HeaderValue;
use subtle::ConstantTimeEq;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::error::Error;

/// The environment variable a token is read from when no file is given.
pub const TOKEN_ENV: &str = "DAR_WORKER_TOKEN";

/// The shortest token accepted, in characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// Bytes read from a token file at most: a token is short, and a file that
/// is not one (a device, a log) must not be read whole.
const MAX_TOKEN_FILE: u64 = 4096;

/// A worker token (see the module docs). `Debug` shows no part of it.
#[derive(Clone)]
pub struct Token {
    /// `Bearer <token>`, marked sensitive.
    header: HeaderValue,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// A token from its text (surrounding whitespace ignored): at least
    /// [`MIN_TOKEN_LEN`] printable ASCII characters, no spaces.
    ///
    /// # Errors
    ///
    /// [`Error::Token`] when it is too short or holds other characters.
    pub fn new(secret: &str) -> Result<Self, Error> {
        Self::parse(secret, "the caller")
    }

    fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let invalid = |reason: String| Error::Token {
            origin: origin.to_string(),
            reason,
        };
        let secret = text.trim();
        if secret.is_empty() {
            return Err(invalid("is empty".into()));
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(invalid(
                "holds a space, a control or a non-ASCII character; \
                 a token is printable ASCII"
                    .into(),
            ));
        }
        if secret.len() < MIN_TOKEN_LEN {
            return Err(invalid(format!(
                "has {} characters; at least {MIN_TOKEN_LEN} are needed",
                secret.len()
            )));
        }
        let mut header = HeaderValue::try_from(format!("Bearer {secret}"))
            .map_err(|_| invalid("cannot be sent in a request header".into()))?;
        header.set_sensitive(true);
        Ok(Self { header })
    }

    /// The token in the file at `path` (surrounding whitespace, such as a
    /// final newline, ignored).
    ///
    /// # Errors
    ///
    /// [`Error::ReadFile`] when the file cannot be read, [`Error::Token`]
    /// when what it holds is not a token.
    pub fn from_file(path: &Path) -> Result<Self, Error> {
        let failed = |source| Error::ReadFile {
            what: "token",
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(failed)?;
        let mut bytes = Vec::new();
        file.take(MAX_TOKEN_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        let origin = format!("file '{}'", path.display());
        if bytes.len() as u64 > MAX_TOKEN_FILE {
            return Err(Error::Token {
                origin,
                reason: format!("is longer than {MAX_TOKEN_FILE} bytes"),
            });
        }
        let text = String::from_utf8(bytes).map_err(|_| Error::Token {
            origin: origin.clone(),
            reason: "is not UTF-8 text".into(),
        })?;
        Self::parse(&text, &origin)
    }

    /// The token in [`TOKEN_ENV`], if it is set.
    ///
    /// # Errors
    ///
    /// [`Error::Token`] when it is set but is not a token.
    pub fn from_env() -> Result<Option<Self>, Error> {
        match std::env::var_os(TOKEN_ENV) {
            None => Ok(None),
            Some(value) => {
                let origin = format!("environment variable {TOKEN_ENV}");
                let text = value.into_string().map_err(|_| Error::Token {
                    origin: origin.clone(),
                    reason: "is not UTF-8 text".into(),
                })?;
                Self::parse(&text, &origin).map(Some)
            }
        }
    }

    /// The token of `file` when one is given, else of [`TOKEN_ENV`] when it
    /// is set, else none.
    ///
    /// # Errors
    ///
    /// As [`Token::from_file`] and [`Token::from_env`].
    pub fn from_file_or_env(file: Option<&Path>) -> Result<Option<Self>, Error> {
        match file {
            Some(path) => Self::from_file(path).map(Some),
            None => Self::from_env(),
        }
    }

    /// The `authorization` header value that carries this token.
    pub(crate) fn header(&self) -> &HeaderValue {
        &self.header
    }

    /// Whether `presented` (an `authorization` header value) carries this
    /// token. Constant time in the bytes compared (a length that differs
    /// is told at once; the length of a token is no secret worth keeping).
    fn accepts(&self, presented: &[u8]) -> bool {
        bool::from(self.header.as_bytes().ct_eq(presented))
    }
}

/// The check every call to a server (a worker, `dar serve`) passes first,
/// as a tonic interceptor: with a token, the call must carry it as
/// `authorization: Bearer <token>`; without one (a server on loopback),
/// every call passes.
#[derive(Debug, Clone)]
pub struct CheckToken {
    expected: Option<Token>,
    /// The server's name, for the error the caller sees.
    worker: Arc<str>,
}

impl CheckToken {
    /// The check of `expected` (none: every call passes); `server` names
    /// the server in the refusal the caller sees (`worker 127.0.0.1:50051`).
    pub fn new(expected: Option<Token>, server: &str) -> Self {
        Self {
            expected,
            worker: Arc::from(server),
        }
    }
}

impl Interceptor for CheckToken {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(request);
        };
        match request.metadata().get(http::header::AUTHORIZATION.as_str()) {
            Some(presented) if expected.accepts(presented.as_bytes()) => Ok(request),
            Some(_) => Err(Status::unauthenticated(format!(
                "{} refused the call: its token is not the one it requires",
                self.worker
            ))),
            None => Err(Status::unauthenticated(format!(
                "{} refused the call: it requires a token and the call has none",
                self.worker
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cret-token-0123456789";

    #[test]
    fn tokens_are_checked_and_never_shown() {
        let token = Token::new(&format!("  {SECRET}\n")).unwrap();
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
        assert!(token.header().is_sensitive());
        assert!(token.accepts(format!("Bearer {SECRET}").as_bytes()));
        assert!(!token.accepts(format!("Bearer {SECRET}x").as_bytes()));
        assert!(!token.accepts(SECRET.as_bytes()));

        for (bad, reason) in [
            ("", "is empty"),
            ("short", "at least 16"),
            ("with a space inside it", "printable ASCII"),
            ("non-ascii-é-token-0123", "printable ASCII"),
        ] {
            let err = Token::new(bad).unwrap_err().to_string();
            assert!(err.contains(reason), "{err}");
            if !bad.is_empty() {
                assert!(!err.contains(bad), "{err}");
            }
        }
    }

    #[test]
    fn token_files_are_read_and_errors_name_only_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("token");
        std::fs::write(&good, format!("{SECRET}\n")).unwrap();
        let token = Token::from_file_or_env(Some(&good)).unwrap().unwrap();
        assert!(token.accepts(format!("Bearer {SECRET}").as_bytes()));

        let short = dir.path().join("short");
        std::fs::write(&short, "tiny-secret").unwrap();
        let err = Token::from_file(&short).unwrap_err().to_string();
        assert!(err.contains(&short.display().to_string()), "{err}");
        assert!(!err.contains("tiny-secret"), "{err}");

        let missing = dir.path().join("missing");
        let err = Token::from_file(&missing).unwrap_err().to_string();
        assert!(err.contains("cannot read the token file"), "{err}");

        let big = dir.path().join("big");
        std::fs::write(&big, "x".repeat(5000)).unwrap();
        let err = Token::from_file(&big).unwrap_err().to_string();
        assert!(err.contains("longer than 4096 bytes"), "{err}");
    }

    #[test]
    fn calls_without_the_token_are_refused() {
        let token = Token::new(SECRET).unwrap();
        let mut check = CheckToken::new(Some(token.clone()), "worker 127.0.0.1:1");
        let call = |header: Option<&str>| {
            let mut request = Request::new(());
            if let Some(h) = header {
                request
                    .metadata_mut()
                    .insert("authorization", h.parse().unwrap());
            }
            request
        };
        assert!(check.call(call(Some(&format!("Bearer {SECRET}")))).is_ok());
        let wrong = check
            .call(call(Some("Bearer not-the-token-at-all")))
            .unwrap_err();
        assert_eq!(wrong.code(), tonic::Code::Unauthenticated);
        assert!(
            wrong.message().contains("not the one it requires"),
            "{wrong:?}"
        );
        assert!(!wrong.message().contains(SECRET));
        let none = check.call(call(None)).unwrap_err();
        assert!(none.message().contains("has none"), "{none:?}");

        let mut open = CheckToken::new(None, "worker 127.0.0.1:1");
        assert!(open.call(call(None)).is_ok());
    }
}
