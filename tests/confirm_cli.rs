//! `cgp-gate check --base REV` end to end on this machine (docs/confirm.md), live: a scratch git
//! repository whose benchmark script runs the SYNTHETIC stand-in harness program
//! (tests/standins/harness.py, real Google Benchmark JSON, `profiler: gbench`) with times that
//! depend on the commit (its build copies the commit's `slow.txt` to `built.txt`) and on the CI
//! job (`CGP_STANDIN_JOB`, a factor every process of one cgp-gate run shares, base and head
//! alike). The stored baseline is measured at the base commit in another job. The script logs
//! the tree each process ran in (the run log), the build logs where it ran (the build log).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::root;

pub(crate) use crate::support::git;

/// The build of every commit unless a test says otherwise: log where it ran, then copy the
/// commit's slowdown where the benchmark reads it.
pub(crate) const BUILD: &str = "echo \"$(pwd)\" >> \"${BUILDLOG:-/dev/null}\"\ncp slow.txt built.txt\n";

/// A scratch project: the repository (`repo/`: a base commit and a head commit), the stored
/// baselines outside it, the logs.
pub(crate) struct Project {
    pub dir: tempfile::TempDir,
    pub base: String,
    pub head: String,
}

impl Project {
    /// Base commit: `slow.txt` = `base_slow`, built by `base_build`; head commit: `head_slow`,
    /// built by [`BUILD`]. The head is built in the work tree; the baseline is stored from the
    /// base's build in a job of factor 1.0.
    pub(crate) fn new(base_slow: &str, head_slow: &str, base_build: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        let standin = root().join("tests/standins/harness.py");
        std::fs::write(
            repo.join("bench.sh"),
            format!(
                "#!/bin/sh\necho \"$(pwd)\" >> \"${{RUNLOG:-/dev/null}}\"\n[ -f fail.txt ] && exit 7\nCGP_STANDIN_SLOWDOWN=$(cat built.txt) exec python3 {:?} \"$@\"\n",
                standin.display().to_string()
            ),
        )
        .unwrap();
        std::fs::write(
            repo.join("cgp-gate.yaml"),
            "version: 1\nsettings:\n  build: sh build.sh\ntargets:\n  - name: reduce\n    profiler: gbench\n    command: [sh, bench.sh]\n    repetitions: 3\n    max_repetitions: 6\n    baseline_repetitions: 10\n    metrics:\n      real_time: \"3%\"\n",
        )
        .unwrap();
        std::fs::write(repo.join(".gitignore"), "built.txt\n").unwrap();
        std::fs::write(repo.join("slow.txt"), format!("{base_slow}\n")).unwrap();
        std::fs::write(repo.join("build.sh"), base_build).unwrap();
        std::fs::write(repo.join("kernel.cu"), "// base\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "base"]);
        let base = git(&repo, &["rev-parse", "HEAD"]);
        // The stored baseline: the base's build, measured in another job.
        std::fs::write(repo.join("built.txt"), format!("{base_slow}\n")).unwrap();
        let p = Self {
            dir,
            base,
            head: String::new(),
        };
        let out = p.cmd(&["baseline", "update"], "1.0").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::write(repo.join("slow.txt"), format!("{head_slow}\n")).unwrap();
        std::fs::write(repo.join("build.sh"), BUILD).unwrap();
        std::fs::write(repo.join("kernel.cu"), "// head\n").unwrap();
        git(&repo, &["commit", "-q", "-am", "head"]);
        let head = git(&repo, &["rev-parse", "HEAD"]);
        std::fs::write(repo.join("built.txt"), format!("{head_slow}\n")).unwrap();
        Self { head, ..p }
    }

    pub(crate) fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// cgp-gate in the repository, in a CI job whose offset is `job`, with the logs and the
    /// stored baselines outside the repository (not for `bisect`), and its own temporary folder.
    pub(crate) fn cmd_std(&self, args: &[&str], job: &str) -> std::process::Command {
        let tmp = self.path("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let mut c = crate::support::bin_std();
        c.current_dir(self.repo())
            .env("CGP_STANDIN_JOB", job)
            .env("RUNLOG", self.path("run.log"))
            .env("BUILDLOG", self.path("build.log"))
            .env("TMPDIR", &tmp)
            .args(args);
        if args.first() != Some(&"bisect") {
            c.arg("--baselines").arg(self.path("baselines"));
        }
        c
    }

    /// [`Self::cmd_std`] for `output()` with assert_cmd.
    pub(crate) fn cmd(&self, args: &[&str], job: &str) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.cmd_std(args, job))
    }

