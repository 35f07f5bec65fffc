//! Installing without a Rust toolchain (issue 46, "you cannot install it in CI as written"),
//! checked without publishing: the release's files made by the script the release workflow runs
//! (scripts/package-release.sh) from this build's binary, served on 127.0.0.1, and installed by
//! scripts/install.sh, by the Action (scripts/action.sh) and by the GitLab template; and one
//! repository and release named everywhere (Cargo.toml's `repository` and version).
//!
//! The packaged binary is this test build's `cgp-gate` (a debug build linked against this
//! machine's glibc, so the glibc-floor check is skipped for it with GLIBC_FLOOR=none; the floor
//! check itself is tested on it below, where it must refuse).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use crate::support::root;

mod names;

fn cargo_toml() -> String {
    std::fs::read_to_string(root().join("Cargo.toml")).unwrap()
}

/// Cargo.toml's `repository`, as OWNER/NAME.
fn repository() -> String {
    let text = cargo_toml();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("repository = \"https://github.com/"))
        .expect("Cargo.toml names its repository (https://github.com/OWNER/NAME)");
    line.trim_end_matches('"').to_owned()
}

/// The release tag of this version: `v` + Cargo.toml's version.
fn release_tag() -> String {
    let text = cargo_toml();
    let v = text
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .unwrap()
        .trim_end_matches('"');
    format!("v{v}")
}

fn target() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "aarch64-unknown-linux-gnu",
        _ => "x86_64-unknown-linux-gnu",
    }
}

fn said(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// A release folder as the workflow makes it, from this build's binary.
fn package(dir: &Path) {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let o = Command::new("bash")
            .arg(root().join("scripts/package-release.sh"))
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", said(&o));
    };
    let d = dir.to_str().unwrap();
    run(
        &["archive", env!("CARGO_BIN_EXE_cgp-gate"), target(), d],
        &[("GLIBC_FLOOR", "none")],
    );
    run(&["installer", &repository(), &release_tag(), d], &[]);
    run(&["sums", d], &[]);
}

/// A static file server on 127.0.0.1 (Python's http.server) over `dir`, logging each request's
/// path to `requests.log` beside the folder; stopped when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn start(dir: &Path) -> Self {
        let log = dir.with_extension("requests.log");
        let script = r#"
import functools, http.server, sys
log = open(sys.argv[2], "a", buffering=1)
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        log.write(self.path + " " + str(args[1] if len(args) > 1 else "") + "\n")
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=sys.argv[1]))
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(dir)
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no port from the server: {line:?}"));
        Self { child, port, log }
    }
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    /// The archive downloads so far.
    fn archive_requests(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(".tar.gz ") && !l.contains(".sha256"))
            .count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn install(script: &Path, url: &str, to: &Path, extra: &[&str]) -> Output {
    Command::new("sh")
        .arg(script)
        .arg("--to")
        .arg(to)
        .args(extra)
        .env("CGP_GATE_DOWNLOAD_URL", url)
        .output()
        .unwrap()
}

