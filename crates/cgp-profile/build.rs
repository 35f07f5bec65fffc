//! Compiles the CUPTI injection library (src/cupti/inject.c) into a shared object in OUT_DIR,
//! which src/cupti/inject.rs embeds with `include_bytes!` (that file says why it travels
//! embedded). The `cc` crate finds the target's C compiler and flags; the shared object is linked
//! by that compiler directly, since `cc` itself builds static archives only. No CUDA is needed:
//! the library loads libcupti at run time.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/cupti/inject.c");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let so = out.join("libcgp_gate_cupti.so");
    // The library is for Linux (the CUDA driver's CUDA_INJECTION64_PATH); elsewhere the binary
    // embeds an empty file and `cupti::inject` says the build has none.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        std::fs::write(&so, b"").expect("write an empty library into OUT_DIR");
        return;
    }
    let compiler = cc::Build::new()
        .opt_level(2)
        .flag("-fPIC")
        .flag("-fvisibility=default")
        .warnings(true)
        .extra_warnings(true)
        .get_compiler();
    let status = compiler
        .to_command()
        // Warnings are not errors here: a user's newer compiler may warn where ours did not, and
        // `cargo install` must still build. crates/cgp-profile/tests/it/cupti_lib.rs compiles inject.c with -Werror.
        .args(["-shared", "-std=gnu11", "-Wall", "-Wextra", "-o"])
        .arg(&so)
        .arg("src/cupti/inject.c")
        .args(["-ldl", "-lpthread"])
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {:?}: {e}", compiler.path()));
    assert!(
        status.success(),
        "the C compiler failed to build src/cupti/inject.c (the CUPTI injection library)"
    );
}
