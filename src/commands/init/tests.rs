//! Tests of `cgp-gate init`: kernel names and filters, command templates, drafts.

use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

#[test]
fn function_names_are_what_ncu_matches_with_kernel_name_base_function() {
    assert_eq!(
        function_name("void matmul_tiled<32>(const float *, const float *, float *, int)"),
        "matmul_tiled"
    );
    assert_eq!(
        function_name("vector_add(const float *, const float *, float *, int)"),
        "vector_add"
    );
    assert_eq!(function_name("volta_sgemm_128x32_nn"), "volta_sgemm_128x32_nn");
    assert_eq!(
        function_name("enable_if<!T7, void>::type kernel<int, int, float, 0>(Params<int, float>)"),
        "kernel"
    );
    assert_eq!(
        function_name("void at::native::(anonymous namespace)::reduce_kernel<512, 1>(R<float>)"),
        "reduce_kernel"
    );
    assert_eq!(
        function_name("void device_kernel<G<T<long, long>>>(Params)"),
        "device_kernel"
    );
}

#[test]
fn numeric_arguments_become_size_parameters() {
    let t = command_template(&s(&[
        "./build/my_bench",
        "--n",
        "1024",
        "--block-size=256",
        "in{1}.bin",
        "7",
        "-k",
        "3",
    ]));
    assert_eq!(
        t.argv,
        s(&[
            "./build/my_bench",
            "--n",
            "{n}",
            "--block-size={block_size}",
            "in{{1}}.bin",
            "{arg5}",
            "-k",
            "{k}"
        ])
    );
    assert_eq!(
        t.params,
        vec![
            ("n".to_owned(), "1024".to_owned()),
            ("block_size".to_owned(), "256".to_owned()),
            ("arg5".to_owned(), "7".to_owned()),
            ("k".to_owned(), "3".to_owned()),
        ]
    );
    let dup = command_template(&s(&["b", "--n", "1", "--n", "2"]));
    assert_eq!(dup.argv, s(&["b", "--n", "{n}", "--n", "{n_2}"]));
}

#[test]
fn a_program_that_is_a_number_stays_the_program() {
    let t = command_template(&s(&["1024"]));
    assert_eq!(t.argv, s(&["1024"]));
    assert!(t.params.is_empty());
}

fn seen(name: &str, launches: usize, time: f64) -> KernelSeen {
    KernelSeen {
        name: kernel_key(name),
        function: function_name(name),
        launches,
        times: vec![time; launches],
        time_unit: "ns".to_owned(),
        registers: None,
    }
}

#[test]
fn kernel_filters_select_exactly_the_kernels_seen() {
    let k = |f: &str| seen(f, 1, 1.0);
    assert_eq!(kernel_filter(&[k("gemm"), k("gemm")]).as_deref(), Some("gemm"));
    assert_eq!(
        kernel_filter(&[k("volta_sgemm_128x32_nn"), k("volta_sgemm_64x64_nn")]).as_deref(),
        Some("regex:volta_sgemm_128x32_nn|volta_sgemm_64x64_nn")
    );
    assert_eq!(kernel_filter(&[k("range")]), None);
    // ncu 2025.3's print of a PyTorch kernel: once `0>`, a fragment that matched nothing.
    let ln = k(
        "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
    );
    assert_eq!(
        kernel_filter(std::slice::from_ref(&ln)).as_deref(),
        Some("vectorized_layer_norm_kernel")
    );
    // Two instantiations of one template, one wanted: the function name would select both.
    let a = k("void matmul_tiled<32>(const float *, int)");
    let b = k("void matmul_tiled<16>(const float *, int)");
    let f = kernel_filter_for(&[a.clone(), b.clone()], &[true, false]).unwrap();
    assert!(selects_exactly(&f, &[(&a.name, true), (&b.name, false)]), "{f}");
}