fn version_of(bin: &Path) -> String {
    let o = Command::new(bin).arg("--version").output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

#[test]
fn the_installer_installs_a_packaged_release_from_a_local_server() {
    let d = tempfile::tempdir().unwrap();
    let rel = d.path().join("release");
    package(&rel);
    let archive = format!("cgp-gate-{}.tar.gz", target());
    let sums = std::fs::read_to_string(rel.join("SHA256SUMS")).unwrap();
    assert!(
        sums.contains(&archive) && sums.contains("cgp-gate-installer.sh"),
        "{sums}"
    );
    let one = std::fs::read_to_string(rel.join(format!("{archive}.sha256"))).unwrap();
    assert!(sums.contains(one.trim()), "{one} / {sums}");
    // The installer carries this release as its defaults.
    let installer = std::fs::read_to_string(rel.join("cgp-gate-installer.sh")).unwrap();
    assert!(
        installer.contains(&format!("CGP_GATE_REPOSITORY:-{}}}", repository()))
            && installer.contains(&format!("CGP_GATE_VERSION:-{}}}", release_tag())),
        "the installer's defaults are not stamped"
    );

    let server = Server::start(&rel);
    let to = d.path().join("bin");
    let o = install(&rel.join("cgp-gate-installer.sh"), &server.url(), &to, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    let bin = to.join("cgp-gate");
    assert_eq!(
        std::fs::read(&bin).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_cgp-gate")).unwrap(),
        "the installed binary is the packaged one"
    );
    assert_eq!(version_of(&bin), format!("cgp-gate {}", &release_tag()[1..]));
    assert!(said(&o).contains("installed cgp-gate"), "{}", said(&o));
    assert_eq!(server.archive_requests(), 1);
}

#[test]
fn a_tampered_missing_or_linked_install_installs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let rel = d.path().join("release");
    package(&rel);
    let server = Server::start(&rel);
    let installer = root().join("scripts/install.sh");
    let to = d.path().join("bin");
    std::fs::create_dir(&to).unwrap();
    // An older cgp-gate is there: it stays unless a checked one replaces it.
    std::fs::write(to.join("cgp-gate"), "#!/bin/sh\necho cgp-gate old\n").unwrap();

    // One byte of the archive changed after its checksum was taken.
    let archive = rel.join(format!("cgp-gate-{}.tar.gz", target()));
    let mut bytes = std::fs::read(&archive).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&archive, &bytes).unwrap();
    let o = install(&installer, &server.url(), &to, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", said(&o));
    assert!(said(&o).contains("checksum mismatch"), "{}", said(&o));
    assert_eq!(
        std::fs::read_to_string(to.join("cgp-gate")).unwrap(),
        "#!/bin/sh\necho cgp-gate old\n"
    );

    // No such release on the server.
    let o = install(&installer, &format!("{}/nothing-here", server.url()), &to, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", said(&o));
    assert!(said(&o).contains("cannot download"), "{}", said(&o));

    // A link at the destination is not written through.
    std::fs::remove_file(to.join("cgp-gate")).unwrap();
    let theirs = d.path().join("theirs");
    std::fs::write(&theirs, "keep me").unwrap();
    std::os::unix::fs::symlink(&theirs, to.join("cgp-gate")).unwrap();
    std::fs::write(&archive, {
        // The good archive again (repackaged: the same binary gives the same bytes).
        package(&rel);
        std::fs::read(&archive).unwrap()
    })
    .unwrap();
    let o = install(&installer, &server.url(), &to, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", said(&o));
    assert!(said(&o).contains("symbolic link"), "{}", said(&o));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "keep me");

    // Usage errors are exit 2 and name the option.
    for (args, says) in [
        (&["--version", "main"][..], "--version must be a release tag"),
        (&["--colour"][..], "unknown option '--colour'"),
        (&["--repository", "nope"][..], "OWNER/NAME"),
    ] {
        let o = install(&installer, &server.url(), &to, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", said(&o));
        assert!(said(&o).contains(says), "{args:?}: {}", said(&o));
    }
}

#[test]
fn the_packaging_refuses_a_binary_above_the_glibc_floor() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new("bash")
        .arg(root().join("scripts/package-release.sh"))
        .args(["archive", env!("CARGO_BIN_EXE_cgp-gate"), target()])
        .arg(d.path())
        .output()
        .unwrap();
    // This machine's glibc is newer than 2.28 (Debian 12: 2.36), and the test build links it.
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("above the floor 2.28"), "{}", said(&o));
    // And how to package a build of this machine anyway, as the README's "Install" says.
    assert!(said(&o).contains("set GLIBC_FLOOR=none"), "{}", said(&o));
    assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
}

/// Issue 58, item 10: the installer's temporary file is its own (`mktemp` in the destination):
/// a link planted at the name it used before (`.cgp-gate.<pid>`, planted here by the shell that
/// then `exec`s the installer with that very pid) is neither written through nor changed in mode
/// nor removed; the install lands, and leaves no other file.
#[test]
fn the_installer_writes_through_no_planted_link() {
    let d = tempfile::tempdir().unwrap();
    let rel = d.path().join("release");
    package(&rel);
    let server = Server::start(&rel);
    let to = d.path().join("bin");
    std::fs::create_dir(&to).unwrap();
    let theirs = d.path().join("theirs");
    std::fs::write(&theirs, "keep me").unwrap();
    let mode =
        |p: &Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions());
    std::fs::set_permissions(&theirs, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"ln -s "$1" "$2/.cgp-gate.$$" && exec sh "$3" --to "$2""#)
        .arg("sh")
        .arg(&theirs)
        .arg(&to)
        .arg(root().join("scripts/install.sh"))
        .env("CGP_GATE_DOWNLOAD_URL", server.url())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "keep me");
    assert_eq!(mode(&theirs) & 0o777, 0o600);
    assert_eq!(
        std::fs::read(to.join("cgp-gate")).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_cgp-gate")).unwrap()
    );
    let mut left: Vec<String> = std::fs::read_dir(&to)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    // The planted link stays (the installer removes nothing it did not make), and nothing else.
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&"cgp-gate".to_owned()), "{left:?}");
    assert!(
        left.iter().any(|n| n.starts_with(".cgp-gate.")
            && std::fs::symlink_metadata(to.join(n))
                .unwrap()
                .file_type()
                .is_symlink()),
        "{left:?}"
    );
}

