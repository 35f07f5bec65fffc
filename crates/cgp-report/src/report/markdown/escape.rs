//! Markdown's escaping: text as table cells and inline text ([`escape_md_cell`]), names as code
//! spans ([`code_span`], [`md_text`]), and URLs as link destinations and autolinks.

/// Markdown's one escaping function, for every piece of text this reporter writes outside code
/// spans: table cells, inline text and the raw HTML lines (`<summary>`, `<sub>`) of the comment.
///
/// It escapes only what Markdown or HTML would act on, so that the raw text (a CI log, GitLab,
/// Slack, the file itself) reads as written: `gpu__time_duration.sum`, `+4.1% [+4.0%, +4.2%]`
/// and `pass: 6 rows` stay as they are. What it escapes becomes a character reference (`&#42;`),
/// which GFM shows as the character in text and in raw HTML alike (a backslash escape would show
/// in raw HTML):
/// - always: `&`, `<` (HTML), `|` (a table cell), `` ` `` (code spans), `\` (it would
///   escape what follows), `*` (emphasis, also within a word), `~` (strikethrough), `$` (math),
///   `^` (superscript);
/// - where it acts: a run of `_` not between two letters or digits (emphasis; `gpu__time` is
///   not), `@` before a name (a mention), `#` before a digit (an issue link), `:` that opens an
///   emoji shortcode (`:tada:`, [`emoji_shortcode`]; `12:38:36Z` and `replay:dir` do not), `[` before `[` or `^` and `]` before `(`, `[` or `:` (links, footnotes,
///   wiki links), a leading `>` (a quote when the text starts a line) and a leading `#`, `+`,
///   `-` or `=` before a space, the same character or the end (a heading, a list item, a
///   thematic break or a setext underline).
///
/// Line breaks become spaces and other control characters are dropped; bidi controls are shown as
/// `<U+202E>`.
pub fn escape_md_cell(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    let reference = |out: &mut String, c: char| out.push_str(&format!("&#{};", u32::from(c)));
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1);
        let leading = chars[..i].iter().all(|c| c.is_whitespace());
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if leading => out.push_str("&gt;"),
            '|' | '`' | '\\' | '*' | '~' | '$' | '^' => reference(&mut out, c),
            '_' => {
                // The whole run: intraword underscores never open or close emphasis.
                let end = chars[i..]
                    .iter()
                    .position(|&c| c != '_')
                    .map_or(chars.len(), |n| i + n);
                let inside = i > 0 && word(chars.get(i - 1)) && word(chars.get(end));
                for _ in i..end {
                    if inside {
                        out.push('_');
                    } else {
                        reference(&mut out, '_');
                    }
                }
                i = end;
                continue;
            }
            '@' if next.is_some_and(|n| n.is_alphanumeric()) => reference(&mut out, c),
            '#' if next.is_some_and(char::is_ascii_digit) => reference(&mut out, c),
            // GitLab's merge-request references (`!12`) and GitHub's `GH-12` (issue 44, item 6).
            '!' if next.is_some_and(char::is_ascii_digit) => reference(&mut out, c),
            '-' if i >= 2
                && chars[i - 2..i] == ['G', 'H']
                && !word(chars.get(i.wrapping_sub(3)))
                && next.is_some_and(char::is_ascii_digit) =>
            {
                reference(&mut out, c)
            }
            // A bare URL (`https://...`, `www.`) would be a live link in the comment.
            ':' if chars[i + 1..].starts_with(&['/', '/']) => reference(&mut out, c),
            'w' if !word(chars.get(i.wrapping_sub(1))) && chars[i + 1..].starts_with(&['w', 'w', '.']) => {
                reference(&mut out, c)
            }
            ':' if emoji_shortcode(&chars[i + 1..]) => reference(&mut out, c),
            '[' if matches!(next, Some('[' | '^')) => reference(&mut out, c),
            ']' if matches!(next, Some('(' | '[' | ':')) => reference(&mut out, c),
            // A heading, list item, thematic break or setext underline needs a space, the same
            // character or the end after it: `+4.1%` and `-0.78%` are none of them.
            '#' | '+' | '-' | '=' if leading && next.is_none_or(|&n| n == ' ' || n == c) => {
                reference(&mut out, c)
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if crate::report::text::is_hidden(c) => out.push_str(&crate::report::text::code_point_html(c)),
            c if c.is_control() => {}
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// Whether `rest` (what follows a `:`) completes an emoji shortcode (`:tada:`, `:+1:`,
/// `:100:`): a name of letters, digits, `_`, `+` or `-` and a closing `:`. A name of digits
/// alone is none but `100` and `1234` (GitHub's only numeric ones), so `12:38:36Z` and
/// `replay:examples/...` stay as written.
fn emoji_shortcode(rest: &[char]) -> bool {
    let n = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
        .count();
    if n == 0 || rest.get(n) != Some(&':') {
        return false;
    }
    let name: String = rest[..n].iter().collect();
    !name.chars().all(|c| c.is_ascii_digit()) || name == "100" || name == "1234"
}

/// A name or a metric as a code span for a table cell or inline text (never in raw HTML, where
/// backticks show): `` `gpu__time_duration.sum` ``. Inside a code span Markdown and HTML do not
/// act, so only what ends the span or the cell is handled, as GFM defines it: `|` is `\|` (a
/// table splits cells before it reads code spans), the fence is one backtick longer than the
/// longest run inside, with a space inside the fence when the text starts or ends with a
/// backtick. Line breaks become spaces, other control characters are dropped, bidi controls are
/// shown as `<U+202E>`.
pub(crate) fn code_span(text: &str, in_table: bool) -> String {
    let mut body = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        match c {
            '|' if in_table => body.push_str("\\|"),
            '\n' | '\r' | '\t' => body.push(' '),
            c if crate::report::text::is_hidden(c) => body.push_str(&crate::report::text::code_point(c)),
            c if c.is_control() => {}
            c => body.push(c),
        }
    }
    if body.trim().is_empty() {
        // An empty or all-space code span is not one: say nothing rather than print backticks.
        return escape_md_cell(text);
    }
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad =
        if body.starts_with('`') || body.ends_with('`') || (body.starts_with(' ') && body.ends_with(' ')) {
            " "
        } else {
            ""
        };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// Text that quotes names between backticks (reasons, error messages: ``no baseline of
/// `matmul` ``) as Markdown: each quoted part a [`code_span`], the rest through
/// [`escape_md_cell`], so the names render as code rather than as literal backticks or
/// character references. `in_table`: the text is a table cell (`|` in a code span is `\|`).
pub(crate) fn md_text(text: &str, in_table: bool) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    // An odd number of parts means every backtick has its pair; an unpaired one stays text.
    let paired = parts.len() % 2 == 1;
    let mut out = String::with_capacity(text.len() + 8);
    for (i, part) in parts.iter().enumerate() {
        let inside = i % 2 == 1 && (paired || i + 1 < parts.len());
        if inside && !part.trim().is_empty() {
            out.push_str(&code_span(part, in_table));
        } else if inside {
            out.push_str(&escape_md_cell(&format!("`{part}`")));
        } else if i % 2 == 1 {
            out.push_str(&escape_md_cell(&format!("`{part}")));
        } else {
            out.push_str(&escape_md_cell(part));
        }
    }
    out
}

/// A URL as a link destination: the characters that would end it or be read as Markdown or a
/// character reference there, percent-encoded (the same address to a browser).
pub(super) fn url_for_link(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' | '(' | ')' | '<' | '>' | '|' | '"' | '`' | '\\' | '&' | '[' | ']' => {
                out.push_str(&format!("%{:02X}", u32::from(c)));
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A URL for an autolink (`<url>`): characters that would end or break it are percent-encoded.
/// This is URL syntax, not Markdown escaping; text goes through [`escape_md_cell`].
pub(super) fn autolink_url(u: &str) -> String {
    let mut out = String::new();
    for c in u.chars() {
        match c {
            '<' | '>' | ' ' | '"' | '`' | '|' => out.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}
