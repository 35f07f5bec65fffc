//! The command line: clap definitions and dispatch. Work happens in the library modules.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{Error, Result};
use crate::exit_codes;

const EXIT_CODES_HELP: &str = "Exit codes:\n  0  pass / success\n  1  regression found\n  2  invalid input or usage (spec, arguments, baselines, results)\n  3  profiler or environment failure (ncu, the application, the GPU)";

/// CI performance-regression gate for GPU kernels, built on NVIDIA Nsight Compute.
#[derive(Debug, Parser)]
#[command(name = "cgp-gate", version, about, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a spec file and exit 0 (valid) or 2 (invalid).
    Validate {
        /// The spec file.
        #[arg(long, default_value = "cgp-gate.yaml")]
        spec: PathBuf,
    },
    /// Print the JSON Schema of the spec (for yaml-language-server and other editors).
    Schema,
    /// Parse an ncu CSV output file and print its launches.
    Parse {
        /// An ncu CSV output (raw or details page, with or without `==PROF==` lines).
        file: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit_codes::INVALID_INPUT
            } else {
                exit_codes::OK
            };
            let _ = e.print();
            return exit(code);
        }
    };
    match run(cli) {
        Ok(code) => exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            exit(e.exit_code())
        }
    }
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}

/// Run a parsed command line; returns the exit code.
///
/// # Errors
/// Any [`Error`]; its exit code is [`Error::exit_code`].
pub fn run(cli: Cli) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Validate { spec } => {
            let s = crate::spec::load(&spec)?;
            let sizes: usize = s.targets.iter().map(|t| t.sizes.len()).sum();
            let metrics: usize = s.targets.iter().map(|t| t.metrics.len()).sum();
            writeln!(
                out,
                "{}: ok ({} targets, {sizes} sizes, {metrics} metrics)",
                spec.display(),
                s.targets.len()
            )
            .map_err(stdout_err)?;
            Ok(exit_codes::OK)
        }
        Command::Schema => {
            let text = serde_json::to_string_pretty(&crate::spec::json_schema()).unwrap_or_default();
            writeln!(out, "{text}").map_err(stdout_err)?;
            Ok(exit_codes::OK)
        }
        Command::Parse { file, json } => {
            let text = std::fs::read_to_string(&file).map_err(|e| Error::io("read", &file, e))?;
            let parsed = crate::ncu::parse::parse(&text).map_err(|e| Error::input(&file, e.to_string()))?;
            if json {
                // Buffered: stdout is line-buffered and the JSON is one long line.
                let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut out);
                serde_json::to_writer(&mut w, &parsed).map_err(|e| stdout_err(std::io::Error::other(e)))?;
                writeln!(w).and_then(|()| w.flush()).map_err(stdout_err)?;
            } else {
                write!(
                    out,
                    "{}",
                    crate::report::console::launches_table(&parsed.launches)
                )
                .map_err(stdout_err)?;
            }
            Ok(exit_codes::OK)
        }
    }
}

fn stdout_err(e: std::io::Error) -> Error {
    Error::io("write", "<stdout>", e)
}
