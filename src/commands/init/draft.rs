//! The draft spec init writes: its text, with the kernels listed in comments.

use super::command::{
    CommandTemplate, command_template, connected_program, one_line, program_of, size_value, target_name,
    yaml_str,
};
use super::kernels::{
    KernelSeen, is_setup, kernel_filter_for, kernels_seen, library_filter, library_of, proposal,
};
use super::*;

/// Where the spec's command came from, for its comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandSource {
    /// Given after `--`.
    Given,
    /// The `==PROF== Connected to process` line (the program only, not its arguments).
    Connected,
    /// Nothing said which program ran.
    Placeholder,
}

/// Launches of each gated kernel in one process from which the draft asks for one process per
/// row: the simulation of docs/statistics.md 6.1 ran 30 per process (29 after the warm-up).
pub(super) const ONE_PROCESS_LAUNCHES: usize = 30;

/// The commented `profiler: cupti` every draft proposes: its two metrics (time, registers) are
/// ones CUPTI measures, at the program's own speed and without counter permission (docs/cupti.md).
pub(super) const CUPTI_PROPOSAL: &str = "    # Both metrics below are ones CUPTI measures too: uncomment the next line to time the\n    # kernels at the program's own speed, without ncu's replay or counter permission; add\n    # `explain: remeasure` to have ncu say why only when a time changed (docs/cupti.md).\n    # profiler: cupti\n";

/// Everything the written spec says.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    pub name: String,
    pub command: CommandTemplate,
    pub command_source: CommandSource,
    pub kernels: Vec<KernelSeen>,
    /// Where the launches came from (`run.csv`, or the command run under ncu).
    pub origin: String,
    pub launches: usize,
    /// The duration keys the capture's launches hold (of `TIME_KEYS`), each once.
    pub time_keys: Vec<String>,
    /// Every launch of the capture reports its registers per thread (a details page may hold
    /// the Launch Statistics section for some launches only, or none).
    pub registers_everywhere: bool,
    /// `cwd:` of the target: where init ran, relative to the spec's directory, when the spec is
    /// written elsewhere (`--output other/dir/spec.yaml`); the program runs where it ran.
    pub cwd: Option<String>,
}

impl Draft {
    /// The draft for a capture: `command` is what was given after `--` (may be empty), `raw` the
    /// capture's text (for the `Connected` line).
    pub(crate) fn new(
        parsed: &ParsedOutput,
        raw: &str,
        command: &[String],
        name: Option<&str>,
        origin: &str,
    ) -> Self {
        let (argv, command_source) = if !command.is_empty() {
            (command.to_vec(), CommandSource::Given)
        } else if let Some(p) = connected_program(raw) {
            (vec![p], CommandSource::Connected)
        } else {
            (vec![PLACEHOLDER_PROGRAM.to_owned()], CommandSource::Placeholder)
        };
        let name = name.map_or_else(|| target_name(program_of(&argv)), str::to_owned);
        Self {
            name,
            command: command_template(&argv),
            command_source,
            kernels: kernels_seen(parsed),
            origin: origin.to_owned(),
            launches: parsed.launches.len(),
            time_keys: time_keys(parsed),
            registers_everywhere: parsed
                .launches
                .iter()
                .all(|l| super::kernels::number(l, REGISTER_KEYS).is_some()),
            cwd: None,
        }
    }

