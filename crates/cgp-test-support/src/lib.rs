//! What cgp-gate's tests share (issue 49): every test crate (the root's integration tests and
//! each crate's `tests/`) reaches the repository, its fixtures, the stand-ins and the binary
//! through here, a dev-dependency, so none links the crates it does not test.
//!
//! The binary itself is the root package's: its path is known at compile time only to that
//! package's tests (`CARGO_BIN_EXE_cgp-gate`), so they pass it to [`command`] and
//! [`command_std`] (tests/support/mod.rs), which add what every run of it needs.

use std::io::Write;

pub mod pg;

/// Whether this is a CI run (`CI=true`, as GitHub Actions sets it), where a missing tool fails.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Record that `test` could not run because of `why`: under CI it fails; elsewhere it prints one
/// `SKIPPED: <test> (<why>)` line that `.ci/test` counts and takes off the passed count.
///
/// Written to the process's stderr directly, not through `eprintln!`, which the test harness
/// captures and shows only for failing tests.
pub fn skip(test: &str, why: &str) {
    assert!(
        !in_ci(),
        "{test} cannot run under CI: {why}; .ci/setup must install what it needs"
    );
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "SKIPPED: {test} ({why})");
    let _ = err.flush();
}

/// The full name of test `name` of the module at `module_path` (pass `module_path!()`) in the one
/// integration-test binary (tests/integration.rs): `gpu_clocks::child_locks_and_waits`, for a
/// test that runs its own binary again as a child with `--exact`.
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

/// The repository root (where the root's tests run, and where their relative paths start).
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/cgp-test-support sits two folders below the repository root")
        .to_path_buf()
}

/// A file or folder of `tests/fixtures/` (real tools' outputs, with their provenance).
pub fn fixture(rel: &str) -> std::path::PathBuf {
    root().join("tests/fixtures").join(rel)
}

/// The variables of the GitHub Actions runner the tests may run on, which no run of the binary
/// inherits (a test that wants them sets them).
const RUNNER_VARIABLES: [&str; 4] = [
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_OUTPUT",
    "GITHUB_SHA",
];

/// The binary at `path` (`env!("CARGO_BIN_EXE_cgp-gate")`), run from the repository root,
/// without the runner's GitHub variables.
pub fn command(path: &str) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(path);
    c.current_dir(root());
    for v in RUNNER_VARIABLES {
        c.env_remove(v);
    }
    c
}

/// The SYNTHETIC stand-in GPU (tests/standins/gpu.json), for `CGP_GATE_STAND_IN_GPU`: a live run
/// on this machine passes its preflight with it and reaches the program and the profiler. Every
/// test of a live path sets it and proves it got past the preflight (issue 44, item 8).
pub fn stand_in_gpu() -> std::path::PathBuf {
    root().join("tests/standins/gpu.json")
}

/// Whether process `pid` has ended (gone, or a zombie waiting for its parent), waiting up to 5 s.
pub fn gone(pid: i32) -> bool {
    for _ in 0..250 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// The pid a stand-in wrote to `path` (a program it started), waiting up to 20 s for it.
pub fn pid_in(path: &std::path::Path) -> i32 {
    for _ in 0..1000 {
        if let Some(p) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            return p;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{} was never written: the program never started", path.display());
}

/// The variable [`stand_in_gpu`] goes in.
pub const STAND_IN_GPU: &str = "CGP_GATE_STAND_IN_GPU";

/// [`command`] as a `std::process::Command`, for a test that spawns the binary and signals or
/// waits on it.
pub fn command_std(path: &str) -> std::process::Command {
    let mut c = std::process::Command::new(path);
    c.current_dir(root());
    for v in RUNNER_VARIABLES {
        c.env_remove(v);
    }
    c
}

/// Copy the folder `from` to `to`, recursively (a link to a folder is copied as the folder).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// Debian's Chromium, which `.ci/setup` installs (the HTML report and the history site are
/// rendered by it headless).
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Chromium, or `None` (after a `SKIPPED` line; a failure under CI) when it is missing.
pub fn chromium(test: &str) -> Option<&'static str> {
    if std::path::Path::new(CHROMIUM).exists() {
        return Some(CHROMIUM);
    }
    skip(
        test,
        &format!("{CHROMIUM} is not installed; run `bash .ci/setup` (Debian's chromium package)"),
    );
    None
}

/// Run headless Chromium on a file; returns (stdout, console lines from stderr).
pub fn run_chromium(bin: &str, page: &std::path::Path, extra: &[&str]) -> (String, Vec<String>) {
    run_chromium_url(bin, &format!("file://{}", page.display()), extra)
}

/// [`run_chromium`] on a URL (`file:///.../index.html#all`).
pub fn run_chromium_url(bin: &str, url: &str, extra: &[&str]) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Page console messages are logged as `...:INFO:CONSOLE:<line>] "<message>"`, whatever their
    // level; browser-internal noise (D-Bus, GPU probing) is not.
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_owned)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// A wiremock HTTP server (a stand-in GitHub or GitLab API) on its own runtime, so the code under
/// test, which makes its own runtime, runs outside any async context, as it does in the CLI.
pub struct MockApi {
    rt: tokio::runtime::Runtime,
    server: wiremock::MockServer,
}

impl MockApi {
    pub fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(wiremock::MockServer::start());
        Self { rt, server }
    }

    pub fn mount(&self, mock: wiremock::Mock) {
        self.rt.block_on(mock.mount(&self.server));
    }

    /// `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    pub fn requests(&self) -> Vec<wiremock::Request> {
        self.rt.block_on(self.server.received_requests()).unwrap()
    }

    /// Every mounted expectation was met.
    pub fn verify(&self) {
        self.rt.block_on(self.server.verify());
    }

    pub fn reset(&self) {
        self.rt.block_on(self.server.reset());
    }
}

/// GitHub-flavoured Markdown, every extension on: how the reports' Markdown is read back.
pub fn gfm() -> pulldown_cmark::Options {
    use pulldown_cmark::Options;
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_MATH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM
        | Options::ENABLE_SUPERSCRIPT
        | Options::ENABLE_SUBSCRIPT
        | Options::ENABLE_WIKILINKS
}

/// The rows of every table in `md` as cell texts (names and metrics are code spans: their text
/// as written); any other markup inside a cell fails the test.
pub fn table_cells(md: &str) -> Vec<Vec<String>> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut cell: Option<String> = None;
    for ev in Parser::new_ext(md, gfm()) {
        match ev {
            Event::Start(Tag::TableRow | Tag::TableHead) => row = Vec::new(),
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => rows.push(std::mem::take(&mut row)),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => row.push(cell.take().unwrap_or_default()),
            Event::Text(t) | Event::Code(t) if cell.is_some() => {
                cell.get_or_insert_with(String::new).push_str(&t);
            }
            Event::Start(Tag::Table(_)) | Event::End(TagEnd::Table) => {}
            other if cell.is_some() => panic!("markup inside a cell: {other:?}"),
            _ => {}
        }
    }
    rows
}