    /// `check --base <base>` with every report; (exit code, stdout and stderr, results).
    pub(crate) fn check(&self, extra: &[&str], job: &str) -> (i32, String, Value) {
        let mut args = vec!["check", "--base", self.base.as_str()];
        args.extend(extra);
        let out = self
            .cmd(&args, job)
            .arg("--json")
            .arg(self.path("r.json"))
            .arg("--markdown")
            .arg(self.path("r.md"))
            .arg("--html")
            .arg(self.path("r.html"))
            .arg("--junit")
            .arg(self.path("r.xml"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v = serde_json::from_slice(&std::fs::read(self.path("r.json")).unwrap_or_default())
            .unwrap_or(Value::Null);
        (out.status.code().unwrap_or(-1), text, v)
    }

    /// The trees the benchmark ran in, one line per process.
    pub(crate) fn runs(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("run.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The user's repository is as it was: a clean work tree on `main` at the head commit, no
    /// worktree left, nothing left in the temporary folder.
    pub(crate) fn untouched(&self, text: &str) {
        let repo = self.repo();
        assert_eq!(git(&repo, &["status", "--porcelain"]), "", "{text}");
        assert_eq!(git(&repo, &["rev-parse", "HEAD"]), self.head, "{text}");
        assert_eq!(git(&repo, &["branch", "--show-current"]), "main", "{text}");
        assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1, "{text}");
        let left: Vec<_> = std::fs::read_dir(self.path("tmp"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "left in the temporary folder: {left:?}\n{text}");
    }
}

/// Every report names the base commit; `words` are in each.
fn every_report_says(p: &Project, text: &str, words: &[&str]) {
    let md = std::fs::read_to_string(p.path("r.md")).unwrap();
    let html = std::fs::read_to_string(p.path("r.html")).unwrap();
    let xml = std::fs::read_to_string(p.path("r.xml")).unwrap();
    for (name, body) in [
        ("console", text),
        ("markdown", &md),
        ("html", &html),
        ("junit", &xml),
    ] {
        assert!(
            body.contains(&p.base),
            "{name} does not name the base commit:\n{body}"
        );
        for w in words {
            assert!(body.contains(w), "{name} does not say `{w}`:\n{body}");
        }
    }
}

/// The body of the sticky pull-request comment `report --github-comment` posts of the run's
/// results (to a stand-in GitHub API).
fn sticky_comment(p: &Project) -> String {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let gh = crate::support::MockApi::start();
    let list = "/repos/acme/kernels/issues/42/comments";
    gh.mount(
        Mock::given(method("GET"))
            .and(path(list))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([]))),
    );
    gh.mount(Mock::given(method("POST")).and(path(list)).respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({
        "id": 7, "node_id": "IC_7", "url": format!("{}{list}/7", gh.uri()), "html_url": "https://github.com/acme/kernels/pull/42#issuecomment-7",
        "body": "", "created_at": "2026-03-01T12:00:00Z", "updated_at": "2026-03-01T12:00:00Z"
    }))));
    let out = crate::support::bin()
        .args(["report", "--from"])
        .arg(p.path("r.json"))
        .args(["--github-comment", "--repo", "acme/kernels", "--pr", "42"])
        .env("GITHUB_API_URL", gh.uri())
        .env("GITHUB_TOKEN", "ghs_commenttoken0000000000000")
        .output()
        .unwrap();
    let posted = gh.requests().into_iter().find(|r| r.method.as_str() == "POST");
    let posted =
        posted.unwrap_or_else(|| panic!("no comment posted: {}", String::from_utf8_lossy(&out.stderr)));
    let body: Value = serde_json::from_slice(&posted.body).unwrap();
    body["body"].as_str().unwrap().to_owned()
}