    /// The spec's text.
    pub(crate) fn render(&self) -> String {
        let mut s = String::new();
        let kernels = self.kernels.len();
        let _ = writeln!(
            s,
            "# cgp-gate spec written by `cgp-gate init` from {} ({} launch{} of {} kernel{}).",
            one_line(&self.origin),
            self.launches,
            if self.launches == 1 { "" } else { "es" },
            kernels,
            if kernels == 1 { "" } else { "s" }
        );
        s.push_str("# Edit it freely (docs/spec.md lists every key); check it with `cgp-gate validate`.\n");
        s.push_str("version: 1\n\ntargets:\n");
        let _ = writeln!(s, "  - name: {}", yaml_str(&self.name));
        match self.command_source {
            CommandSource::Given => {}
            CommandSource::Connected => s.push_str(
                "    # ncu's log names the program but not its arguments: add them, numeric ones as\n    # \"{param}\" placeholders with a matching `sizes:` entry.\n",
            ),
            CommandSource::Placeholder => s.push_str(
                "    # TODO: the capture does not say which program ran; put its argv here (no shell).\n",
            ),
        }
        let argv: Vec<String> = self.command.argv.iter().map(|a| yaml_str(a)).collect();
        let _ = writeln!(s, "    command: [{}]", argv.join(", "));
        if let Some(cwd) = &self.cwd {
            s.push_str("    # Where `cgp-gate init` ran the program, relative to this file.\n");
            let _ = writeln!(s, "    cwd: {}", yaml_str(cwd));
        }
        // Which kernels are gated, decided once: the filter and the repetitions follow from it.
        let proposal = proposal(&self.kernels);
        let operation = self.render_kernels(&mut s, &proposal);
        self.render_repetitions(&mut s, &proposal);
        if !self.command.params.is_empty() {
            let params: Vec<String> = self
                .command
                .params
                .iter()
                .map(|(k, v)| format!("{k}: {}", size_value(v)))
                .collect();
            s.push_str("    sizes:\n");
            let _ = writeln!(s, "      - {{ {} }}", params.join(", "));
        }
        if !self.kernels.is_empty() && self.kernels.iter().all(|k| k.times.is_empty()) {
            s.push_str(
                "    # The capture holds no kernel duration (not in its sections or metrics): a replay of it\n    # has nothing to judge here; a live run measures it.\n",
            );
        }
        // Both metrics below are ones CUPTI measures: the proposal of docs/cupti.md ("init").
        s.push_str(CUPTI_PROPOSAL);
        s.push_str("    metrics:\n");
        let _ = writeln!(s, "      {}: \"{TIME_THRESHOLD}\"", self.time_metric());
        if operation {
            // Registers do not add up over kernels (the comment above says so).
        } else if self.kernels.is_empty() || self.registers_everywhere {
            let _ = writeln!(s, "      {REGISTERS_METRIC}: exact");
        } else {
            // A details page without the Launch Statistics section: a replay of this capture
            // would find no registers. A live run measures them.
            let _ = writeln!(
                s,
                "      # Not every launch of the capture reports its registers per thread (a details page\n      # without Launch Statistics); a live run measures them:\n      # {REGISTERS_METRIC}: exact"
            );
        }
        s
    }

