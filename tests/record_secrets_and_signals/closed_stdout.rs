//! Item 2: a closed stdout (a pipe into `head`, a pipe closed before the first write) keeps the
//! verdict's exit code, in `check`, `ab` and `report`.

use super::*;

/// Exit code of the binary run with `args` (in the repository) whose stdout is a pipe closed
/// before it writes anything, stderr discarded.
fn with_closed_stdout(args: &[&str], env: &[(&str, &str)]) -> i32 {
    let mut child = crate::support::bin_std()
        .current_dir(root())
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_ACTIONS")
        .envs(env.iter().copied())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait().unwrap().code().unwrap_or(-1)
}

/// Exit code of `cgp-gate ARGS | head -n 1` in bash (the binary's, `PIPESTATUS[0]`), with the
/// rest of the pipe's output after `head` stopped reading.
fn piped_into_head(args: &[&str]) -> i32 {
    let line = format!(
        "{} {} 2>/dev/null | head -n 1 >/dev/null; exit ${{PIPESTATUS[0]}}",
        bin_path().display(),
        args.iter()
            .map(|a| format!("'{a}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let st = StdCommand::new("bash")
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args(["-c", &line])
        .status()
        .unwrap();
    st.code().unwrap_or(-1)
}

#[test]
fn a_closed_stdout_keeps_the_verdicts_exit_code_on_the_real_h100_recordings() {
    // badlaunch is a regression (exit 1), aa-live a pass (0); both with stdout open for reference.
    let regression = h100_check("badlaunch", &[]);
    let pass = h100_check("aa-live", &[]);
    assert_eq!(
        run({
            let mut c = bin();
            c.args(strs(&regression));
            c
        })
        .0,
        1
    );
    for (args, want) in [(&regression, 1), (&pass, 0)] {
        assert_eq!(piped_into_head(&strs(args)), want, "| head -n 1: {args:?}");
        assert_eq!(
            with_closed_stdout(&strs(args), &[]),
            want,
            "closed stdout: {args:?}"
        );
        // Annotations go to stdout too under GitHub Actions.
        assert_eq!(
            with_closed_stdout(&strs(args), &[("GITHUB_ACTIONS", "true")]),
            want,
            "closed stdout under GITHUB_ACTIONS: {args:?}"
        );
    }
    // A damaged recording: a launch row cut in half.
    let rec = tempfile::tempdir().unwrap();
    copy_dir(&root().join(H100).join("badlaunch"), rec.path());
    let rep = rec.path().join("vector_add/n=16777216/0.csv");
    let text = std::fs::read_to_string(&rep).unwrap();
    let cut = text
        .rfind("\"gpu__time_duration.sum\"")
        .map_or(text.len() / 2, |i| i + 5);
    std::fs::write(&rep, &text[..cut]).unwrap();
    let damaged = h100_check(rec.path().to_str().unwrap(), &[]);
    let damaged: Vec<String> = damaged
        .into_iter()
        .map(|a| a.replace(&format!("{H100}/"), ""))
        .collect();
    let (code, out) = run({
        let mut c = bin();
        c.args(strs(&damaged));
        c
    });
    assert_eq!(code, 2, "{out}");
    assert_eq!(piped_into_head(&strs(&damaged)), 2);
    assert_eq!(with_closed_stdout(&strs(&damaged), &[]), 2);
}

#[test]
fn a_closed_stdout_keeps_the_exit_code_of_ab_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let ab = dir.path().join("ab");
    copy_dir(&root().join(H100).join("baseline"), &ab.join("base"));
    copy_dir(&root().join(H100).join("badlaunch"), &ab.join("head"));
    let spec = format!("{H100}/check.yaml");
    let args = ["ab", "--spec", &spec, "--replay", ab.to_str().unwrap()];
    assert_eq!(
        run({
            let mut c = bin();
            c.args(args);
            c
        })
        .0,
        1
    );
    assert_eq!(piped_into_head(&args), 1);
    assert_eq!(with_closed_stdout(&args, &[]), 1);
    // report: a results file it cannot read stays exit 2; a good one is a written report (0).
    let results = dir.path().join("r.json");
    let mut c = bin();
    c.args(strs(&h100_check(
        "badlaunch",
        &["--json", results.to_str().unwrap()],
    )));
    assert_eq!(run(c).0, 1);
    let report = ["report", "--from", results.to_str().unwrap()];
    assert_eq!(with_closed_stdout(&report, &[]), 0);
    let text = std::fs::read_to_string(&results).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let report = ["report", "--from", cut.to_str().unwrap()];
    assert_eq!(with_closed_stdout(&report, &[]), 2);
    assert_eq!(piped_into_head(&report), 2);
    // A report file that cannot be written is still a failure with stdout closed.
    let report = [
        "report",
        "--from",
        results.to_str().unwrap(),
        "--junit",
        "/proc/nonexistent/j.xml",
    ];
    assert_eq!(with_closed_stdout(&report, &[]), 3);
}