#[test]
fn a_slowdown_the_stored_baseline_leaves_in_doubt_is_confirmed_against_the_base_commit() {
    // +8 % at the head; this job runs 1 % fast, so against the baseline of another job the
    // screen sees about +7 %: doubtful (never a pass), and sent on.
    let p = Project::new("1.0", "1.08", BUILD);
    let (code, text, v) = p.check(&[], "0.99");
    assert_eq!(code, 1, "{text}");
    p.untouched(&text);
    let c = &v["confirmation"];
    assert_eq!(c["base_commit"], p.base.as_str(), "{c}");
    assert_eq!(c["status"], "ran", "{c}");
    assert_eq!(c["mode"], "doubtful", "{c}");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    for r in rows {
        let rc = &r["confirmation"];
        assert_eq!(rc["status"], "confirmed", "{r}");
        assert_eq!(rc["base_commit"], p.base.as_str(), "{r}");
        // One number per row: the row's change is the paired one, which decided it.
        assert_eq!(r["verdict"], "regression", "{r}");
        assert_eq!(rc["verdict"], r["verdict"], "{r}");
        assert_eq!(rc["change"], r["change"], "{r}");
        assert_eq!(rc["interval"], r["change_ci"], "{r}");
        assert_eq!(r["method"], "paired-t", "{r}");
        let change = r["change"].as_f64().unwrap();
        assert!((0.05..0.11).contains(&change), "{change}: {r}");
        let pairs = rc["pairs"].as_u64().unwrap();
        // The paired plan of 3 -> 6 processes: 3 pairs, then up to 5.
        assert!((3..=5).contains(&pairs), "{r}");
        // The screen's estimate, against the stored baseline, as context.
        assert_ne!(rc["screen"]["verdict"], "pass", "{r}");
        assert!(rc["screen"]["change"].as_f64().is_some(), "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with(&format!("confirmed against base {}", &p.base[..12])),
            "{r}"
        );
    }
    every_report_says(&p, &text, &["paired"]);
    let comment = sticky_comment(&p);
    assert!(
        comment.contains(&format!("Confirmed against base {}", p.base)),
        "{comment}"
    );
    assert!(
        comment.matches("over ").count() >= 2 && comment.contains("the stored baseline said"),
        "{comment}"
    );
    // The base was built once, in its own worktree (not the user's tree), and its processes
    // ran there: as many as the head's paired ones.
    let built = std::fs::read_to_string(p.path("build.log")).unwrap();
    assert_eq!(built.lines().count(), 1, "{built}");
    let tree = built.trim();
    assert_ne!(Path::new(tree), p.repo(), "{built}");
    let runs = p.runs();
    let base_runs = runs.iter().filter(|l| l.as_str() == tree).count();
    let pairs = rows[0]["confirmation"]["pairs"].as_u64().unwrap();
    assert_eq!(base_runs as u64, pairs, "{runs:?}");
    assert_eq!(c["processes"].as_u64().unwrap(), 2 * pairs, "{c}");
    assert!(!Path::new(tree).exists(), "the worktree {tree} is still there");
}

#[test]
fn with_nothing_doubtful_no_worktree_no_build_and_no_base_process() {
    // The head's code is the base's: every row passes against the stored baseline.
    let p = Project::new("1.0", "1.0", BUILD);
    let (code, text, v) = p.check(&[], "1.0");
    assert_eq!(code, 0, "{text}");
    p.untouched(&text);
    assert_eq!(v["confirmation"]["status"], "not-needed", "{v}");
    assert!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["verdict"] == "pass" && r.get("confirmation").is_none()),
        "{v}"
    );
    // From the program's own run log: every process ran in the user's tree, none in a base
    // tree; and the build never ran.
    let runs = p.runs();
    assert!(!runs.is_empty());
    let repo = p.repo().to_string_lossy().into_owned();
    assert!(runs.iter().all(|l| *l == repo), "{runs:?}");
    assert!(!p.path("build.log").exists(), "the base was built: {text}");
    assert!(text.contains("no row needed it"), "{text}");
    every_report_says(&p, &text, &["no row needed it"]);
}

#[test]
fn a_base_that_does_not_build_is_exit_3_naming_the_build_and_the_commit() {
    let p = Project::new(
        "1.0",
        "1.08",
        "echo 'kernel.cu(3): error: expected a ;' >&2\nexit 1\n",
    );
    let (code, text, v) = p.check(&[], "0.99");
    assert_eq!(code, 3, "{text}");
    p.untouched(&text);
    assert!(
        text.contains("sh build.sh") && text.contains("expected a ;"),
        "{text}"
    );
    assert_eq!(v["confirmation"]["status"], "did-not-run", "{v}");
    assert_eq!(v["errors"][0]["kind"], "base-failed", "{v}");
    let msg = v["errors"][0]["message"].as_str().unwrap();
    assert!(msg.contains(&p.base) && msg.contains("`sh build.sh`"), "{msg}");
    // Never a pass for a row that needed the confirmation: each keeps what the stored baseline
    // said (doubtful), and says the confirmation did not run.
    for r in v["rows"].as_array().unwrap() {
        assert_ne!(r["verdict"], "pass", "{r}");
        assert_eq!(r["confirmation"]["status"], "not-run", "{r}");
        assert!(r["reason"].as_str().unwrap().starts_with("not confirmed"), "{r}");
    }
    every_report_says(&p, &text, &["did not run"]);
    // Nothing of the base ran.
    let repo = p.repo().to_string_lossy().into_owned();
    assert!(p.runs().iter().all(|l| *l == repo));
}

