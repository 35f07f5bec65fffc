//! Shell completions (clap_complete) and man pages (clap_mangen), generated from the same
//! definitions as `--help`, so they cannot drift from the flags.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory as _;

use super::Cli;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

fn stdout_err(e: std::io::Error) -> Error {
    Error::io("write", "<stdout>", e)
}

/// The completion script for `shell`.
pub(crate) fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "cgp-gate", &mut script);
    if shell == clap_complete::Shell::Bash {
        // clap_complete 4.6 spells the state of a subcommand of a hyphenated binary two ways:
        // the dispatch loop sets `cgp__gate__subcmd__check`, the case arms test
        // `cgp__subcmd__gate__subcmd__check`, so nothing after the subcommand completes
        // (clap-rs/clap#6421). Spell the arms like the loop; with a fixed clap_complete this is
        // a no-op, and tests/cli_ux.rs completes a subcommand's option values in a real bash.
        let text = String::from_utf8_lossy(&script).replace("cgp__subcmd__gate", "cgp__gate");
        return text.into_bytes();
    }
    script
}

/// `cgp-gate completions SHELL`.
///
/// # Errors
/// Writing to stdout.
pub(crate) fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<Exit> {
    out.write_all(&completion_script(shell)).map_err(stdout_err)?;
    Ok(Exit::Ok)
}

/// `cgp-gate man [--dir DIR]`: `cgp-gate.1` on stdout, or a page per command and subcommand
/// (`cgp-gate-baseline-update.1`) written into DIR.
///
/// # Errors
/// Writing to stdout or into DIR.
pub(crate) fn man(dir: Option<&Path>, out: &mut dyn Write) -> Result<Exit> {
    let mut cmd = Cli::command();
    // Fills in each subcommand's usage name (`cgp-gate baseline update`).
    cmd.build();
    let Some(dir) = dir else {
        clap_mangen::Man::new(cmd).render(out).map_err(stdout_err)?;
        return Ok(Exit::Ok);
    };
    if crate::foundation::fsutil::is_stdout(dir) {
        return Err(Error::Usage(
            "--dir -: man --dir writes one page per command into a folder; without --dir, cgp-gate.1 goes to standard output".to_owned(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    let mut pages = vec![("cgp-gate".to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("cgp-gate-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().display_name(name)));
        for subsub in sub.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = format!("cgp-gate-{}-{}", sub.get_name(), subsub.get_name());
            pages.push((name.clone(), subsub.clone().display_name(name)));
        }
    }
    // No page is written through a link, onto a FIFO or a device (issue 44): every path is
    // checked before the first page is written.
    let paths: Vec<std::path::PathBuf> = pages.iter().map(|(n, _)| dir.join(format!("{n}.1"))).collect();
    let named: Vec<(&str, &Path)> = paths.iter().map(|p| ("man --dir", p.as_path())).collect();
    crate::commands::outputs::refuse_outputs_onto_inputs(&named, &[])?;
    for (name, page) in pages {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut bytes)
            .map_err(|e| Error::io("render", &name, e))?;
        let path = dir.join(format!("{name}.1"));
        crate::foundation::fsutil::write_atomic(&path, &bytes)?;
        writeln!(out, "wrote {}", path.display()).map_err(stdout_err)?;
    }
    Ok(Exit::Ok)
}
