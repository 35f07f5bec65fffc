//! Report paths never overwrite the run's own inputs (issue 34): `--json` (and `--junit`,
//! `--markdown`, `--html`) pointed at the spec, a baseline file, a recording's manifest or one of
//! its CSVs was written over it without a word. Each command names its outputs and its inputs;
//! an output that is an input file, or an existing file inside an input folder, is refused with
//! exit 2 before anything runs. Paths are compared after symbolic links are followed, as the
//! writers follow them (`fsutil::write_atomic`).

use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::publish::ReportPaths;

/// Where `p` leads: its canonical path when it exists, else its folder's joined with its name.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let parent = p
        .parent()
        .filter(|x| !x.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
}

/// Refuse a report path (`--json`, `--junit`, ...) that would overwrite an input of the run.
///
/// # Errors
/// As [`refuse_outputs_onto_inputs`].
pub fn refuse_overwriting_inputs(outputs: &ReportPaths, inputs: &[(&str, &Path)]) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = outputs.requested().map(|(t, p)| (t.flag(), p)).collect();
    refuse_outputs_onto_inputs(&outputs, inputs)
}

/// Refuse an output that would overwrite an input of the run.
///
/// # Errors
/// [`Error::Input`] (exit 2) naming the option, the path and the input it would replace.
pub fn refuse_outputs_onto_inputs(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    for (flag, out) in outputs {
        let Some(o) = resolved(out) else { continue };
        for (what, input) in inputs {
            let Some(i) = resolved(input) else { continue };
            let inside = i.is_dir() && o.starts_with(&i) && o.is_file();
            if o == i || inside {
                return Err(Error::input(
                    *out,
                    format!(
                        "refusing to write {flag} here: it would replace {} of this run ({}); write the report to another path",
                        if inside {
                            format!("a file inside {what}")
                        } else {
                            (*what).to_owned()
                        },
                        input.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_onto_inputs_are_refused_and_new_files_are_not() {
        let d = tempfile::tempdir().unwrap();
        let spec = d.path().join("cgp-gate.yaml");
        let rec = d.path().join("rec");
        std::fs::create_dir_all(rec.join("t")).unwrap();
        std::fs::write(&spec, "x").unwrap();
        std::fs::write(rec.join("manifest.json"), "{}").unwrap();
        let inputs = [("the spec", spec.as_path()), ("the recording", rec.as_path())];
        assert!(refuse_outputs_onto_inputs(&[("--json", &spec)], &inputs).is_err());
        assert!(refuse_outputs_onto_inputs(&[("--json", &rec.join("manifest.json"))], &inputs).is_err());
        let via = d.path().join("t/../cgp-gate.yaml");
        std::fs::create_dir_all(d.path().join("t")).unwrap();
        assert!(refuse_outputs_onto_inputs(&[("--html", &via)], &inputs).is_err());
        assert!(refuse_outputs_onto_inputs(&[("--json", &d.path().join("r.json"))], &inputs).is_ok());
        assert!(refuse_outputs_onto_inputs(&[("--json", &rec.join("new.json"))], &inputs).is_ok());
    }
}
