//! The per-process trace file the injection library writes (`DIR/<target>/<size>/<rep>.cupti`):
//! JSON Lines, UTF-8, the format of docs/cupti.md ("Trace file format"), and its bounded reader.
//!
//! The library writes the header when the CUDA driver calls it (before any kernel), appends whole
//! lines as CUPTI hands back activity buffers, and writes the trailer after
//! `cuptiActivityFlushAll` at exit. So a file without a trailer is a process that died before the
//! flush, and its last line may have been cut short: that one unterminated line is dropped, not
//! an error. Every other damaged line is an error naming its line number.

use serde::Deserialize;

/// The format version this reader knows (`"cgp_gate_cupti":2`, whose header carries the run's
/// nonce); older ones are read, newer ones refused.
pub const FORMAT_VERSION: u64 = 2;
/// The largest file [`parse`] reads: 1 GiB (about 3 million launches of long C++ names; a live run
/// that needs more should profile fewer launches).
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// The longest line: a kernel line with a 256 KiB mangled name (CUTLASS and PyTorch templates
/// reach tens of KiB).
pub const MAX_LINE_BYTES: usize = 256 << 10;
/// The most kernel records one file may hold.
pub const MAX_RECORDS: usize = 5_000_000;

/// One process's trace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessTrace {
    /// `cuptiGetVersion` of the libcupti the program loaded (0 when it could not be asked).
    pub cupti_version: u32,
    pub pid: u32,
    /// The run's nonce from the header (format 2; `None` in format 1 or when the library was
    /// given none): the live profiler checks it is the one it drew for the run.
    pub nonce: Option<String>,
    /// Every kernel launch, in the order CUPTI delivered them (buffer by buffer; not necessarily
    /// by start time across streams).
    pub kernels: Vec<KernelRecord>,
    /// Records CUPTI dropped (`cuptiActivityGetNumDroppedRecords`, summed), from the trailer.
    pub dropped: u64,
    /// The trailer is present: the library flushed at exit. `false`: the process died first.
    pub complete: bool,
    /// The first CUPTI failure the library recorded (the later ones only repeat it).
    pub error: Option<CuptiFailure>,
}

/// One kernel launch (`CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelRecord {
    /// The demangled name (`void gemm<128>(float const*, int)`; cpp_demangle's spelling), or the
    /// name as CUPTI gave it when it is not an Itanium-mangled one (`extern "C"` kernels) or is
    /// beyond the reader's demangling bounds ([`MAX_DEMANGLE_INPUT`], [`MAX_DEMANGLE_BYTES`]).
    pub name: String,
    /// The name as CUPTI gave it.
    pub mangled: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub static_shared: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
    /// GPU timestamps, ns (CUPTI's clock); `end - start` is the kernel's duration.
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    /// The correlation ID of the launch API call.
    pub correlation: u32,
    /// The CUDA graph that launched it, 0 for a launch outside any graph.
    pub graph_id: u32,
}

/// A CUPTI call (or the library's own step, `dlopen`, `environment`) that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuptiFailure {
    /// `cuptiActivityEnable`, `dlopen`, ...
    pub call: String,
    /// The `CUptiResult` (-1 for a step that is not a CUPTI call).
    pub code: i64,
    /// `cuptiGetResultString`'s text (`CUPTI_ERROR_NOT_INITIALIZED`), or `dlerror()`.
    pub message: String,
}

/// Why a trace file could not be read. Each says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error(
        "the CUPTI trace is {size} bytes, over the {limit}-byte limit; profile fewer launches (`launch_count`) or a smaller size"
    )]
    TooLarge { size: u64, limit: u64 },
    #[error(
        "the CUPTI trace is empty: the injection library never wrote its header; run the program again (a file of another tool under a .cupti name?)"
    )]
    Empty,
    #[error(
        "line {line}: over {limit} kernel records; profile fewer launches (`launch_count`, `launch_skip`)"
    )]
    TooManyRecords { line: usize, limit: usize },
    #[error(
        "line {line}: written by a newer cgp-gate (trace format {version}, this one reads up to {FORMAT_VERSION}); upgrade cgp-gate"
    )]
    Newer { line: usize, version: u64 },
    #[error("line {line}: {reason}; the file is damaged or not a cgp-gate CUPTI trace: record it again")]
    Line { line: usize, reason: String },
}

fn bad(line: usize, reason: impl Into<String>) -> TraceError {
    TraceError::Line {
        line,
        reason: reason.into(),
    }
}

/// Every key any line may have; which ones are present says what the line is. Unknown keys
/// (written by a later library of the same format version) are ignored.
#[derive(Deserialize, Default)]
struct RawLine {
    cgp_gate_cupti: Option<u64>,
    cupti_version: Option<u32>,
    pid: Option<u32>,
    nonce: Option<String>,
    k: Option<String>,
    m: Option<String>,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    regs: Option<u32>,
    smem_static: Option<u32>,
    smem_dynamic: Option<u32>,
    start: Option<u64>,
    end: Option<u64>,
    device: Option<u32>,
    context: Option<u32>,
    stream: Option<u32>,
    corr: Option<u32>,
    graph: Option<u32>,
    error: Option<String>,
    code: Option<i64>,
    message: Option<String>,
    records: Option<u64>,
    dropped: Option<u64>,
}

