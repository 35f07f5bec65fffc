//! Characters that must not reach a reader raw: terminal control sequences and Unicode bidi
//! controls.
//!
//! Kernel names, metric names, reasons and messages come from the application, ncu and files
//! anyone can edit. ESC, BEL and OSC sequences in them would recolour or retitle a terminal or a
//! CI log; bidi controls (U+202E RIGHT-TO-LEFT OVERRIDE, ...) make text display in an order other
//! than the one it has ("Trojan Source"), so a reviewer could read a different kernel name than
//! the one in the data. Every report shows them visibly as `<U+202E>`; control characters are
//! shown the same way where the format keeps them (console, annotations) and dropped where the
//! escaper drops them already (Markdown, HTML, XML).

/// Unicode's explicit directional formatting characters and marks.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Characters a reader cannot see or that change how the text around them reads: those the
/// sanitiser escapes (`foundation::sanitize::hides_text`: bidi controls, zero-width characters,
/// U+2028/U+2029, the byte-order mark, the interlinear annotation marks), and the soft hyphen
/// and the noncharacters U+FFFE/U+FFFF (issue 44, item 6). Every report shows them as `<U+2028>`.
pub fn is_hidden(c: char) -> bool {
    crate::foundation::sanitize::hides_text(c) || matches!(c, '\u{00AD}' | '\u{FFFE}' | '\u{FFFF}')
}

/// Characters XML 1.0 cannot carry at all, not even as a reference: controls other than tab,
/// newline and carriage return, and the noncharacters U+FFFE and U+FFFF (a kernel name can hold
/// them: ncu and CUPTI pass the compiler's bytes through).
pub fn not_xml(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\t' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
}

/// How a character reads when shown instead of acting: `<U+202E>`.
pub fn code_point(c: char) -> String {
    format!("<U+{:04X}>", u32::from(c))
}

/// Text with bidi controls and control characters (other than newline and tab) replaced by
/// their visible `<U+XXXX>` form, for plain-text output (console, workflow commands).
pub fn visible(text: &str) -> String {
    if !text
        .chars()
        .any(|c| is_hidden(c) || (c.is_control() && c != '\n' && c != '\t'))
    {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden(c) || (c.is_control() && c != '\n' && c != '\t') {
            out.push_str(&code_point(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// The visible form of a bidi control, escaped for HTML and Markdown (`&lt;U+202E&gt;`).
pub fn code_point_html(c: char) -> String {
    format!("&lt;U+{:04X}&gt;", u32::from(c))
}

/// An XML or HTML document with bidi controls made visible and control characters other than
/// newline, tab and carriage return dropped (XML 1.0 allows no others).
pub fn markup_document(doc: &str) -> String {
    if !doc.chars().any(|c| is_hidden(c) || not_xml(c)) {
        return doc.to_owned();
    }
    let mut out = String::with_capacity(doc.len() + 16);
    for c in doc.chars() {
        if is_hidden(c) {
            out.push_str(&code_point_html(c));
        } else if not_xml(c) {
        } else {
            out.push(c);
        }
    }
    out
}

/// HTML's one escaping function (`report::html::escape`): text for HTML element content and
/// quoted attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if crate::report::text::is_hidden(c) => out.push_str(&crate::report::text::code_point_html(c)),
            c if c.is_control() && !matches!(c, '\n' | '\t') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_become_visible() {
        assert_eq!(visible("a\u{1b}[31mb\u{7}"), "a<U+001B>[31mb<U+0007>");
        assert_eq!(visible("k\u{202e}lanrek"), "k<U+202E>lanrek");
        assert_eq!(visible("two\nlines\tok"), "two\nlines\tok");
        assert_eq!(
            markup_document("<a>\u{1b}x\u{2067}</a>"),
            "<a>x&lt;U+2067&gt;</a>"
        );
    }
}
