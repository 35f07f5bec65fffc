//! Parsing `ncu --version`.
//!
//! The version is saved beside every baseline because CSV layouts and defaults (`--clock-control`)
//! change between releases; a run and its baseline must be comparable.

use std::sync::LazyLock;

use regex::Regex;

static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Version (\d+)\.(\d+)\.(\d+)(?:\.(\d+))?").expect("the version pattern is a valid regex")
});

/// The version from `ncu --version` output, as printed (`2025.1.1.0`; three parts when ncu
/// prints three).
///
/// The last line holding `Version X.Y.Z[.W]` wins: line 1 (`NVIDIA (R) Nsight Compute Command
/// Line Profiler`) has no number, and wrappers may print their own lines first.
pub fn parse_version(output: &str) -> Option<String> {
    output.lines().rev().find_map(|line| {
        let c = VERSION.captures(line)?;
        let mut v = format!("{}.{}.{}", &c[1], &c[2], &c[3]);
        if let Some(w) = c.get(4) {
            v.push('.');
            v.push_str(w.as_str());
        }
        Some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn banner(third: &str) -> String {
        format!(
            "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\n{third}\n"
        )
    }

    #[test]
    fn the_four_documented_version_lines() {
        for (line, want) in [
            (
                "Version 2025.1.1.0 (build 35528883) (public-release)",
                "2025.1.1.0",
            ),
            (
                "Version 2023.2.0.0 (build 32895467) (public-release)",
                "2023.2.0.0",
            ),
            ("Version 2024.5.1.1 (build 34782007)", "2024.5.1.1"),
            (
                "Version 2026.2.0.0 (build 37790515) (public-release)",
                "2026.2.0.0",
            ),
        ] {
            assert_eq!(parse_version(&banner(line)).as_deref(), Some(want), "{line}");
        }
    }

    #[test]
    fn three_part_versions_and_windows_line_endings() {
        assert_eq!(
            parse_version(
                "NVIDIA (R) Nsight Compute Command Line Profiler\r\nVersion 2019.5.0 (build 27346997)\r\n"
            )
            .as_deref(),
            Some("2019.5.0")
        );
    }

    #[test]
    fn the_last_version_line_wins() {
        let out = "wrapper Version 1.2.3\nVersion 2025.1.1.0 (build 35528883) (public-release)\n";
        assert_eq!(parse_version(out).as_deref(), Some("2025.1.1.0"));
    }

    #[test]
    fn no_version_line_is_none() {
        assert_eq!(
            parse_version("NVIDIA (R) Nsight Compute Command Line Profiler\n"),
            None
        );
        assert_eq!(parse_version(""), None);
        assert_eq!(parse_version("Version 2025.x"), None);
    }
}