#[test]
fn a_base_whose_program_does_not_run_is_exit_3_and_no_row_passes() {
    // The base commit's benchmark fails (exit 7) in its tree.
    let p = Project::new("1.0", "1.08", "cp slow.txt built.txt\ntouch fail.txt\n");
    let (code, text, v) = p.check(&["--confirm", "all"], "1.0");
    assert_eq!(code, 3, "{text}");
    p.untouched(&text);
    let errors = v["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["kind"] == "base-failed"
            && e["message"].as_str().unwrap().contains(&p.base[..12])
            && e["message"].as_str().unwrap().contains("base tree")),
        "{v}"
    );
    for r in v["rows"].as_array().unwrap() {
        assert_ne!(r["verdict"], "pass", "{r}");
        assert_eq!(r["confirmation"]["status"], "not-run", "{r}");
    }
    assert_eq!(v["confirmation"]["status"], "did-not-run", "{v}");
}

#[test]
fn confirm_all_decides_every_row_by_the_pairs() {
    // Unchanged code, a job 1 % slow: every row confirmed, and passes by the pairs.
    let p = Project::new("1.0", "1.0", BUILD);
    let (code, text, v) = p.check(&["--confirm", "all"], "1.01");
    assert_eq!(code, 0, "{text}");
    p.untouched(&text);
    assert_eq!(v["confirmation"]["mode"], "all", "{v}");
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["confirmation"]["status"], "confirmed", "{r}");
        assert_eq!(r["verdict"], "pass", "{r}");
        assert_eq!(r["method"], "paired-t", "{r}");
    }
}

#[test]
fn a_base_tree_built_by_hand_is_confirmed_against_with_base_dir() {
    let p = Project::new("1.0", "1.08", BUILD);
    // The base commit's files, built, in a folder outside git.
    let tree = p.path("base-tree");
    std::fs::create_dir_all(&tree).unwrap();
    let archive = Command::new("git")
        .arg("-C")
        .arg(p.repo())
        .args(["archive", &p.base])
        .output()
        .unwrap();
    let mut tar = Command::new("tar")
        .arg("-x")
        .current_dir(&tree)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &archive.stdout).unwrap();
    assert!(tar.wait().unwrap().success());
    std::fs::copy(tree.join("slow.txt"), tree.join("built.txt")).unwrap();
    let out = p
        .cmd(&["check", "--base-dir", tree.to_str().unwrap()], "0.99")
        .arg("--json")
        .arg(p.path("r.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    p.untouched(&text);
    let v: Value = serde_json::from_slice(&std::fs::read(p.path("r.json")).unwrap()).unwrap();
    assert_eq!(v["confirmation"]["status"], "ran", "{v}");
    // Nothing was built: the tree is used as it is; its processes ran there.
    assert!(!p.path("build.log").exists());
    let t = std::fs::canonicalize(&tree)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(p.runs().contains(&t), "{:?}", p.runs());
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["confirmation"]["status"], "confirmed", "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with("confirmed against the --base-dir tree"),
            "{r}"
        );
    }
}

#[test]
fn bad_flags_are_exit_2_before_anything_runs() {
    let p = Project::new("1.0", "1.0", BUILD);
    let before = p.runs().len();
    let cases: [(&[&str], &str); 4] = [
        (&["check", "--confirm", "all"], "--confirm needs --base"),
        (&["check", "--base", "nosuchrev"], "no such commit"),
        (&["check", "--base=--output=x"], "no such commit"),
        (
            &["check", "--base", "HEAD", "--replay", "rec"],
            "cannot be used with",
        ),
    ];
    for (args, want) in cases {
        let out = p.cmd(args, "1.0").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(p.runs().len(), before, "something ran");
}
