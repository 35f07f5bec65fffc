//! The page around the data: the HTML shell, its style and its script. Every name reaches the
//! page inside the JSON blob only (the shell holds no text from the data), and the script sets
//! names through `textContent`, so the blob's escaping below is the page's one escaping function.

/// The page's one escaping function: JSON text made safe inside `<script type="application/json">`.
/// `<`, `>` and `&` occur in JSON only inside strings, where `\u003c` means the same character, so
/// no `</script>` or `<!--` in a name can end the element; U+2028 and U+2029 likewise, for
/// readers that parse the blob as script.
pub fn escape_script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = include_str!("site.css");
const SCRIPT: &str = include_str!("site.js");

/// The whole page around `data` (already escaped by [`escape_script_json`]).
pub(super) fn render(data: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>cgp-gate history</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header><h1 id=\"title\">cgp-gate history</h1><p id=\"summary\"></p></header>\n\
         <nav id=\"filters\">\
         <label>GPU <select id=\"f-gpu\"><option value=\"\">all</option></select></label> \
         <label>target <select id=\"f-target\"><option value=\"\">all</option></select></label> \
         <label>metric <select id=\"f-metric\"><option value=\"\">all</option></select></label> \
         <label>search <input id=\"f-search\" type=\"search\" placeholder=\"kernel, size, ...\"></label> \
         <label><input id=\"f-changed\" type=\"checkbox\"> changed only</label> \
         <span id=\"shown\"></span></nav>\n\
         <main>\n<section id=\"overview\"><h2>Changed series, worst first</h2>\
         <table id=\"changed\"><thead><tr><th>series</th><th>GPU</th><th>shift [interval]</th>\
         <th>from commit</th><th>history</th></tr></thead><tbody></tbody></table>\
         <p id=\"none-changed\" hidden>No level shift found in any series.</p></section>\n\
         <div id=\"gpus\"></div>\n</main>\n\
         <noscript><p>This page draws its charts with JavaScript; the data is in the \
         <code>cgp-data</code> element of its source.</p></noscript>\n\
         <script type=\"application/json\" id=\"cgp-data\">{data}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
}
