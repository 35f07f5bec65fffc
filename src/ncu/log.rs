//! TEMPORARY shim until the parser branch lands.
use crate::profile::FailureKind;
#[derive(Debug, Default, Clone)]
pub struct LogScan {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    pub no_kernels: bool,
    pub unavailable_metrics: Vec<String>,
}
pub fn scan(text: &str) -> LogScan {
    let mut s = LogScan::default();
    for l in text.lines() {
        if l.starts_with("==ERROR==") {
            s.errors.push(l.to_owned());
        } else if l.starts_with("==WARNING== No kernels were profiled") {
            s.no_kernels = true;
        }
    }
    s
}
pub fn classify(scan: &LogScan) -> Option<(FailureKind, String, String)> {
    scan.errors
        .first()
        .map(|e| (FailureKind::ProfilerError, e.clone(), String::new()))
}
