//! [`LingeringStream`]: an accepted connection whose close waits for the
//! peer's, so that the last frames of a reply reach the client.
//!
//! A server that closes a socket while bytes the client sent are still
//! unread (an HTTP/2 `WINDOW_UPDATE` or `PING` that crossed the server's
//! last frames) makes the kernel answer with a reset instead of a FIN, and
//! a reset makes the client's kernel drop whatever it had received but the
//! client had not read yet: the end of the reply. A lingering close
//! half-closes the write side (the FIN follows the last frame), then reads
//! and discards what the peer still sends until the peer closes too, for at
//! most [`LINGER`].

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// How long a closing connection waits for its peer to close after the
/// last byte was sent; a peer that keeps it open longer is cut off.
pub const LINGER: Duration = Duration::from_secs(2);

/// A TCP connection whose shutdown lingers (see the module doc).
#[derive(Debug)]
pub struct LingeringStream {
    inner: TcpStream,
    /// Set once the write side is closed: the end of the linger.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl LingeringStream {
    /// Wraps an accepted connection.
    pub fn new(inner: TcpStream) -> Self {
        Self {
            inner,
            deadline: None,
        }
    }

    /// The connection.
    pub fn get_ref(&self) -> &TcpStream {
        &self.inner
    }
}

impl AsyncRead for LingeringStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for LingeringStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// Sends the FIN, then reads until the peer's FIN (or an error, or
    /// [`LINGER`]), so that nothing the peer sent is left unread at close.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.deadline.is_none() {
            ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.deadline = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        let mut scratch = [0u8; 4096];
        loop {
            if let Some(deadline) = this.deadline.as_mut()
                && deadline.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                // The peer's FIN: closing now leaves nothing unread.
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => continue,
                // The peer reset or went away: nothing left to protect.
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Connected for LingeringStream {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// More than the socket buffers of both ends hold: when the server's
    /// last write returns, part of the reply is still queued on its side.
    const REPLY: usize = 32 * 1024 * 1024;

    /// A server that writes a reply and closes while a byte the client
    /// sent is unread and part of the reply is still queued on its side:
    /// the client reads slowly. What the client got: the reply's length,
    /// or the error that cut it short.
    async fn reply_then_close(linger: bool) -> Result<usize, io::Error> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            // The client's byte arrives before the server closes.
            stream.readable().await.unwrap();
            let reply = vec![7u8; REPLY];
            if linger {
                let mut s = LingeringStream::new(stream);
                s.write_all(&reply).await.unwrap();
                s.shutdown().await.unwrap();
            } else {
                let mut s = stream;
                s.write_all(&reply).await.unwrap();
                s.shutdown().await.unwrap();
            }
        });
        let mut client = tokio::net::TcpStream::connect(address).await.unwrap();
        client.write_all(b"w").await.unwrap();
        let mut chunk = vec![0u8; 256 * 1024];
        let mut got = 0;
        let read = loop {
            tokio::time::sleep(Duration::from_millis(1)).await;
            match client.read(&mut chunk).await {
                Ok(0) => break Ok(got),
                Ok(n) => got += n,
                Err(e) => break Err(e),
            }
        };
        drop(client);
        server.await.unwrap();
        read
    }

    #[tokio::test]
    async fn a_lingering_close_delivers_the_reply_a_plain_close_loses() {
        assert_eq!(reply_then_close(true).await.unwrap(), REPLY);
        // The control: closed with the byte unread, the socket resets and
        // the client loses the reply it had not read yet.
        match reply_then_close(false).await {
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}"),
            Ok(n) => assert!(n < REPLY, "a plain close delivered all {n} bytes"),
        }
    }

    #[tokio::test]
    async fn a_peer_that_never_closes_is_cut_off_after_the_linger() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(address).await.unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        let mut s = LingeringStream::new(stream);
        let start = Instant::now();
        tokio::time::timeout(LINGER * 3, s.shutdown())
            .await
            .expect("the linger is bounded")
            .unwrap();
        assert!(start.elapsed() >= LINGER);
    }
}
