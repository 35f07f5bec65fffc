//! Items 3 and 7: recording into an existing folder replaces it whole or is refused; a signal
//! ends the application and removes temporary folders, and ncu dies with cgp-gate.

use super::*;

// ---- 3, 7. Recording into an existing folder; signals --------------------------------------

#[test]
fn recording_into_an_old_recording_replaces_it_whole() {
    let f = Fake::new();
    let (code, out) = f.run(&["profile", "--record", "rec"]);
    assert_eq!(code, 0, "{out}");
    // A stale repetition from an older, longer recording.
    let stale = f.path("rec/vector_add/n=1048576/7.csv");
    std::fs::write(&stale, original_rep()).unwrap();
    let (code, out) = f.run(&["profile", "--record", "rec"]);
    assert_eq!(code, 0, "{out}");
    assert!(!stale.exists(), "a stale repetition survived the new recording");
    // A file cgp-gate did not write is never deleted: such a folder is refused (issue 34,
    // tests/record_secrets_and_signals.rs).
    assert!(f.path("rec/vector_add/n=1048576/1.csv").is_file());
    assert!(f.path("rec/manifest.json").is_file());
    // No staging folder is left next to it.
    let left: Vec<String> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("recording"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn recording_into_a_folder_that_is_not_a_recording_is_refused() {
    let f = Fake::new();
    std::fs::create_dir(f.path("mine")).unwrap();
    std::fs::write(f.path("mine/thesis.tex"), "keep me").unwrap();
    let (code, out) = f.run(&["profile", "--record", "mine"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not a cgp-gate recording"), "{out}");
    assert_eq!(
        std::fs::read_to_string(f.path("mine/thesis.tex")).unwrap(),
        "keep me"
    );
    // Refused before anything runs (issue 34): not even ncu's version is asked.
    assert!(!f.path("fake/argv.log").exists(), "ncu was started");
    assert!(!f.path("fake/count").exists(), "nothing was profiled");
}

/// Start `profile` with a hanging application, wait until it runs, send `signal`, and return the
/// exit status, the hanging grandchild's pid and the fake's folder.
fn interrupted(signal: nix::sys::signal::Signal) -> (Option<i32>, Option<i32>, i32, Fake) {
    use std::os::unix::process::ExitStatusExt;
    let f = Fake::new();
    std::fs::write(f.path("fake/hang"), "").unwrap();
    let mut child = f
        .std_cmd(&["profile", "--record", "rec"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pidfile = f.path("fake/hang.pid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pidfile).is_ok_and(|t| t.trim().parse::<i32>().is_ok()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let hang: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let status = child.wait().unwrap();
    (status.code(), status.signal(), hang, f)
}

#[test]
fn every_terminating_signal_ends_the_application_and_removes_temporary_folders() {
    use nix::sys::signal::Signal;
    for sig in [Signal::SIGHUP, Signal::SIGQUIT, Signal::SIGTERM, Signal::SIGINT] {
        let (code, _, hang, f) = interrupted(sig);
        // Exit 3 since issue 34 (128 + the signal before).
        assert_eq!(code, Some(3), "{sig}");
        assert!(
            gone(hang),
            "{sig}: the application (pid {hang}) outlived cgp-gate"
        );
        let left: Vec<_> = std::fs::read_dir(f.path("tmp")).unwrap().collect();
        assert!(left.is_empty(), "{sig}: temporary folders left: {left:?}");
        let staging: Vec<String> = std::fs::read_dir(f.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("recording"))
            .collect();
        assert!(staging.is_empty(), "{sig}: {staging:?}");
    }
}

#[test]
fn ncu_dies_with_cgp_gate_even_on_sigkill() {
    let f = Fake::new();
    std::fs::write(f.path("fake/hang"), "").unwrap();
    let mut child = f
        .std_cmd(&["profile"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pidfile = f.path("fake/hang.pid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pidfile).is_ok_and(|t| t.trim().parse::<i32>().is_ok()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ncu: i32 = std::fs::read_to_string(f.path("fake/ncu.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let hang: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    // No handler runs for SIGKILL: only the parent-death signal can end ncu.
    child.kill().unwrap();
    child.wait().unwrap();
    let ncu_gone = gone(ncu);
    // The application's own process (ncu's child) is left to ncu's death; clean it up here.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(hang),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert!(ncu_gone, "ncu (pid {ncu}) outlived a SIGKILLed cgp-gate");
}
