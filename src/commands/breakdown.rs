//! `cgp-gate breakdown`: GPU time by kernel category of Nsight Systems outputs (docs/nsys.md).

use crate::foundation::exit_codes::Exit;

/// What `cgp-gate breakdown` was asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub files: Vec<std::path::PathBuf>,
    pub categories: Option<std::path::PathBuf>,
    pub json: Option<std::path::PathBuf>,
    pub csv: Option<std::path::PathBuf>,
    pub html: Option<std::path::PathBuf>,
    pub wall_seconds: Option<f64>,
    pub top: usize,
}

/// Read every file, break it down, write the requested files, print the console summary.
///
/// # Errors
/// A bad categories file or input (exit 2, naming the file), nsys missing for a `.nsys-rep`
/// (exit 3), or an output that cannot be written.
pub(crate) fn run(opts: &Options, out: &mut dyn std::io::Write) -> crate::Result<Exit> {
    use crate::foundation::error::Error;
    let mut inputs: Vec<(&str, &std::path::Path)> = opts
        .files
        .iter()
        .map(|p| ("an input file", p.as_path()))
        .collect();
    inputs.extend(opts.categories.as_deref().map(|p| ("the categories file", p)));
    let outputs = super::outputs::given(&[
        ("--json", opts.json.as_deref()),
        ("--csv", opts.csv.as_deref()),
        ("--html", opts.html.as_deref()),
    ]);
    super::outputs::refuse_outputs_onto_inputs(&outputs, &inputs)?;
    let user = opts
        .categories
        .as_deref()
        .map(crate::spec::load_categories)
        .transpose()?;
    let cats = crate::nsys::Categories::new(user.as_ref());
    let wall_ns = match opts.wall_seconds {
        None => None,
        Some(w) if w.is_finite() && w > 0.0 && w < 1e9 =>
        {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "0 < w < 1e9 s fits u64 ns"
            )]
            Some((w * 1e9).round() as u64)
        }
        Some(w) => {
            return Err(Error::Usage(format!(
                "--wall {w}: give the wall time in seconds, a positive number"
            )));
        }
    };
    let mut runs = Vec::with_capacity(opts.files.len());
    for f in &opts.files {
        let w = crate::nsys::read_path(f)?;
        let mut r = crate::nsys::breakdown(&w, &cats);
        if let Some(ns) = wall_ns {
            r.set_wall(ns).map_err(Error::Usage)?;
        }
        runs.push(r);
    }
    let b = crate::nsys::Breakdown { runs };
    if let Some(p) = &opts.json {
        let text = serde_json::to_string_pretty(&b).map_err(|e| Error::output("the breakdown's JSON", e))?;
        crate::foundation::fsutil::write_output(p, format!("{text}\n").as_bytes())?;
    }
    if let Some(p) = &opts.csv {
        let bytes = crate::nsys::breakdown::csv(&b).map_err(|e| Error::output("the breakdown's CSV", e))?;
        crate::foundation::fsutil::write_output(p, &bytes)?;
    }
    if let Some(p) = &opts.html {
        crate::foundation::fsutil::write_output(p, crate::report::breakdown::page(&b).as_bytes())?;
    }
    write!(out, "{}", crate::nsys::breakdown::console(&b, opts.top))
        .map_err(|e| Error::io("write", "stdout", e))?;
    Ok(Exit::Ok)
}
