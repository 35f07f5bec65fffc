//! Writers at once: threads and child processes of this binary writing the same baseline lose
//! no generation, and a writer killed mid-write leaves a complete file.

use super::*;

#[test]
fn concurrent_writer_threads_lose_no_generation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let handles: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|label| {
            let root = root.clone();
            thread::spawn(move || {
                let store = Store::new(root);
                for i in 0..6 {
                    let m = meta(&format!("{label}{i}"), "2026-05-01T12:00:00Z", 100);
                    store
                        .update("gemm", &h200(), &refs(&gemm_series(f64::from(i))), &m)
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_every_generation_kept(&Store::new(&root), &["a", "b", "c"], 6);
}

/// Each writer's commits `<label>0..<label>{count-1}` are all in the history, in order.
fn assert_every_generation_kept(store: &Store, labels: &[&str], count: usize) {
    let f = store.load("nvidia-h200", "gemm").unwrap().unwrap();
    for e in &f.entries {
        let commits: Vec<_> = e.history.iter().map(|g| g.commit.clone().unwrap()).collect();
        assert_eq!(commits.len(), labels.len() * count, "{commits:?}");
        for label in labels {
            let mine: Vec<_> = commits.iter().filter(|c| c.starts_with(label)).cloned().collect();
            let want: Vec<_> = (0..count).map(|i| format!("{label}{i}")).collect();
            assert_eq!(mine, want);
        }
    }
}

// ---- child processes -------------------------------------------------------------------------

const CHILD_ENV: &str = "CGP_GATE_TEST_BASELINE_WRITER";

/// Run the `child_writer` test of this same binary as a separate process.
fn spawn_writer(dir: &Path, label: &str, first: u64, count: u64, entries: usize, history: usize) -> Child {
    writer_command(dir, label, first, count, entries, history)
        .spawn()
        .unwrap()
}

/// The command of [`spawn_writer`]; the writer prints `wrote K` on stdout after each complete
/// write of generation K.
fn writer_command(
    dir: &Path,
    label: &str,
    first: u64,
    count: u64,
    entries: usize,
    history: usize,
) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        &support::test_name(module_path!(), "child_writer"),
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, "1")
    .env("CHILD_DIR", dir)
    .env("CHILD_LABEL", label)
    .env("CHILD_FIRST", first.to_string())
    .env("CHILD_COUNT", count.to_string())
    .env("CHILD_ENTRIES", entries.to_string())
    .env("CHILD_HISTORY", history.to_string());
    c
}

/// Generation `k` of a baseline with `entries` series of 100 samples: every value depends on `k`,
/// so a file can be checked against the complete version it claims to be.
fn version(k: u64, entries: usize) -> Vec<Series> {
    (0..entries)
        .map(|e| {
            let values: Vec<f64> = (0..100)
                .map(|i| 1e6 + k as f64 * 10.0 + e as f64 + i as f64 / 8.0)
                .collect();
            series(
                "gemm",
                &format!("n={e}"),
                "gemm_kernel",
                "gpu__time_duration.sum",
                "ns",
                &values,
            )
        })
        .collect()
}

/// The body of a writer process; does nothing unless started by [`spawn_writer`].
#[test]
#[ignore = "helper process of the locking and kill tests"]
fn child_writer() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let var = |n: &str| std::env::var(n).unwrap();
    let store = Store::new(var("CHILD_DIR"));
    let (label, first, count) = (var("CHILD_LABEL"), var("CHILD_FIRST"), var("CHILD_COUNT"));
    let (first, count): (u64, u64) = (first.parse().unwrap(), count.parse().unwrap());
    let entries: usize = var("CHILD_ENTRIES").parse().unwrap();
    let history: usize = var("CHILD_HISTORY").parse().unwrap();
    for k in first..first + count {
        let s = version(k, entries);
        let m = meta(&format!("{label}{k}"), "2026-05-01T12:00:00Z", history);
        store.update("gemm", &h200(), &refs(&s), &m).unwrap();
        // `println!` flushes at the newline: the parent sees this as soon as the write is done.
        println!("wrote {k}");
    }
}

