//! One rule for every command that writes a file the user names (issues 34 and 44): no output
//! path may be an input of the run, another output of the run, a FIFO, a device, a folder, or a
//! symbolic link. `--json` (and `--junit`, `--markdown`, `--html`, `--csv`) pointed at the spec, a
//! baseline file, a recording's manifest or one of its CSVs was written over it without a word;
//! `--json` and `--markdown` onto one path silently kept only one of them; a FIFO with no reader
//! blocked in `open()`; a link made the tool write over whatever it pointed at. Each command names
//! its outputs and its inputs and calls [`refuse_outputs_onto_inputs`] before anything runs; a
//! refused path is exit 2. The file type is read with `symlink_metadata` (nothing is opened, so a
//! FIFO cannot block). Inputs and outputs are compared after `..` and links of their folders are
//! resolved. Since issue 58: an existing file is replaced only when cgp-gate wrote it
//! (`written_by_cgp_gate`; `init --force` replaces any), and `-` is standard output, where one
//! output of a run may go.

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

/// Refuse a report path (`--json`, `--junit`, ...) that breaks the output rule.
///
/// # Errors
/// As [`refuse_outputs_onto_inputs`].
pub(crate) fn refuse_overwriting_inputs(outputs: &ReportPaths, inputs: &[(&str, &Path)]) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = outputs.requested().map(|(t, p)| (t.flag(), p)).collect();
    refuse_outputs_onto_inputs(&outputs, inputs)
}

/// The outputs among `(flag, path)` pairs that were given.
pub(crate) fn given<'a>(outputs: &[(&'a str, Option<&'a Path>)]) -> Vec<(&'a str, &'a Path)> {
    outputs.iter().filter_map(|(f, p)| p.map(|p| (*f, p))).collect()
}

/// What the path itself is, when it is something no report may be written to.
fn not_a_plain_file(out: &Path) -> Option<&'static str> {
    let m = std::fs::symlink_metadata(out).ok()?;
    let t = m.file_type();
    if t.is_symlink() {
        return Some("a symbolic link (the tool would write over whatever it points at)");
    }
    if t.is_file() {
        return None;
    }
    Some(crate::foundation::fsutil::file_kind(&m))
}

/// How much of an existing file [`written_by_cgp_gate`] reads.
const SNIFF_BYTES: u64 = 4096;

/// Whether the existing regular file `out` is one cgp-gate writes, so that a run may replace it:
/// empty, or its first 4 KiB name cgp-gate (every Markdown, HTML and JUnit report and every spec
/// `init` writes does: the heading, the title, the suite's name, the first comment), or a JSON
/// object whose first key is `schema_version` (results, `changes`, `calibrate`, `bisect`) or `runs`
/// (`breakdown`), or the breakdown's CSV. Anything else (a harness file, a spec, notes) is not
/// the tool's to replace (issue 58, item 12).
fn written_by_cgp_gate(out: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(out) else {
        return false;
    };
    let mut head = Vec::new();
    if f.take(SNIFF_BYTES).read_to_end(&mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    let json = text.trim_start().strip_prefix('{').map(str::trim_start);
    text.trim().is_empty()
        || text.contains("cgp-gate")
        || json.is_some_and(|j| j.starts_with("\"schema_version\"") || j.starts_with("\"runs\""))
        || text.starts_with("file,kernel,category,time_ns,instances")
}

/// The one output rule (see the module's comment). `-` is standard output: one output of a run
/// may go there.
///
/// # Errors
/// [`Error::Input`] (exit 2) naming the option, the path and what is wrong with it.
pub(crate) fn refuse_outputs_onto_inputs(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    refuse(outputs, inputs, false)
}

/// [`refuse_outputs_onto_inputs`] for a command that asks before it replaces any existing file
/// (`init` without `--force`): a file cgp-gate did not write may be replaced when it allows.
///
/// # Errors
/// As [`refuse_outputs_onto_inputs`].
pub(crate) fn refuse_outputs_onto_inputs_replacing(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<()> {
    refuse(outputs, inputs, true)
}

fn refuse(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)], replace_any: bool) -> Result<()> {
    let to_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| crate::foundation::fsutil::is_stdout(p))
        .map(|(f, _)| *f)
        .collect();
    if let [first, second, ..] = to_stdout.as_slice() {
        return Err(Error::Usage(format!(
            "{first} and {second} both go to standard output (`-`), where one would run into the other; give one of them a file"
        )));
    }
    for (k, (flag, out)) in outputs.iter().enumerate() {
        if crate::foundation::fsutil::is_stdout(out) {
            continue;
        }
        if let Some(kind) = not_a_plain_file(out) {
            return Err(Error::input(
                *out,
                format!(
                    "refusing to write {flag} here: the path is {kind}; give the path of a regular file or of a new one"
                ),
            ));
        }
        let Some(o) = resolved(out) else { continue };
        for (other, p) in &outputs[..k] {
            if resolved(p).as_ref() == Some(&o) {
                return Err(Error::input(
                    *out,
                    format!(
                        "refusing to write {flag} here: {other} is written to the same path and one would replace the other; give each output its own path"
                    ),
                ));
            }
        }
        for (what, input) in inputs {
            let Some(i) = resolved(input) else { continue };
            let inside = i.is_dir() && o.starts_with(&i) && o.is_file();
            if o == i || inside {
                return Err(Error::input(
                    *out,
                    format!(
                        "refusing to write {flag} here: it would replace {} of this run ({}); write the output to another path",
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
    // Last, once no output is an input or another output: an existing file the tool did not
    // write is not its to replace.
    for (flag, out) in outputs {
        let exists = !crate::foundation::fsutil::is_stdout(out) && out.is_file();
        if !replace_any && exists && !written_by_cgp_gate(out) {
            return Err(Error::input(
                *out,
                format!(
                    "refusing to write {flag} here: the file exists and is not one cgp-gate wrote (not a report, results or spec of cgp-gate), and replacing it would lose it; remove it first if it may go, or write the output to another path"
                ),
            ));
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
