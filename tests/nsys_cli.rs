//! `cgp-gate breakdown` on real Nsight Systems outputs: every file in tests/fixtures/nsys-wild
//! (published by other projects, see its PROVENANCE.md) and the pre-2023 reports that the real
//! nsys 2022.4.2 writes from one of them (tests/fixtures/nsys-2022.4.2).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const NSYS: &str = "/usr/bin/nsys";
const CHROMIUM: &str = "/usr/bin/chromium";

fn wild(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/nsys-wild")
        .join(name)
}

fn old(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/nsys-2022.4.2")
        .join(name)
}

/// Run `breakdown` with `--json` and return (exit code, stderr, parsed JSON if it succeeded).
fn breakdown(args: &[&std::ffi::OsStr]) -> (i32, String, Option<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("b.json");
    let out = crate::support::bin()
        .arg("breakdown")
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = (code == 0).then(|| serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap());
    (code, stderr, v)
}

fn one(path: &Path) -> Value {
    let (code, stderr, v) = breakdown(&[path.as_os_str()]);
    assert_eq!(code, 0, "{}: {stderr}", path.display());
    v.unwrap()["runs"][0].clone()
}

fn categories(run: &Value) -> Vec<(String, u64, u64)> {
    run["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["time_ns"].as_u64().unwrap(),
                c["instances"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Sum of a CSV column and of the Instances column, read independently of cgp-gate.
fn column_sums(path: &Path, time_col: &str) -> (u64, u64) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    let t = h.iter().position(|c| c == time_col).unwrap();
    let i = h.iter().position(|c| c == "Instances");
    let mut sums = (0u64, 0u64);
    for rec in r.records() {
        let rec = rec.unwrap();
        sums.0 += rec[t].parse::<u64>().unwrap();
        sums.1 += i.map_or(1, |i| rec[i].parse::<u64>().unwrap());
    }
    sums
}

#[test]
fn json_contract_has_exactly_the_documented_keys() {
    let run = one(&wild("12_b200_cuda_gpu_trace_nvtxname_2025.5.2.csv"));
    let keys: Vec<&str> = run.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["file", "gpu_time_ns", "categories", "kernels"]);
    let c: Vec<&str> = run["categories"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(c, ["name", "time_ns", "instances"]);
    let k: Vec<&str> = run["kernels"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(k, ["name", "category", "time_ns", "instances"]);
}

#[test]
fn summary_reports_add_up_and_have_no_gpu_time() {
    for f in [
        "01_l20vllm_cuda_gpu_kern_sum_2025.csv",
        "07_moe_h100_cuda_gpu_kern_sum_2024.5.1.csv",
        "11_b200_cuda_gpu_kern_gb_sum_nvtxname_2025.5.2.csv",
    ] {
        let run = one(&wild(f));
        assert!(run["gpu_time_ns"].is_null(), "{f}: a summary has no start times");
        let (time, instances) = column_sums(&wild(f), "Total Time (ns)");
        let cats = categories(&run);
        assert_eq!(cats.iter().map(|c| c.1).sum::<u64>(), time, "{f}");
        assert_eq!(cats.iter().map(|c| c.2).sum::<u64>(), instances, "{f}");
        let kernels = run["kernels"].as_array().unwrap();
        let times: Vec<u64> = kernels.iter().map(|k| k["time_ns"].as_u64().unwrap()).collect();
        assert!(
            times.windows(2).all(|w| w[0] >= w[1]),
            "{f}: kernels largest first"
        );
        let ctimes: Vec<u64> = cats.iter().map(|c| c.1).collect();
        assert!(
            ctimes.windows(2).all(|w| w[0] >= w[1]),
            "{f}: categories largest first"
        );
    }
}

#[test]
fn long_template_names_survive_whole() {
    let run = one(&wild("07_moe_h100_cuda_gpu_kern_sum_2024.5.1.csv"));
    let longest = run["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap().chars().count())
        .max()
        .unwrap();
    // PROVENANCE.md: "longest name 4,981 chars (CUTLASS GemmUniversal templates)".
    assert_eq!(longest, 4981);
    // 175 kernels in the report; names repeat nowhere in a kern_sum.
    assert_eq!(run["kernels"].as_array().unwrap().len(), 175);
    let cats = categories(&run);
    for want in ["moe", "gemm", "triton"] {
        assert!(cats.iter().any(|c| c.0 == want), "{want} missing in {cats:?}");
    }
}

#[test]
fn every_trace_form_of_one_capture_agrees() {
    // One B200 capture as 2025.5 CSV, as its SQLite export, and as what nsys 2022.4.2 writes
    // from that export (file and stdout): same categories, same busy time.
    let forms = [
        wild("12_b200_cuda_gpu_trace_nvtxname_2025.5.2.csv"),
        wild("13_b200_export_2025.5.2.sqlite"),
        old("13_b200_gputrace.csv"),
        old("13_b200_stdout_gpukernsum_gputrace.txt"),
    ];
    // The four rows of the trace are disjoint: 22400 + 22208 + 2144 + 11649 ns.
    let busy = 22_400 + 22_208 + 2_144 + 11_649;
    let runs: Vec<Value> = forms.iter().map(|f| one(f)).collect();
    for (f, r) in forms.iter().zip(&runs) {
        assert_eq!(r["gpu_time_ns"].as_u64(), Some(busy), "{}", f.display());
        assert_eq!(
            categories(r),
            [("memops".to_owned(), 46_752, 3), ("gemm".to_owned(), 11_649, 1)],
            "{}",
            f.display()
        );
        let names: Vec<&str> = r["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"[CUDA memcpy Host-to-Device]"), "{names:?}");
        assert!(names.contains(&"[CUDA memset]"), "{names:?}");
    }
    let (time, _) = column_sums(
        &wild("12_b200_cuda_gpu_trace_nvtxname_2025.5.2.csv"),
        "Duration (ns)",
    );
    assert_eq!(time, busy);
}

#[test]
fn old_summary_reads_like_the_new_one() {
    let a = one(&old("13_b200_gpukernsum.csv"));
    let b = one(&wild("11_b200_cuda_gpu_kern_gb_sum_nvtxname_2025.5.2.csv"));
    assert_eq!(categories(&a), categories(&b));
}

#[test]
fn unusable_inputs_exit_2_naming_the_file() {
    let cases: [(PathBuf, &str); 4] = [
        (wild("06_l20vllm_nvtx_sum_EMPTY.csv"), "is empty"),
        (
            wild("09_moe_h100_cuda_api_sum_stdout_preamble_2024.5.1.txt"),
            "not a GPU kernel report",
        ),
        (old("13_b200_gpukernsum_console.txt"), "console table"),
        (wild("PROVENANCE.md"), "no nsys report header"),
    ];
    for (f, want) in cases {
        let (code, stderr, _) = breakdown(&[f.as_os_str()]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(&f.display().to_string()), "{stderr}");
        assert!(stderr.contains(want), "{want}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn damaged_and_old_sqlite_exports() {
    let dir = tempfile::tempdir().unwrap();
    // Truncated: SQLite reports it as malformed; cgp-gate says so and exits 2.
    let bytes = std::fs::read(wild("13_b200_export_2025.5.2.sqlite")).unwrap();
    let cut = dir.path().join("cut.sqlite");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let (code, stderr, _) = breakdown(&[cut.as_os_str()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cut.sqlite"), "{stderr}");
    // The 2020.3 schema has no ENUM_* tables: drop them from the real export (a derived file)
    // and the memcpy rows must still be named by kind.
    let oldschema = dir.path().join("old.sqlite");
    std::fs::write(&oldschema, &bytes).unwrap();
    let conn = rusqlite::Connection::open(&oldschema).unwrap();
    let enums: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type='table' AND (name LIKE 'ENUM_%' OR name = 'TARGET_INFO_SESSION_START_TIME')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(enums.len() > 10);
    for t in &enums {
        conn.execute(&format!("DROP TABLE {t}"), []).unwrap();
    }
    drop(conn);
    let a = one(&oldschema);
    let b = one(&wild("13_b200_export_2025.5.2.sqlite"));
    assert_eq!(a["kernels"], b["kernels"]);
    // A SQLite file that is no nsys export.
    let other = dir.path().join("other.sqlite");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute("CREATE TABLE t (x)", []).unwrap();
    drop(conn);
    let (code, stderr, _) = breakdown(&[other.as_os_str()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not an nsys export"), "{stderr}");
}

#[test]
fn wall_time_gives_non_gpu_time() {
    let f = wild("13_b200_export_2025.5.2.sqlite");
    let (code, stderr, v) = breakdown(&[f.as_os_str(), "--wall".as_ref(), "0.001".as_ref()]);
    assert_eq!(code, 0, "{stderr}");
    let run = &v.unwrap()["runs"][0];
    assert_eq!(run["wall_ns"].as_u64(), Some(1_000_000));
    assert_eq!(run["non_gpu_time_ns"].as_u64(), Some(1_000_000 - 58_401));
    // Shorter than the GPU busy time: the two cannot describe one run.
    let (code, stderr, _) = breakdown(&[f.as_os_str(), "--wall".as_ref(), "0.00001".as_ref()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("shorter than the GPU busy time"), "{stderr}");
}

#[test]
fn user_categories_come_first_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let cats = dir.path().join("cats.json");
    // JSON key order is the rule order: `Kernel2` is tried before `cutlass`.
    std::fs::write(
        &cats,
        r#"{"Kernel2": "k2", "cutlass": "cutlass", "memset": "fill"}"#,
    )
    .unwrap();
    let f = wild("12_b200_cuda_gpu_trace_nvtxname_2025.5.2.csv");
    let (code, stderr, v) = breakdown(&[f.as_os_str(), "--categories".as_ref(), cats.as_os_str()]);
    assert_eq!(code, 0, "{stderr}");
    let got = categories(&v.unwrap()["runs"][0]);
    let names: Vec<&str> = got.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["memops", "k2", "fill"]);
    // A bad regex: file, line and column.
    std::fs::write(&cats, "good: a\n\"(bad\": b\n").unwrap();
    let (code, stderr, _) = breakdown(&[f.as_os_str(), "--categories".as_ref(), cats.as_os_str()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("{}:2:1: invalid regex", cats.display())),
        "{stderr}"
    );
}

#[test]
fn csv_maps_every_kernel_to_its_category() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("map.csv");
    let a = wild("01_l20vllm_cuda_gpu_kern_sum_2025.csv");
    let b = wild("12_b200_cuda_gpu_trace_nvtxname_2025.5.2.csv");
    crate::support::bin()
        .args([
            "breakdown".as_ref(),
            a.as_os_str(),
            b.as_os_str(),
            "--csv".as_ref(),
            out.as_os_str(),
        ])
        .assert()
        .success();
    let mut r = csv::Reader::from_path(&out).unwrap();
    assert_eq!(
        r.headers().unwrap(),
        vec!["file", "kernel", "category", "time_ns", "instances"]
    );
    let rows: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>().unwrap();
    // 103 kernels in 01 (PROVENANCE.md) and 3 distinct names in 12.
    assert_eq!(rows.len(), 103 + 3);
    let fill = rows.iter().find(|r| r[1].contains("FillFunctor<int>")).unwrap();
    assert_eq!(&fill[2], "elementwise");
    assert_eq!(&fill[3], "109193144");
}

#[test]
fn nsys_rep_goes_through_nsys_export() {
    // One real nsys at a time (`support::real_nsys_turn`).
    let _turn = crate::support::real_nsys_turn();
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("broken.nsys-rep");
    std::fs::write(&rep, b"not a report").unwrap();
    // No nsys: exit 3, and what to do.
    let out = crate::support::bin()
        .env("CGP_GATE_NSYS", dir.path().join("no-such-nsys"))
        .args(["breakdown".as_ref(), rep.as_os_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("broken.nsys-rep") && e.contains("nsys was not found"),
        "{e}"
    );
    if !have(NSYS, "nsys") {
        return;
    }
    // The real nsys refuses the file; its message comes through (exit 3: the tool failed).
    let out = crate::support::bin()
        .env("CGP_GATE_NSYS", NSYS)
        .args(["breakdown".as_ref(), rep.as_os_str()])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(
        e.contains("nsys failed to export") && e.contains("broken.nsys-rep"),
        "{e}"
    );
}

#[test]
fn a_real_report_of_the_real_nsys_goes_through_nsys_export() {
    // One real nsys at a time (`support::real_nsys_turn`).
    let _turn = crate::support::real_nsys_turn();
    if !have(NSYS, "nsys (Debian's nsight-systems)") {
        return;
    }
    // A real .nsys-rep, made now (a report holds the environment and process list of the machine
    // that made it, so none is committed): the real nsys traces CUDA in /bin/true, which runs no
    // CUDA work (there is no GPU here). CPU sampling off: with it, nsys 2022.4.2 hangs here.
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("true");
    let out = assert_cmd::Command::new(NSYS)
        .current_dir(dir.path())
        .args([
            "profile",
            "--trace",
            "cuda",
            "--sample",
            "none",
            "--cpuctxsw",
            "none",
            "--force-overwrite",
            "true",
            "--output",
        ])
        .arg(&stem)
        .arg("/bin/true")
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rep = stem.with_extension("nsys-rep");
    if !rep.exists() {
        // Debian's nsys cannot find its importer and leaves the raw stream: import it with the
        // importer of the same install, as nsys would have.
        let importer = cgp_profile::nsys::read::qdstrm_importer(Path::new(NSYS)).expect("no QdstrmImporter");
        let out = assert_cmd::Command::new(importer)
            .arg("-i")
            .arg(stem.with_extension("qdstrm"))
            .timeout(std::time::Duration::from_secs(180))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(rep.is_file());
    // cgp-gate runs the real `nsys export --type sqlite` on it and reads the export: a real
    // report of the 2022.4.2 schema, recognised as an nsys export, with no GPU activity in it.
    let out = crate::support::bin()
        .env("CGP_GATE_NSYS", NSYS)
        .args(["breakdown".as_ref(), rep.as_os_str()])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!(
            "{}: is an nsys export without CUDA GPU activity",
            rep.display()
        )),
        "{e}"
    );
    // The export has the session length nsys measured, which `non_gpu_time` uses.
    let export = dir.path().join("x.sqlite");
    let out = Command::new(NSYS)
        .args(["export", "--type", "sqlite", "--output"])
        .arg(&export)
        .arg(&rep)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let session = cgp_read::nsys_files::session_duration_ns(&export).expect("no session length");
    assert!(session > 1_000_000, "{session} ns");
}

/// A tool, or `false` with a loud SKIPPED (failing under CI=true, where .ci/setup installs it).
fn have(path: &str, what: &str) -> bool {
    if Path::new(path).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{path} is missing under CI; .ci/setup must install {what}"
    );
    eprintln!("\n!!! SKIPPED: {path} is not installed; the {what} part of this test did not run !!!\n");
    false
}

#[test]
fn committed_2022_reports_are_what_the_real_nsys_writes() {
    // One real nsys at a time (`support::real_nsys_turn`).
    let _turn = crate::support::real_nsys_turn();
    if !have(NSYS, "nsys (Debian's nsight-systems)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("in2.sqlite");
    std::fs::copy(wild("13_b200_export_2025.5.2.sqlite"), &export).unwrap();
    let out = Command::new(NSYS)
        .current_dir(dir.path())
        .args([
            "stats",
            "-r",
            "gputrace,gpukernsum",
            "--format",
            "csv",
            "-o",
            "13_b200",
            "in2.sqlite",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in ["13_b200_gputrace.csv", "13_b200_gpukernsum.csv"] {
        assert_eq!(
            std::fs::read(dir.path().join(f)).unwrap(),
            std::fs::read(old(f)).unwrap(),
            "{f} differs from what nsys writes now"
        );
        // And what it writes reads as the committed copy does.
        assert_eq!(one(&dir.path().join(f)), {
            let mut v = one(&old(f));
            v["file"] = dir.path().join(f).display().to_string().into();
            v
        });
    }
}

#[test]
fn html_is_escaped_and_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "<script>console.error('INJECTED')</script><img src=x onerror=\"console.error('X')\">";
    let trace = dir.path().join("hostile.csv");
    std::fs::write(
        &trace,
        format!(
            "Start (ns),Duration (ns),Name\n0,100,\"{}\"\n50,100,gemm_kernel\n",
            hostile.replace('"', "\"\"")
        ),
    )
    .unwrap();
    let html = dir.path().join("b.html");
    let a = wild("01_l20vllm_cuda_gpu_kern_sum_2025.csv");
    let b = wild("07_moe_h100_cuda_gpu_kern_sum_2024.5.1.csv");
    crate::support::bin()
        .args([
            "breakdown".as_ref(),
            a.as_os_str(),
            b.as_os_str(),
            trace.as_os_str(),
            "--html".as_ref(),
            html.as_os_str(),
        ])
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script") && !page.contains("<img"),
        "markup leaked"
    );
    assert!(page.contains("&lt;script&gt;"));
    // One bar per input: every run has segments; one legend entry per category.
    assert_eq!(page.matches("<svg ").count(), 1);
    if !have(CHROMIUM, "chromium") {
        return;
    }
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "{console:#?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(!dom.contains("<script"));
    // Three bars' labels, and every category's segments share one colour across bars.
    for f in [&a, &b, &trace] {
        assert!(
            dom.contains(&f.display().to_string()),
            "{} not in the page",
            f.display()
        );
    }
    let segs = dom.matches("class=\"seg\"").count();
    assert!(segs >= 3 + 2, "{segs} segments");
    let gemm_fills: std::collections::BTreeSet<&str> = dom
        .split("<rect class=\"seg\"")
        .skip(1)
        .filter(|s| s.split("</rect>").next().unwrap_or("").contains("<title>gemm:"))
        .filter_map(|s| s.split("fill=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        gemm_fills.len(),
        1,
        "gemm has one colour in every bar: {gemm_fills:?}"
    );
}
