use super::*;

const HEADER: &str = "{\"cgp_gate_cupti\":1,\"cupti_version\":18,\"kernel_record\":8,\"pid\":4242}\n";
const KERNEL: &str = "{\"m\":\"_Z10vector_addPKfS0_Pfi\",\"grid\":[4096,1,1],\"block\":[256,1,1],\"regs\":16,\"smem_static\":0,\"smem_dynamic\":128,\"start\":1000,\"end\":3500,\"device\":0,\"context\":1,\"stream\":7,\"corr\":42,\"graph\":0}\n";

#[test]
fn a_complete_trace_reads_back_every_field() {
    let text = format!("{HEADER}{KERNEL}{{\"end\":1,\"records\":1,\"dropped\":3}}\n");
    let t = parse(text.as_bytes()).unwrap();
    assert_eq!(
        (t.cupti_version, t.pid, t.dropped, t.complete),
        (18, 4242, 3, true)
    );
    assert_eq!(t.error, None);
    let k = &t.kernels[0];
    assert_eq!(k.name, "vector_add(float const*, float const*, float*, int)");
    assert_eq!(k.mangled, "_Z10vector_addPKfS0_Pfi");
    assert_eq!((k.grid, k.block), ([4096, 1, 1], [256, 1, 1]));
    assert_eq!((k.registers, k.static_shared, k.dynamic_shared), (16, 0, 128));
    assert_eq!((k.start_ns, k.end_ns), (1000, 3500));
    assert_eq!(
        (k.device, k.context, k.stream, k.correlation, k.graph_id),
        (0, 1, 7, 42, 0)
    );
}

#[test]
fn no_trailer_means_the_process_died_and_a_cut_last_line_is_dropped() {
    let cut = &KERNEL[..KERNEL.len() / 2];
    let t = parse(format!("{HEADER}{KERNEL}{cut}").as_bytes()).unwrap();
    assert!(!t.complete);
    assert_eq!(t.kernels.len(), 1);
    // The same cut line in the middle is damage, named by its line.
    let err = parse(format!("{HEADER}{cut}\n{KERNEL}").as_bytes()).unwrap_err();
    assert!(matches!(err, TraceError::Line { line: 2, .. }), "{err}");
}

#[test]
fn a_failure_line_is_kept_with_cuptis_text() {
    let text = format!(
        "{HEADER}{{\"error\":\"cuptiActivityEnable\",\"code\":15,\"message\":\"CUPTI_ERROR_NOT_INITIALIZED\"}}\n{{\"error\":\"cuptiActivityFlushAll\",\"code\":15,\"message\":\"x\"}}\n{{\"end\":1,\"records\":0,\"dropped\":0}}\n"
    );
    let t = parse(text.as_bytes()).unwrap();
    let e = t.error.unwrap();
    assert_eq!(
        (e.call.as_str(), e.code, e.message.as_str()),
        ("cuptiActivityEnable", 15, "CUPTI_ERROR_NOT_INITIALIZED")
    );
    assert!(t.complete);
}