#[test]
fn concurrent_writer_processes_lose_no_generation() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = ["p", "q"]
        .iter()
        .map(|l| spawn_writer(dir.path(), l, 0, 8, 20, 100))
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_every_generation_kept(&Store::new(dir.path()), &["p", "q"], 8);
}

#[test]
fn a_writer_killed_mid_write_leaves_a_complete_baseline() {
    const ENTRIES: usize = 300; // ~30,000 samples: several hundred KB per write
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let path = store.path("nvidia-h200", "gemm");
    let mut last_seen = None;
    let mut leftovers = 0;
    // Kill points spread over startup, rendering and writing; fixed so that runs are comparable.
    // Rounds 1, 4, 7 kill after a fixed delay from the start (startup or the first write). The
    // others first wait until the writer reports a complete write, so that however slow a loaded
    // machine is, the kills land in a write that replaces a complete baseline: rounds 0, 3, 6, 9
    // after a fixed delay (rendering or writing), rounds 2, 5, 8 as soon as the writer's
    // temporary file appears (inside the write itself).
    let gpu_dir = dir.path().join("nvidia-h200");
    for (round, delay_ms) in [40u64, 95, 63, 150, 71, 120, 55, 210, 88, 133].iter().enumerate() {
        let first = round as u64 * 1_000_000;
        let mut child = writer_command(dir.path(), "w", first, 1_000_000, ENTRIES, 5)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The pipe stays open until the kill: a writer must not die of a closed stdout.
        let mut out = BufReader::new(child.stdout.take().unwrap());
        if round % 3 != 1 {
            let done = out
                .by_ref()
                .lines()
                .map_while(Result::ok)
                .any(|l| l.starts_with("wrote "));
            assert!(
                done,
                "the writer of round {round} ended before one complete write"
            );
        }
        if round % 3 == 2 {
            // Poll for the next write's temporary file (bounded: a slow machine just gets a
            // kill at another point).
            let give_up = std::time::Instant::now() + Duration::from_secs(20);
            while std::time::Instant::now() < give_up && fs::read_dir(&gpu_dir).map_or(0, Iterator::count) < 2
            {
                std::hint::spin_loop();
            }
        } else {
            thread::sleep(Duration::from_millis(*delay_ms));
        }
        child.kill().unwrap(); // SIGKILL: no destructor or handler runs
        child.wait().unwrap();
        drop(out);

        let Some(f) = store.load("nvidia-h200", "gemm").unwrap() else {
            assert!(last_seen.is_none(), "a baseline vanished after round {round}");
            continue;
        };
        // The file is exactly one complete version: the one its commit names.
        let commit = f.git_commit.as_deref().unwrap();
        let k: u64 = commit.strip_prefix('w').unwrap().parse().unwrap();
        let expected = version(k, ENTRIES);
        assert_eq!(f.entries.len(), ENTRIES);
        for s in &expected {
            assert_eq!(&f.entry_for(&s.key).unwrap().series("gemm"), s);
        }
        assert!(
            last_seen.is_none_or(|prev| k >= prev),
            "went back from {last_seen:?} to {k}"
        );
        // Its history is a run of complete earlier generations ending with itself.
        let gens: Vec<u64> = f.entries[0]
            .history
            .iter()
            .map(|g| g.commit.as_deref().unwrap()[1..].parse().unwrap())
            .collect();
        assert_eq!(gens.last(), Some(&k));
        assert!(
            gens.windows(2).all(|w| w[0] < w[1]) && gens.len() <= 5,
            "{gens:?}"
        );
        last_seen = Some(k);
        if fs::read_dir(&gpu_dir).unwrap().count() > 1 {
            leftovers += 1;
        }
        assert_eq!(
            store.load_all().unwrap().len(),
            1,
            "temporary files are not baselines"
        );
    }
    assert!(last_seen.is_some(), "no writer got as far as one complete write");
    // How often the kill landed mid-write (a temporary file was left). The rounds that kill as
    // soon as the temporary file appears make this at least one, or the test tested no torn write.
    eprintln!("killed mid-write in {leftovers} of 10 rounds; {}", path.display());
    assert!(leftovers >= 1, "no kill landed inside a write");
}
