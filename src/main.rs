//! The `cgp-gate` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    cgp_gate::cli::main()
}
