//! `cgp-gate doctor`: is this machine ready to measure? Each check on one line, `ok` or what to
//! fix (issue 46, "the first errors"). The checks are the live runs' preflight
//! ([`crate::profile::machine`]). With `--spec`, only what that spec's targets need counts (a harness
//! target needs no GPU: its device is in its own file; `--replay` needs nothing); without, a GPU,
//! counter access and ncu count, and nsys and libcupti are said for the targets that would use
//! them. Exit 0 when every check that counts passes, else an environment error (exit 3) naming
//! each failed one.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::profile::machine::Need;

/// Everything `doctor` needs from the command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub spec: Option<PathBuf>,
}

/// Run `cgp-gate doctor`.
///
/// # Errors
/// The spec's errors; [`Error::Environment`] naming each failed check that counts.
pub(crate) fn run(args: &Options, out: &mut dyn Write) -> Result<Exit> {
    let spec = args.spec.as_deref().map(crate::spec::load).transpose()?;
    let (counted, libcupti): (BTreeSet<Need>, Option<PathBuf>) = match &spec {
        Some(s) => crate::profile::machine::needs(&s.targets.iter().collect::<Vec<_>>()),
        None => ([Need::Gpu, Need::Counters, Need::Ncu].into_iter().collect(), None),
    };
    let opened = crate::gpu::open();
    let gpu = opened.as_ref().map(AsRef::as_ref);
    let write_err = |e| Error::io("write", "<stdout>", e);
    let mut failed = Vec::new();
    for need in Need::ALL {
        let mut check = crate::profile::machine::check(need, gpu, libcupti.as_deref());
        // The stand-in of `CGP_GATE_STAND_IN_GPU` passes a live run's preflight (that is what it
        // is for: cgp-gate's tests of live paths), but this machine cannot measure with it.
        if need == Need::Gpu
            && let (Ok(g), Ok(found)) = (gpu, &check)
            && g.stand_in()
        {
            check = Err(crate::profile::machine::Failed {
                wrong: format!(
                    "the SYNTHETIC stand-in GPU of CGP_GATE_STAND_IN_GPU ({found}): nothing is read from hardware"
                ),
                fix: "unset CGP_GATE_STAND_IN_GPU (it is for cgp-gate's own tests); on a GPU runner NVML then names the real GPU".to_owned(),
            });
        }
        let counts = counted.contains(&need);
        let line = match (&check, counts) {
            (Ok(found), _) => format!("ok    {:<15} {found}", need.label()),
            (Err(f), true) => {
                failed.push(need.label());
                format!("FAIL  {:<15} {}\n      fix: {}", need.label(), f.wrong, f.fix)
            }
            (Err(f), false) => {
                format!(
                    "-     {:<15} {} (not needed {})",
                    need.label(),
                    f.wrong,
                    if spec.is_some() {
                        "by this spec"
                    } else {
                        "unless a target uses it"
                    }
                )
            }
        };
        writeln!(out, "{}", crate::foundation::sanitize::block(&line)).map_err(write_err)?;
    }
    if spec.is_some() && counted.is_empty() {
        writeln!(
            out,
            "this spec's targets need no GPU tools (harness files name their device)"
        )
        .map_err(write_err)?;
    }
    if failed.is_empty() {
        return Ok(Exit::Ok);
    }
    Err(Error::Environment(format!(
        "this machine cannot measure yet: {} failed; fix what each line above says, then run `cgp-gate doctor` again",
        failed.join(", ")
    )))
}
