//! What the terminal gets: the console table's width and colour, and the progress on stderr.
//! The command layer decides these from the flags, the environment and whether the streams are
//! terminals; the engine below only receives the decisions.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::Path;

use crate::commands::progress::{Bar, Lines, Verbosity};
use crate::report::console::{ColorChoice, ConsoleStyle};
use crate::run::progress::{NoProgress, Progress};

/// `--color`, `--quiet` and `--verbose`, shared by every command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ui {
    pub color: ColorChoice,
    pub verbosity: Verbosity,
}

impl Ui {
    /// The style for tables on stdout: the width of `COLUMNS` when it is a number (at least 20),
    /// else the terminal's, else none (a pipe or a file gets the whole table); colour as
    /// `--color` and the environment say.
    pub(crate) fn console(&self) -> ConsoleStyle {
        let stdout = std::io::stdout();
        let tty = stdout.is_terminal();
        let env = |k: &str| std::env::var(k).ok();
        let columns = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|c| *c >= 20);
        let width = columns.or_else(|| {
            tty.then(|| terminal_size::terminal_size_of(&stdout).map(|(w, _)| usize::from(w.0)))
                .flatten()
        });
        ConsoleStyle {
            width,
            color: self.color.enabled(tty, &env),
        }
    }

    /// The progress on stderr: the bar on a terminal (not `TERM=dumb`), lines elsewhere,
    /// nothing with `--quiet`. `prior` is a previous run's `cost_seconds`, for first ETAs.
    pub(crate) fn progress(&self, prior: BTreeMap<String, f64>) -> Box<dyn Progress> {
        if self.verbosity == Verbosity::Quiet {
            return Box::new(NoProgress);
        }
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        if std::io::stderr().is_terminal() && !dumb {
            Box::new(Bar::new(self.verbosity, prior))
        } else {
            Box::new(Lines::new(std::io::stderr(), self.verbosity, prior))
        }
    }
}

/// `cost_seconds` of the first of `files` that exists and reads as results; empty otherwise.
/// Only an estimate depends on it, so an unreadable file is not an error here.
pub(crate) fn prior_costs(files: &[Option<&Path>]) -> BTreeMap<String, f64> {
    files
        .iter()
        .flatten()
        // `-` is standard output, not a file of an earlier run.
        .filter(|p| !crate::foundation::fsutil::is_stdout(p) && p.is_file())
        .find_map(|p| crate::outcome::results::read(p).ok())
        .map(|r| r.cost_seconds)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prior_costs_come_from_the_first_results_file_that_reads() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/mixed.json");
        let missing = Path::new("/nonexistent/results.json");
        let costs = prior_costs(&[None, Some(missing), Some(&fixture)]);
        let expected = crate::outcome::results::read(&fixture).unwrap().cost_seconds;
        assert!(!expected.is_empty(), "the fixture has costs");
        assert_eq!(costs, expected);
        assert!(prior_costs(&[Some(missing)]).is_empty());
        let not_results = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        assert!(
            prior_costs(&[Some(&not_results)]).is_empty(),
            "only an estimate: no error"
        );
    }
}