    /// The time metric to gate: `gpu__time_duration.sum` (which a details page holds as
    /// `Duration`, and a replay finds there), or `gpu__time_duration.avg` when that is the only
    /// duration the capture has, so that replaying the capture finds what the spec names.
    pub(super) fn time_metric(&self) -> &'static str {
        const AVG: &str = "gpu__time_duration.avg";
        if self.time_keys.iter().all(|k| k == AVG) && !self.time_keys.is_empty() {
            AVG
        } else {
            TIME_METRIC
        }
    }

    /// How many processes a row takes, from the launches the capture saw: where every gated
    /// kernel ran at least [`ONE_PROCESS_LAUNCHES`] times in the process, one process of them
    /// decides most rows (docs/statistics.md 6.1, simulated on the noise of the H100 run:
    /// 1.0-1.5 processes per verdict), so the draft asks for one, up to 3, and a baseline of 30.
    /// With fewer launches the spec's defaults (10 processes, up to 20; 50 for the baseline) stay:
    /// at 3 launches per process one process first would miss most 5 % slowdowns.
    pub(super) fn render_repetitions(&self, s: &mut String, proposal: &[(Option<f64>, bool)]) {
        let fewest = self
            .kernels
            .iter()
            .zip(proposal)
            .filter(|(_, (_, gated))| *gated)
            .map(|(k, _)| k.launches)
            .min();
        let Some(fewest) = fewest else {
            return;
        };
        if fewest >= ONE_PROCESS_LAUNCHES {
            let _ = writeln!(
                s,
                "    # Each gated kernel ran at least {fewest} times in the process: one process per row"
            );
            s.push_str("    # decides most rows, doubtful ones get up to 3 (docs/statistics.md 6.1).\n");
            s.push_str("    repetitions: 1\n    max_repetitions: 3\n    baseline_repetitions: 30\n");
        } else {
            let _ = writeln!(
                s,
                "    # A gated kernel ran {fewest} time{} in the process, so each row takes 10 processes",
                if fewest == 1 { "" } else { "s" }
            );
            let _ = writeln!(
                s,
                "    # (up to 20). Launched {ONE_PROCESS_LAUNCHES} times per process (a `{{launches}}` knob, docs/spec.md),"
            );
            s.push_str(
                "    # `repetitions: 1` and `max_repetitions: 3` decide in 1-1.5 processes instead of 10.\n",
            );
        }
    }

    /// The kernels in comments and the `kernel:` filter; `true` when the draft gates one
    /// library operation (`kernels: sum`), which has no per-kernel metrics such as registers.
    pub(super) fn render_kernels(&self, s: &mut String, proposal: &[(Option<f64>, bool)]) -> bool {
        if self.kernels.is_empty() {
            return false;
        }
        let wanted: Vec<bool> = proposal.iter().map(|(_, w)| *w).collect();
        let library = library_filter(&self.kernels, &wanted);
        let filter = library
            .as_ref()
            .map(|(f, _)| f.clone())
            .or_else(|| kernel_filter_for(&self.kernels, &wanted));
        s.push_str(
            "    # Kernels in the capture: launches, median time, registers, share of GPU time; `+` gated\n",
        );
        s.push_str("    # (a row each), `-` not: setup (RNG, fill, copy) or under 1% (widen `kernel:` to gate them).\n");
        let width = self
            .kernels
            .iter()
            .take(MAX_LISTED_KERNELS)
            .map(|k| display_name(&k.name).chars().count())
            .max()
            .unwrap_or(0);
        for (k, (share, gated)) in self.kernels.iter().zip(proposal).take(MAX_LISTED_KERNELS) {
            let share = share.map_or_else(String::new, |x| format!("  {:.1}%", x * 100.0));
            let why = match (gated, is_setup(&k.name)) {
                (true, _) => "",
                (false, true) => "  (setup)",
                (false, false) => "  (small)",
            };
            let _ = writeln!(
                s,
                "    #  {} {}{share}{why}",
                if *gated { "+" } else { "-" },
                kernel_line(k, width).trim_end()
            );
        }
        if self.kernels.len() > MAX_LISTED_KERNELS {
            let _ = writeln!(
                s,
                "    #   ... and {} more",
                self.kernels.len() - MAX_LISTED_KERNELS
            );
        }
        self.render_library_note(s, &wanted, library.as_ref());
        match filter {
            Some(f) => {
                let _ = writeln!(s, "    kernel: {}", yaml_str(&f));
            }
            None => s.push_str(
                "    # ncu profiled NVTX ranges (range replay): select them with `nvtx:` and\n    # `replay_mode: range`; `kernel:` does not apply to ranges.\n",
            ),
        }
        let operation = library.is_some_and(|(_, one)| one);
        if operation {
            s.push_str("    kernels: sum\n");
        }
        operation
    }

    /// Why a gated library kernel is not named exactly (or, where no family regex fits, that its
    /// name may change): cuBLAS and the others pick kernels by shape, GPU and version.
    fn render_library_note(&self, s: &mut String, wanted: &[bool], library: Option<&(String, bool)>) {
        // With a family filter, the kernel it stands for; else the first library kernel.
        let gated_library = || {
            self.kernels
                .iter()
                .zip(wanted)
                .filter(|(_, w)| **w)
                .filter_map(|(k, _)| library_of(&k.name).map(|l| (k, l)))
        };
        let Some((k, lib)) = gated_library()
            .find(|(_, l)| library.is_some() && l.family().is_some())
            .or_else(|| gated_library().next())
        else {
            return;
        };
        let seen = crate::report::format::shorten(&one_line(&k.name), 60);
        let _ = writeln!(s, "    # A {} kernel (`{seen}`):", lib.label());
        s.push_str(
            "    # the library picks its kernel by shape, GPU and library version, so an exact name\n",
        );
        s.push_str("    # can select nothing on another GPU or shape.\n");
        match library {
            Some((_, true)) => s.push_str(
                "    # This regex selects the library's kernels whichever runs, and `kernels: sum` gates them\n    # as one operation row (docs/spec.md, \"Operation rows\"); registers do not add up over\n    # kernels, so they are not gated.\n",
            ),
            Some((_, false)) => s.push_str(
                "    # The filter matches the library's family, not the name seen. A switch still shows one\n    # kernel `missing` and another `new`: a target of its own with `kernels: sum` compares the\n    # operation whichever kernel runs (docs/spec.md, \"Operation rows\").\n",
            ),
            None => s.push_str(
                "    # A `regex:` over its family with `kernels: sum` gates the operation whichever kernel\n    # runs (docs/spec.md, \"Operation rows\").\n",
            ),
        }
    }
}

/// A kernel's name for a listing: one line, at most 100 characters.
pub(super) fn display_name(name: &str) -> String {
    crate::report::format::shorten(&one_line(name), 100)
}

/// `name  3 launches  17.96 us  38 registers`.
pub(super) fn kernel_line(k: &KernelSeen, width: usize) -> String {
    let time = k.median_time().map_or_else(
        || "time not measured".to_owned(),
        |t| crate::foundation::units::human(t, &k.time_unit),
    );
    let regs = k.registers.map_or_else(String::new, |r| {
        format!("{} registers", crate::foundation::units::human(r, ""))
    });
    format!(
        "{:<width$}  {:>4} launch{}  {:>10}  {regs}",
        display_name(&k.name),
        k.launches,
        if k.launches == 1 { "  " } else { "es" },
        time
    )
}

/// The duration keys (`TIME_KEYS`) the capture's launches hold, in `TIME_KEYS` order.
fn time_keys(parsed: &ParsedOutput) -> Vec<String> {
    TIME_KEYS
        .iter()
        .filter(|k| parsed.launches.iter().any(|l| l.metrics.contains_key(**k)))
        .map(|k| (*k).to_owned())
        .collect()
}
