//! Where a run's samples came from, as the results file writes it: a profiler's name (`ncu`,
//! `nsys`, `cupti`), a recording (`replay:<dir>`), or what `ab` and `merge` join of those. The
//! `replay:` prefix is made and read here only.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The source of a run's samples (see the module).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Source(String);

impl Source {
    const REPLAY: &str = "replay:";

    /// Samples replayed from the recording in `dir`.
    pub fn replay(dir: &Path) -> Self {
        Self(format!("{}{}", Self::REPLAY, dir.display()))
    }

    /// The recording's folder, when the samples were replayed from one.
    pub fn replay_dir(&self) -> Option<&str> {
        self.0.strip_prefix(Self::REPLAY)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for Source {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<Source> for String {
    fn from(s: Source) -> Self {
        s.0
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_source_names_its_folder_and_others_none() {
        let s = Source::replay(Path::new("tests/fixtures/ncu"));
        assert_eq!(s.as_str(), "replay:tests/fixtures/ncu");
        assert_eq!(s.replay_dir(), Some("tests/fixtures/ncu"));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#""replay:tests/fixtures/ncu""#
        );
        assert_eq!(Source::from("ncu".to_owned()).replay_dir(), None);
    }
}
