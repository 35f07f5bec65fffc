//! TEMPORARY shim until the parser branch lands.
pub fn parse_version(output: &str) -> Option<String> {
    output.lines().rev().find_map(|l| {
        l.strip_prefix("Version ")
            .map(|r| r.split_whitespace().next().unwrap_or("").to_owned())
    })
}
