//! Running a child process with a timeout that ends its whole process group.
//!
//! ncu starts the application, which may start more processes; killing ncu alone would leave the
//! benchmark running on the GPU. The child is made the leader of a new process group and, on
//! timeout, the group gets SIGTERM, then SIGKILL after a grace period.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// What to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    /// Extra environment on top of the inherited one (whose credentials are removed:
    /// `foundation::secrets::is_credential`); set here, a variable is passed as given.
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    /// Files that receive the child's stdout and stderr (no pipes: no deadlock on large output).
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// How it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Exit code when the process exited normally.
    pub code: Option<i32>,
    /// Signal that ended it, when it did not exit normally.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub wall: Duration,
    /// Descendants that had left the child's process group (`setsid`), so that ending the group
    /// did not end them; each was killed on its own: `(pid, command name)`.
    pub escaped: Vec<(i32, String)>,
}

/// Set once cgp-gate is being interrupted: a child that ends after this was killed by us, not
/// failed, and the signal handler is about to end the process with the signal's code.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Process groups of children running now, so a signal handler can end them.
static ACTIVE_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// End every child process group still running (SIGTERM, a short grace, then SIGKILL). Called
/// when cgp-gate itself is interrupted: ncu and the benchmark must not outlive it.
pub fn kill_active_groups() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    let groups: Vec<i32> = ACTIVE_GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    for g in &groups {
        let _ = killpg(Pid::from_raw(*g), Signal::SIGTERM);
    }
    if !groups.is_empty() {
        std::thread::sleep(Duration::from_millis(500));
    }
    for g in &groups {
        let _ = killpg(Pid::from_raw(*g), Signal::SIGKILL);
    }
}

fn track(pgid: i32, active: bool) {
    if let Ok(mut g) = ACTIVE_GROUPS.lock() {
        g.retain(|x| *x != pgid);
        if active {
            g.push(pgid);
        }
    }
}

/// Grace period between SIGTERM and SIGKILL on timeout.
const GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(20);

/// Run to completion or timeout. The locale is forced to C so numbers print without grouping
/// surprises.
///
/// # Errors
/// The `io::Error` of spawning (`NotFound` when the program does not exist) or waiting.
pub fn run(inv: &Invocation) -> io::Result<Outcome> {
    #[cfg(test)]
    let _shared = ALONE.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    run_alone(inv)
}

/// The tests whose grandchildren leave the session take this for writing, every other run of
/// this crate's tests for reading: an orphan re-parented to the test process is named by the run
/// that is going on, and the test harness runs tests on several threads (a `setsid` grandchild
/// was ended and named by another test's run under load, twice). cgp-gate's own runs are
/// sequential ([`Tree::is_orphan_of_run`]).
#[cfg(test)]
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// [`run`], without the tests' lock.
fn run_alone(inv: &Invocation) -> io::Result<Outcome> {
    let stdout = File::create(&inv.stdout)?;
    let stderr = File::create(&inv.stderr)?;
    let mut cmd = Command::new(&inv.program);
    // Credentials of the CI job never reach the profiler or the program under test (built from a
    // pull request); a variable the spec passes on purpose (`env_passthrough`) comes back
    // through `inv.env`, which the caller fills (`profile::program_env`).
    for name in std::env::vars_os().map(|(n, _)| n) {
        if name
            .to_str()
            .is_none_or(crate::foundation::secrets::is_credential)
        {
            cmd.env_remove(name);
        }
    }
    cmd.args(&inv.args)
        .envs(&inv.env)
        .env("LC_ALL", "C")
        .env("LANG", "C")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    if let Some(d) = &inv.cwd {
        cmd.current_dir(d);
    }
    // If cgp-gate dies without a chance to clean up (SIGKILL, a crash), the kernel sends SIGKILL
    // to ncu: no profiler is left holding the GPU's counters.
    #[cfg(target_os = "linux")]
    {
        let parent = nix::unistd::getpid();
        #[expect(
            unsafe_code,
            reason = "pre_exec runs between fork and exec; prctl and getppid are async-signal-safe and the closure allocates nothing"
        )]
        unsafe {
            cmd.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)?;
                // The parent may have died before the line above: then nothing would ever come.
                if nix::unistd::getppid() != parent {
                    return Err(io::Error::other("cgp-gate exited while starting the profiler"));
                }
                Ok(())
            });
        }
    }
    // Descendants orphaned while the run lasts (a `setsid` grandchild whose parent exits at
    // once, before any scan saw it) are re-parented to cgp-gate, not to init, so the tree below
    // still finds them (issue 44, item 7).
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let raw_pgid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let pgid = Pid::from_raw(raw_pgid);
    track(raw_pgid, true);
    let mut tree = Tree::new(raw_pgid);
    let result = wait(&mut child, pgid, start, inv.timeout, &mut tree);
    track(raw_pgid, false);
    let result = result.map(|mut o| {
        // The orphans the leader's exit re-parented to us are visible now.
        tree.scan();
        o.escaped = tree.kill_escaped();
        tree.reap_orphans();
        o
    });
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        // Do not report the killed child as a failure: the signal handler ends the process
        // (after resetting clocks) with 128 + signal.
        loop {
            std::thread::park();
        }
    }
    result
}