#[test]
fn init_proposes_the_kernels_that_matter_and_lists_setup_kernels() {
    // The kernels of a PyTorch program like examples/pytorch/torch_work.py (names as ncu
    // 2025.3 prints them; launch counts and times made up for the test).
    let kernels = [
        seen(
            "void at::native::unnamed>::distribution_elementwise_grid_stride_kernel<float, 4>(int, T2)",
            3,
            5_000.0,
        ),
        seen(
            "void at::native::vectorized_elementwise_kernel<4, FillFunctor<Half>, Array<char *, 1>>(int, T2, T3)",
            1,
            2_000.0,
        ),
        seen("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 3, 26_000.0),
        seen(
            "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>(int, T2, const T1 *)",
            3,
            60_000.0,
        ),
        seen("void at::native::reduce_kernel<512, 1>(R)", 1, 100.0),
    ];
    let p = proposal(&kernels);
    let gated: Vec<bool> = p.iter().map(|(_, g)| *g).collect();
    assert_eq!(gated, [false, false, true, true, false]);
    let share = p[2].0.unwrap();
    assert!((share - 78_000.0 / 275_100.0).abs() < 1e-9, "{share}");
    let f = kernel_filter_for(&kernels, &gated).unwrap();
    assert_eq!(
        f,
        "regex:nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT|vectorized_layer_norm_kernel"
    );
    // The cuBLAS kernel is picked by shape and GPU: the draft matches its family instead, still
    // selecting exactly the gated kernels; with the layer norm beside it, rows stay per kernel.
    let (lf, one) = library_filter(&kernels, &gated).unwrap();
    assert_eq!(lf, "regex:nvjet|gemm|xmma|cutlass|vectorized_layer_norm_kernel");
    assert!(!one);
    let names: Vec<(&str, bool)> = kernels
        .iter()
        .zip(&gated)
        .map(|(k, g)| (k.name.as_str(), *g))
        .collect();
    assert!(selects_exactly(&f, &names));
    let draft = Draft {
        name: "torch_work".into(),
        command: command_template(&s(&["python3", "torch_work.py", "--n", "2048", "--iters", "3"])),
        command_source: CommandSource::Given,
        kernels: kernels.to_vec(),
        origin: "test".into(),
        launches: 11,
        time_keys: Vec::new(),
        registers_everywhere: true,
        cwd: None,
    };
    let text = draft.render();
    assert!(text.contains("(setup)") && text.contains("(small)"), "{text}");
    assert!(
        text.contains("command: [python3, torch_work.py, --n, \"{n}\", --iters, \"3\"]"),
        "{text}"
    );
    assert!(text.contains("      - { n: 2048 }\n"), "{text}");
    assert!(
        text.contains("kernel: \"regex:nvjet|gemm|xmma|cutlass|vectorized_layer_norm_kernel\""),
        "{text}"
    );
    assert!(
        text.contains("A cuBLAS/CUTLASS kernel (`nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT`)"),
        "{text}"
    );
    assert!(!text.contains("    kernels: sum\n"), "{text}");
    crate::spec::load_str(&text, Path::new("cgp-gate.yaml")).unwrap();
    // The proposed `profiler: cupti`, uncommented, is a valid cupti target: the draft's metrics
    // and kernel filter are ones CUPTI measures and reads.
    let cupti = text.replace("    # profiler: cupti\n", "    profiler: cupti\n");
    assert_ne!(cupti, text, "{text}");
    let spec = crate::spec::load_str(&cupti, Path::new("cgp-gate.yaml")).unwrap();
    assert_eq!(spec.targets[0].profiler, crate::spec::ProfilerKind::Cupti);
}

#[test]
fn library_kernels_are_recognised_by_their_names() {
    for (name, lib) in [
        (
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
            Some(Library::Gemm),
        ),
        (
            "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>",
            Some(Library::Gemm),
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
            Some(Library::Gemm),
        ),
        ("ampere_sgemm_128x64_nn", Some(Library::Gemm)),
        ("void cudnn::ops::nchwToNhwcKernel<float>", Some(Library::Cudnn)),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", Some(Library::Nccl)),
        (
            "void at::native::vectorized_elementwise_kernel<4, AddFunctor<float>>",
            Some(Library::Aten),
        ),
        ("void matmul_tiled<32>", None),
        ("my_sgemm_naive", None),
        ("vector_add", None),
    ] {
        assert_eq!(library_of(name), lib, "{name}");
    }
}

/// The real cuBLAS captures of examples/pytorch (H100, ncu 2025.3.1): the one GEMM kernel of
/// each, `nvjet_sm90_...` and, after the switch, `Kernel2<cutlass_80_...>`, gets the same family
/// filter and `kernels: sum`, so the spec drafted from either capture selects the other's kernel;
/// no registers (they do not add up over kernels, and `validate` refuses them there).
#[test]
fn a_cublas_capture_drafts_a_family_filter_and_an_operation_row() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut filters = Vec::new();
    for file in [
        "examples/pytorch/recording/gemm/n=2048/0.csv",
        "examples/pytorch/switch/gemm-n2048-cutlass.csv",
    ] {
        let raw = std::fs::read_to_string(root.join(file)).unwrap();
        let parsed = crate::ncu_output::parse::parse(&raw).unwrap();
        let draft = Draft::new(
            &parsed,
            &raw,
            &s(&["python3", "torch_work.py", "--n", "2048"]),
            None,
            file,
        );
        let text = draft.render();
        assert!(
            text.contains("    kernel: \"regex:nvjet|gemm|xmma|cutlass\"\n    kernels: sum\n"),
            "{text}"
        );
        assert!(
            text.contains("the library picks its kernel by shape, GPU and library version"),
            "{text}"
        );
        assert!(!text.contains(REGISTERS_METRIC), "{text}");
        let spec = crate::spec::load_str(&text, Path::new("cgp-gate.yaml")).unwrap();
        filters.push(spec.targets[0].kernel.clone().unwrap());
        assert_eq!(kernels_seen(&parsed).len(), 1);
    }
    let nvjet = kernels_seen(
        &crate::ncu_output::parse::parse(
            &std::fs::read_to_string(root.join("examples/pytorch/recording/gemm/n=2048/0.csv")).unwrap(),
        )
        .unwrap(),
    );
    let cutlass = kernels_seen(
        &crate::ncu_output::parse::parse(
            &std::fs::read_to_string(root.join("examples/pytorch/switch/gemm-n2048-cutlass.csv")).unwrap(),
        )
        .unwrap(),
    );
    for f in &filters {
        assert!(
            crate::profile::filter::matches(f, &nvjet[0].name)
                && crate::profile::filter::matches(f, &cutlass[0].name)
        );
    }
}

