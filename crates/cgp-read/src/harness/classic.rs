//! The registrations of the first three formats: nvbench, Google Benchmark and pytest-benchmark
//! (their readers are `nvbench.rs`, `gbench.rs` and `pytest_bench.rs`, whose `read` each
//! registration calls): what the registry asks of a format beyond reading it.

use std::path::Path;

use serde_json::Value;

use super::registry::{Doc, Live, LiveRun, Reader};
use super::{Entry, Format, HarnessError, HarnessFile, Sidecars, detect, gbench, nvbench, pytest_bench};

/// Google Benchmark repetitions per process, unless the command sets its own.
pub const GBENCH_REPETITIONS: u32 = 10;

/// What a row of nvbench summaries (no `--jsonbin` samples) says in its reason, after the
/// sentence that decided the row.
pub const NVBENCH_SUMMARY: &str = "summary only (nvbench wrote one mean per process, no `--jsonbin` samples): the processes' means are the samples, so the noise seen is between processes only; the within-process spread the file reports (`stdev/relative`) is not used, it is not the spread of a mean";

/// What a row of pytest-benchmark means (a file saved without `stats.data`) says in its reason.
pub const PYTEST_SUMMARY: &str = "summary only (the pytest-benchmark file has no `stats.data`, one mean per process): the processes' means are the samples, so the noise seen is between processes only";

pub struct Nvbench;
pub struct GBench;
pub struct PytestBenchmark;

pub static NVBENCH: Nvbench = Nvbench;
pub static GBENCH: GBench = GBench;
pub static PYTEST_BENCHMARK: PytestBenchmark = PytestBenchmark;

/// The one document of a classic format's file.
fn one<'d>(doc: &'d Doc, origin: &Path, format: Format) -> Result<&'d Value, HarnessError> {
    doc.json().ok_or_else(|| {
        HarnessError::new(
            origin,
            "holds more than one JSON document: files concatenated?",
            format!("give each process's {} file on its own", format.tool()),
        )
    })
}

fn is(doc: &Doc, format: Format) -> bool {
    doc.json().and_then(detect) == Some(format)
}

fn path(run: &LiveRun<'_>) -> String {
    run.out.display().to_string()
}

impl Reader for Nvbench {
    fn format(&self) -> Format {
        Format::Nvbench
    }
    fn detects(&self, doc: &Doc) -> bool {
        is(doc, Format::Nvbench)
    }
    fn read(&self, doc: &Doc, origin: &Path, sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        nvbench::read(one(doc, origin, Format::Nvbench)?, origin, sidecars)
    }
    fn live(&self, run: &LiveRun<'_>) -> Live {
        Live::flags(vec!["--json".to_owned(), path(run), "--jsonbin".to_owned()])
    }
    fn writes(&self) -> &'static str {
        "`--json PATH`"
    }
    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metric(nvbench::GPU_TIME).map(|m| m.name.as_str())
    }
    fn recorded_command(&self, doc: &Doc) -> Option<Vec<String>> {
        let argv = doc.json()?.pointer("/meta/argv")?.as_array()?;
        Some(
            argv.iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect(),
        )
    }
    fn summary_note(&self) -> Option<&'static str> {
        Some(NVBENCH_SUMMARY)
    }
    fn time_and_cycles(&self) -> Option<(&'static str, &'static str)> {
        Some((nvbench::GPU_TIME, nvbench::GPU_CYCLES))
    }
}

impl Reader for GBench {
    fn format(&self) -> Format {
        Format::GBench
    }
    fn detects(&self, doc: &Doc) -> bool {
        is(doc, Format::GBench)
    }
    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        gbench::read(one(doc, origin, Format::GBench)?, origin)
    }
    fn live(&self, run: &LiveRun<'_>) -> Live {
        let mut f = vec![
            format!("--benchmark_out={}", path(run)),
            "--benchmark_out_format=json".to_owned(),
        ];
        if !run.app.iter().any(|a| a.starts_with("--benchmark_repetitions")) {
            f.push(format!("--benchmark_repetitions={GBENCH_REPETITIONS}"));
        }
        Live::flags(f)
    }
    fn writes(&self) -> &'static str {
        "`--benchmark_out=PATH --benchmark_out_format=json`"
    }
    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metric("real_time").map(|m| m.name.as_str())
    }
    fn recorded_command(&self, doc: &Doc) -> Option<Vec<String>> {
        Some(vec![
            doc.json()?.pointer("/context/executable")?.as_str()?.to_owned(),
        ])
    }
}

impl Reader for PytestBenchmark {
    fn format(&self) -> Format {
        Format::PytestBenchmark
    }
    fn detects(&self, doc: &Doc) -> bool {
        is(doc, Format::PytestBenchmark)
    }
    fn read(&self, doc: &Doc, origin: &Path, _sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
        pytest_bench::read(one(doc, origin, Format::PytestBenchmark)?, origin)
    }
    fn live(&self, run: &LiveRun<'_>) -> Live {
        Live::flags(vec![format!("--benchmark-json={}", path(run))])
    }
    fn writes(&self) -> &'static str {
        "`--benchmark-json=PATH`"
    }
    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metric(pytest_bench::TIME).map(|m| m.name.as_str())
    }
    fn summary_note(&self) -> Option<&'static str> {
        Some(PYTEST_SUMMARY)
    }
}