fn wait(
    child: &mut std::process::Child,
    pgid: Pid,
    start: Instant,
    timeout: Duration,
    tree: &mut Tree,
) -> io::Result<Outcome> {
    // A timeout too large to represent means no deadline.
    let deadline = start.checked_add(timeout);
    let mut last_scan: Option<Instant> = None;
    loop {
        if last_scan.is_none_or(|t| t.elapsed() >= SCAN) {
            tree.scan();
            last_scan = Some(Instant::now());
        }
        if let Some(status) = child.try_wait()? {
            // The leader is gone; end anything it left behind in its group.
            let _ = killpg(pgid, Signal::SIGKILL);
            return Ok(Outcome {
                code: status.code(),
                signal: status.signal(),
                timed_out: false,
                wall: start.elapsed(),
                escaped: Vec::new(),
            });
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = killpg(pgid, Signal::SIGTERM);
            let grace_end = Instant::now() + GRACE;
            while Instant::now() < grace_end {
                if child.try_wait()?.is_some() {
                    break;
                }
                std::thread::sleep(POLL);
            }
            let _ = killpg(pgid, Signal::SIGKILL);
            let status = child.wait()?;
            return Ok(Outcome {
                code: status.code(),
                signal: status.signal(),
                timed_out: true,
                wall: start.elapsed(),
                escaped: Vec::new(),
            });
        }
        std::thread::sleep(POLL);
    }
}

/// How often the child's process tree is looked at while it runs.
const SCAN: Duration = Duration::from_millis(100);

/// The descendants of a child, as seen in `/proc` while it ran: a process that leaves the child's
/// process group (`setsid`) is not ended by `killpg`, and must be found and ended on its own.
struct Tree {
    root: i32,
    /// The root's start time (clock ticks since boot): an orphan re-parented to cgp-gate is of
    /// this run only if it started after it.
    root_start: u64,
    /// pid -> (start time in clock ticks since boot, process group, command name). The start
    /// time tells a process from a later one that got the same pid.
    seen: BTreeMap<i32, (u64, i32, String)>,
}

/// One `/proc/PID/stat`, zombies included: parent, group, session, start time (clock ticks since
/// boot), whether it is a zombie, and the command name.
fn proc_family(pid: i32) -> Option<Family> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
    // stime cutime cstime priority nice threads itrealvalue starttime ...`; comm may hold spaces
    // and parentheses, so fields are counted from its closing parenthesis.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    Some(Family {
        ppid: rest.get(1)?.parse().ok()?,
        pgid: rest.get(2)?.parse().ok()?,
        sid: rest.get(3)?.parse().ok()?,
        start: rest.get(19)?.parse().ok()?,
        zombie: rest.first() == Some(&"Z"),
        comm: text.get(open + 1..close)?.to_owned(),
    })
}

#[derive(Debug, Clone)]
struct Family {
    ppid: i32,
    pgid: i32,
    sid: i32,
    start: u64,
    zombie: bool,
    comm: String,
}