/// Read one process's trace. Bounded ([`MAX_FILE_BYTES`], [`MAX_LINE_BYTES`], [`MAX_RECORDS`]);
/// never panics.
///
/// # Errors
/// [`TraceError`], with the line number of the first damaged line.
pub fn parse(bytes: &[u8]) -> Result<ProcessTrace, TraceError> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(TraceError::TooLarge {
            size: bytes.len() as u64,
            limit: MAX_FILE_BYTES,
        });
    }
    let mut trace = ProcessTrace::default();
    let mut names = Demangler::default();
    let mut header = false;
    let mut trailer_records = None;
    let mut rest = bytes;
    let mut number = 0usize;
    while !rest.is_empty() {
        number += 1;
        let (line, terminated) = match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let l = &rest[..i];
                rest = &rest[i + 1..];
                (l, true)
            }
            None => (std::mem::take(&mut rest), false),
        };
        if line.len() > MAX_LINE_BYTES {
            return Err(bad(
                number,
                format!("{} bytes, over the {MAX_LINE_BYTES}-byte line limit", line.len()),
            ));
        }
        if trailer_records.is_some() {
            return Err(bad(number, "a line after the trailer (`{\"end\":1,...}`)"));
        }
        let raw: RawLine = match serde_json::from_slice(line) {
            Ok(r) => r,
            // The process died while writing its last line: what it wrote before stays.
            Err(_) if !terminated && header => break,
            Err(e) => return Err(bad(number, format!("not a JSON object: {e}"))),
        };
        if !header {
            read_header(&raw, number, &mut trace)?;
            header = true;
        } else if raw.k.is_some() || raw.m.is_some() {
            if trace.kernels.len() >= MAX_RECORDS {
                return Err(TraceError::TooManyRecords {
                    line: number,
                    limit: MAX_RECORDS,
                });
            }
            trace.kernels.push(kernel(raw, number, &mut names)?);
        } else if let Some(call) = raw.error {
            let failure = CuptiFailure {
                call,
                code: raw
                    .code
                    .ok_or_else(|| bad(number, "a failure line without `code`"))?,
                message: raw.message.unwrap_or_default(),
            };
            trace.error.get_or_insert(failure);
        } else if let Some(records) = raw.records {
            if raw.end != Some(1) {
                return Err(bad(number, "a trailer without `\"end\":1`"));
            }
            trace.dropped = raw
                .dropped
                .ok_or_else(|| bad(number, "a trailer without `dropped`"))?;
            if !terminated {
                return Err(bad(number, "the trailer is cut short (no newline after it)"));
            }
            trailer_records = Some(records);
        } else if raw.cgp_gate_cupti.is_some() {
            return Err(bad(number, "a second header"));
        } else {
            return Err(bad(
                number,
                "neither a kernel (`m`), a failure (`error`) nor the trailer (`records`)",
            ));
        }
    }
    if !header {
        return Err(TraceError::Empty);
    }
    if let Some(records) = trailer_records {
        if records != trace.kernels.len() as u64 {
            return Err(bad(
                number,
                format!(
                    "the trailer counts {records} kernel records, the file holds {}",
                    trace.kernels.len()
                ),
            ));
        }
        trace.complete = true;
    }
    Ok(trace)
}

/// The nonce a trace's header carries, read from its first line alone (the live profiler checks
/// it before the whole file is read): `None` when the first line is no header (the reader's own
/// error comes later), `Some(None)` when the header carries no nonce (format 1, or the library
/// found none).
pub fn header_nonce(text: &str) -> Option<Option<String>> {
    let raw: RawLine = serde_json::from_str(text.lines().next()?).ok()?;
    raw.cgp_gate_cupti?;
    Some(raw.nonce.filter(|n| !n.is_empty()))
}

fn read_header(raw: &RawLine, line: usize, trace: &mut ProcessTrace) -> Result<(), TraceError> {
    let Some(version) = raw.cgp_gate_cupti else {
        return Err(bad(
            line,
            "the first line is not the header (`{\"cgp_gate_cupti\":1,...}`)",
        ));
    };
    if version == 0 {
        return Err(bad(line, "trace format version 0"));
    }
    if version > FORMAT_VERSION {
        return Err(TraceError::Newer { line, version });
    }
    trace.cupti_version = raw.cupti_version.unwrap_or(0);
    trace.pid = raw.pid.ok_or_else(|| bad(line, "a header without `pid`"))?;
    trace.nonce = raw.nonce.clone().filter(|n| !n.is_empty());
    Ok(())
}