#[test]
fn damage_is_an_error_with_its_line() {
    let trailer = "{\"end\":1,\"records\":1,\"dropped\":0}\n";
    let cases: Vec<(String, usize)> = vec![
        (KERNEL.to_owned(), 1),
        (format!("{HEADER}{}", KERNEL.replace("\"regs\":16,", "")), 2),
        (format!("{HEADER}{}", KERNEL.replace("4096", "-1")), 2),
        (
            format!("{HEADER}{}", KERNEL.replace("\"end\":3500", "\"end\":999")),
            2,
        ),
        (format!("{HEADER}{KERNEL}{trailer}{KERNEL}"), 4),
        (format!("{HEADER}{KERNEL}{KERNEL}{trailer}"), 4),
        (format!("{HEADER}{HEADER}"), 2),
        (format!("{HEADER}[1,2]\n"), 2),
        (format!("{HEADER}{{}}\n"), 2),
        (format!("{HEADER}{}", trailer.trim_end()), 2),
    ];
    for (text, line) in cases {
        match parse(text.as_bytes()) {
            Err(TraceError::Line { line: l, .. }) => assert_eq!(l, line, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert_eq!(parse(b""), Err(TraceError::Empty));
    // Format 2 carries the run's nonce; format 1 has none and still reads.
    let two = parse(b"{\"cgp_gate_cupti\":2,\"pid\":1,\"nonce\":\"ab\"}\n").unwrap();
    assert_eq!(two.nonce.as_deref(), Some("ab"));
    let one = parse(b"{\"cgp_gate_cupti\":1,\"pid\":1}\n").unwrap();
    assert_eq!(one.nonce, None);
    let newer = parse(b"{\"cgp_gate_cupti\":3,\"pid\":1}\n").unwrap_err();
    assert!(matches!(newer, TraceError::Newer { version: 3, .. }), "{newer}");
}

#[test]
fn limits_hold() {
    let long = format!("{HEADER}{{\"m\":\"{}\"}}\n", "a".repeat(MAX_LINE_BYTES));
    let err = parse(long.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("line limit"), "{err}");
    let big = vec![b' '; usize::try_from(MAX_FILE_BYTES).unwrap() + 1];
    assert!(matches!(parse(&big), Err(TraceError::TooLarge { .. })));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
    /// Any bytes, any cut or splice of a real trace: an answer, never a panic.
    #[test]
    fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
                    cut in 0usize..600, at in 0usize..600) {
        let _ = parse(&bytes);
        let real = format!("{HEADER}{KERNEL}{KERNEL}{{\"end\":1,\"records\":2,\"dropped\":0}}\n");
        let real = real.as_bytes();
        let cut = cut.min(real.len());
        let _ = parse(&real[..cut]);
        let at = at.min(real.len());
        let mut spliced = real[..at].to_vec();
        spliced.extend_from_slice(&bytes);
        spliced.extend_from_slice(&real[at..]);
        let _ = parse(&spliced);
    }
}

/// `std::pair<L, L>` nested `levels` deep, each level naming the one before through a
/// substitution (`S<seq-id>_`, base 36), so the demangled name doubles at each level.
fn doubling_name(levels: u32) -> String {
    let seq = |k: u32| {
        const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let (mut k, mut id) = (k - 1, Vec::new());
        loop {
            id.insert(0, DIGITS[(k % 36) as usize]);
            k /= 36;
            if k == 0 {
                break;
            }
        }
        format!("S{}_", String::from_utf8(id).unwrap())
    };
    let mut name = String::from("_Z1fISt4pairIiiE");
    for level in 0..levels {
        let s = seq(2 * level + 2);
        name.push_str(&format!("St4pairI{s}{s}E"));
    }
    name + "Evv"
}

#[test]
fn demangling_is_bounded_and_spelled_as_for_ncu_names() {
    // Doubling for real: 6 levels demangle to over 2^6 `std::pair<int, int>`s' worth of text...
    let six = demangle(&doubling_name(6));
    assert!(six.starts_with("void f<std::pair<int, int>, std::pair<std::pair<int, int>, "));
    assert!(six.len() > 64 * "std::pair<int, int>".len(), "{}", six.len());
    // ... so 40 would be terabytes: the mangled name is kept instead.
    let forty = doubling_name(40);
    assert_eq!(demangle(&forty), forty);
    // The same spelling as profile::filter::demangled gives ncu's names.
    assert_eq!(
        demangle("_Z10vector_addPKfS0_Pfi"),
        "vector_add(float const*, float const*, float*, int)"
    );
    assert_eq!(demangle("vector_add"), "vector_add");
}

#[test]
fn files_of_a_run_are_its_own_then_other_processes_by_pid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("0.cupti");
    assert!(files_of(&out).is_empty());
    for name in [
        "0.cupti.20",
        "0.cupti.3",
        "0.cupti.x",
        "0.cupti.+4",
        ".0.cupti.tmp.5",
        "1.cupti",
        "0.cupti",
    ] {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    let names: Vec<_> = files_of(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["0.cupti", "0.cupti.3", "0.cupti.20"]);
}

#[test]
fn demangling_in_a_file_is_bounded_by_name_and_in_total() {
    let line = |m: &str| KERNEL.replace("_Z10vector_addPKfS0_Pfi", m);
    // Over the per-name bound: kept mangled.
    let long = format!(
        "_ZN5cgpns4gemmILi128EfEEvPKT0_S3_{}i",
        "PS3_".repeat(MAX_DEMANGLE_INPUT / 4)
    );
    let t = parse(format!("{HEADER}{}", line(&long)).as_bytes()).unwrap();
    assert_eq!(t.kernels[0].name, long);
    // Distinct names past the total budget stay mangled; repeats of a known one do not count.
    // 1,000-character function names: about a thousand fit in the budget.
    let pad = "x".repeat(987);
    let name = |i: usize| format!("_Z1000kernel_{i:06}{pad}v");
    let mut text = HEADER.to_owned();
    let each = name(0).len();
    let fit = MAX_DEMANGLE_BYTES / each;
    for i in 0..fit + 2 {
        text.push_str(&line(&name(i)));
    }
    text.push_str(&line(&name(0)));
    let t = parse(text.as_bytes()).unwrap();
    assert_eq!(t.kernels[0].name, format!("kernel_000000{pad}()"));
    assert_eq!(t.kernels[fit - 1].name, format!("kernel_{:06}{pad}()", fit - 1));
    assert_eq!(t.kernels[fit + 1].name, name(fit + 1));
    assert_eq!(t.kernels.last().unwrap().name, format!("kernel_000000{pad}()"));
}

#[test]
fn the_header_nonce_is_read_from_the_first_line_alone() {
    assert_eq!(
        header_nonce("{\"cgp_gate_cupti\":2,\"pid\":1,\"nonce\":\"ab\"}\nnot json"),
        Some(Some("ab".to_owned()))
    );
    assert_eq!(
        header_nonce("{\"cgp_gate_cupti\":2,\"pid\":1,\"nonce\":\"\"}\n"),
        Some(None)
    );
    assert_eq!(header_nonce("{\"cgp_gate_cupti\":1,\"pid\":1}\n"), Some(None));
    assert_eq!(header_nonce("{\"m\":\"k\"}\n"), None);
    assert_eq!(header_nonce(""), None);
}
