//! The parser on real ncu output, and cgp-gate's command lines through the real ncu.
//!
//! - `tests/fixtures/ncu-wild/`: ten CSV files other projects captured on real GPUs and published
//!   (PROVENANCE.md there says where each came from). Each is parsed, snapshotted, and checked
//!   against values read by hand from the CSV (the line is named next to each check).
//! - `tests/fixtures/ncu-import/`: real ncu 2022.3 output, made by `ncu --import` from two public
//!   `.ncu-rep` reports ([`real_ncu::IMPORTS`] lists every command; README.md there says how). Every file
//!   is parsed; a test regenerates them with the installed ncu and compares.
//! - The real ncu (Nsight Compute 2022.3 from Debian non-free, `.ci/setup` installs it): the exact
//!   argv cgp-gate builds, for every spec feature, run with an application that launches no
//!   kernel, must reach "No kernels were profiled". Without ncu these tests print `SKIPPED: ...`
//!   and return; with `CI=true` they fail instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use cgp_core::measured::samples::{CsvShape, Launch, MetricValue, ParsedOutput};
use cgp_profile::ncu::command::{NcuRelease, VERSIONED_OPTIONS, ncu_options_for, supports};
use cgp_read::ncu_output::parse::{parse, parse_bytes};

mod real_ncu;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn parse_file(rel: &str) -> ParsedOutput {
    let bytes = std::fs::read(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    parse_bytes(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn num(l: &Launch, key: &str) -> f64 {
    match l.metrics.get(key).map(|m| &m.value) {
        Some(MetricValue::Number(v)) => *v,
        other => panic!("{key} of {}: {other:?}", l.kernel),
    }
}

fn unit<'a>(l: &'a Launch, key: &str) -> &'a str {
    &l.metrics[key].unit
}

/// Equal to 1e-9 relative (values scaled by powers of ten are not always exact in binary).
#[track_caller]
fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

/// `cgp-gate parse FILE`: (exit code, stdout, stderr).
fn cli_parse(path: &Path, json: bool) -> (i32, String, String) {
    let mut c = crate::support::bin();
    c.arg("parse");
    if json {
        c.arg("--json");
    }
    let out = c.arg(path).output().expect("run cgp-gate");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// ---------------------------------------------------------------------------------------------
// ncu-wild: real captures by other projects

const WILD: &[&str] = &[
    "01_llmperf_details_cc120.csv",
    "02_llmperf_roofline_section.csv",
    "04_accelsim_b200_raw.csv",
    "08_l20_raw_decode_attn.csv",
    "11_moe_h100_details_progout.csv",
    "16_rodinia_v100_2020_hotspot.csv",
    "18_winpy_t4_metrics_RECONSTRUCTED.csv",
    "19_aipe_nvtx_range_details_RECONSTRUCTED.csv",
];

#[test]
fn every_wild_file_parses_to_its_snapshot() {
    for name in WILD {
        let p = parse_file(&format!("ncu-wild/{name}"));
        insta::assert_json_snapshot!(format!("wild_{}", name.trim_end_matches(".csv")), p);
    }
}

#[test]
fn every_wild_file_streams_the_same_json_it_parses_to() {
    // `parse --json` writes while reading; it must be the same as serialising the parsed value.
    for name in WILD {
        let path = fixture(&format!("ncu-wild/{name}"));
        let (code, stdout, stderr) = cli_parse(&path, true);
        assert_eq!(code, 0, "{name}: {stderr}");
        let want = serde_json::to_string(&parse_file(&format!("ncu-wild/{name}"))).unwrap();
        assert_eq!(stdout.trim_end(), want, "{name}");
    }
}

#[test]
fn wild_01_details_2025_with_rule_rows() {
    let p = parse_file("ncu-wild/01_llmperf_details_cc120.csv");
    assert_eq!((p.shape, p.launches.len()), (CsvShape::Details, 1));
    let l = &p.launches[0];
    // Line 7: "gpu__time_duration.sum","us","6.75".
    close(num(l, "gpu__time_duration.sum"), 6750.0);
    assert_eq!(unit(l, "gpu__time_duration.sum"), "ns");
    // Line 2: "dram__bytes_read.sum","Mbyte","2.33".
    close(num(l, "dram__bytes_read.sum"), 2_330_000.0);
    // Lines 14 and 23: "Memory Throughput" is "%" 19.66 in "GPU Speed Of Light Throughput" and
    // "Gbyte/s" 345.14 in "Memory Workload Analysis": both qualified, neither bare.
    close(num(l, "Memory Throughput [GPU Speed Of Light Throughput]"), 19.66);
    close(num(l, "Memory Throughput [Memory Workload Analysis]"), 345.14e9);
    assert_eq!(
        unit(l, "Memory Throughput [Memory Workload Analysis]"),
        "byte/second"
    );
    assert!(!l.metrics.contains_key("Memory Throughput"));
    // Line 42: "Block Limit Registers","block","2".
    close(num(l, "Block Limit Registers"), 2.0);
    assert_eq!(l.attributes["Grid Size"], "(224, 1, 1)");
}

#[test]
fn wild_02_body_item_labels_keep_all_22_rows() {
    let p = parse_file("ncu-wild/02_llmperf_roofline_section.csv");
    let l = &p.launches[0];
    assert_eq!(l.metrics.len(), 22, "22 metric rows, 22 keys");
    // Line 7: Body Item Label "Single Precision Roofline", "SM Frequency","Ghz","2.15"; the same
    // name occurs under "Double Precision Roofline", so the label qualifies it.
    close(
        num(
            l,
            "SM Frequency [GPU Speed Of Light Roofline Chart / Single Precision Roofline]",
        ),
        2.15e9,
    );
    // Line 13: "Double Precision Roofline", "DRAM Frequency","Ghz","13.72".
    close(
        num(
            l,
            "DRAM Frequency [GPU Speed Of Light Roofline Chart / Double Precision Roofline]",
        ),
        13.72e9,
    );
    // Line 3: "Theoretical Predicated-On FFMA Thread Instructions Executed","inst/cycle","21,760"
    // occurs once: bare key.
    close(
        num(l, "Theoretical Predicated-On FFMA Thread Instructions Executed"),
        21_760.0,
    );
    // Line 10: "Theoretical Predicated-On DFMA Operations","inst","680" (once).
    close(num(l, "Theoretical Predicated-On DFMA Operations"), 680.0);
}

#[test]
fn wild_04_b200_raw_page_with_occupancy_units() {
    let p = parse_file("ncu-wild/04_accelsim_b200_raw.csv");
    assert_eq!((p.shape, p.launches.len()), (CsvShape::Raw, 1));
    let l = &p.launches[0];
    // Row 3, column gpu__time_duration.sum: units row "us", value "22.592000".
    close(num(l, "gpu__time_duration.sum"), 22_592.0);
    // derived__pct_occupancy_per_register_count: unit "%/register" (kept as written), "4098.000000".
    close(num(l, "derived__pct_occupancy_per_register_count"), 4098.0);
    assert_eq!(unit(l, "derived__pct_occupancy_per_register_count"), "%/register");
    // derived__pct_occupancy_per_shared_mem_size: "%/Kbyte", "5.022000".
    close(num(l, "derived__pct_occupancy_per_shared_mem_size"), 5.022);
    assert_eq!(unit(l, "derived__pct_occupancy_per_shared_mem_size"), "%/Kbyte");
    // launch__registers_per_thread: "register/thread", "148".
    close(num(l, "launch__registers_per_thread"), 148.0);
    // A column without `__` that is not a launch attribute is a metric.
    assert!(l.metrics.contains_key("derived_tempMetric0"));
    assert_eq!(
        l.metrics["device__attribute_display_name"].value,
        MetricValue::Text("NVIDIA B200".into())
    );
    assert_eq!(l.attributes["CC"], "10.0");
    // 600 columns: `ID`, `Kernel Name`, 9 launch attributes and 589 metrics, of which
    // `launch__kernel_name` is empty in this row (absent): 588 metrics.
    assert_eq!(l.attributes.len(), 9);
    assert_eq!(l.metrics.len(), 588);
    assert!(!l.metrics.contains_key("launch__kernel_name"));
}

#[test]
fn wild_08_l20_raw_page_no_data_cells_are_absent() {
    let p = parse_file("ncu-wild/08_l20_raw_decode_attn.csv");
    let l = &p.launches[0];
    // Units row "us", value "57.984000".
    close(num(l, "gpu__time_duration.sum"), 57_984.0);
    // "%/register", "10252.000000".
    close(num(l, "derived__pct_occupancy_per_register_count"), 10_252.0);
    // "no data" in three columns: absent, never 0.
    for k in [
        "derived__local_spilling_requests_pct",
        "sass__inst_executed_register_spilling_mem_local",
        "sass__inst_executed_register_spilling_mem_shared",
    ] {
        assert!(!l.metrics.contains_key(k), "{k}");
    }
    // `inst_executed` (no `__`) is a metric, not an attribute.
    assert!(l.metrics.contains_key("inst_executed"));
    assert!(!l.attributes.contains_key("inst_executed"));
    assert_eq!(l.attributes["Grid Size"], "(4, 16, 1)");
}

#[test]
fn wild_11_h100_details_after_program_output() {
    let p = parse_file("ncu-wild/11_moe_h100_details_progout.csv");
    assert_eq!(p.launches.len(), 4);
    // Line 6: ID 0 "dram__throughput.avg.pct_of_peak_sustained_elapsed","%","10.89".
    close(
        num(
            &p.launches[0],
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        10.89,
    );
    // Line 18: ID 1, same metric, "10.85".
    close(
        num(
            &p.launches[1],
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        10.85,
    );
    // Line 51: ID 3 "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active","%","7.59".
    close(
        num(
            &p.launches[3],
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        ),
        7.59,
    );
    assert_eq!(p.launches[0].attributes["CC"], "9.0");
}

#[test]
fn wild_16_v100_2020_details() {
    let p = parse_file("ncu-wild/16_rodinia_v100_2020_hotspot.csv");
    let l = &p.launches[0];
    assert_eq!(l.kernel, "calculate_temp");
    // Line 17: "Duration","nsecond","51360".
    close(num(l, "Duration"), 51_360.0);
    // Line 14: "Elapsed Cycles","cycle","65690".
    close(num(l, "Elapsed Cycles"), 65_690.0);
    // Line 47: "Issued Instructions","inst","14985789".
    close(num(l, "Issued Instructions"), 14_985_789.0);
    // Line 53: "Static Shared Memory Per Block","byte/block","3072".
    close(num(l, "Static Shared Memory Per Block"), 3072.0);
    assert_eq!(l.attributes["Kernel Time"], "2020-Apr-20 14:58:54");
    // "Memory Throughput" occurs once here (Memory Workload Analysis, "byte/second",
    // "286275389408.10"), so it is bare; in 01 (2025) it occurs twice and is qualified in both
    // sections, never bare: the bare key does not go to whichever section comes first.
    close(num(l, "Memory Throughput"), 286_275_389_408.10);
    assert_eq!(unit(l, "Memory Throughput"), "byte/second");
}

#[test]
fn wild_18_windows_t4_metrics_with_n_a() {
    let p = parse_file("ncu-wild/18_winpy_t4_metrics_RECONSTRUCTED.csv");
    assert_eq!(p.launches.len(), 5);
    // Line 4: ID 0 "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","%","15.56".
    close(
        num(
            &p.launches[0],
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        15.56,
    );
    // Line 13: ID 1 "sm__warps_active.avg.pct_of_peak_sustained_active","%","80.37".
    close(
        num(
            &p.launches[1],
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ),
        80.37,
    );
    // Line 31: ID 4, same metric, "92.83".
    close(
        num(
            &p.launches[4],
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ),
        92.83,
    );
    // Line 8: "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.avg","","n/a": absent.
    assert!(
        !p.launches[0]
            .metrics
            .contains_key("smsp__warp_issue_stalled_long_scoreboard_per_warp_active.avg")
    );
}

#[test]
fn wild_19_nvtx_range_details() {
    let p = parse_file("ncu-wild/19_aipe_nvtx_range_details_RECONSTRUCTED.csv");
    let l = &p.launches[0];
    assert_eq!(l.kernel, "range");
    // Line 3: "gpu__time_duration.avg","ns","123480704" (once in the launch: bare key).
    close(num(l, "gpu__time_duration.avg"), 123_480_704.0);
    // Line 2 and line 7: gpu__dram_throughput... 0.06 in two sections: both qualified.
    close(
        num(
            l,
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed [Command line profiler metrics]",
        ),
        0.06,
    );
    // Line 10: Occupancy "sm__warps_active.avg.pct_of_peak_sustained_active","%","6.23".
    close(
        num(l, "sm__warps_active.avg.pct_of_peak_sustained_active [Occupancy]"),
        6.23,
    );
    let nvtx = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
    assert!(l.attributes[nvtx].contains("compute_kernel"));
    assert!(!l.attributes.contains_key("Stream"), "`n/a` is absent");
}

#[test]
fn wild_03_errors_only_and_10_no_kernels_exit_2_with_clear_messages() {
    let (code, stdout, stderr) = cli_parse(&fixture("ncu-wild/03_llmperf_error_only.csv"), true);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("ncu rejected a `--section` option")
            && stderr.contains("did not match any section")
            && stderr.contains("ncu --list-sections"),
        "{stderr}"
    );
    let (code, stdout, stderr) = cli_parse(&fixture("ncu-wild/10_moe_noprofiled_warning.csv"), false);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("No kernels were profiled"), "{stderr}");
    assert!(!stderr.contains("--csv"), "not told to pass a csv: {stderr}");
}

// ---------------------------------------------------------------------------------------------
// Damaged and foreign inputs (built from the real files)

#[test]
fn a_file_cut_off_mid_row_or_inside_a_quoted_cell_names_the_line() {
    let text = std::fs::read_to_string(fixture("ncu-wild/11_moe_h100_details_progout.csv")).unwrap();
    // Cut inside the last row's quoted value (`"7.5` of line 53).
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len();
    let cut = text.trim_end().rfind("\",").unwrap();
    let inside_quote = &text[..cut - 1];
    let e = parse(inside_quote).unwrap_err();
    assert_eq!(e.line, Some(last), "{e}");
    assert!(e.message.contains("ends inside a quoted cell"), "{e}");
    // Cut between cells of the last row.
    let row_start = text.trim_end().rfind('\n').unwrap() + 1;
    let mid_row = &text[..row_start + 40];
    let mid_row = &mid_row[..=mid_row.rfind('"').unwrap()];
    let e = parse(mid_row).unwrap_err();
    assert_eq!(e.line, Some(last), "{e}");
    // A raw page cut mid-row (04 ends without a final newline and is complete).
    let raw = std::fs::read_to_string(fixture("ncu-wild/04_accelsim_b200_raw.csv")).unwrap();
    assert!(!raw.ends_with('\n'));
    let cut = &raw[..raw.len() - 300];
    let cut = &cut[..=cut.rfind('"').unwrap()];
    let e = parse(cut).unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
}

#[test]
fn utf16_with_a_bom_is_read_and_without_one_refused() {
    let text = std::fs::read_to_string(fixture("ncu-wild/18_winpy_t4_metrics_RECONSTRUCTED.csv")).unwrap();
    let mut le = vec![0xFF, 0xFE];
    le.extend(
        text.replace('\n', "\r\n")
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    assert_eq!(parse_bytes(&le).unwrap(), parse(&text).unwrap());
    let mut be = vec![0xFE, 0xFF];
    be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    assert_eq!(parse_bytes(&be).unwrap(), parse(&text).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ps.csv");
    std::fs::write(&path, &le).unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 0, "{stderr}");
    // Without the BOM: refused, exit 2.
    std::fs::write(&path, &le[2..]).unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("UTF-16 without a byte-order mark"), "{stderr}");
}

#[test]
fn a_decimal_comma_locale_is_refused_from_anywhere_in_the_file() {
    let text = std::fs::read_to_string(fixture("ncu-wild/18_winpy_t4_metrics_RECONSTRUCTED.csv")).unwrap();
    // The last row's `92.83` % written as `92,83`: the whole file is refused, naming that line.
    let german = text.replacen("\"92.83\"", "\"92,83\"", 1);
    let line = german.lines().position(|l| l.contains("92,83")).unwrap() + 1;
    let e = parse(&german).unwrap_err();
    assert_eq!(e.line, Some(line));
    assert!(e.message.contains("decimal comma") && e.hint.unwrap().contains("LC_ALL=C"));
    // Durations alone: `117.344` ns (117344 ns with a `.` thousands separator) is refused too.
    let d = std::fs::read_to_string(fixture("ncu-wild/16_rodinia_v100_2020_hotspot.csv")).unwrap();
    let dotted = d.replace("\"nsecond\",\"51360\"", "\"nsecond\",\"51.360\"");
    assert_ne!(dotted, d);
    let e = parse(&dotted).unwrap_err();
    assert!(e.message.contains("`51.360`"), "{e}");
    // `1.234.567` anywhere.
    let dots = d.replace("\"14985789\"", "\"14.985.789\"");
    assert!(parse(&dots).unwrap_err().message.contains("`14.985.789`"));
}

#[test]
fn the_session_page_an_aborted_run_and_the_source_page_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.csv");
    // First lines of a real `--page session` export (CodeGandee/accelsim-test, the sibling
    // session.csv of 04_accelsim_b200_raw.csv, ncu 2025.2.1).
    std::fs::write(
        &path,
        "Launch Settings\n\"Launch Attribute\",\"Value\"\n\"Profiler Command Line\",\"ncu --set basic\"\n\n\
         Session Info\n\"Session Attribute\",\"Value\"\n\"CUDA Version\",\"13.1\"\n",
    )
    .unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 2);
    assert!(stderr.contains("session page (`--page session`)"), "{stderr}");
    assert!(!stderr.contains("pass the file ncu wrote with"), "{stderr}");
    // An aborted run: only the first lines of 11 (`==PROF== Connected` and program output).
    let text = std::fs::read_to_string(fixture("ncu-wild/11_moe_h100_details_progout.csv")).unwrap();
    let head: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, head).unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 2);
    assert!(stderr.contains("ncu did not finish"), "{stderr}");
    let (code, _, stderr) = cli_parse(&fixture("ncu-import/index.source.csv"), true);
    assert_eq!(code, 2);
    assert!(stderr.contains("source page (`--page source`)"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Property tests: the same table, differently wrapped

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn keys(p: &ParsedOutput) -> Vec<(u64, String, Vec<String>)> {
        p.launches
            .iter()
            .map(|l| (l.id, l.kernel.clone(), l.metrics.keys().cloned().collect()))
            .collect()
    }

    /// Split a details table into its header and its rows grouped by `Section Name`, in order.
    fn sections(text: &str) -> (String, Vec<(String, Vec<String>)>) {
        let start = text.find("\"ID\",").unwrap();
        let mut lines = text[start..].lines();
        let header = lines.next().unwrap().to_owned();
        let col = header.split("\",\"").position(|h| h == "Section Name").unwrap();
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for l in lines.filter(|l| l.starts_with('"')) {
            let rec = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(l.as_bytes())
                .records()
                .next()
                .unwrap()
                .unwrap();
            let s = rec[col].to_owned();
            match out.iter_mut().find(|(n, _)| *n == s) {
                Some((_, rows)) => rows.push(l.to_owned()),
                None => out.push((s, vec![l.to_owned()])),
            }
        }
        (header, out)
    }

    const DETAILS: &[&str] = &[
        "ncu-wild/01_llmperf_details_cc120.csv",
        "ncu-wild/02_llmperf_roofline_section.csv",
        "ncu-wild/16_rodinia_v100_2020_hotspot.csv",
        "ncu-wild/19_aipe_nvtx_range_details_RECONSTRUCTED.csv",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn crlf_and_output_before_the_table_change_nothing(
            file in 0usize..DETAILS.len(),
            crlf in any::<bool>(),
            noise in proptest::collection::vec("[a-zA-Z0-9 :.,=%\"-]{0,30}", 0..4),
        ) {
            let text = std::fs::read_to_string(fixture(DETAILS[file])).unwrap();
            let want = keys(&parse(&text).unwrap());
            let start = text.find("\"ID\",").unwrap();
            // Application output, then ncu's lines, then the table.
            let mut wrapped = String::new();
            for n in &noise {
                wrapped.push_str(n.trim_start_matches('='));
                wrapped.push('\n');
            }
            wrapped.push_str("==PROF== Connected to process 42 (/app)\n==PROF== Profiling \"k\": 0%....100% - 9 passes\n==PROF== Disconnected from process 42\n");
            wrapped.push_str(&text[start..]);
            if crlf {
                wrapped = wrapped.replace('\n', "\r\n");
            }
            let got = parse(&wrapped).unwrap();
            prop_assert_eq!(keys(&got), want);
            prop_assert_eq!(got.launches, parse(&text).unwrap().launches);
        }

        #[test]
        fn reordering_sections_gives_the_same_keys(
            file in 0usize..DETAILS.len(),
            seed in any::<u64>(),
        ) {
            let text = std::fs::read_to_string(fixture(DETAILS[file])).unwrap();
            let (header, mut secs) = sections(&text);
            // A deterministic shuffle from the seed.
            let mut s = seed;
            for i in (1..secs.len()).rev() {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let j = usize::try_from(s >> 33).unwrap() % (i + 1);
                secs.swap(i, j);
            }
            let mut shuffled = header.clone();
            shuffled.push('\n');
            for (_, rows) in &secs {
                for r in rows {
                    shuffled.push_str(r);
                    shuffled.push('\n');
                }
            }
            let a = parse(&text).unwrap();
            let b = parse(&shuffled).unwrap();
            prop_assert_eq!(keys(&a), keys(&b));
            prop_assert_eq!(a.launches, b.launches);
        }
    }
}