fn kernel(raw: RawLine, line: usize, names: &mut Demangler) -> Result<KernelRecord, TraceError> {
    fn need<T>(v: Option<T>, key: &str, line: usize) -> Result<T, TraceError> {
        v.ok_or_else(|| bad(line, format!("a kernel line without `{key}`")))
    }
    let mangled = match (raw.m, &raw.k) {
        (Some(m), _) => m,
        (None, Some(k)) => k.clone(),
        (None, None) => return Err(bad(line, "a kernel line without `m`")),
    };
    let start_ns = need(raw.start, "start", line)?;
    let end_ns = need(raw.end, "end", line)?;
    if end_ns < start_ns {
        return Err(bad(
            line,
            format!("the kernel ends ({end_ns}) before it starts ({start_ns})"),
        ));
    }
    Ok(KernelRecord {
        name: raw.k.unwrap_or_else(|| names.name(&mangled)),
        grid: need(raw.grid, "grid", line)?,
        block: need(raw.block, "block", line)?,
        registers: need(raw.regs, "regs", line)?,
        static_shared: need(raw.smem_static, "smem_static", line)?,
        dynamic_shared: need(raw.smem_dynamic, "smem_dynamic", line)?,
        start_ns,
        end_ns,
        device: need(raw.device, "device", line)?,
        context: need(raw.context, "context", line)?,
        stream: need(raw.stream, "stream", line)?,
        correlation: need(raw.corr, "corr", line)?,
        graph_id: raw.graph.unwrap_or(0),
        mangled,
    })
}

/// The trace files one run of a program left for `out_file` (the `CGP_GATE_CUPTI_OUT` it ran
/// with): `out_file` itself when it exists, then each `<out_file>.<pid>` beside it (other
/// processes of the program that initialised CUDA), by pid. Empty: no process of the program
/// initialised CUDA. Temporary files (`.<name>.tmp.<pid>`) are not traces.
pub fn files_of(out_file: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if out_file.is_file() {
        out.push(out_file.to_path_buf());
    }
    let (Some(dir), Some(name)) = (out_file.parent(), out_file.file_name()) else {
        return out;
    };
    let dir = if dir.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let mut others: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let file = e.file_name();
            let pid = file.to_str()?.strip_prefix(&prefix)?;
            let pid: u64 = pid
                .parse()
                .ok()
                .filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))?;
            e.path().is_file().then(|| (pid, e.path()))
        })
        .collect();
    others.sort();
    out.extend(others.into_iter().map(|(_, p)| p));
    out
}

/// The longest mangled name [`parse`] demangles (longer ones stay mangled).
pub const MAX_DEMANGLE_INPUT: usize = 16 << 10;
/// The most bytes of distinct mangled names [`parse`] demangles in one file; the names after that
/// stay mangled. cpp_demangle takes time in proportion to the name (about 40 µs per byte of a
/// hostile 8-64 KB name in the debug build, measured on the shared 2-core machine, loaded), and a
/// real trace repeats a few hundred distinct names (each demangled once), so this bounds the time a
/// damaged or hostile file can take without touching real ones.
pub const MAX_DEMANGLE_BYTES: usize = 1 << 20;

/// Demangles each distinct name once, within [`MAX_DEMANGLE_INPUT`] and [`MAX_DEMANGLE_BYTES`].
#[derive(Default)]
struct Demangler {
    names: std::collections::HashMap<String, String>,
    spent: usize,
}

impl Demangler {
    fn name(&mut self, mangled: &str) -> String {
        if let Some(name) = self.names.get(mangled) {
            return name.clone();
        }
        if mangled.len() > MAX_DEMANGLE_INPUT || self.spent + mangled.len() > MAX_DEMANGLE_BYTES {
            return mangled.to_owned();
        }
        self.spent += mangled.len();
        let name = demangle(mangled);
        self.names.insert(mangled.to_owned(), name.clone());
        name
    }
}

/// The longest demangled name [`demangle`] writes.
pub const MAX_DEMANGLED_BYTES: usize = 64 << 10;

/// An Itanium-mangled name (`_Z...`) demangled by cpp_demangle, as `profile::filter::demangled`
/// spells it for ncu's names (this leaf cannot import `profile`); any other name as it is, and so
/// is one whose demangled form would pass [`MAX_DEMANGLED_BYTES`]: substitutions that refer to
/// earlier ones (`St4pairIS1_S1_E`) double the output at each step, so a few hundred bytes of a
/// damaged or hostile file could otherwise demangle to gigabytes.
pub fn demangle(name: &str) -> String {
    /// A writer that refuses to grow past the limit, which stops the demangler there.
    struct Bounded(String);
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            if self.0.len() + s.len() > MAX_DEMANGLED_BYTES {
                return Err(std::fmt::Error);
            }
            self.0.push_str(s);
            Ok(())
        }
    }
    if name.starts_with("_Z")
        && let Ok(sym) = cpp_demangle::Symbol::new(name)
    {
        let mut out = Bounded(String::new());
        if sym
            .structured_demangle(&mut out, &cpp_demangle::DemangleOptions::default())
            .is_ok()
        {
            return out.0;
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests;