/// A living process's `/proc/PID/stat` ([`proc_family`] without zombies).
fn proc_stat(pid: i32) -> Option<Family> {
    proc_family(pid).filter(|f| !f.zombie)
}

impl Tree {
    fn new(root: i32) -> Self {
        Self {
            root,
            root_start: proc_family(root).map_or(u64::MAX, |f| f.start),
            seen: BTreeMap::new(),
        }
    }

    /// Whether `pid`, a child of cgp-gate itself, is an orphan of this run, started after the
    /// root: one still in the root's group, or one that left cgp-gate's session (`setsid`).
    /// cgp-gate's own children (the root, another run's leader) lead a group of their own in
    /// cgp-gate's session, so they are neither. Runs are sequential; were two concurrent, an
    /// orphan that left its session could be named by the other run (it is ended either way).
    fn is_orphan_of_run(&self, pid: i32, f: &Family) -> bool {
        let me = nix::unistd::getpid();
        let my_sid = nix::unistd::getsid(None).map_or(-1, Pid::as_raw);
        f.ppid == me.as_raw()
            && pid != self.root
            && f.start >= self.root_start
            && (f.pgid == self.root || f.sid != my_sid)
    }

    /// Wait for the orphans of this run that died (killed here or by `killpg`) and are zombies
    /// of cgp-gate now (as subreaper). Only those pids: another thread's child is never reaped.
    fn reap_orphans(&self) {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        for pid in dir
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        {
            let Some(f) = proc_family(pid) else {
                continue;
            };
            if self.is_orphan_of_run(pid, &f) {
                let until = Instant::now() + Duration::from_secs(1);
                while Instant::now() < until {
                    match nix::sys::wait::waitpid(
                        Pid::from_raw(pid),
                        Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                    ) {
                        Ok(nix::sys::wait::WaitStatus::StillAlive) => std::thread::sleep(POLL),
                        _ => break,
                    }
                }
            }
        }
    }

    /// Add every living descendant of the root (through the ones seen before, whose children may
    /// have been re-parented since).
    fn scan(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        let procs: Vec<(i32, Family)> = dir
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| Some((pid, proc_stat(pid)?)))
            .collect();
        let mut known: std::collections::BTreeSet<i32> = self.seen.keys().copied().collect();
        known.insert(self.root);
        loop {
            let mut added = false;
            for (pid, f) in &procs {
                let orphan = self.is_orphan_of_run(*pid, f);
                if (known.contains(&f.ppid) || orphan) && !known.contains(pid) {
                    known.insert(*pid);
                    self.seen.insert(*pid, (f.start, f.pgid, f.comm.clone()));
                    added = true;
                }
            }
            if !added {
                break;
            }
        }
    }

    /// Kill the descendants still alive outside the root's process group; returns them.
    fn kill_escaped(&mut self) -> Vec<(i32, String)> {
        let mut out = Vec::new();
        for (pid, (start, _, _)) in &self.seen {
            // The name now: the one first seen may be that of a program it exec'd since.
            let Some(Family {
                pgid: pgid_now,
                start: start_now,
                comm,
                ..
            }) = proc_stat(*pid)
            else {
                continue;
            };
            if start_now != *start || pgid_now == self.root {
                continue;
            }
            let _ = nix::sys::signal::kill(Pid::from_raw(*pid), Signal::SIGKILL);
            out.push((*pid, comm));
        }
        out
    }
}

/// The end of what a finished run wrote: the last 15 lines of its stderr, then the last 5 of its
/// stdout, the empty ones left out (for a failure's message).
pub fn output_tail(inv: &Invocation) -> String {
    let text = [tail(&inv.stderr, 15), tail(&inv.stdout, 5)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    // The program under test wrote this: secret-looking values never reach a report (issue 44).
    crate::foundation::redact::secrets(&text)
}

/// The last `max_lines` lines of a text file, for error messages (empty when unreadable). Only
/// the file's last [`crate::foundation::fsutil::limits::OUTPUT_TAIL`] bytes are read, whatever its size.
pub fn tail(path: &Path, max_lines: usize) -> String {
    let bytes = crate::foundation::fsutil::read_tail(path, crate::foundation::fsutil::limits::OUTPUT_TAIL);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(max_lines)..].join("\n")
}

