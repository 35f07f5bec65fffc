//! Item 8 (a to d): bounded YAML and costs, every terminating signal during a live check, and the
//! baseline store's lock (a FIFO or link refused, a held lock waited for and given up).

use super::*;

#[test]
fn a_spec_aliasing_a_one_mb_anchor_200000_times_is_refused_not_expanded() {
    // 2.2 MB of YAML that would expand to 200 GB: one 1 MB scalar, aliased 200,000 times.
    let dir = tempfile::tempdir().unwrap();
    let spec = format!(
        "version: 1\ntargets:\n  - name: t\n    command: [./b]\n    env:\n      A: &big \"{}\"\n    nvtx: [{}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
        "x".repeat(1 << 20),
        vec!["*big"; 200_000].join(", ")
    );
    let p = dir.path().join("bomb.yaml");
    std::fs::write(&p, spec).unwrap();
    for args in [
        &["validate", "--spec"][..],
        &["profile", "--dry-run", "--spec"][..],
    ] {
        let mut c = bin();
        c.args(args).arg(&p);
        let (code, out) = run(c);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.contains("bomb.yaml:7:"), "{out}");
        assert!(out.contains("MB of text through its aliases"), "{out}");
    }
}

#[test]
fn an_absurd_cost_in_previous_results_or_shard_costs_does_not_panic_the_eta() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.json");
    let check = |extra: &[&str]| {
        let mut c = bin();
        c.args(strs(&h100_check("aa-live", extra)));
        run(c)
    };
    assert_eq!(check(&["--json", results.to_str().unwrap()]).0, 0);
    for cost in [1e20, 1e308, f64::MAX] {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
        for t in ["matmul", "reduce", "vector_add"] {
            v["cost_seconds"][t] = cost.into();
        }
        std::fs::write(&results, v.to_string()).unwrap();
        let costs = dir.path().join("costs.json");
        std::fs::copy(&results, &costs).unwrap();
        // `--json` names last run's results: its costs seed the ETA.
        let (code, out) = check(&["--json", results.to_str().unwrap()]);
        assert_eq!(code, 0, "{cost}: {out}");
        let (code, out) = check(&["--shard", "1/2", "--shard-costs", costs.to_str().unwrap()]);
        assert_eq!(code, 0, "{cost}: {out}");
        assert!(!out.contains("panicked"), "{out}");
    }
}

#[test]
fn every_terminating_signal_during_a_live_check_ends_the_profiler_group_and_exits_3() {
    use nix::sys::signal::Signal;
    use std::os::unix::process::ExitStatusExt;
    for sig in [
        Signal::SIGALRM,
        Signal::SIGVTALRM,
        Signal::SIGXCPU,
        Signal::SIGUSR2,
        Signal::SIGHUP,
    ] {
        let live = Live::new();
        std::fs::write(live.path().join("fake/hang"), "").unwrap();
        std::fs::create_dir(live.path().join("tmp")).unwrap();
        std::fs::create_dir(live.path().join("baselines")).unwrap();
        let mut child = crate::support::bin_std()
            .current_dir(live.path())
            .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
            .env("FAKE_NCU_DIR", live.path().join("fake"))
            .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
            .env("TMPDIR", live.path().join("tmp"))
            .env_remove("GITHUB_ACTIONS")
            .args([
                "check",
                "--baselines",
                "baselines",
                "--allow-no-baselines",
                "--record",
                "rec",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let hang = crate::support::pid_in(&live.path().join("fake/hang.pid"));
        let ncu = crate::support::pid_in(&live.path().join("fake/ncu.pid"));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
            sig,
        )
        .unwrap();
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!((status.code(), status.signal()), (Some(3), None), "{sig}: {err}");
        assert!(err.contains(&format!("{sig} received")), "{sig}: {err}");
        for (what, pid) in [("the application", hang), ("ncu", ncu)] {
            assert!(gone(pid), "{sig}: {what} (pid {pid}) outlived cgp-gate");
        }
        let left: Vec<_> = std::fs::read_dir(live.path().join("tmp")).unwrap().collect();
        assert!(left.is_empty(), "{sig}: temporary folders left: {left:?}");
        let staging: Vec<String> = std::fs::read_dir(live.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("recording"))
            .collect();
        assert!(staging.is_empty(), "{sig}: {staging:?}");
    }
}

fn baseline_update(baselines: &Path) -> Command {
    let mut c = bin();
    c.args([
        "baseline",
        "update",
        "--spec",
        &format!("{H100}/baseline.yaml"),
        "--replay",
        &format!("{H100}/baseline"),
    ])
    .arg("--baselines")
    .arg(baselines);
    c
}

#[test]
fn a_store_lock_that_is_a_fifo_or_a_link_is_refused_at_once() {
    for kind in ["fifo", "link"] {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join(".lock");
        if kind == "fifo" {
            assert!(StdCommand::new("mkfifo").arg(&lock).status().unwrap().success());
        } else {
            std::os::unix::fs::symlink("/dev/zero", &lock).unwrap();
        }
        let mut c = baseline_update(dir.path());
        c.timeout(std::time::Duration::from_secs(60));
        let (code, out) = run(c);
        assert_eq!(code, 2, "{kind}: {out}");
        assert!(out.contains(".lock: the store's lock file is a"), "{kind}: {out}");
        assert!(out.contains("remove it"), "{kind}: {out}");
        let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "{kind}: nothing was written");
    }
}

#[test]
fn a_held_store_lock_is_waited_for_with_a_message_and_given_up_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(dir.path().join(".lock"))
        .unwrap();
    std::io::Write::write_all(&mut &lock, b"pid 4242\n").unwrap();
    lock.lock().unwrap();
    let mut c = baseline_update(dir.path());
    c.env("CGP_GATE_LOCK_TIMEOUT_S", "1");
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("waiting for the baseline store's lock"), "{out}");
    assert!(
        out.contains("gave up waiting for the baseline store's lock") && out.contains("pid 4242"),
        "{out}"
    );
    assert!(out.contains("CGP_GATE_LOCK_TIMEOUT_S"), "{out}");
    assert!(
        !dir.path().join("nvidia-h100-80gb-hbm3").exists(),
        "nothing was written"
    );
    // Released while it waits: the update goes on.
    let child = crate::support::bin_std()
        .current_dir(root())
        .args([
            "baseline",
            "update",
            "--spec",
            &format!("{H100}/baseline.yaml"),
            "--replay",
            &format!("{H100}/baseline"),
        ])
        .arg("--baselines")
        .arg(dir.path())
        .env("CGP_GATE_LOCK_TIMEOUT_S", "60")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("waiting for the baseline store's lock"), "{err}");
    assert!(dir.path().join("nvidia-h100-80gb-hbm3/matmul.json").is_file());
    // A timeout that is not a number is a usage error.
    let mut c = baseline_update(dir.path());
    c.env("CGP_GATE_LOCK_TIMEOUT_S", "soon");
    lock.lock().unwrap();
    let (code, out) = run(c);
    assert_eq!(code, 2, "{out}");
}
