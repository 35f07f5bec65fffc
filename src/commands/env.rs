//! `cgp-gate env`: what cgp-gate would measure on (ncu, each GPU's fingerprint), and a repair
//! for clocks a killed run left locked. Informational: exit 0 with or without a GPU.

use std::io::Write;

use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::gpu::{Gpu, GpuUnavailable};

/// Everything `env` needs from the command line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    pub json: bool,
    pub reset_clocks: bool,
    pub dry_run: bool,
}

/// Run `cgp-gate env`. Exit 0 whether or not a GPU is there (it is informational);
/// `--reset-clocks` without NVML, or failing, is an environment error (exit 3).
///
/// # Errors
/// [`Error::Environment`] for `--reset-clocks` without NVML or when a reset fails; write errors.
pub(crate) fn run(args: &Options, out: &mut dyn Write) -> Result<Exit> {
    let gpu = crate::gpu::open();
    if args.reset_clocks {
        let g = gpu.map_err(|u| Error::Environment(format!("cannot reset GPU clocks: {u}")))?;
        crate::gpu::clocks::reset_all_clocks(g.as_ref(), args.dry_run, out)?;
        return Ok(Exit::Ok);
    }
    let gpu_ref: std::result::Result<&dyn Gpu, &GpuUnavailable> = match &gpu {
        Ok(g) => Ok(g.as_ref()),
        Err(u) => Err(u),
    };
    let report = crate::gpu::env_report(gpu_ref, crate::ncu::install::detect_ncu());
    let write_err = |e| Error::io("write", "<stdout>", e);
    if args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::Environment(format!("cannot encode the report: {e}")))?;
        writeln!(out, "{text}").map_err(write_err)?;
    } else {
        write!(out, "{}", crate::gpu::render_text(&report)).map_err(write_err)?;
    }
    Ok(Exit::Ok)
}
