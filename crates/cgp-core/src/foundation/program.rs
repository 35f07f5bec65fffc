//! What the first word of a command line is: a compiled program, or an interpreter that runs a
//! script (whose executable holds no device code, and whose name says nothing of the work).
//!
//! One list, read by `profile::sass` (no cuobjdump on an interpreter) and by `init` (a target's
//! name comes from the script past the interpreter).

/// Interpreters and launchers, by file name without a version suffix (`python3.12` is
/// `python`). `env` runs the program after its `NAME=value` words; the others run a script or
/// module.
pub(crate) const INTERPRETERS: [&str; 12] = [
    "python",
    "pypy",
    "bash",
    "sh",
    "node",
    "ruby",
    "perl",
    "julia",
    "uv",
    "torchrun",
    "accelerate",
    "env",
];

/// The file name of `argv0` without its folder and `.exe`: `/usr/bin/python3` -> `python3`.
pub(crate) fn file_stem(argv0: &str) -> &str {
    let name = argv0.rsplit(['/', '\\']).next().unwrap_or(argv0);
    name.strip_suffix(".exe").unwrap_or(name)
}

/// The interpreter `argv0` names (`python3`, `/usr/bin/env`, `bash5.2`), else `None`: one of
/// [`INTERPRETERS`], optionally followed by a version of digits and dots.
pub fn interpreter(argv0: &str) -> Option<&'static str> {
    let stem = file_stem(argv0);
    INTERPRETERS.into_iter().find(|i| {
        stem.strip_prefix(i)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpreters_are_known_by_file_name_with_or_without_a_version() {
        assert_eq!(interpreter("python3"), Some("python"));
        assert_eq!(interpreter("/usr/bin/python3.12"), Some("python"));
        assert_eq!(interpreter("C:\\Python311\\python.exe"), Some("python"));
        assert_eq!(interpreter("/usr/bin/env"), Some("env"));
        assert_eq!(interpreter("bash"), Some("bash"));
        assert_eq!(interpreter("./build/bench"), None);
        // A name that only starts like an interpreter is a program.
        assert_eq!(interpreter("python_bench"), None);
        assert_eq!(interpreter("envoy"), None);
        assert_eq!(interpreter("shmem_test"), None);
    }
}
