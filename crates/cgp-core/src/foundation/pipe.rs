//! A closed stdout that ends the output, never the verdict.

/// Stdout for the commands: once its reader has gone (`check ... | head -n 3`), the rest of the
/// output is dropped and the command goes on to its own exit code (a regression stays 1, a damaged
/// recording 2); a closed pipe never turns a verdict into a pass. Other write errors pass through.
pub struct QuietPipe<W> {
    inner: W,
    closed: bool,
}

impl<W: std::io::Write> QuietPipe<W> {
    pub fn new(inner: W) -> Self {
        Self { inner, closed: false }
    }
}

impl<W: std::io::Write> std::io::Write for QuietPipe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}