/// Find an executable: an explicit path, else a search of `PATH` (the `which` crate: a file with
/// an execute bit). The one PATH lookup of the crate (`sass` and `nsys` use it too).
pub fn find_executable(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 {
        return is_executable(p).then(|| p.to_path_buf());
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    which::which_in(name, Some(path_var?), cwd).ok()
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(dir: &Path, program: &str, args: &[&str], timeout: Duration) -> Invocation {
        Invocation {
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            cwd: None,
            env: BTreeMap::new(),
            timeout,
            stdout: dir.join("out"),
            stderr: dir.join("err"),
        }
    }

    #[test]
    fn exit_code_and_output_are_kept() {
        let d = tempfile::tempdir().unwrap();
        let o = run(&inv(
            d.path(),
            "sh",
            &["-c", "echo $LC_ALL; echo oops >&2; exit 7"],
            Duration::from_secs(20),
        ))
        .unwrap();
        assert_eq!(o.code, Some(7));
        assert!(!o.timed_out);
        assert_eq!(std::fs::read_to_string(d.path().join("out")).unwrap(), "C\n");
        assert_eq!(tail(&d.path().join("err"), 5), "oops");
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        // The shell starts a grandchild and waits; both must be gone after the timeout.
        let script = format!("sleep 600 & echo $! > {}; wait", pidfile.display());
        let o = run(&inv(d.path(), "sh", &["-c", &script], Duration::from_millis(300))).unwrap();
        assert!(o.timed_out);
        let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        assert!(gone(pid), "grandchild {pid} survived the timeout");
    }

    /// Whether process `pid` is gone within 2 s (a zombie counts as gone: it may linger under
    /// init briefly).
    fn gone(pid: i32) -> bool {
        for _ in 0..100 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.is_empty() || stat.contains(") Z ") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_descendant_that_leaves_the_group_is_killed_and_named() {
        let _alone = alone();
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        // `setsid` puts the grandchild in a session (and group) of its own: ending the child's
        // group does not reach it.
        let script = format!("setsid sleep 600 & echo $! > {}; wait", pidfile.display());
        let o = super::run_alone(&inv(d.path(), "sh", &["-c", &script], Duration::from_millis(500))).unwrap();
        assert!(o.timed_out);
        let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        assert_eq!(o.escaped, vec![(pid, "sleep".to_owned())], "{o:?}");
        assert!(gone(pid), "the escaped grandchild {pid} survived");
    }

    /// The tests whose grandchildren leave the session run alone: no other run of these tests
    /// goes on meanwhile ([`super::ALONE`]).
    fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
        super::ALONE
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[test]
    fn a_setsid_grandchild_of_a_program_that_exits_at_once_is_killed() {
        let _alone = alone();
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("pid");
        // The shell exits as soon as its grandchild has left the session and become `sleep` (so
        // that the group's kill at the shell's exit cannot end it first, whatever the timing):
        // no scan sees it while its parent lives; it is re-parented to us (subreaper) and found
        // then.
        let script = format!(
            "setsid sh -c 'echo $$ > {p}; exec sleep 600' & \
             until [ -s {p} ] && [ \"$(cat /proc/$(cat {p})/comm 2>/dev/null)\" = sleep ]; do :; done",
            p = pidfile.display()
        );
        let o = super::run_alone(&inv(d.path(), "sh", &["-c", &script], Duration::from_secs(30))).unwrap();
        assert!(!o.timed_out);
        let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        assert_eq!(o.escaped, vec![(pid, "sleep".to_owned())], "{o:?}");
        assert!(gone(pid), "the escaped grandchild {pid} survived");
        assert!(proc_family(pid).is_none(), "{pid} is left a zombie");
    }

    #[test]
    fn missing_program_is_not_found() {
        let d = tempfile::tempdir().unwrap();
        let e = run(&inv(d.path(), "/nonexistent/ncu", &[], Duration::from_secs(1))).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            find_executable(
                "definitely-not-a-program-cgp",
                std::env::var_os("PATH").as_deref()
            ),
            None
        );
        assert!(find_executable("sh", std::env::var_os("PATH").as_deref()).is_some());
    }
}