#[test]
fn loop_counts_stay_out_of_the_sizes() {
    let t = command_template(&s(&[
        "./b",
        "--n",
        "64",
        "--launches",
        "3",
        "--warmup=2",
        "--repeat",
        "5",
    ]));
    assert_eq!(
        t.argv,
        s(&[
            "./b",
            "--n",
            "{n}",
            "--launches",
            "3",
            "--warmup=2",
            "--repeat",
            "5"
        ])
    );
    assert_eq!(t.params, [("n".to_owned(), "64".to_owned())]);
}

#[test]
fn the_connected_line_names_the_program() {
    let raw = "hello\n==PROF== Connected to process 40027 (/work/examples/build/matmul)\n";
    assert_eq!(
        connected_program(raw).as_deref(),
        Some("/work/examples/build/matmul")
    );
    assert_eq!(connected_program("==PROF== Connected to process 36493\n"), None);
    assert_eq!(
        connected_program("==PROF== Connected to process 1 (C:\\Python311\\python.exe)\r\n").as_deref(),
        Some("C:\\Python311\\python.exe")
    );
}

#[test]
fn yaml_scalars_are_quoted_when_plain_would_change_them() {
    assert_eq!(yaml_str("./build/x"), "./build/x");
    assert_eq!(yaml_str("{n}"), "\"{n}\"");
    assert_eq!(yaml_str("1024"), "\"1024\"");
    assert_eq!(yaml_str("--n"), "--n");
    assert_eq!(yaml_str("-"), "\"-\"");
    assert_eq!(size_value("1024"), "1024");
    assert_eq!(size_value("007"), "\"007\"");
    assert_eq!(size_value("1.5"), "\"1.5\"");
    assert_eq!(yaml_str("no"), "\"no\"");
    assert_eq!(yaml_str("C:\\x y"), "\"C:\\\\x y\"");
}

#[test]
fn target_names_come_from_the_program_file() {
    assert_eq!(target_name(Some("./build/my_bench")), "my_bench");
    assert_eq!(target_name(Some("C:\\Python311\\python.exe")), "python");
    assert_eq!(target_name(Some(PLACEHOLDER_PROGRAM)), "bench");
    assert_eq!(target_name(Some("./a b+c")), "a_b_c");
    // Past the interpreter, to the script or module.
    let name = |argv: &[&str]| target_name(program_of(&s(argv)));
    assert_eq!(name(&["python3", "torch_work.py", "--n", "2048"]), "torch_work");
    assert_eq!(name(&["python3.12", "-u", "bench/run_gemm.py"]), "run_gemm");
    assert_eq!(name(&["python", "-m", "pkg.bench_attn"]), "bench_attn");
    assert_eq!(name(&["/usr/bin/python3"]), "python3");
    assert_eq!(name(&["./build/matmul", "--n", "1"]), "matmul");
    // `env` (in the one list of interpreters, `foundation::program`) runs the program after its
    // variables, itself maybe an interpreter.
    assert_eq!(
        name(&["env", "CUDA_VISIBLE_DEVICES=0", "python3", "torch_work.py"]),
        "torch_work"
    );
    assert_eq!(name(&["/usr/bin/env", "-i", "./build/gemm", "--n", "1"]), "gemm");
    assert_eq!(name(&["env"]), "env");
}
