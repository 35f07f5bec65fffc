//! Test helpers of the readers of the second batch of formats: the shared real files of
//! `../shared/fixtures/harness2/` (PROVENANCE.md and SCHEMAS.md there), beside the checkout.

use std::path::{Path, PathBuf};

use super::registry::{Doc, parse};
use super::{HarnessFile, read};

/// The folder of one format's shared real files; `None` (a skip) when the shared fixtures are
/// not beside the checkout, which fails under CI.
pub(crate) fn shared2(format_dir: &str) -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = ["../shared/fixtures/harness2", "../../shared/fixtures/harness2"]
        .iter()
        .map(|p| repo.join(p).join(format_dir))
        .find(|d| d.is_dir());
    if found.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v.is_empty() || v == "false"),
            "no ../shared/fixtures/harness2 under CI"
        );
        eprintln!(
            "SKIPPED: harness readers' real files (no ../shared/fixtures/harness2/{format_dir} beside the checkout)"
        );
    }
    found
}

/// The files of `dir` whose names contain `part`, sorted.
pub(crate) fn files(dir: &Path, part: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(part))
        .collect();
    v.sort();
    v
}

/// Read `bytes` as a harness file (any format), panicking with the error.
pub(crate) fn read_ok(bytes: &[u8], origin: &Path) -> HarnessFile {
    read(bytes, origin, &super::no_sidecars)
        .unwrap_or_else(|e| panic!("{}: {e} ({})", origin.display(), e.help))
}

/// Read `bytes`, expecting an error; its text with the help.
pub(crate) fn read_err(bytes: &[u8], origin: &Path) -> String {
    match read(bytes, origin, &super::no_sidecars) {
        Ok(f) => panic!("{} read: {:?}", origin.display(), f.entries.first()),
        Err(e) => format!("{e}\nhelp: {}", e.help),
    }
}

/// The document of `bytes`.
pub(crate) fn doc(bytes: &[u8]) -> Doc {
    parse(bytes, Path::new("t.json")).unwrap()
}

/// `a` and `b` equal to 1e-12 of their size.
pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}
