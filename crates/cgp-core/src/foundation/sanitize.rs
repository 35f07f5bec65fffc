//! The one sanitiser for text that comes from a file, a program or the network (spec strings,
//! kernel names, manifest and baseline fields, API error bodies, URLs) before cgp-gate prints it.
//!
//! - Control characters (newline, CR, ESC, ...), C1 controls, bidirectional overrides and
//!   isolates (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) and invisible characters
//!   (zero-width U+200B-U+200D, U+2060, U+FEFF, line and paragraph separators) are written as
//!   escapes (`\n`, `\u{1b}`, `\u{202e}`): one string is one line, and nothing reorders or hides
//!   the text around it.
//! - A line that would start with `::` (after blanks) starts with `\u{3a}:` instead: GitHub reads a
//!   line of a step's output that starts with `::` as a workflow command (`::add-mask::`,
//!   `::stop-commands::`).
//! - `scheme://user:password@` becomes `scheme://user:***@`.
//! - [`api_body`] also redacts what a proxy or server echoes of the request's credentials
//!   (`Authorization: ...`, `Bearer ...`, `PRIVATE-TOKEN: ...`, `"token": "..."`, GitHub and
//!   GitLab token shapes) and keeps at most [`API_BODY_CHARS`] characters.
//!
//! Written by hand: the escaping rules are a few lines, and the crates that strip ANSI sequences
//! (strip-ansi-escapes) drop text instead of showing it, and know nothing of workflow commands.

use std::fmt::Write as _;

/// The most characters of an API response body an error or warning shows.
pub(crate) const API_BODY_CHARS: usize = 500;

/// Whether `c` is shown as an escape: controls, and characters that reorder or hide text.
fn must_escape(c: char) -> bool {
    c.is_control() || hides_text(c)
}

/// Characters that reorder or hide the text around them: bidi controls and marks, zero-width
/// characters, the line and paragraph separators, the byte-order mark and the interlinear
/// annotation marks. The reports show them visibly too (`report::text::is_hidden`).
pub fn hides_text(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{061C}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if must_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// A line that would start with `::` (after blanks) cannot be a workflow command.
fn neutralise_command(line: &str) -> String {
    let blanks = line.len() - line.trim_start().len();
    if line[blanks..].starts_with("::") {
        format!("{}\\u{{3a}}{}", &line[..blanks], &line[blanks + 1..])
    } else {
        line.to_owned()
    }
}

/// `text` (a report of several lines, with its own line breaks and escapes) with every line that
/// would start with `::` (after blanks) starting with `\u{3a}:` instead: no line of it is a
/// GitHub workflow command, whatever names it quotes.
pub fn no_workflow_commands(text: &str) -> String {
    if !text.lines().any(|l| l.trim_start().starts_with("::")) {
        return text.to_owned();
    }
    text.split('\n')
        .map(neutralise_command)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `scheme://user:password@host` with the password replaced by `***` (the rule lives with the
/// other redactions in `foundation::redact`, which this module uses, never the other way).
pub use super::redact::redact_urls;

/// One outside string as one printable line: escapes, no workflow command, no URL password.
pub fn line(text: &str) -> String {
    let text = redact_urls(text);
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, &text);
    neutralise_command(&out)
}

/// A message of several lines (an error with its `help:` line) whose own line breaks stay: each
/// line is sanitised as by [`line`], so none can be a workflow command or hold a terminal escape.
pub fn block(text: &str) -> String {
    text.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

/// Write `text` to stderr as a [`block`], ignoring a closed stderr (`eprintln!` would panic).
pub fn eprint_line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", block(text));
}

/// A response body from an API (GitHub, GitLab) for an error or a warning: the credentials it may
/// echo redacted, at most [`API_BODY_CHARS`] characters (the rest counted), one line.
pub fn api_body(body: &str) -> String {
    let mut text = super::redact::secrets(body.trim());
    let total = text.chars().count();
    if total > API_BODY_CHARS {
        let kept: String = text.chars().take(API_BODY_CHARS).collect();
        text = format!("{kept}… ({} more characters)", total - API_BODY_CHARS);
    }
    line(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_invisible_characters_are_escaped_on_one_line() {
        assert_eq!(line("a\nb\rc\u{1b}[31m"), "a\\nb\\rc\\u{1b}[31m");
        assert_eq!(
            line("x\u{202e}y\u{2066}z\u{200b}"),
            "x\\u{202e}y\\u{2066}z\\u{200b}"
        );
        assert_eq!(
            line("plain `gemm<32>` [n=1024] 5%"),
            "plain `gemm<32>` [n=1024] 5%"
        );
        assert_eq!(line("Ünïcødé кириллица"), "Ünïcødé кириллица");
        assert!(!line("a\u{2028}b\u{85}c").contains(['\u{2028}', '\u{85}']));
    }

    #[test]
    fn workflow_commands_are_neutralised_at_every_line_start() {
        assert_eq!(line("::add-mask::x"), "\\u{3a}:add-mask::x");
        assert_eq!(line("  ::stop-commands::t"), "  \\u{3a}:stop-commands::t");
        assert_eq!(line("name: a::b"), "name: a::b");
        let b = block("error: bad\n::add-mask::x\n  help: y");
        assert_eq!(b, "error: bad\n\\u{3a}:add-mask::x\n  help: y");
        assert!(!b.lines().any(|l| l.trim_start().starts_with("::")));
    }

    #[test]
    fn url_passwords_are_redacted() {
        assert_eq!(
            line("GET http://user:PASS@host/api/v4 failed"),
            "GET http://user:***@host/api/v4 failed"
        );
        assert_eq!(
            line("https://gitlab-ci-token:abc@g.example/x.git"),
            "https://gitlab-ci-token:***@g.example/x.git"
        );
        assert_eq!(line("https://host:8443/path"), "https://host:8443/path");
    }

    #[test]
    fn api_bodies_lose_echoed_credentials_and_are_bounded() {
        let body = "{\"message\":\"Bad credentials\",\"headers\":{\"Authorization\":\"token ghp_abcdefghijklmnopqrstuvwxyz0123\"}}\n::add-mask::x";
        let s = api_body(body);
        assert!(!s.contains("ghp_abc"), "{s}");
        assert!(s.contains("Bad credentials"), "{s}");
        assert!(!s.contains('\n'));
        let s = api_body("PRIVATE-TOKEN: glpat-abcdefghijklmnopqrst\r\nAuthorization: Bearer abcdefghijk");
        assert!(!s.contains("glpat-abc") && !s.contains("abcdefghijk"), "{s}");
        let big = "x".repeat(5_000_000);
        let s = api_body(&big);
        assert!(s.chars().count() < API_BODY_CHARS + 40, "{}", s.len());
        assert!(s.contains("4999500 more characters"));
    }
}