/// Issue 58, item 10: without HOME there is no default folder: the installer refuses (exit 2,
/// naming `--to`) instead of installing into `/.local/bin`; with `--to` it installs.
#[test]
fn the_installer_refuses_an_unset_home_without_to() {
    let d = tempfile::tempdir().unwrap();
    let rel = d.path().join("release");
    package(&rel);
    let server = Server::start(&rel);
    let had_root_local = Path::new("/.local").exists();
    let run = |to: Option<&Path>, home: Option<&str>| {
        let mut c = Command::new("sh");
        c.arg(root().join("scripts/install.sh"))
            .env_remove("HOME")
            .env_remove("CGP_GATE_INSTALL_DIR")
            .env("CGP_GATE_DOWNLOAD_URL", server.url());
        if let Some(h) = home {
            c.env("HOME", h);
        }
        if let Some(t) = to {
            c.arg("--to").arg(t);
        }
        c.output().unwrap()
    };
    for home in [None, Some("")] {
        let o = run(None, home);
        assert_eq!(o.status.code(), Some(2), "{home:?}: {}", said(&o));
        assert!(
            said(&o).contains("HOME is not set") && said(&o).contains("--to DIR"),
            "{}",
            said(&o)
        );
    }
    assert_eq!(
        Path::new("/.local").exists(),
        had_root_local,
        "something was made in /.local"
    );
    assert_eq!(server.archive_requests(), 0, "nothing was downloaded");
    let to = d.path().join("bin");
    let o = run(Some(&to), None);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert!(to.join("cgp-gate").is_file());
}

/// A server on 127.0.0.1 that answers every request with a large body, one byte a second (a
/// stalled mirror); stopped when dropped.
struct Trickle(Child, u16);

impl Trickle {
    fn start() -> Self {
        let script = r#"
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "100000000")
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"x"); self.wfile.flush(); time.sleep(1)
        except OSError:
            pass
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Self(child, port)
    }
}

impl Drop for Trickle {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Issue 58, item 10: a mirror that sends a byte a second does not hang the installer: with
/// curl, and with wget where there is no curl, the download is abandoned at its time limit
/// (CGP_GATE_DOWNLOAD_TIMEOUT, 3 s here; 300 s by default) with exit 3, and nothing installed.
#[test]
fn a_stalled_mirror_ends_the_installer_at_its_time_limit() {
    let d = tempfile::tempdir().unwrap();
    let server = Trickle::start();
    // A PATH with wget and not curl: every tool the installer uses, linked into one folder.
    let wget_only = d.path().join("wget-only");
    std::fs::create_dir(&wget_only).unwrap();
    for tool in [
        "uname",
        "mktemp",
        "wget",
        "timeout",
        "sha256sum",
        "cut",
        "tar",
        "gzip",
        "rm",
        "mkdir",
        "cat",
        "chmod",
        "mv",
        "sed",
    ] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|p| p.join(tool))
            .find(|p| p.is_file());
        let Some(found) = found else {
            crate::support::skip(
                "a_stalled_mirror_ends_the_installer_at_its_time_limit",
                &format!("no {tool} on PATH"),
            );
            return;
        };
        std::os::unix::fs::symlink(found, wget_only.join(tool)).unwrap();
    }
    for (fetcher, path) in [
        ("curl", std::env::var("PATH").unwrap()),
        ("wget", wget_only.display().to_string()),
    ] {
        let to = d.path().join(format!("bin-{fetcher}"));
        let started = std::time::Instant::now();
        let o = Command::new("/bin/sh")
            .arg(root().join("scripts/install.sh"))
            .arg("--to")
            .arg(&to)
            .env("PATH", &path)
            .env("CGP_GATE_DOWNLOAD_URL", format!("http://127.0.0.1:{}", server.1))
            .env("CGP_GATE_DOWNLOAD_TIMEOUT", "3")
            .output()
            .unwrap();
        let took = started.elapsed();
        assert_eq!(o.status.code(), Some(3), "{fetcher}: {}", said(&o));
        assert!(said(&o).contains("not done within 3s"), "{fetcher}: {}", said(&o));
        assert!(
            took < std::time::Duration::from_secs(30),
            "{fetcher}: took {took:?}"
        );
        assert!(!to.join("cgp-gate").exists());
    }
}

/// PATH without any folder that holds cargo: a runner with no Rust toolchain.
fn path_without_cargo() -> String {
    std::env::var("PATH")
        .unwrap()
        .split(':')
        .filter(|p| !Path::new(p).join("cargo").exists())
        .collect::<Vec<_>>()
        .join(":")
}

