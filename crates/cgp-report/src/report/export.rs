//! The report formats a results file is written in (hyperfine's `ExportType` and `Exporter`):
//! each format implements [`Exporter`], and [`ExportType::ALL`] lists them once, with the flag
//! that asks for each. A new format is one more exporter and one more entry here; the command
//! line's flag (`cli::args::ReportPathsArgs`), the path (`publish::ReportPaths`) and the step
//! output follow from it.

use crate::foundation::error::Result;
use crate::outcome::view::RunView;

/// A report format: renders a decided run (`outcome::view`, which `&Results` converts into)
/// into a file's text, and decides nothing.
pub trait Exporter {
    /// The file's text.
    ///
    /// # Errors
    /// A serialiser's failure ([`crate::Error::Output`]).
    fn render(&self, run: RunView<'_>) -> Result<String>;
}

/// The results themselves (`--json`): what `report`, `merge`, `changes` and `baseline update
/// --from` read back.
pub struct Json;
/// JUnit XML for CI test reporters (`--junit`).
pub struct Junit;
/// The Markdown report, the pull-request comment's text (`--markdown`).
pub struct Markdown;
/// One self-contained HTML page with charts (`--html`).
pub struct Html;

impl Exporter for Json {
    fn render(&self, run: RunView<'_>) -> Result<String> {
        run.to_json()
    }
}

impl Exporter for Junit {
    fn render(&self, run: RunView<'_>) -> Result<String> {
        Ok(crate::report::junit(run))
    }
}

impl Exporter for Markdown {
    fn render(&self, run: RunView<'_>) -> Result<String> {
        Ok(crate::report::markdown(
            run,
            &crate::report::MarkdownOptions::default(),
        ))
    }
}

impl Exporter for Html {
    fn render(&self, run: RunView<'_>) -> Result<String> {
        Ok(crate::report::html(run))
    }
}

/// Which format: the one list of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExportType {
    Json,
    Junit,
    Markdown,
    Html,
}

impl ExportType {
    /// Every format, in the order their files are named and written.
    pub const ALL: [Self; 4] = [Self::Json, Self::Junit, Self::Markdown, Self::Html];

    /// The command-line option that asks for this format.
    pub const fn flag(self) -> &'static str {
        match self {
            Self::Json => "--json",
            Self::Junit => "--junit",
            Self::Markdown => "--markdown",
            Self::Html => "--html",
        }
    }

    /// Whether this is a report of the results rather than the results themselves: `emit`
    /// writes the reports; the command that made the results writes `--json` first, before its
    /// console table (`Results::write`).
    pub const fn is_report(self) -> bool {
        !matches!(self, Self::Json)
    }

    /// Its exporter.
    pub fn exporter(self) -> &'static dyn Exporter {
        match self {
            Self::Json => &Json,
            Self::Junit => &Junit,
            Self::Markdown => &Markdown,
            Self::Html => &Html,
        }
    }
}