/// The Action named by a release tag downloads that release's binary (SHA-256 checked) and says
/// so; with no binary in the release and no cargo on the runner it says both, exit 3.
#[test]
fn the_action_installs_its_release_binary_without_cargo() {
    let d = tempfile::tempdir().unwrap();
    let rel = d.path().join("release");
    package(&rel);
    let server = Server::start(&rel);
    let tag = release_tag();
    let action = |step: &str, url: &str, root_dir: &Path, output: &Path| {
        Command::new("bash")
            .arg(root().join("scripts/action.sh"))
            .arg(step)
            .env_clear()
            .env("PATH", path_without_cargo())
            .env("HOME", d.path())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", output)
            .env("GITHUB_ACTION_PATH", root())
            .env("ACTION_REF", &tag)
            .env("ACTION_REPOSITORY", repository())
            .env("CGP_GATE_DOWNLOAD_URL", url)
            .env("CGP_GATE_ROOT", root_dir)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .output()
            .unwrap()
    };
    let out = d.path().join("out");
    let o = action("prepare", &server.url(), d.path(), &out);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    let outputs = std::fs::read_to_string(&out).unwrap();
    assert!(
        outputs.contains(&format!("cgp-gate-Linux-X64-{tag}-")),
        "the cache is keyed on the release tag: {outputs}"
    );
    let inst = d.path().join("inst");
    let o = action("install", &server.url(), &inst, &out);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert!(
        said(&o).contains(&format!(
            "::notice title=cgp-gate action::installed the release binary of {tag} (SHA-256 checked)"
        )),
        "{}",
        said(&o)
    );
    assert!(std::fs::read_to_string(&out).unwrap().contains("release"));
    assert_eq!(
        version_of(&inst.join("bin/cgp-gate")),
        format!("cgp-gate {}", &tag[1..])
    );

    let o = action(
        "install",
        &format!("{}/no-release", server.url()),
        &d.path().join("i2"),
        &out,
    );
    assert_eq!(o.status.code(), Some(3), "{}", said(&o));
    let s = said(&o);
    assert!(s.contains(&format!("no release binary for {tag}")), "{s}");
    assert!(s.contains("cargo is not on PATH"), "{s}");
}

/// The GitLab template installs the release with the release's installer, once per version: the
/// next job takes it from the cache folder, a new CGP_GATE_VERSION downloads again.
#[test]
fn the_gitlab_template_installs_the_release_once_per_version() {
    let ci = &crate::ci_examples::yaml_docs("examples/gitlab/cgp-gate.gitlab-ci.yml")[0];
    assert_eq!(
        ci["variables"]["CGP_GATE_PIP"], "",
        "the release binary is the default"
    );
    assert_eq!(ci["variables"]["CGP_GATE_VERSION"], release_tag().as_str());
    let script: Vec<String> = ci[".cgp-gate-install"]["script"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    let script = format!("set -eu\n{}\n", script.join("\n"));
    let d = tempfile::tempdir().unwrap();
    let rel = d.path().join("release");
    package(&rel);
    let server = Server::start(&rel);
    let project = d.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let job = |version: &str| {
        let o = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .env("PATH", path_without_cargo())
            .env("CI_PROJECT_DIR", &project)
            .env("CGP_GATE_REPOSITORY", repository())
            .env("CGP_GATE_VERSION", version)
            .env("CGP_GATE_DOWNLOAD_URL", server.url())
            .env("CGP_GATE_PIP", "")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", said(&o));
        said(&o)
    };
    let tag = release_tag();
    let s = job(&tag);
    assert!(s.contains(&format!("cgp-gate {}", &tag[1..])), "{s}");
    assert_eq!(server.archive_requests(), 1);
    let s = job(&tag);
    assert!(s.contains("from the cache"), "{s}");
    assert_eq!(server.archive_requests(), 1, "the second job downloads nothing");
    // Another version (the same files are served for it here): a new download.
    job("v99.0.0");
    assert_eq!(server.archive_requests(), 2);
}

/// The installer is POSIX sh (it runs as `sh cgp-gate-installer.sh` on any runner image), the packaging and
/// the Action's script are bash; shellcheck finds nothing in them.
#[test]
fn the_release_scripts_pass_shellcheck() {
    if Command::new("shellcheck").arg("--version").output().is_err() {
        crate::support::skip(
            "install::the_release_scripts_pass_shellcheck",
            "shellcheck is not installed (Debian's shellcheck package)",
        );
        return;
    }
    for (shell, script) in [
        ("sh", "scripts/install.sh"),
        ("bash", "scripts/package-release.sh"),
        ("bash", "scripts/action.sh"),
    ] {
        let o = Command::new("shellcheck")
            .args(["-s", shell, "-S", "style"])
            .arg(root().join(script))
            .output()
            .unwrap();
        assert!(o.status.success(), "{script}: {}", said(&o));
    }
}
